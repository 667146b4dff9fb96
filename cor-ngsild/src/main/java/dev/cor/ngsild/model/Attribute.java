package dev.cor.ngsild.model;

import java.util.Map;
import java.util.Objects;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One instance of an attribute: its kind, its value, its metadata (datasetId, observedAt,
 * unitCode, objectType) and its sub-attributes, with the times the broker keeps. Immutable: a
 * write builds a new one. Names of sub-attributes are expanded IRIs; a vocab value is kept
 * expanded; every other value is kept as given. Equal, hashed and printed as a record of its ten
 * components is.
 * <p>
 * A store holds millions of them, so the four metadata that repeat from instance to instance
 * (datasetId, unitCode, valueType, objectType) are one object shared by every instance with the
 * same four ({@link SharedNames}), absent when all four are; an instance without them costs two
 * references less than ten fields would.
 */
public final class Attribute {
    private final AttributeKind kind;
    private final JsonNode value;
    private final String observedAt;
    private final Map<String, AttributeList> sub;
    /** datasetId, unitCode, valueType and objectType; {@code null} when all four are. */
    private final Meta meta;
    private final long createdAt;
    private final long modifiedAt;

    private record Meta(String datasetId, String unitCode, JsonNode valueType, JsonNode objectType) {
    }

    /**
     * Kind and value are required; a missing {@code sub} is none. The datasetId, the unit code and
     * the sub-attributes' names are kept shared ({@link SharedNames}), {@code sub} in a compact form.
     *
     * @param kind       what kind of attribute this is
     * @param value      the content of its value member ({@link AttributeKind#valueMember()})
     * @param datasetId  the instance's datasetId; {@code null} for the default instance
     * @param observedAt when it was observed (an ISO 8601 UTC date-time), or {@code null}
     * @param unitCode   its UN/CEFACT unit code, or {@code null}
     * @param valueType  the expanded datatype of a property's value ({@code valueType}), or {@code null}
     * @param objectType the expanded type(s) of a relationship's target ({@code objectType}), or {@code null}
     * @param sub        its sub-attributes, by expanded name
     * @param createdAt  when the broker created it (epoch milliseconds)
     * @param modifiedAt when the broker last changed it (epoch milliseconds)
     */
    public Attribute(AttributeKind kind, JsonNode value, String datasetId, String observedAt, String unitCode,
            JsonNode valueType, JsonNode objectType, Map<String, AttributeList> sub, long createdAt, long modifiedAt) {
        this.kind = Objects.requireNonNull(kind, "kind");
        this.value = Objects.requireNonNull(value, "value");
        this.observedAt = observedAt;
        this.sub = AttributeMap.of(sub);
        this.meta = meta(datasetId, unitCode, valueType, objectType);
        this.createdAt = createdAt;
        this.modifiedAt = modifiedAt;
    }

    private static Meta meta(String datasetId, String unitCode, JsonNode valueType, JsonNode objectType) {
        if (datasetId == null && unitCode == null && valueType == null && objectType == null) {
            return null;
        }
        SharedNames names = SharedNames.instance();
        Meta m = new Meta(names.name(datasetId), names.name(unitCode), valueType, objectType);
        // a JSON array or object is mutable: only text nodes (immutable) are shared between records
        boolean shareable = (valueType == null || valueType.isTextual()) && (objectType == null || objectType.isTextual());
        return shareable ? names.shared(m, length(datasetId) + length(unitCode) + length(valueType) + length(objectType)) : m;
    }

    private static int length(String s) {
        return s == null ? 0 : s.length();
    }

    private static int length(JsonNode n) {
        return n == null ? 0 : n.textValue().length();
    }

    /** What kind of attribute this is. */
    public AttributeKind kind() {
        return kind;
    }

    /** The content of its value member ({@link AttributeKind#valueMember()}). */
    public JsonNode value() {
        return value;
    }

    /** The instance's datasetId; {@code null} for the default instance. */
    public String datasetId() {
        return meta == null ? null : meta.datasetId;
    }

    /** When it was observed (an ISO 8601 UTC date-time), or {@code null}. */
    public String observedAt() {
        return observedAt;
    }

    /** Its UN/CEFACT unit code, or {@code null}. */
    public String unitCode() {
        return meta == null ? null : meta.unitCode;
    }

    /** The expanded datatype of a property's value ({@code valueType}), or {@code null}. */
    public JsonNode valueType() {
        return meta == null ? null : meta.valueType;
    }

    /** The expanded type(s) of a relationship's target ({@code objectType}), or {@code null}. */
    public JsonNode objectType() {
        return meta == null ? null : meta.objectType;
    }

    /** Its sub-attributes, by expanded name; empty when none. Unmodifiable. */
    public Map<String, AttributeList> sub() {
        return sub;
    }

    /** When the broker created it (epoch milliseconds). */
    public long createdAt() {
        return createdAt;
    }

    /** When the broker last changed it (epoch milliseconds). */
    public long modifiedAt() {
        return modifiedAt;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Attribute a && kind == a.kind && value.equals(a.value) && Objects.equals(meta, a.meta)
                && Objects.equals(observedAt, a.observedAt) && sub.equals(a.sub) && createdAt == a.createdAt
                && modifiedAt == a.modifiedAt;
    }

    @Override
    public int hashCode() {
        // over the ten components, as equals compares them
        int h = kind.hashCode();
        h = 31 * h + value.hashCode();
        h = 31 * h + Objects.hashCode(datasetId());
        h = 31 * h + Objects.hashCode(observedAt);
        h = 31 * h + Objects.hashCode(unitCode());
        h = 31 * h + Objects.hashCode(valueType());
        h = 31 * h + Objects.hashCode(objectType());
        h = 31 * h + sub.hashCode();
        h = 31 * h + Long.hashCode(createdAt);
        return 31 * h + Long.hashCode(modifiedAt);
    }

    @Override
    public String toString() {
        return "Attribute[kind=" + kind + ", value=" + value + ", datasetId=" + datasetId() + ", observedAt=" + observedAt
                + ", unitCode=" + unitCode() + ", valueType=" + valueType() + ", objectType=" + objectType() + ", sub="
                + sub + ", createdAt=" + createdAt + ", modifiedAt=" + modifiedAt + "]";
    }
}
