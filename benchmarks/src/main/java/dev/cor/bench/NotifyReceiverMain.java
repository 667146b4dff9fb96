package dev.cor.bench;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

import dev.cor.bench.cli.Flags;
import dev.cor.http.CorHttpServer;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;

/**
 * A notification receiver for benchmarks (the seed's corTestClient with {@code --traceLevels ""}):
 * a cor-http server that answers every POST 204 inline on its loop, counts it, and records the
 * latency from the notification's {@code notifiedAt} to its arrival (milliseconds: notifiedAt has
 * no finer grain) and the entities notified (a notification may carry several: those that queued
 * up behind a slow send) - and does nothing else, so that it is never the bottleneck.
 * {@code GET /stats} gives {@code notifications p50_ms p99_ms entities} since the last
 * {@code DELETE /stats}.
 * <pre>java -cp benchmarks.jar dev.cor.bench.NotifyReceiverMain [--host H] [--port N] [--httpLoops N]</pre>
 */
public final class NotifyReceiverMain {
    private static final byte[] NOTIFIED_AT = "\"notifiedAt\":\"".getBytes(StandardCharsets.US_ASCII);
    /** What starts each entity of a notification's data (the broker writes compact JSON). */
    private static final byte[] ENTITY = "{\"id\":".getBytes(StandardCharsets.US_ASCII);
    private static final int BUCKETS = 10_000; // ms; the last one takes everything slower

    private final LongAdder notifications = new LongAdder();
    private final LongAdder entities = new LongAdder();
    private final AtomicLongArray latencyMs = new AtomicLongArray(BUCKETS);

    private NotifyReceiverMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        Flags f = Flags.parse(args, Set.of("host", "port", "httpLoops"), Set.of());
        NotifyReceiverMain r = new NotifyReceiverMain();
        CorHttpServer server = CorHttpServer.builder().host(f.string("host", "127.0.0.1"))
                .port(f.integer("port", 18601, 0, 65535)).loops(f.integer("httpLoops", 1, 1, 64))
                .application(r.application()).build().start();
        System.out.println("notify-receiver: listening on http://" + f.string("host", "127.0.0.1") + ":" + server.port());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop();
            stopped.countDown();
        }, "notify-receiver-stop"));
        stopped.await();
    }

    private CorRestApplication application() {
        return new CorRestApplication() {
            @Override
            public boolean canWait(CorRest request) {
                return false;
            }

            @Override
            public void handle(CorRest request) {
                switch (request.method()) {
                    case "POST" -> {
                        count(request.body());
                        request.respond(204, null, null);
                    }
                    case "GET" -> request.respond(200, "text/plain", stats().getBytes(StandardCharsets.US_ASCII));
                    case "DELETE" -> {
                        reset();
                        request.respond(204, null, null);
                    }
                    default -> request.respond(405, null, null);
                }
            }
        };
    }

    private void count(byte[] body) {
        long now = System.currentTimeMillis();
        notifications.increment();
        int at = indexOf(body, NOTIFIED_AT, 0);
        if (at < 0) {
            return;
        }
        int start = at + NOTIFIED_AT.length;
        int end = start;
        while (end < body.length && body[end] != '"') {
            end++;
        }
        long sent = Instant.parse(new String(body, start, end - start, StandardCharsets.US_ASCII)).toEpochMilli();
        latencyMs.incrementAndGet((int) Math.max(0, Math.min(BUCKETS - 1, now - sent)));
        int n = 0;
        for (int from = end; (from = indexOf(body, ENTITY, from)) >= 0; from += ENTITY.length) {
            n++;
        }
        entities.add(n);
    }

    private static int indexOf(byte[] b, byte[] what, int from) {
        outer:
        for (int i = from; i + what.length <= b.length; i++) {
            for (int j = 0; j < what.length; j++) {
                if (b[i + j] != what[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private String stats() {
        long n = 0;
        for (int i = 0; i < BUCKETS; i++) {
            n += latencyMs.get(i);
        }
        return notifications.sum() + " " + percentile(n, 0.50) + " " + percentile(n, 0.99) + " " + entities.sum() + "\n";
    }

    private long percentile(long n, double p) {
        long want = (long) Math.ceil(n * p);
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += latencyMs.get(i);
            if (seen >= want && want > 0) {
                return i;
            }
        }
        return -1;
    }

    private void reset() {
        notifications.reset();
        entities.reset();
        for (int i = 0; i < BUCKETS; i++) {
            latencyMs.set(i, 0);
        }
    }
}
