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
        int defaultLimit, int maxLimit) {

    /** Every bound at least 1, and {@code defaultLimit} no greater than {@code maxLimit}. */
    public NgsildLimits {
        positive("maxAttributes", maxAttributes);
        positive("maxInstances", maxInstances);
        positive("maxDepth", maxDepth);
        positive("maxBatch", maxBatch);
        positive("maxIdLength", maxIdLength);
        positive("defaultLimit", defaultLimit);
        positive("maxLimit", maxLimit);
        if (defaultLimit > maxLimit) {
            throw new IllegalArgumentException("defaultLimit " + defaultLimit + " > maxLimit " + maxLimit);
        }
    }

    /** 1 000 attributes, 100 instances, a depth of 64, 1 000 entities a batch, ids of 2 048 characters, pages of 20 by default and 1 000 at most. */
    public static NgsildLimits defaults() {
        return new NgsildLimits(1_000, 100, 64, 1_000, 2_048, 20, 1_000);
    }

    private static void positive(String name, int v) {
        if (v < 1) {
            throw new IllegalArgumentException(name + " must be >= 1: " + v);
        }
    }
}
