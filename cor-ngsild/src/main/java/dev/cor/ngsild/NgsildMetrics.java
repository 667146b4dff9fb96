package dev.cor.ngsild;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The broker's counters: requests by operation and status. Any thread counts (the loops, the
 * workers); any thread reads. {@link #appendPrometheus} writes them in the Prometheus text
 * format, for a server's {@code /metrics}.
 */
public final class NgsildMetrics {
    private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();

    /** Counts one answered request. */
    public void request(String operation, int status) {
        requests.computeIfAbsent(operation + '\u0000' + status, k -> new LongAdder()).increment();
    }

    /** How many requests of {@code operation} were answered with {@code status}. */
    public long requests(String operation, int status) {
        LongAdder a = requests.get(operation + '\u0000' + status);
        return a == null ? 0 : a.sum();
    }

    /** Appends the request counters as {@code cor_ngsild_requests_total{operation,status}}. */
    public void appendPrometheus(StringBuilder out) {
        out.append("# HELP cor_ngsild_requests_total NGSI-LD requests answered, by operation and status.\n");
        out.append("# TYPE cor_ngsild_requests_total counter\n");
        Map<String, LongAdder> sorted = new TreeMap<>(requests);
        for (Map.Entry<String, LongAdder> e : sorted.entrySet()) {
            int sep = e.getKey().indexOf('\u0000');
            out.append("cor_ngsild_requests_total{operation=\"").append(e.getKey(), 0, sep)
                    .append("\",status=\"").append(e.getKey(), sep + 1, e.getKey().length()).append("\"} ")
                    .append(e.getValue().sum()).append('\n');
        }
    }
}
