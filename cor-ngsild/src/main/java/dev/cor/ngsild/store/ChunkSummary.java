package dev.cor.ngsild.store;

import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.query.PartialAggregate;

/**
 * What a store keeps of a chunk of one attribute's instances (those consecutive in its
 * observedAt order) so that an aggregation (§ 4.5.19) need not read them: the
 * {@link PartialAggregate} of their values, the least and greatest observedAt, their datasetId
 * when they share one, and the type of the last (an aggregated attribute shows its last
 * instance's). The summary is over observedAt: a query by another time property reads the
 * instances. Immutable; any thread.
 *
 * @param aggregate the instances' partial aggregate
 * @param first     the least observedAt of the chunk
 * @param last      the greatest observedAt of the chunk
 * @param datasetId the datasetId every instance has ({@code null}: none has one); meaningless when {@code mixed}
 * @param mixed     whether the instances are of more than one datasetId (an aggregation then reads them)
 * @param lastType  the NGSI-LD type of the last instance's attribute ({@code Property}, ...)
 */
public record ChunkSummary(PartialAggregate aggregate, long first, long last, String datasetId, boolean mixed, String lastType) {

    /**
     * The summary of {@code items[from..to)} (not empty), or {@code null} when it cannot have one:
     * an instance without observedAt, or a number too large to sum in partials
     * ({@link PartialAggregate.Builder#build}). Instances out of observedAt order are taken in
     * that order (those of one time as given): the first and last values are those a read finds.
     */
    public static ChunkSummary of(TemporalInstance[] items, int from, int to) {
        long previous = Long.MIN_VALUE;
        for (int k = from; k < to; k++) {
            long t = items[k].observedAt();
            if (t == TemporalInstance.NO_TIME) {
                return null;
            }
            if (t < previous) {
                TemporalInstance[] sorted = java.util.Arrays.copyOfRange(items, from, to);
                java.util.Arrays.sort(sorted, java.util.Comparator.comparingLong(TemporalInstance::observedAt)); // stable
                return ordered(sorted, 0, sorted.length);
            }
            previous = t;
        }
        return ordered(items, from, to);
    }

    /** The summary of a chunk's instances, as {@link #of(TemporalInstance[], int, int)}; {@code null} for none. */
    public static ChunkSummary of(java.util.List<TemporalInstance> instances) {
        return instances.isEmpty() ? null : of(instances.toArray(new TemporalInstance[0]), 0, instances.size());
    }

    private static ChunkSummary ordered(TemporalInstance[] items, int from, int to) {
        PartialAggregate.Builder b = new PartialAggregate.Builder();
        String dataset = items[from].value().datasetId();
        boolean mixed = false;
        for (int k = from; k < to; k++) {
            TemporalInstance i = items[k];
            mixed |= !java.util.Objects.equals(dataset, i.value().datasetId());
            b.add(i.observedAt(), i.deleted() ? null : i.value());
        }
        PartialAggregate a = b.build();
        return a == null ? null : new ChunkSummary(a, items[from].observedAt(), items[to - 1].observedAt(), dataset, mixed,
                items[to - 1].value().kind().typeName());
    }

    /** How many bytes of heap one takes, about. */
    public long heapBytes() {
        return 48 + aggregate.heapBytes();
    }
}
