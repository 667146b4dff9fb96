package dev.cor.ngsild.query;

/**
 * The aggregation methods of the aggregated temporal representation (ETSI GS CIM 009 V1.8
 * § 4.5.19), each with the name that {@code aggrMethods} gives it and that the answer uses as
 * the member holding its periods. What each computes, and over which values, is
 * {@link TemporalAggregation}'s to say. Constants: any thread.
 */
public enum AggregationMethod {
    TOTAL_COUNT("totalCount"),
    DISTINCT_COUNT("distinctCount"),
    SUM("sum"),
    AVG("avg"),
    MIN("min"),
    MAX("max"),
    STDDEV("stddev"),
    SUMSQ("sumsq");

    private static final AggregationMethod[] ALL = values();

    private final String parameterName;

    AggregationMethod(String parameterName) {
        this.parameterName = parameterName;
    }

    /** Its name in {@code aggrMethods} and as the member of an aggregated attribute ({@code avg}, ...). */
    public String parameterName() {
        return parameterName;
    }

    /** The method {@code aggrMethods} calls {@code name} (case-sensitive), or {@code null}. */
    public static AggregationMethod of(String name) {
        for (AggregationMethod m : ALL) {
            if (m.parameterName.equals(name)) {
                return m;
            }
        }
        return null;
    }
}
