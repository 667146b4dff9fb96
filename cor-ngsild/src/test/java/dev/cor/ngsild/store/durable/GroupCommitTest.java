package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Group commit and where the waiting happens: the writes that arrive together share one fsync,
 * which runs on the journal thread - never on a loop - while the writing requests wait as
 * coroutines of their loops; a read never waits; with {@code --fsync off} nothing waits and
 * every request runs inline; on the worker hop ({@code --coroutines 0}) a write waits blocking,
 * and is just as durable.
 */
class GroupCommitTest {
    private static final int WRITERS = 16;
    private static final int EACH = 8;

    private static void createAll(DurableBroker b) throws Exception {
        for (int w = 0; w < WRITERS; w++) {
            assertEquals(201, b.http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:G:" + w + "\", \"type\": \"G\", "
                    + "\"v\": {\"type\": \"Property\", \"value\": 0}}").statusCode());
        }
    }

    /** 16 threads, each PATCHing its own entity EACH times; returns the statuses seen other than 204. */
    private static Set<String> patchConcurrently(DurableBroker b) throws Exception {
        Set<String> other = ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            String id = "urn:ngsi-ld:G:" + w;
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 1; i <= EACH; i++) {
                    try {
                        HttpResponse<String> r = b.http.send("PATCH", "/entities/" + id + "/attrs", "application/json",
                                "{\"v\": {\"type\": \"Property\", \"value\": " + i + "}}");
                        if (r.statusCode() != 204) {
                            other.add(r.statusCode() + " " + r.body());
                        }
                    } catch (Exception e) {
                        other.add(e.toString());
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join(60_000);
        }
        return other;
    }

    @Test
    void concurrentWritesShareOneFsyncOnTheJournalThreadAndWaitAsCoroutines(@TempDir Path dir) throws Exception {
        FaultyFiles disk = new FaultyFiles();
        try (DurableBroker b = DurableBroker.open(dir, s -> s.files(disk), s -> { })) {
            createAll(b);
            disk.ioThreads.clear();
            disk.forceDelayMs = 20; // a slow disk: while one fsync runs, the others' records queue behind it
            long forces = disk.forces.get();
            DurableEntityStore.Stats before = b.store.stats();
            long coroutines = b.broker.server().coroutineCount();
            long inline = b.broker.server().inlineCount();
            long hops = b.broker.server().hopCount();

            assertEquals(Set.of(), patchConcurrently(b));

            int writes = WRITERS * EACH;
            long fsyncs = disk.forces.get() - forces;
            DurableEntityStore.Stats after = b.store.stats();
            // each write: the entity's new state and its history's instances, two records under one fsync
            assertEquals(2 * writes, after.records() - before.records());
            assertEquals(2 * writes, after.forcedRecords() - before.forcedRecords());
            assertTrue(fsyncs <= writes / 3, writes + " writes took " + fsyncs + " fsyncs: they were not grouped");
            assertEquals(fsyncs, after.forces() - before.forces());
            assertEquals(Set.of("cor-store-journal"), disk.ioThreads, "every write and fsync on the journal thread");
            assertEquals(writes, b.broker.server().coroutineCount() - coroutines, "each write waited as a coroutine");
            assertEquals(0, b.broker.server().hopCount() - hops);
            assertEquals(0, b.broker.server().inlineCount() - inline);

            long inlineBefore = b.broker.server().inlineCount();
            assertEquals(200, b.http.get("/entities/urn:ngsi-ld:G:0").statusCode());
            assertEquals(1, b.broker.server().inlineCount() - inlineBefore, "a read does not wait: inline");
        }
    }

    @Test
    void anAnswerGoesOutOnlyOnceItsRecordIsForced(@TempDir Path dir) throws Exception {
        FaultyFiles disk = new FaultyFiles();
        DurableBroker b = DurableBroker.open(dir, s -> s.files(disk), s -> { });
        createAll(b);
        disk.forceDelayMs = 400;
        long begun = disk.forcesBegun.get();
        // one write puts the journal thread into a slow fsync...
        Thread first = Thread.ofPlatform().start(() -> {
            try {
                b.http.send("PATCH", "/entities/urn:ngsi-ld:G:0/attrs", "application/json",
                        "{\"v\": {\"type\": \"Property\", \"value\": 1}}");
            } catch (Exception ignored) {
                // the assertions below say what matters
            }
        });
        DiskFaultTest.awaitTrue(() -> disk.forcesBegun.get() > begun, "the journal is inside an fsync");
        // ...and the next one's record waits behind it: its 204 must wait for its own fsync
        long t0 = System.nanoTime();
        assertEquals(204, b.http.send("PATCH", "/entities/urn:ngsi-ld:G:1/attrs", "application/json",
                "{\"v\": {\"type\": \"Property\", \"value\": 42}}").statusCode());
        long ms = (System.nanoTime() - t0) / 1_000_000;
        b.broker.close();
        b.store.crash(); // what kill -9 leaves, right after the answer
        first.join(10_000);
        assertTrue(ms >= 300, "the answer came after " + ms + " ms: before the fsync that covers it");
        try (DurableBroker again = DurableBroker.open(dir)) {
            HttpResponse<String> r = again.http.get("/entities/urn:ngsi-ld:G:1?options=keyValues");
            assertEquals(42, dev.cor.ngsild.BrokerHttp.json(r).get("v").asInt(), "an acknowledged write survives: " + r.body());
        }
    }

    @Test
    void withFsyncOffNothingWaitsAndEveryRequestRunsInline(@TempDir Path dir) throws Exception {
        try (DurableBroker b = DurableBroker.open(dir, s -> s.fsync(FsyncPolicy.off()), s -> { })) {
            long coroutines = b.broker.server().coroutineCount();
            long inline = b.broker.server().inlineCount();
            createAll(b);
            assertEquals(Set.of(), patchConcurrently(b));
            assertEquals(0, b.broker.server().coroutineCount() - coroutines);
            assertEquals(WRITERS + WRITERS * EACH, b.broker.server().inlineCount() - inline);
        }
        try (DurableBroker again = DurableBroker.open(dir)) {
            assertEquals(WRITERS, again.store.count(""), "written behind the answers, and kept by the clean stop");
        }
    }

    @Test
    void onTheWorkerHopAWriteWaitsBlockingAndIsAsDurable(@TempDir Path dir) throws Exception {
        DurableBroker b = DurableBroker.open(dir, s -> s.fsync(FsyncPolicy.interval(10)), s -> s.coroutineCap(0));
        long hops = b.broker.server().hopCount();
        createAll(b);
        assertEquals(Set.of(), patchConcurrently(b));
        assertEquals(WRITERS + WRITERS * EACH, b.broker.server().hopCount() - hops);
        b.crash();
        try (DurableBroker again = DurableBroker.open(dir)) {
            for (int w = 0; w < WRITERS; w++) {
                HttpResponse<String> r = again.http.get("/entities/urn:ngsi-ld:G:" + w + "?options=keyValues");
                assertEquals(EACH, dev.cor.ngsild.BrokerHttp.json(r).get("v").asInt(), r.body());
            }
        }
    }
}
