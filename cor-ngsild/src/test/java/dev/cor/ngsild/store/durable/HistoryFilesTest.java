package dev.cor.ngsild.store.durable;

import static dev.cor.ngsild.store.durable.HistoryTesting.A;
import static dev.cor.ngsild.store.durable.HistoryTesting.T;
import static dev.cor.ngsild.store.durable.HistoryTesting.builder;
import static dev.cor.ngsild.store.durable.HistoryTesting.history;
import static dev.cor.ngsild.store.durable.HistoryTesting.instance;
import static dev.cor.ngsild.store.durable.HistoryTesting.values;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.store.TemporalRetention;
import dev.cor.ngsild.store.TemporalStore;

/** The history's files: a snapshot's truncation, a segment cut short or damaged, retention, the heap bound, the check. */
class HistoryFilesTest {
    private static final long DAY = 86_400_000L;

    @TempDir
    Path dir;

    private static List<TemporalInstance> recordMany(DurableEntityStore s, String entity, int n, int from, long createdAt) {
        List<TemporalInstance> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.addAll(history(s).record("", entity, List.of(T), null,
                    List.of(instance(A, from + i, 1_000_000L + from + i, createdAt + i, null)), TemporalInstance.NO_TIME));
        }
        s.sync();
        return out;
    }

    private static List<TemporalInstance> all(DurableEntityStore s, String entity) {
        return history(s).instances("", entity, A, InstanceQuery.ALL, Integer.MAX_VALUE);
    }

    @Test
    void aSnapshotThatTruncatesTheJournalLosesNoHistory() throws Exception {
        List<TemporalInstance> recorded = new ArrayList<>();
        try (DurableEntityStore s = builder(dir).snapshotBytes(16 << 10).segmentBytes(8 << 10).open()) {
            for (int round = 0; round < 40; round++) {
                recorded.addAll(recordMany(s, "urn:e:1", 25, round * 25, 1_000));
            }
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (s.stats().snapshots() < 2
                    || Format.number(StoreFiles.files(dir, "journal-").getFirst(), "journal-", ".log") <= 1) {
                assertTrue(System.nanoTime() < deadline, "no snapshot truncated the journal");
                Thread.sleep(5);
            }
            recorded.addAll(recordMany(s, "urn:e:1", 7, 5_000, 1_000)); // after the snapshot: only in the journal
            s.crash();
        }
        assertFalse(StoreFiles.files(dir, "journal-").isEmpty());
        try (DurableEntityStore s = builder(dir).open()) {
            assertEquals(recorded, all(s, "urn:e:1"));
        }
    }

    @Test
    void aHistorySegmentCutShortAtItsTailRecoversAndDamageElsewhereStopsTheStart() throws Exception {
        List<TemporalInstance> recorded;
        try (DurableEntityStore s = builder(dir).open()) {
            recorded = recordMany(s, "urn:e:1", 600, 0, 1_000);
            DurableTemporalStoreTest.awaitWritten(s);
            s.crash();
        }
        Path seg = StoreFiles.files(dir.resolve("history"), "history-").getLast();
        long size = Files.size(seg);
        Path copy = dir.resolveSibling(dir.getFileName() + "-copy");
        StoreFiles.copy(dir, copy);
        Files.createDirectories(copy.resolve("history"));
        StoreFiles.copy(dir.resolve("history"), copy.resolve("history"));
        StoreFiles.truncate(seg, size - 100); // the last chunk cut short: the journal still holds it
        List<String> warnings = StoreFiles.warnings(() -> {
            try (DurableEntityStore s = builder(dir).open()) {
                assertEquals(recorded, all(s, "urn:e:1"));
            }
        });
        assertTrue(warnings.stream().anyMatch(w -> w.contains("cut short")), warnings.toString());
        // a chunk damaged with good ones after it
        Path damaged = StoreFiles.files(copy.resolve("history"), "history-").getLast();
        StoreFiles.flipBit(damaged, Format.HEADER_BYTES + 40, 3);
        DataDamagedException e = assertThrows(DataDamagedException.class, () -> builder(copy).open().close());
        assertEquals(damaged, e.file());
        DataCheck.Report report = DataCheck.run(copy);
        assertFalse(report.ok());
    }

    @Test
    void retentionByAgeDropsOnlyTheInstancesRecordedBeforeTheAgeKept() throws Exception {
        long now = 1_000 * DAY;
        TemporalRetention keepADay = new TemporalRetention(DAY, Long.MAX_VALUE);
        List<TemporalInstance> fresh;
        List<TemporalInstance> other;
        try (DurableEntityStore s = builder(dir).temporalRetention(keepADay).open()) {
            recordMany(s, "urn:e:1", 256, 0, now - 10 * DAY); // two whole chunks, old
            fresh = recordMany(s, "urn:e:1", 300, 1_000, now - DAY / 2);
            other = recordMany(s, "urn:e:2", 50, 0, now - DAY / 2);
            DurableTemporalStoreTest.awaitWritten(s);
            assertEquals(256, history(s).expire(now));
            assertEquals(fresh, all(s, "urn:e:1"));
            assertEquals(other, all(s, "urn:e:2"));
            assertEquals(0, history(s).expire(now));
        }
        try (DurableEntityStore s = builder(dir).temporalRetention(keepADay).open()) {
            history(s).expire(now);
            assertEquals(fresh, all(s, "urn:e:1"));
            assertEquals(other, all(s, "urn:e:2"));
        }
    }

    @Test
    void retentionByBytesDropsOnlyTheOldestSegments() throws Exception {
        List<TemporalInstance> recorded = new ArrayList<>();
        long bound = 64 << 10;
        try (DurableEntityStore s = builder(dir).historySegmentBytes(16 << 10)
                .temporalRetention(new TemporalRetention(Long.MAX_VALUE, bound)).open()) {
            for (int i = 0; i < 40; i++) {
                recorded.addAll(recordMany(s, "urn:e:1", 128, i * 128, 1_000));
            }
            DurableTemporalStoreTest.awaitWritten(s);
            long total = 0;
            for (Path p : StoreFiles.files(dir.resolve("history"), "history-")) {
                total += Files.size(p);
            }
            assertTrue(total > bound);
            long dropped = history(s).expire(System.currentTimeMillis());
            assertTrue(dropped > 0);
            List<TemporalInstance> kept = all(s, "urn:e:1");
            assertEquals(recorded.size() - dropped, kept.size());
            assertEquals(recorded.subList((int) dropped, recorded.size()), kept, "the newest are kept, the oldest gone");
            total = 0;
            for (Path p : StoreFiles.files(dir.resolve("history"), "history-")) {
                total += Files.size(p);
            }
            assertTrue(total <= bound, total + " bytes left");
            s.crash();
        }
        try (DurableEntityStore s = builder(dir).historySegmentBytes(16 << 10).open()) {
            List<TemporalInstance> kept = all(s, "urn:e:1");
            // what the journal still holds of the dropped comes back (more, never less); the kept are all there
            assertTrue(kept.containsAll(recorded.subList(recorded.size() - 128, recorded.size())));
        }
    }

    @Test
    void theHeapStaysBoundedWithManySeries() throws Exception {
        long bound = 256 << 10;
        try (DurableEntityStore s = builder(dir).historyHeapBytes(bound).open()) {
            TemporalStore h = history(s);
            DurableTemporalStore d = (DurableTemporalStore) h;
            for (int e = 0; e < 2_000; e++) {
                for (int i = 0; i < 20; i++) {
                    h.record("", "urn:e:" + e, List.of(T), null, List.of(instance(A, i, 1_000 + i, 1_000 + i, null)),
                            TemporalInstance.NO_TIME);
                }
            }
            s.sync();
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (d.tailHeapBytes() + d.pendingHeapBytes() > bound) {
                assertTrue(System.nanoTime() < deadline, "tails " + d.tailHeapBytes() + " + pending " + d.pendingHeapBytes());
                Thread.sleep(5);
            }
            assertTrue(d.census()[0] > 0, "tails were sealed into chunks");
            assertEquals(20, values(h.instances("", "urn:e:1999", A, InstanceQuery.ALL, 100)).size());
        }
    }

    @Test
    void theCheckReportsTheHistory() throws Exception {
        try (DurableEntityStore s = builder(dir).open()) {
            recordMany(s, "urn:e:1", 300, 0, 1_000);
        }
        DataCheck.Report r = DataCheck.run(dir);
        assertTrue(r.ok(), r.lines().toString());
        assertTrue(r.lines().stream().anyMatch(l -> l.startsWith("history/: 1 history segment(s), 3 chunk(s) holding 300 instance(s)")),
                r.lines().toString());
    }
}
