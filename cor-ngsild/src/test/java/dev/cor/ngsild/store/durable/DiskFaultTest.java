package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.cor.ngsild.BrokerHttp;

/**
 * When the disk fails - full, read-only, an I/O error on fsync - writes are answered 503 with a
 * ProblemDetails and reads go on; the store says so; when the disk comes back, writes are taken
 * again; and after a crash, every write that was acknowledged is there.
 */
class DiskFaultTest {
    private static final int WRITERS = 8;

    private static String patch(int v) {
        return "{\"v\": {\"type\": \"Property\", \"value\": " + v + "}}";
    }

    private static int value(BrokerHttp http, String id) throws Exception {
        HttpResponse<String> r = http.get("/entities/" + id + "?options=keyValues");
        assertEquals(200, r.statusCode(), r.body());
        return BrokerHttp.json(r).get("v").asInt();
    }

    /** What one writer learned: the last value acknowledged, and the values answered 503 after it. */
    private static final class Writer {
        final String id;
        volatile int acked;
        final List<Integer> unknown = new CopyOnWriteArrayList<>();

        Writer(String id) {
            this.id = id;
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = FaultyFiles.Fault.class, names = {"FULL", "READ_ONLY", "IO_ERROR"})
    void writesAnswer503AndReadsGoOnWhileTheDiskFailsAndNothingAcknowledgedIsLost(FaultyFiles.Fault fault,
            @TempDir Path dir) throws Exception {
        FaultyFiles disk = new FaultyFiles();
        // a small segment: with the disk back, a new one must be created too
        DurableBroker b = DurableBroker.open(dir, s -> s.files(disk).retryMs(50).segmentBytes(16 * 1024), s -> { });
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        b.store.bindTo(meters);
        List<Writer> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            Writer x = new Writer("urn:ngsi-ld:W:" + w);
            writers.add(x);
            assertEquals(201, b.http.postJson("/entities", "{\"id\": \"" + x.id + "\", \"type\": \"W\", \"v\": "
                    + "{\"type\": \"Property\", \"value\": 0}}").statusCode());
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong refused = new AtomicLong();
        AtomicLong reads = new AtomicLong();
        ConcurrentHashMap<String, String> surprises = new ConcurrentHashMap<>();
        List<Thread> threads = new ArrayList<>();
        for (Writer x : writers) {
            threads.add(Thread.ofPlatform().start(() -> {
                int v = 0;
                while (!stop.get()) {
                    v++;
                    try {
                        HttpResponse<String> r = b.http.send("PATCH", "/entities/" + x.id + "/attrs", "application/json", patch(v));
                        if (r.statusCode() == 204) {
                            x.acked = v;
                            x.unknown.clear();
                        } else if (r.statusCode() == 503) {
                            JsonNode p = BrokerHttp.json(r);
                            if (!p.path("type").asText().equals("https://uri.etsi.org/ngsi-ld/errors/ServiceUnavailable")
                                    || p.path("status").asInt() != 503 || !p.path("detail").asText().contains("disk")) {
                                surprises.put("problem", r.body());
                            }
                            x.unknown.add(v);
                            refused.incrementAndGet();
                        } else {
                            surprises.put("status " + r.statusCode(), r.body());
                        }
                    } catch (Exception e) {
                        surprises.put("exception", e.toString());
                    }
                }
            }));
        }
        threads.add(Thread.ofPlatform().start(() -> {
            while (!stop.get()) {
                try {
                    HttpResponse<String> r = b.http.get("/entities/" + writers.get(0).id);
                    if (r.statusCode() != 200) {
                        surprises.put("read " + r.statusCode(), r.body());
                    }
                    reads.incrementAndGet();
                } catch (Exception e) {
                    surprises.put("read exception", e.toString());
                }
            }
        }));
        try {
            for (int round = 0; round < 2; round++) {
                Thread.sleep(150);
                // counted before the fault is on: its first failure may come before the next line runs
                long failedBefore = disk.failedCalls.get();
                long readsBefore = reads.get();
                long refusedBefore = refused.get();
                disk.fault = fault;
                awaitTrue(() -> !b.store.writable(), "the store says it cannot write");
                String problem = b.store.problem();
                assertTrue(problem != null && problem.contains(dir.toString()), problem);
                assertEquals(0, meters.get("cor.store.writable").gauge().value(), "the store's gauge says so too");
                awaitTrue(() -> refused.get() > refusedBefore + 20 && reads.get() > readsBefore + 20,
                        "writes refused and reads served meanwhile");
                assertTrue(disk.failedCalls.get() > failedBefore);
                disk.fault = FaultyFiles.Fault.NONE;
                awaitTrue(b.store::writable, "writes taken again once the disk is back");
                assertNull(b.store.problem());
                long ackedBefore = writers.stream().mapToLong(x -> x.acked).sum();
                awaitTrue(() -> writers.stream().mapToLong(x -> x.acked).sum() > ackedBefore + 20, "writes acknowledged again");
            }
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join(30_000);
            }
        }
        assertTrue(surprises.isEmpty(), surprises.toString());
        b.crash();
        try (DurableBroker again = DurableBroker.open(dir)) {
            for (Writer x : writers) {
                int v = value(again.http, x.id);
                assertTrue(v == x.acked || x.unknown.contains(v), x.id + " holds " + v + ", acknowledged " + x.acked
                        + ", answered 503 after it " + x.unknown);
            }
        }
    }

    @Test
    void aDiskThatDoesNotConfirmInTimeAnswers503AtTheDeadline(@TempDir Path dir) throws Exception {
        FaultyFiles disk = new FaultyFiles();
        try (DurableBroker b = DurableBroker.open(dir, s -> s.files(disk).syncTimeoutMs(300), s -> { })) {
            assertEquals(201, b.http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:S:1\", \"type\": \"S\"}").statusCode());
            disk.forceDelayMs = 1_500;
            long t0 = System.nanoTime();
            HttpResponse<String> r = b.http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:S:2\", \"type\": \"S\"}");
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(503, r.statusCode(), r.body());
            assertTrue(r.body().contains("did not confirm the write within 300 ms"), r.body());
            assertTrue(ms < 1_400, "answered at the deadline, not when the disk came back: " + ms + " ms");
            assertTrue(b.store.writable(), "a slow disk is not a failed one");
            disk.forceDelayMs = 0;
            assertEquals(200, b.http.get("/entities/urn:ngsi-ld:S:2").statusCode(), "kept: it was written, only late");
        }
    }

    @Test
    void aDiskFullBeforeAnyWriteStartsRefusingAndRecovers(@TempDir Path dir) throws Exception {
        FaultyFiles disk = new FaultyFiles();
        disk.fault = FaultyFiles.Fault.FULL;
        try (DurableBroker b = DurableBroker.open(dir, s -> s.files(disk).retryMs(50), s -> { })) {
            assertEquals(503, b.http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:F:1\", \"type\": \"F\"}").statusCode());
            assertFalse(b.store.writable());
            assertEquals(503, b.http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:F:2\", \"type\": \"F\"}").statusCode());
            assertEquals(404, b.http.get("/entities/urn:ngsi-ld:F:2").statusCode(), "refused before it changed anything");
            disk.fault = FaultyFiles.Fault.NONE;
            awaitTrue(b.store::writable, "writes taken again");
            assertEquals(201, b.http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:F:2\", \"type\": \"F\"}").statusCode());
        }
    }

    @Test
    void subscriptionChangesAnswer503WhileTheDiskFailsAndChangeNothing(@TempDir Path dir) throws Exception {
        FaultyFiles disk = new FaultyFiles();
        String sub = "{\"id\": \"urn:ngsi-ld:Subscription:ID\", \"type\": \"Subscription\", \"entities\": [{\"type\": \"F\"}],"
                + " \"notification\": {\"endpoint\": {\"uri\": \"http://127.0.0.1:9/n\"}}}";
        try (DurableBroker b = DurableBroker.open(dir, s -> s.files(disk).retryMs(50), s -> { })) {
            assertEquals(201, b.http.postJson("/subscriptions", sub.replace("ID", "kept")).statusCode());
            disk.fault = FaultyFiles.Fault.FULL;
            // the first change meets the failure at its fsync: answered 503, not acknowledged
            assertEquals(503, b.http.postJson("/subscriptions", sub.replace("ID", "first")).statusCode());
            assertFalse(b.store.writable());
            // from then on a change is refused before it changes anything
            assertEquals(503, b.http.postJson("/subscriptions", sub.replace("ID", "F")).statusCode());
            assertEquals(404, b.http.get("/subscriptions/urn:ngsi-ld:Subscription:F").statusCode(), "refused, not created");
            assertEquals(503, b.http.send("PATCH", "/subscriptions/urn:ngsi-ld:Subscription:kept", "application/json",
                    "{\"isActive\": false}").statusCode());
            assertEquals(503, b.http.send("DELETE", "/subscriptions/urn:ngsi-ld:Subscription:kept", null, null).statusCode());
            String kept = b.http.get("/subscriptions/urn:ngsi-ld:Subscription:kept").body();
            assertTrue(kept.contains("\"isActive\":true"), "neither updated nor deleted: " + kept);
            disk.fault = FaultyFiles.Fault.NONE;
            awaitTrue(b.store::writable, "writes taken again");
            assertEquals(201, b.http.postJson("/subscriptions", sub.replace("ID", "F")).statusCode());
        }
    }

    static void awaitTrue(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 20 s: " + what);
            }
            Thread.sleep(5);
        }
    }
}
