package dev.cor.ngsild.store;

import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;

/**
 * Which instances of one attribute a temporal read wants (§ 4.11, § 5.7.3-5.7.4): those whose
 * {@link #property} lies in [{@link #from}, {@link #to}) - an instance without that time is in no
 * window but the unbounded one -, of one datasetId or all, the {@link #lastN} latest of them or
 * all. A store answers them ordered by that time, oldest first (an instance without it first,
 * in the order recorded).
 *
 * @param property  the time compared ({@code timeproperty}; {@code observedAt} by default)
 * @param from      the window's first millisecond, inclusive, or {@link Long#MIN_VALUE}
 * @param to        the window's end, exclusive, or {@link Long#MAX_VALUE}
 * @param datasetId only the instances of this datasetId ({@link #DEFAULT_DATASET}: those without
 *                  one); {@code null}: every instance
 * @param lastN     only the latest {@code lastN} of the window; 0: all
 */
public record InstanceQuery(TimeProperty property, long from, long to, String datasetId, int lastN) {
    /** The {@link #datasetId} that asks for the default instances (those without a datasetId). */
    public static final String DEFAULT_DATASET = "@none";

    /** Every instance, ordered by observedAt. */
    public static final InstanceQuery ALL = new InstanceQuery(TimeProperty.OBSERVED_AT, Long.MIN_VALUE, Long.MAX_VALUE, null, 0);

    public InstanceQuery {
        if (property == null || from > to || lastN < 0) {
            throw new IllegalArgumentException("window [" + from + ", " + to + ") of " + property + ", lastN " + lastN);
        }
    }

    /** Whether the window is unbounded on both sides: an instance without the time is in it too. */
    public boolean unbounded() {
        return from == Long.MIN_VALUE && to == Long.MAX_VALUE;
    }

    /** Whether {@code i} is in this query's window and dataset (not its lastN: that needs the others). */
    public boolean admits(TemporalInstance i) {
        if (datasetId != null) {
            String d = i.value().datasetId();
            if (datasetId.equals(DEFAULT_DATASET) ? d != null : !datasetId.equals(d)) {
                return false;
            }
        }
        if (unbounded()) {
            return true;
        }
        long t = i.time(property);
        return t != TemporalInstance.NO_TIME && t >= from && t < to;
    }
}
