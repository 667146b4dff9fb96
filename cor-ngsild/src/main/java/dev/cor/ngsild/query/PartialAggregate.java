package dev.cor.ngsild.query;

import java.util.Arrays;

import dev.cor.ngsild.model.Attribute;

/**
 * What an aggregation needs of a run of instances (a store's chunk) for the methods that can be
 * summarised exactly (ETSI GS CIM 009 V1.8 § 4.5.19): how many values, how many of them numbers
 * (and booleans), the exact sum and sum of squares of those as {@link ExactSum} partials, their
 * least and greatest, and how many Properties' texts. A period that holds the whole run takes it
 * instead of its instances, with the same result; distinctCount and the texts' extremes are not
 * in it, so a period that needs them reads the instances ({@link PeriodAccumulator#takes}).
 * Immutable (the arrays are never written after the build); any thread.
 *
 * @param count      the values (instances that record no deletion)
 * @param numbers    the numbers and booleans of Properties among them
 * @param sum        the partials of their exact sum
 * @param sumsq      the partials of their squares' exact sum
 * @param min        the least of them (meaningless without numbers)
 * @param max        the greatest of them (meaningless without numbers)
 * @param texts      the Properties' strings and typed literals among the values
 * @param firstValue the time of the first value, {@link Long#MIN_VALUE} when none
 * @param lastValue  the time of the last value, {@link Long#MIN_VALUE} when none
 */
public record PartialAggregate(long count, long numbers, double[] sum, double[] sumsq, double min, double max, long texts,
        long firstValue, long lastValue) {

    /** How many bytes of heap one takes, about: what a store counts for keeping it. */
    public long heapBytes() {
        return 96 + 8L * (sum.length + sumsq.length);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PartialAggregate p && count == p.count && numbers == p.numbers && Arrays.equals(sum, p.sum)
                && Arrays.equals(sumsq, p.sumsq) && Double.compare(min, p.min) == 0 && Double.compare(max, p.max) == 0
                && texts == p.texts && firstValue == p.firstValue && lastValue == p.lastValue;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(count) * 31 + Arrays.hashCode(sum);
    }

    @Override
    public String toString() {
        return "PartialAggregate[count " + count + ", numbers " + numbers + ", sum " + Arrays.toString(sum) + ", min " + min
                + ", max " + max + ", texts " + texts + "]";
    }

    /**
     * Builds one from a run's instances, in their time order, with the rules of a period
     * ({@link PeriodAccumulator}, so the two cannot disagree). One owner: not thread-safe.
     */
    public static final class Builder {
        private final PeriodAccumulator acc = new PeriodAccumulator(false, false);
        private long firstValue = Long.MIN_VALUE;
        private long lastValue = Long.MIN_VALUE;

        /** Takes one instance: its time, and its attribute or {@code null} when it records a deletion. */
        public Builder add(long time, Attribute value) {
            if (value != null) {
                acc.add(value);
                if (firstValue == Long.MIN_VALUE) {
                    firstValue = time;
                }
                lastValue = time;
            }
            return this;
        }

        /**
         * The summary, or {@code null} when it cannot be one: a number too large for the partials
         * ({@link ExactSum#big()}) - the run is then read instance by instance.
         */
        public PartialAggregate build() {
            if (acc.sum.big() || acc.sumsq.big()) {
                return null;
            }
            return new PartialAggregate(acc.count, acc.numbers, acc.sum.partials(), acc.sumsq.partials(),
                    acc.numbers > 0 ? acc.min : 0, acc.numbers > 0 ? acc.max : 0, acc.texts, firstValue, lastValue);
        }
    }
}
