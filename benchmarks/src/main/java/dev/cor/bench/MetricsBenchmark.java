package dev.cor.bench;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import dev.cor.ngsild.metrics.NgsildMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the broker's request path pays for its metrics, one answered request per operation:
 * {@code counters} is what the broker counted before it used a metrics library (a map look-up by
 * operation name, then an {@code AtomicLongArray} slot per status), {@code broker} what it records
 * now ({@link NgsildMetrics.Operation#answered}: a Micrometer counter and timer); the others are the
 * candidates alone, each meter resolved once (per operation and status class) as the broker does: a
 * Micrometer counter and timer on its Prometheus registry, and the Prometheus Java client 1.x's
 * counter and classic histogram. The timers record a duration drawn from 1024 between 50 us and
 * 10 ms, so the bucket search is the one a real mix makes. Run it with {@code -t 1} (one loop)
 * and {@code -t 2} (two loops on one meter) and {@code -prof gc} (nothing may be allocated).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class MetricsBenchmark {
    private static final String[] OPERATIONS = {"retrieveEntity", "queryEntities", "createEntity", "updateAttributes",
            "deleteEntity", "mergeEntity", "batchUpsert", "createSubscription"};
    private static final int[] STATUSES = {200, 200, 201, 204, 204, 204, 201, 201};
    /** Prometheus' base unit: seconds; 50 us to 10 s. */
    private static final double[] BUCKETS = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
            0.1, 0.25, 0.5, 1, 2.5, 5, 10};

    /** The meters, shared by every benchmark thread (as by every loop). */
    @State(Scope.Benchmark)
    public static class Meters {
        final Map<String, AtomicLongArray> today = new ConcurrentHashMap<>();
        final Counter[] micrometerCounters = new Counter[OPERATIONS.length];
        final Timer[] micrometerTimers = new Timer[OPERATIONS.length];
        final CounterDataPoint[] prometheusCounters = new CounterDataPoint[OPERATIONS.length];
        final DistributionDataPoint[] prometheusHistograms = new DistributionDataPoint[OPERATIONS.length];
        final NgsildMetrics.Operation[] broker = new NgsildMetrics.Operation[OPERATIONS.length];

        @Setup
        public void setUp() {
            PrometheusMeterRegistry micrometer = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            Duration[] slos = new Duration[BUCKETS.length];
            for (int i = 0; i < BUCKETS.length; i++) {
                slos[i] = Duration.ofNanos((long) (BUCKETS[i] * 1e9));
            }
            PrometheusRegistry prometheus = new PrometheusRegistry();
            io.prometheus.metrics.core.metrics.Counter pc = io.prometheus.metrics.core.metrics.Counter.builder()
                    .name("bench_requests_total").help("requests").labelNames("operation", "status").register(prometheus);
            Histogram ph = Histogram.builder().name("bench_request_duration_seconds").help("latency")
                    .labelNames("operation", "status").classicOnly().classicUpperBounds(BUCKETS).register(prometheus);
            for (int i = 0; i < OPERATIONS.length; i++) {
                String status = STATUSES[i] / 100 + "xx";
                micrometerCounters[i] = Counter.builder("bench.requests").tag("operation", OPERATIONS[i])
                        .tag("status", status).register(micrometer);
                micrometerTimers[i] = Timer.builder("bench.request.duration").tag("operation", OPERATIONS[i])
                        .tag("status", status).serviceLevelObjectives(slos).register(micrometer);
                prometheusCounters[i] = pc.labelValues(OPERATIONS[i], status);
                prometheusHistograms[i] = ph.labelValues(OPERATIONS[i], status);
            }
            NgsildMetrics metrics = new NgsildMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
            for (int i = 0; i < OPERATIONS.length; i++) {
                broker[i] = metrics.operation(OPERATIONS[i]);
            }
        }

        /** Today's {@code NgsildMetrics.request}: the operation's statuses by name, then the status's slot. */
        void countToday(String operation, int status) {
            AtomicLongArray byStatus = today.get(operation);
            if (byStatus == null) {
                byStatus = today.computeIfAbsent(operation, k -> new AtomicLongArray(500));
            }
            byStatus.incrementAndGet(status - 100);
        }
    }

    /** One loop's request sequence: which operation comes next, and how long it took. */
    @State(Scope.Thread)
    public static class Requests {
        final long[] nanos = new long[1024];
        int next;

        @Setup
        public void setUp() {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            for (int i = 0; i < nanos.length; i++) {
                nanos[i] = (long) (50_000 * Math.pow(200, r.nextDouble())); // log-uniform, 50 us .. 10 ms
            }
        }

        int operation() {
            return next++ & 7;
        }

        long duration() {
            return nanos[next & 1023];
        }
    }

    @Benchmark
    public void counters(Meters m, Requests r) {
        int op = r.operation();
        m.countToday(OPERATIONS[op], STATUSES[op]);
    }

    @Benchmark
    public void micrometerCounter(Meters m, Requests r) {
        m.micrometerCounters[r.operation()].increment();
    }

    @Benchmark
    public void micrometerTimer(Meters m, Requests r) {
        m.micrometerTimers[r.operation()].record(r.duration(), TimeUnit.NANOSECONDS);
    }

    @Benchmark
    public void prometheusCounter(Meters m, Requests r) {
        m.prometheusCounters[r.operation()].inc();
    }

    @Benchmark
    public void prometheusHistogram(Meters m, Requests r) {
        m.prometheusHistograms[r.operation()].observe(r.duration() / 1e9);
    }

    /** What the broker records per request now: {@link NgsildMetrics.Operation#answered}, its counter and its timer. */
    @Benchmark
    public void broker(Meters m, Requests r) {
        int op = r.operation();
        m.broker[op].answered(STATUSES[op], r.duration());
    }

    /** The two clock reads a timed request adds (its start and its end), for scale. */
    @Benchmark
    public long nanoTimeTwice() {
        return System.nanoTime() - System.nanoTime();
    }
}
