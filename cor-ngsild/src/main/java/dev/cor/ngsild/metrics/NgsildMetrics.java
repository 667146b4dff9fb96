package dev.cor.ngsild.metrics;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

import dev.cor.ngsild.store.EntityStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * The broker's meters, in the Micrometer registry it was built with: requests by operation and
 * status ({@code cor.ngsild.requests}), their latency by operation and status class
 * ({@code cor.ngsild.request.duration}, a histogram in seconds from 50 us to 10 s), notifications
 * by outcome ({@code cor.ngsild.notifications}), entities by tenant ({@code cor.ngsild.entities}) and
 * the entity queries that scanned or took a value index ({@code cor.ngsild.query.scans},
 * {@code cor.ngsild.query.value.index}).
 * <p>
 * Any thread records (the loops, the workers); the registry's scrape reads from any other. A
 * request is recorded through the {@link Operation} handle its operation resolved once: after the
 * first request of an operation with a status, recording it again allocates nothing and looks
 * nothing up by name (the meters are kept in arrays indexed by status and status class).
 */
public final class NgsildMetrics {
    /** Statuses 100-599 have a counter each; anything else (none is answered) is not counted. */
    private static final int FIRST = 100;
    private static final int LAST = 599;

    /**
     * The latency histogram's bucket bounds: from an answer from the render cache (tens of
     * microseconds) to the longest a forward or a context download may take (seconds).
     */
    static final Duration[] LATENCY_BUCKETS = {micros(50), micros(100), micros(250), micros(500), millis(1),
            millis(2.5), millis(5), millis(10), millis(25), millis(50), millis(100), millis(250), millis(500),
            millis(1000), millis(2500), millis(5000), millis(10_000)};
    private static final String[] STATUS_CLASSES = {"1xx", "2xx", "3xx", "4xx", "5xx"};

    private final MeterRegistry registry;
    private final Counter notificationsSent;
    private final Counter notificationsFailed;
    private final Counter notificationsOverflowed;
    private final Counter queriesScanned;
    private final Counter queriesIndexed;
    private final Map<String, Operation> operations = new ConcurrentHashMap<>();
    private final Map<String, Boolean> tenantsMetered = new ConcurrentHashMap<>();

    /** The broker's meters in {@code registry} (the notification counters are registered now, the rest on first use). */
    public NgsildMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        notificationsSent = notificationCounter("sent");
        notificationsFailed = notificationCounter("failed");
        notificationsOverflowed = notificationCounter("overflowed");
        queriesScanned = Counter.builder("cor.ngsild.query.scans").description("Entity queries that read at least "
                + SCAN_READS + " entities they did not answer with: no index bounded their filter.").register(registry);
        queriesIndexed = Counter.builder("cor.ngsild.query.value.index")
                .description("Entity queries whose candidates a value index gave.").register(registry);
    }

    /** A query that rejected this many entities or more scanned ({@code cor.ngsild.query.scans}). */
    public static final int SCAN_READS = 1_000;

    /**
     * Records one entity query's plan: whether a value index gave its candidates, and how many
     * entities it read and did not select; answers whether that makes it a scan.
     */
    public boolean queryRan(boolean indexed, int rejected) {
        if (indexed) {
            queriesIndexed.increment();
        }
        if (rejected >= SCAN_READS) {
            queriesScanned.increment();
            return true;
        }
        return false;
    }

    /** Entity queries that scanned ({@link #queryRan}), and those a value index answered: {@code scans} or {@code indexed}. */
    public long queries(String plan) {
        return (long) switch (plan) {
            case "scans" -> queriesScanned.count();
            case "indexed" -> queriesIndexed.count();
            default -> throw new IllegalArgumentException("no plan " + plan);
        };
    }

    private Counter notificationCounter(String outcome) {
        return Counter.builder("cor.ngsild.notifications")
                .description("Notifications, by outcome (sent, failed, overflowed: its subscription's queue was full).")
                .tag("outcome", outcome).register(registry);
    }

    /** The registry the meters are in. */
    public MeterRegistry registry() {
        return registry;
    }

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
        return (long) switch (outcome) {
            case "sent" -> notificationsSent.count();
            case "failed" -> notificationsFailed.count();
            case "overflowed" -> notificationsOverflowed.count();
            default -> throw new IllegalArgumentException("no outcome " + outcome);
        };
    }

    /** The meters of one operation (an NGSI-LD operation's name, as {@code /metrics} labels it); resolve it once, keep it. */
    public Operation operation(String name) {
        return operations.computeIfAbsent(name, Operation::new);
    }

    /** How many requests of {@code operation} were answered with {@code status}. */
    public long requests(String operation, int status) {
        Operation o = operations.get(operation);
        if (o == null || status < FIRST || status > LAST) {
            return 0;
        }
        Counter c = o.byStatus.get(status - FIRST);
        return c == null ? 0 : (long) c.count();
    }

    /**
     * Has {@code cor.ngsild.entities{tenant}} report how many entities {@code store} holds for
     * {@code tenant}, from now on, if the store holds that tenant; a tenant already reported is
     * left as it is. Cheap when it is (one look-up, nothing allocated): the broker calls it after
     * each write that succeeded.
     */
    public void tenant(EntityStore store, String tenant) {
        if (tenantsMetered.containsKey(tenant) || !store.hasTenant(tenant)) {
            return;
        }
        if (tenantsMetered.putIfAbsent(tenant, Boolean.TRUE) == null) {
            Gauge.builder("cor.ngsild.entities", store, s -> s.count(tenant))
                    .description("Entities held, by tenant (the default tenant is tenant=\"\").")
                    .tag("tenant", tenant).strongReference(true).register(registry);
        }
    }

    /**
     * One operation's meters: its requests by status, its latencies by status class. Each meter
     * is registered the first time it is needed (registering is idempotent: two threads racing
     * to the same one get the same meter) and kept in an array; any thread records.
     */
    public final class Operation {
        private final String name;
        private final AtomicReferenceArray<Counter> byStatus = new AtomicReferenceArray<>(LAST - FIRST + 1);
        private final AtomicReferenceArray<Timer> byClass = new AtomicReferenceArray<>(STATUS_CLASSES.length);

        private Operation(String name) {
            this.name = name;
        }

        /** Records one request answered with {@code status} after {@code nanos}. */
        public void answered(int status, long nanos) {
            if (status < FIRST || status > LAST) {
                return;
            }
            Counter c = byStatus.get(status - FIRST);
            if (c == null) {
                c = Counter.builder("cor.ngsild.requests").description("NGSI-LD requests answered, by operation and status.")
                        .tag("operation", name).tag("status", Integer.toString(status)).register(registry);
                byStatus.set(status - FIRST, c);
            }
            c.increment();
            int k = status / 100 - 1;
            Timer t = byClass.get(k);
            if (t == null) {
                t = Timer.builder("cor.ngsild.request.duration")
                        .description("How long the broker took to answer an NGSI-LD request, from its dispatch to its answer,"
                                + " by operation and status class.")
                        .tag("operation", name).tag("status_class", STATUS_CLASSES[k])
                        .serviceLevelObjectives(LATENCY_BUCKETS).register(registry);
                byClass.set(k, t);
            }
            t.record(nanos, TimeUnit.NANOSECONDS);
        }
    }

    private static Duration micros(long us) {
        return Duration.ofNanos(us * 1_000);
    }

    private static Duration millis(double ms) {
        return Duration.ofNanos((long) (ms * 1_000_000));
    }
}
