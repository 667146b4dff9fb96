package dev.cor.ngsild.query;

import java.util.List;
import java.util.function.Supplier;

/**
 * A stretch of one attribute's instances, in time order, as a store hands it to
 * {@link TemporalAggregation#aggregateRuns}: instances to read one by one, or a chunk the store
 * summarised - its {@link PartialAggregate}, the times of its first and last instance, and how to
 * read its instances when a period cannot take it whole (a period boundary cuts it, or a method
 * needs what a summary lacks). The runs of one call follow each other in time: a run's first
 * time is not before the previous run's last. Immutable; any thread.
 *
 * @param <T> the store's instance
 */
public final class AggregationRun<T> {
    private final List<? extends T> instances;
    private final PartialAggregate summary;
    private final long first;
    private final long last;
    private final Supplier<? extends List<? extends T>> reader;

    private AggregationRun(List<? extends T> instances, PartialAggregate summary, long first, long last,
            Supplier<? extends List<? extends T>> reader) {
        this.instances = instances;
        this.summary = summary;
        this.first = first;
        this.last = last;
        this.reader = reader;
    }

    /** Instances to read one by one. */
    public static <T> AggregationRun<T> of(List<? extends T> instances) {
        return new AggregationRun<>(instances, null, 0, 0, null);
    }

    /**
     * A summarised chunk: every instance of it has a time in [{@code first}, {@code last}];
     * {@code reader} answers its instances, in time order, when asked.
     */
    public static <T> AggregationRun<T> summarised(PartialAggregate summary, long first, long last,
            Supplier<? extends List<? extends T>> reader) {
        if (summary == null || first > last) {
            throw new IllegalArgumentException("a summarised run needs its summary and its times");
        }
        return new AggregationRun<>(null, summary, first, last, reader);
    }

    PartialAggregate summary() {
        return summary;
    }

    long first() {
        return first;
    }

    long last() {
        return last;
    }

    /** The instances: those given, or the summarised chunk's, read. */
    List<? extends T> instances() {
        return instances != null ? instances : reader.get();
    }
}
