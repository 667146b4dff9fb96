package dev.cor.ngsild;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The broker's counters: requests by operation and status, and notifications by outcome. Any thread counts (the loops, the
 * workers); any thread reads. Counting a request allocates nothing once its operation was seen:
 * one array of counters per operation, indexed by status. {@link #appendPrometheus} writes them
 * in the Prometheus text format, for a server's {@code /metrics}.
 */
public final class NgsildMetrics {
    /** Statuses 100-599 have a counter each; anything else (none is answered) is not counted. */
    private static final int FIRST = 100;
    private static final int LAST = 599;

    private final Map<String, AtomicLongArray> requests = new ConcurrentHashMap<>();
    private final LongAdder notificationsSent = new LongAdder();
    private final LongAdder notificationsFailed = new LongAdder();
    private final LongAdder notificationsOverflowed = new LongAdder();

    /** Counts one notification sent: taken by its receiver, or failed (refused, reset, timed out, an error status). */
    public void notificationSent(boolean ok) {
        (ok ? notificationsSent : notificationsFailed).increment();
    }

    /** Counts one notification that found its subscription's queue full and was not sent. */
    public void notificationOverflowed() {
        notificationsOverflowed.increment();
    }

    /** Notifications by outcome: {@code sent}, {@code failed} or {@code overflowed}. */
    public long notifications(String outcome) {
        return switch (outcome) {
            case "sent" -> notificationsSent.sum();
            case "failed" -> notificationsFailed.sum();
            case "overflowed" -> notificationsOverflowed.sum();
            default -> throw new IllegalArgumentException("no outcome " + outcome);
        };
    }

    /** Counts one answered request. */
    public void request(String operation, int status) {
        if (status < FIRST || status > LAST) {
            return;
        }
        AtomicLongArray byStatus = requests.get(operation);
        if (byStatus == null) {
            byStatus = requests.computeIfAbsent(operation, k -> new AtomicLongArray(LAST - FIRST + 1));
        }
        byStatus.incrementAndGet(status - FIRST);
    }

    /** How many requests of {@code operation} were answered with {@code status}. */
    public long requests(String operation, int status) {
        AtomicLongArray byStatus = requests.get(operation);
        return byStatus == null || status < FIRST || status > LAST ? 0 : byStatus.get(status - FIRST);
    }

    /**
     * Appends the request counters as {@code cor_ngsild_requests_total{operation,status}} and the
     * notification counters as {@code cor_ngsild_notifications_total{outcome}}.
     */
    public void appendPrometheus(StringBuilder out) {
        PrometheusText.family(out, "cor_ngsild_requests_total", "counter", "NGSI-LD requests answered, by operation and status.");
        for (Map.Entry<String, AtomicLongArray> e : new TreeMap<>(requests).entrySet()) {
            AtomicLongArray byStatus = e.getValue();
            for (int i = 0; i < byStatus.length(); i++) {
                long n = byStatus.get(i);
                if (n > 0) {
                    out.append("cor_ngsild_requests_total{operation=\"").append(e.getKey())
                            .append("\",status=\"").append(FIRST + i).append("\"} ").append(n).append('\n');
                }
            }
        }
        PrometheusText.family(out, "cor_ngsild_notifications_total", "counter",
                "Notifications, by outcome (sent, failed, overflowed: its subscription's queue was full).");
        out.append("cor_ngsild_notifications_total{outcome=\"sent\"} ").append(notificationsSent.sum()).append('\n');
        out.append("cor_ngsild_notifications_total{outcome=\"failed\"} ").append(notificationsFailed.sum()).append('\n');
        out.append("cor_ngsild_notifications_total{outcome=\"overflowed\"} ").append(notificationsOverflowed.sum()).append('\n');
    }
}
