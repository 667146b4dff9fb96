package dev.cor.ngsild.store;

import java.util.Set;

/**
 * Which attributes the in-memory store keeps value indexes of, and how much heap they may take
 * (doc/broker.md, "Value indexes"). An index orders the values of one attribute of one tenant
 * ({@link dev.cor.ngsild.query.ValueKey}) so that a selective q reads the entities it answers
 * with rather than every holder of the attribute. Immutable.
 *
 * @param declared      expanded attribute names indexed in every tenant from the start
 * @param autoThreshold an attribute that a q could be answered from gets an index, built in the
 *                      background, once this many entities of a tenant hold it; 0: never
 * @param maxBytes      the heap all value indexes may take together (estimated per entry): an
 *                      index whose growth would pass it is dropped, and queries read the
 *                      attribute's holders again
 */
public record ValueIndexSettings(Set<String> declared, int autoThreshold, long maxBytes) {
    /** The default threshold for an automatic index: a q over fewer holders reads them fast enough. */
    public static final int DEFAULT_AUTO_THRESHOLD = 2_000;
    /** The default bound: about 2.8 M indexed values. */
    public static final long DEFAULT_MAX_BYTES = 256L << 20;

    public ValueIndexSettings {
        declared = Set.copyOf(declared);
        if (autoThreshold < 0) {
            throw new IllegalArgumentException("autoThreshold " + autoThreshold + " < 0");
        }
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes " + maxBytes + " < 0");
        }
    }

    /** None declared, automatic indexes past {@link #DEFAULT_AUTO_THRESHOLD}, within {@link #DEFAULT_MAX_BYTES}. */
    public static ValueIndexSettings defaults() {
        return new ValueIndexSettings(Set.of(), DEFAULT_AUTO_THRESHOLD, DEFAULT_MAX_BYTES);
    }

    /** No value index at all: every q reads the holders of its attributes. */
    public static ValueIndexSettings none() {
        return new ValueIndexSettings(Set.of(), 0, 0);
    }
}
