package dev.cor.ngsild.query;

import java.util.Objects;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One period of one aggregation method (ETSI GS CIM 009 V1.8 § 4.5.19): the aggregated value and
 * the period it covers, [{@link #startAt}, {@link #endAt}) in epoch milliseconds. The answer
 * writes it as {@code [value, "startAt", "endAt"]}. Immutable; any thread.
 *
 * @param value   the method's result over the period's instances
 * @param startAt the period's first millisecond, inclusive
 * @param endAt   the period's end, exclusive
 */
public record AggregatedPeriod(JsonNode value, long startAt, long endAt) {
    /** A value is required and the period is not empty. */
    public AggregatedPeriod {
        Objects.requireNonNull(value, "value");
        if (endAt <= startAt) {
            throw new IllegalArgumentException("period [" + startAt + ", " + endAt + ")");
        }
    }
}
