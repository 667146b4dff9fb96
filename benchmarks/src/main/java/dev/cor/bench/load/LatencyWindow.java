package dev.cor.bench.load;

import org.HdrHistogram.Histogram;

/**
 * Outcomes over one stretch of time - the whole measured run, or one second of progress: answers
 * (their latencies in an HdrHistogram, in nanoseconds, 3 significant digits, up to an hour),
 * answers with a status outside 2xx/3xx, and failures. Used by {@link LoadRun} on its loop thread.
 */
final class LatencyWindow {
    static final long MAX_NANOS = 3_600_000_000_000L;

    private final Histogram latencies = new Histogram(1, MAX_NANOS, 3);
    private long answers;
    private long notOk;
    private long failures;

    void answered(long latencyNanos, int status) {
        record(latencyNanos);
        if (status < 200 || status >= 400) {
            notOk++;
        }
    }

    /** Counts one duration that is not an answer's (the generator's own send lag). */
    void record(long nanos) {
        latencies.recordValue(Math.max(1, Math.min(nanos, MAX_NANOS)));
        answers++;
    }

    void failed() {
        failures++;
    }

    long answers() {
        return answers;
    }

    /** Answers with a status outside 2xx and 3xx. */
    long notOk() {
        return notOk;
    }

    long failures() {
        return failures;
    }

    /** The latency at {@code percentile} (0..100) in microseconds; 0 with no answers. */
    double micros(double percentile) {
        return answers == 0 ? 0 : latencies.getValueAtPercentile(percentile) / 1000.0;
    }

    /** The largest latency in microseconds; 0 with no answers. */
    double maxMicros() {
        return answers == 0 ? 0 : latencies.getMaxValue() / 1000.0;
    }

    void reset() {
        latencies.reset();
        answers = 0;
        notOk = 0;
        failures = 0;
    }
}
