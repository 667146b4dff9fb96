package dev.cor.bench.load;

import java.util.Locale;

import dev.cor.bench.JsonText;

/**
 * What one run measured, over its measured seconds only (warmup excluded): requests answered
 * (any status), errors (no answer: connect, reset, deadline), answers outside 2xx/3xx,
 * requests still unfinished when the run ended, and the latency percentiles in microseconds -
 * from each request's due time in an open loop, from its send in a closed loop. Made by
 * {@link LoadRun}; immutable; printed by {@link CorRequest}.
 */
public record LoadResult(String target, boolean openLoop, double rate, int connections, int sockets, int warmupS,
        double durationS, long requests, long errors, long notOk, long unfinished, long reconnects, double p50Us,
        double p90Us, double p99Us, double p999Us, double maxUs, Lag sendLag, String firstError) {

    /**
     * Open loop: how late the generator itself sent the requests whose caller was free when they
     * fell due, in microseconds. Lateness here is the generator's, not the server's: when it
     * nears the latencies measured, the generator (or the machine) is the bottleneck.
     */
    public record Lag(double p50Us, double p99Us, double maxUs) {
    }

    /** Answers per second over the measured time. */
    public double requestsPerSecond() {
        return durationS > 0 ? requests / durationS : 0;
    }

    /** 0 when at least one request was answered with 2xx or 3xx, 1 when every request failed. */
    public int exitCode() {
        return requests - notOk > 0 ? 0 : 1;
    }

    /** The human-readable report, one fact a line. */
    public String text() {
        StringBuilder b = new StringBuilder();
        line(b, "target", target);
        line(b, "mode", (openLoop ? "open loop at " + fmt(rate) + " req/s (latency from each request's due time)"
                : "closed loop (latency from send)") + ", " + connections + " callers on " + sockets + " socket(s)");
        line(b, "duration", fmt(durationS) + " s measured after " + warmupS + " s warmup");
        line(b, "requests", Long.toString(requests));
        line(b, "errors", errors + (firstError != null ? " (first: " + firstError + ")" : ""));
        line(b, "non-2xx/3xx", Long.toString(notOk));
        line(b, "unfinished", Long.toString(unfinished));
        line(b, "reconnects", Long.toString(reconnects));
        line(b, "requests/s", fmt(requestsPerSecond()));
        line(b, "latency us", "p50 " + fmt(p50Us) + "  p90 " + fmt(p90Us) + "  p99 " + fmt(p99Us) + "  p99.9 "
                + fmt(p999Us) + "  max " + fmt(maxUs));
        if (sendLag != null) {
            line(b, "send lag us", "p50 " + fmt(sendLag.p50Us()) + "  p99 " + fmt(sendLag.p99Us()) + "  max "
                    + fmt(sendLag.maxUs()) + "  (the generator's own lateness)");
        }
        return b.toString();
    }

    /** The same as one JSON object, for scripts. */
    public String json() {
        return "{\"target\":" + JsonText.quote(target)
                + ",\"mode\":\"" + (openLoop ? "open" : "closed") + "\""
                + ",\"rate\":" + (openLoop ? fmt(rate) : "null")
                + ",\"connections\":" + connections
                + ",\"sockets\":" + sockets
                + ",\"warmup_s\":" + warmupS
                + ",\"duration_s\":" + fmt(durationS)
                + ",\"requests\":" + requests
                + ",\"errors\":" + errors
                + ",\"non_2xx_3xx\":" + notOk
                + ",\"unfinished\":" + unfinished
                + ",\"reconnects\":" + reconnects
                + ",\"requests_per_s\":" + fmt(requestsPerSecond())
                + ",\"latency_us\":{\"p50\":" + fmt(p50Us) + ",\"p90\":" + fmt(p90Us) + ",\"p99\":" + fmt(p99Us)
                + ",\"p99_9\":" + fmt(p999Us) + ",\"max\":" + fmt(maxUs) + "}"
                + ",\"send_lag_us\":" + (sendLag == null ? "null" : "{\"p50\":" + fmt(sendLag.p50Us()) + ",\"p99\":"
                        + fmt(sendLag.p99Us()) + ",\"max\":" + fmt(sendLag.maxUs()) + "}")
                + ",\"first_error\":" + (firstError == null ? "null" : JsonText.quote(firstError))
                + "}";
    }

    private static void line(StringBuilder b, String name, String value) {
        b.append(String.format(Locale.ROOT, "%-12s %s%n", name, value));
    }

    static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }
}
