package dev.cor.ngsild.model;

import java.util.Objects;


/**
 * One instance of an attribute's temporal evolution (ETSI GS CIM 009 § 4.5.7): the attribute as
 * it was (its value, datasetId, observedAt, sub-attributes), when the broker recorded it
 * ({@link Attribute#createdAt()}) and last modified it ({@link Attribute#modifiedAt()}, which only
 * Modify Attribute Instance changes), and, for the instance that says an attribute was deleted,
 * when ({@link #deletedAt}; its value is then the NGSI-LD Null). Immutable.
 *
 * @param attribute  the attribute's expanded name
 * @param value      the attribute instance
 * @param instanceId its URI ({@code urn:ngsi-ld:attribute:instance:...}), given by the store when
 *                   it records it; {@code null} before
 * @param observedAt the value's observedAt in epoch milliseconds ({@link #NO_TIME}: it has none),
 *                   read once here rather than at every query
 * @param deletedAt  when the attribute was deleted (epoch milliseconds), or {@link #NO_TIME}
 */
public record TemporalInstance(String attribute, Attribute value, String instanceId, long observedAt, long deletedAt) {
    /** A time an instance does not have: no observedAt, or no deletion recorded. */
    public static final long NO_TIME = Long.MIN_VALUE;
    /** The prefix of every instanceId a store gives. */
    public static final String ID_PREFIX = "urn:ngsi-ld:attribute:instance:";

    public TemporalInstance {
        Objects.requireNonNull(attribute, "attribute");
        Objects.requireNonNull(value, "value");
    }

    /** An instance not yet recorded (no id), its observedAt read from {@code value}. */
    public static TemporalInstance of(String attribute, Attribute value, long deletedAt) {
        return new TemporalInstance(attribute, value, null, observedMillis(value), deletedAt);
    }

    /** {@code value}'s observedAt in epoch milliseconds, or {@link #NO_TIME}. */
    public static long observedMillis(Attribute value) {
        return value.observedAt() == null ? NO_TIME : Syntax.epochMillis(value.observedAt());
    }

    /** Whether this instance records a deletion. */
    public boolean deleted() {
        return deletedAt != NO_TIME;
    }

    /** This instance with the id the store gave it. */
    public TemporalInstance withId(String id) {
        return new TemporalInstance(attribute, value, id, observedAt, deletedAt);
    }

    /**
     * This instance modified (Modify Attribute Instance, § 5.6.15): {@code value} in its place,
     * with its id, its deletion time and its createdAt kept - it was recorded when it was - and
     * {@code value}'s modifiedAt.
     */
    public TemporalInstance modifiedTo(Attribute value) {
        Attribute v = new Attribute(value.kind(), value.value(), value.datasetId(), value.observedAt(), value.unitCode(),
                value.valueType(), value.objectType(), value.sub(), this.value.createdAt(), value.modifiedAt());
        return new TemporalInstance(attribute, v, instanceId, observedMillis(v), deletedAt);
    }

    /** The instanceId a store gives its {@code n}-th instance: unique for the store's life, across restarts. */
    public static String idOf(long n) {
        return ID_PREFIX + Long.toHexString(n);
    }

    /**
     * The number in an instanceId as {@link #idOf} writes it (lower-case hex, no leading zero), or
     * -1 for any other id: ids are compared as text, so "0A" is not the instance "a".
     */
    public static long numberOf(String instanceId) {
        int from = ID_PREFIX.length();
        if (instanceId == null || !instanceId.startsWith(ID_PREFIX) || instanceId.length() == from
                || instanceId.length() > from + 16 || (instanceId.charAt(from) == '0' && instanceId.length() > from + 1)) {
            return -1;
        }
        long n = 0;
        for (int k = from; k < instanceId.length(); k++) {
            char c = instanceId.charAt(k);
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0) {
                return -1;
            }
            n = n << 4 | d;
        }
        return n;
    }

    /**
     * The time of {@code property}, epoch milliseconds, or {@link #NO_TIME} when the instance has
     * none (an attribute without observedAt; an instance that records no deletion).
     */
    public long time(TimeProperty property) {
        return switch (property) {
            case OBSERVED_AT -> observedAt;
            case CREATED_AT -> value.createdAt();
            case MODIFIED_AT -> value.modifiedAt();
            case DELETED_AT -> deletedAt;
        };
    }
}
