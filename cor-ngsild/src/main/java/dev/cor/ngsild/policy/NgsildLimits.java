package dev.cor.ngsild.policy;

/**
 * Bounds on what one request may carry, each answered with a clear 400 past it (the body's size
 * is the server's bound: 413). Immutable; {@link #defaults()} are sized for real data models
 * with room to spare.
 *
 * @param maxAttributes     attributes of one entity (and of one fragment)
 * @param maxInstances      instances (datasetIds) of one attribute
 * @param maxDepth          nesting of a JSON body (objects and arrays)
 * @param maxBatch          entities in one batch operation
 * @param maxIdLength       characters of an entity id, a type or an attribute name
 * @param defaultLimit      entities a query answers when it gives no {@code limit}
 * @param maxLimit          the largest {@code limit} a query may ask for
 */
public record NgsildLimits(int maxAttributes, int maxInstances, int maxDepth, int maxBatch, int maxIdLength,
        int defaultLimit, int maxLimit, int temporalInstances) {

    /** Every bound at least 1, and {@code defaultLimit} no greater than {@code maxLimit}. */
    public NgsildLimits {
        positive("maxAttributes", maxAttributes);
        positive("maxInstances", maxInstances);
        positive("maxDepth", maxDepth);
        positive("maxBatch", maxBatch);
        positive("maxIdLength", maxIdLength);
        positive("defaultLimit", defaultLimit);
        positive("maxLimit", maxLimit);
        positive("temporalInstances", temporalInstances);
        if (defaultLimit > maxLimit) {
            throw new IllegalArgumentException("defaultLimit " + defaultLimit + " > maxLimit " + maxLimit);
        }
    }

    /** These bounds without the temporal one: {@link #DEFAULT_TEMPORAL_INSTANCES} instances a temporal answer. */
    public NgsildLimits(int maxAttributes, int maxInstances, int maxDepth, int maxBatch, int maxIdLength, int defaultLimit,
            int maxLimit) {
        this(maxAttributes, maxInstances, maxDepth, maxBatch, maxIdLength, defaultLimit, maxLimit, DEFAULT_TEMPORAL_INSTANCES);
    }

    /** The most attribute instances one temporal answer carries by default (§ 6.3.10: past them it is a 206). */
    public static final int DEFAULT_TEMPORAL_INSTANCES = 10_000;

    /**
     * 1 000 attributes, 100 instances, a depth of 64, 1 000 entities a batch, ids of 2 048
     * characters, pages of 20 by default and 1 000 at most, 10 000 instances a temporal answer.
     */
    public static NgsildLimits defaults() {
        return new NgsildLimits(1_000, 100, 64, 1_000, 2_048, 20, 1_000, DEFAULT_TEMPORAL_INSTANCES);
    }

    /** These bounds with {@code n} instances at most in a temporal answer (its temporal pagination, § 6.3.10). */
    public NgsildLimits withTemporalInstances(int n) {
        return new NgsildLimits(maxAttributes, maxInstances, maxDepth, maxBatch, maxIdLength, defaultLimit, maxLimit, n);
    }

    private static void positive(String name, int v) {
        if (v < 1) {
            throw new IllegalArgumentException(name + " must be >= 1: " + v);
        }
    }
}
