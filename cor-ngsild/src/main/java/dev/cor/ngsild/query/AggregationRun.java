package dev.cor.ngsild.query;

import java.util.List;
import java.util.function.Supplier;

/**
 * A stretch of one attribute's instances, in time order, as a store hands it to
 * {@link TemporalAggregation#aggregateRuns}: instances to read one by one, or a chunk the store
 * summarised - its {@link PartialAggregate}, the times of its first and last instance, and how to
 * read its instances when a period cannot take it whole (a period boundary cuts it, or a method
 * needs what a summary lacks). The runs of one call follow each other in time: a run's first
 * time is not before the previous run's last. A summarised run may also say how to read its
 * instances' numbers only ({@code numbers}: each a Property holding its number as a double, or a
 * deletion) - what every method but distinctCount reads, cheaper for a store to give. Immutable;
 * any thread.
 *
 * @param <T> the store's instance
 */
public final class AggregationRun<T> {
    private final List<? extends T> instances;
    private final PartialAggregate summary;
    private final long first;
    private final long last;
    private final Supplier<? extends List<? extends T>> reader;
    private final Supplier<? extends List<? extends T>> numbers;

    private AggregationRun(List<? extends T> instances, PartialAggregate summary, long first, long last,
            Supplier<? extends List<? extends T>> reader, Supplier<? extends List<? extends T>> numbers) {
        this.instances = instances;
        this.summary = summary;
        this.first = first;
        this.last = last;
        this.reader = reader;
        this.numbers = numbers;
    }

    /** Instances to read one by one. */
    public static <T> AggregationRun<T> of(List<? extends T> instances) {
        return new AggregationRun<>(instances, null, 0, 0, null, null);
    }

    /**
     * A summarised chunk: every instance of it has a time in [{@code first}, {@code last}];
     * {@code reader} answers its instances, in time order, when asked.
     */
    public static <T> AggregationRun<T> summarised(PartialAggregate summary, long first, long last,
            Supplier<? extends List<? extends T>> reader) {
        return summarised(summary, first, last, reader, null);
    }

    /**
     * A summarised chunk whose instances' numbers {@code numbers} reads (answering {@code null}
     * when it cannot: {@code reader} is then used).
     */
    public static <T> AggregationRun<T> summarised(PartialAggregate summary, long first, long last,
            Supplier<? extends List<? extends T>> reader, Supplier<? extends List<? extends T>> numbers) {
        if (summary == null || first > last) {
            throw new IllegalArgumentException("a summarised run needs its summary and its times");
        }
        return new AggregationRun<>(null, summary, first, last, reader, numbers);
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

    /** The instances, or when it can say them so and {@code numbersDo}, their numbers only. */
    List<? extends T> instances(boolean numbersDo) {
        if (numbersDo && numbers != null) {
            List<? extends T> l = numbers.get();
            if (l != null) {
                return l;
            }
        }
        return instances();
    }
}
