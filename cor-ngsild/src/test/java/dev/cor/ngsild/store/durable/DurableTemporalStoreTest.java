package dev.cor.ngsild.store.durable;

import static dev.cor.ngsild.store.durable.HistoryTesting.A;
import static dev.cor.ngsild.store.durable.HistoryTesting.B;
import static dev.cor.ngsild.store.durable.HistoryTesting.T;
import static dev.cor.ngsild.store.durable.HistoryTesting.builder;
import static dev.cor.ngsild.store.durable.HistoryTesting.expected;
import static dev.cor.ngsild.store.durable.HistoryTesting.history;
import static dev.cor.ngsild.store.durable.HistoryTesting.instance;
import static dev.cor.ngsild.store.durable.HistoryTesting.record;
import static dev.cor.ngsild.store.durable.HistoryTesting.values;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.store.TemporalEntity;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.store.TemporalStore;
import dev.cor.ngsild.model.TimeProperty;

/** The durable history: what is recorded reads back, the same after a clean stop and after a crash, in any amount. */
class DurableTemporalStoreTest {
    @TempDir
    Path dir;

    @Test
    void recordedInstancesReadBackAfterAStopAndAfterACrash() throws Exception {
        List<TemporalInstance> recorded = new ArrayList<>();
        try (DurableEntityStore s = builder(dir).open()) {
            for (int i = 0; i < 10; i++) {
                recorded.add(record(s, "", "urn:e:1", instance(A, i, 1_000L * i, 5_000 + i, null)));
            }
            assertEquals(recorded, history(s).instances("", "urn:e:1", A, InstanceQuery.ALL, Integer.MAX_VALUE));
        }
        try (DurableEntityStore s = builder(dir).open()) {
            assertEquals(recorded, history(s).instances("", "urn:e:1", A, InstanceQuery.ALL, Integer.MAX_VALUE));
            TemporalEntity e = history(s).entity("", "urn:e:1");
            assertEquals(List.of(T), e.types());
            assertEquals(Set.of(A), e.attributes());
            recorded.add(record(s, "", "urn:e:1", instance(A, 10, 10_000, 6_000, null)));
            s.crash();
        }
        try (DurableEntityStore s = builder(dir).open()) {
            assertEquals(recorded, history(s).instances("", "urn:e:1", A, InstanceQuery.ALL, Integer.MAX_VALUE));
            // ids are never given twice, across restarts
            TemporalInstance next = record(s, "", "urn:e:1", instance(A, 11, 11_000, 7_000, null));
            Set<String> ids = new HashSet<>();
            recorded.forEach(i -> ids.add(i.instanceId()));
            assertFalse(ids.contains(next.instanceId()));
        }
    }

    @Test
    void thousandsOfInstancesAcrossChunksAndSegmentsReadAsAPlainComputationWould() throws Exception {
        Random rnd = new Random(7);
        List<TemporalInstance> recorded = new ArrayList<>();
        try (DurableEntityStore s = builder(dir).historySegmentBytes(32 << 10).open()) {
            for (int i = 0; i < 5_000; i++) {
                long observed = rnd.nextInt(10) == 0 ? TemporalInstance.NO_TIME : 1_000_000L + rnd.nextInt(500_000);
                String dataset = rnd.nextInt(4) == 0 ? "urn:ds:" + rnd.nextInt(2) : null;
                recorded.add(history(s).record("", "urn:e:big", List.of(T), null,
                        List.of(instance(A, i, observed, 2_000_000L + i, dataset)), TemporalInstance.NO_TIME).getFirst());
            }
            s.sync();
            checkReads(history(s), recorded, rnd);
            s.crash();
        }
        try (DurableEntityStore s = builder(dir).historySegmentBytes(32 << 10).open()) {
            assertTrue(StoreFiles.files(dir.resolve("history"), "history-").size() > 3, "several segments");
            checkReads(history(s), recorded, rnd);
        }
        try (DurableEntityStore s = builder(dir).historySegmentBytes(32 << 10).open()) {
            checkReads(history(s), recorded, rnd); // after the clean stop's checkpoint
        }
    }

    private static void checkReads(TemporalStore h, List<TemporalInstance> recorded, Random rnd) {
        assertEquals(recorded.size(), h.instances("", "urn:e:big", A, InstanceQuery.ALL, Integer.MAX_VALUE).size());
        for (int round = 0; round < 60; round++) {
            TimeProperty p = round % 3 == 0 ? TimeProperty.CREATED_AT : TimeProperty.OBSERVED_AT;
            long base = p == TimeProperty.CREATED_AT ? 2_000_000L : 1_000_000L;
            long from = round % 5 == 0 ? Long.MIN_VALUE : base + rnd.nextInt(400_000);
            long to = round % 7 == 0 ? Long.MAX_VALUE : Math.max(from, base) + rnd.nextInt(300_000);
            String dataset = switch (round % 4) {
                case 0 -> InstanceQuery.DEFAULT_DATASET;
                case 1 -> "urn:ds:1";
                default -> null;
            };
            int lastN = round % 2 == 0 ? 1 + rnd.nextInt(300) : 0;
            int limit = round % 3 == 1 ? 1 + rnd.nextInt(200) : Integer.MAX_VALUE;
            InstanceQuery q = new InstanceQuery(p, from, to, dataset, lastN);
            assertEquals(expected(recorded, q, limit), h.instances("", "urn:e:big", A, q, limit), q + " limit " + limit);
        }
    }

    @Test
    void editsSurviveAReopenAlsoOnceTheirChunkIsWritten() throws Exception {
        List<TemporalInstance> a = new ArrayList<>();
        List<TemporalInstance> b = new ArrayList<>();
        try (DurableEntityStore s = builder(dir).open()) {
            for (int i = 0; i < 300; i++) { // two chunks written, a tail
                a.add(record(s, "", "urn:e:1", instance(A, i, 1_000L + i, 1_000L + i, i % 3 == 0 ? "urn:ds:x" : null)));
            }
            for (int i = 0; i < 5; i++) {
                b.add(record(s, "", "urn:e:1", instance(B, i, 1_000L + i, 1_000L + i, null)));
            }
            record(s, "", "urn:e:2", instance(A, 1, 1, 1, null));
            awaitWritten(s);
            TemporalStore h = history(s);
            TemporalInstance old = a.get(10);
            var changed = instance(A, -10, 1_010, 1_010, null).value();
            assertTrue(h.modifyInstance("", "urn:e:1", A, old.instanceId(), changed));
            a.set(10, new TemporalInstance(A, changed, old.instanceId(), old.observedAt(), old.deletedAt()));
            assertTrue(h.deleteInstance("", "urn:e:1", A, a.get(20).instanceId()));
            a.remove(20);
            assertTrue(h.deleteInstance("", "urn:e:1", A, a.get(a.size() - 1).instanceId())); // in the tail
            a.remove(a.size() - 1);
            assertFalse(h.deleteInstance("", "urn:e:1", A, TemporalInstance.idOf(999_999)));
            assertTrue(h.deleteAttribute("", "urn:e:1", A, "urn:ds:x", false));
            a.removeIf(i -> "urn:ds:x".equals(i.value().datasetId()));
            assertTrue(h.deleteAttribute("", "urn:e:1", B, null, true));
            assertTrue(h.deleteEntity("", "urn:e:2"));
            assertFalse(h.deleteEntity("", "urn:e:2"));
            s.sync();
            check(s, a);
            s.crash();
        }
        try (DurableEntityStore s = builder(dir).open()) {
            check(s, a);
            TemporalStore h = history(s);
            assertTrue(h.deleteAttribute("", "urn:e:1", A, null, false)); // the default instances
            a.removeIf(i -> i.value().datasetId() == null);
            check(s, a);
        }
        try (DurableEntityStore s = builder(dir).open()) {
            check(s, a);
            // the entity deleted, then recorded again: only the new instance
            assertTrue(history(s).deleteEntity("", "urn:e:1"));
            TemporalInstance again = record(s, "", "urn:e:1", instance(B, 7, 7, 7, null));
            s.crash();
            try (DurableEntityStore t = builder(dir).open()) {
                assertEquals(List.of(again), history(t).instances("", "urn:e:1", B, InstanceQuery.ALL, 100));
                assertEquals(List.of(), history(t).instances("", "urn:e:1", A, InstanceQuery.ALL, 100));
            }
        }
    }

    private static void check(DurableEntityStore s, List<TemporalInstance> a) {
        TemporalStore h = history(s);
        assertEquals(values(a), values(h.instances("", "urn:e:1", A, new InstanceQuery(TimeProperty.CREATED_AT,
                Long.MIN_VALUE, Long.MAX_VALUE, null, 0), Integer.MAX_VALUE)));
        assertEquals(a, h.instances("", "urn:e:1", A, new InstanceQuery(TimeProperty.CREATED_AT, Long.MIN_VALUE,
                Long.MAX_VALUE, null, 0), Integer.MAX_VALUE));
        assertEquals(List.of(), h.instances("", "urn:e:1", B, InstanceQuery.ALL, 100));
        assertNull(h.entity("", "urn:e:2"));
        assertEquals(a.isEmpty() ? Set.of() : Set.of(A), h.entity("", "urn:e:1").attributes());
    }

    /** Waits until nothing waits for the history writer (a deadline, not a sleep, decides). */
    static void awaitWritten(DurableEntityStore s) throws InterruptedException {
        DurableTemporalStore h = (DurableTemporalStore) history(s);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (h.pendingHeapBytes() > 0) {
            assertTrue(System.nanoTime() < deadline, "the history writer did not write within 10 s");
            Thread.sleep(5);
        }
    }

    @Test
    void sixteenThreadsRecordingToOneEntityKeepEveryInstanceOnceInTheOrderRecorded() throws Exception {
        ConcurrentLinkedQueue<TemporalInstance> order = new ConcurrentLinkedQueue<>();
        int threads = 16;
        int each = 200;
        try (DurableEntityStore s = builder(dir).open()) {
            TemporalStore h = history(s);
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int base = t * each;
                ts.add(Thread.ofPlatform().start(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < each; i++) {
                        h.record("", "urn:e:hot", List.of(T), null, List.of(instance(A, base + i, TemporalInstance.NO_TIME,
                                1_000, null)), TemporalInstance.NO_TIME);
                        s.sync();
                    }
                }));
            }
            go.countDown();
            for (Thread t : ts) {
                t.join();
            }
            // as recorded: the store's order is the ids' order
            order.addAll(h.instances("", "urn:e:hot", A, InstanceQuery.ALL, Integer.MAX_VALUE));
            s.crash();
        }
        try (DurableEntityStore s = builder(dir).open()) {
            List<TemporalInstance> after = history(s).instances("", "urn:e:hot", A, InstanceQuery.ALL, Integer.MAX_VALUE);
            assertEquals(threads * each, after.size());
            assertEquals(threads * each, new HashSet<>(values(after)).size(), "each once");
            assertEquals(new ArrayList<>(order), after);
            // per thread, its instances in the order it recorded them
            int[] last = new int[threads];
            java.util.Arrays.fill(last, -1);
            long lastN = -1;
            for (TemporalInstance i : after) {
                int v = HistoryTesting.value(i);
                assertTrue(v % each > last[v / each] % each || last[v / each] < 0);
                last[v / each] = v;
                long n = HistoryFormat.number(i.instanceId());
                assertTrue(n > lastN);
                lastN = n;
            }
        }
    }

    @Test
    void aTenantsHistoryIsSeparateFromAnothers() throws Exception {
        try (DurableEntityStore s = builder(dir).open()) {
            record(s, "t1", "urn:e:1", instance(A, 1, 1, 1, null));
            record(s, "t2", "urn:e:1", instance(A, 2, 2, 2, null));
            assertTrue(history(s).deleteEntity("t1", "urn:e:1"));
        }
        try (DurableEntityStore s = builder(dir).open()) {
            assertNull(history(s).entity("t1", "urn:e:1"));
            assertEquals(List.of(2), values(history(s).instances("t2", "urn:e:1", A, InstanceQuery.ALL, 10)));
            assertEquals(0, history(s).count("t1"));
            assertEquals(1, history(s).count("t2"));
            assertNotNull(history(s).entity("t2", "urn:e:1"));
        }
    }
}
