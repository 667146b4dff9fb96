package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A journal damaged by a crash at its tail recovers; damaged anywhere else, the store refuses to
 * start and names the file and the offset; {@link DataCheck} says the same in both cases.
 */
class DamageTest {
    private static final int N = 20;

    /** A directory whose one journal segment holds records 1..N (entities e0..e19 = 0..19), as a crash leaves it. */
    private static Path journalOnly(Path root) throws Exception {
        Path dir = root.resolve("data");
        DurableEntityStore s = DurableEntityStore.builder(dir).open();
        for (int i = 0; i < N; i++) {
            StoreFiles.put(s, "", StoreFiles.entity("urn:ngsi-ld:T:e" + i, i));
        }
        s.crash();
        return dir;
    }

    private static Path segment(Path dir) throws Exception {
        List<Path> segs = StoreFiles.files(dir, "journal-");
        assertEquals(1, segs.size(), segs.toString());
        return segs.get(0);
    }

    @Test
    void theJournalCutAtEveryByteOfItsLastRecordRecoversEveryRecordBeforeIt(@TempDir Path root) throws Exception {
        Path dir = journalOnly(root);
        Path seg = segment(dir);
        List<Long> offsets = StoreFiles.recordOffsets(seg);
        long lastStart = offsets.get(offsets.size() - 2);
        long end = offsets.get(offsets.size() - 1);
        assertEquals(Files.size(seg), end);
        for (long cut = lastStart; cut < end; cut++) {
            Path copy = root.resolve("cut-" + cut);
            StoreFiles.copy(dir, copy);
            Path copySeg = copy.resolve(seg.getFileName());
            StoreFiles.truncate(copySeg, cut);
            boolean torn = cut > lastStart;

            DataCheck.Report check = DataCheck.run(copy);
            assertTrue(check.ok(), cut + ": " + check.lines());
            String all = String.join("\n", check.lines());
            assertEquals(torn, all.contains("a torn record at offset " + lastStart), cut + ": " + all);
            assertTrue(all.contains("the last one " + (N - 1)), cut + ": " + all);

            DurableEntityStore[] opened = new DurableEntityStore[1];
            List<String> warnings = StoreFiles.warnings(() -> opened[0] = DurableEntityStore.builder(copy).open());
            DurableEntityStore s = opened[0];
            try {
                assertEquals(torn ? 1 : 0, warnings.size(), cut + ": one line for the torn tail, none without: " + warnings);
                if (torn) {
                    assertTrue(warnings.get(0).contains("a torn record at offset " + lastStart) && warnings.get(0).contains("truncated"),
                            warnings.get(0));
                }
                assertEquals(N - 1, s.count(""), "cut at " + cut);
                for (int i = 0; i < N - 1; i++) {
                    assertEquals(i, StoreFiles.value(s.get("", "urn:ngsi-ld:T:e" + i)), "cut at " + cut);
                }
                assertNull(s.get("", "urn:ngsi-ld:T:e" + (N - 1)));
                assertEquals(lastStart, Files.size(copySeg), "truncated where the torn record began");
                // and the journal goes on from there
                StoreFiles.put(s, "", StoreFiles.entity("urn:ngsi-ld:T:after", 99));
            } finally {
                s.crash();
            }
            DataCheck.Report after = DataCheck.run(copy);
            assertTrue(after.ok() && !String.join("\n", after.lines()).contains("torn"), after.lines().toString());
            DurableEntityStore again = DurableEntityStore.builder(copy).open();
            assertEquals(N, again.count(""));
            assertEquals(99, StoreFiles.value(again.get("", "urn:ngsi-ld:T:after")));
            again.crash();
        }
    }

    @Test
    void aBadCrcInTheLastRecordIsATornTailToo(@TempDir Path root) throws Exception {
        Path dir = journalOnly(root);
        Path seg = segment(dir);
        List<Long> offsets = StoreFiles.recordOffsets(seg);
        long lastStart = offsets.get(offsets.size() - 2);
        StoreFiles.flipBit(seg, lastStart + 12, 3); // inside its sequence number
        assertTrue(DataCheck.run(dir).ok());
        DurableEntityStore s = DurableEntityStore.builder(dir).open();
        assertEquals(N - 1, s.count(""));
        s.crash();
    }

    @Test
    void aFlippedBitInTheMiddleRefusesToStartNamingFileAndOffset(@TempDir Path root) throws Exception {
        Path dir = journalOnly(root);
        Path seg = segment(dir);
        List<Long> offsets = StoreFiles.recordOffsets(seg);
        // a bit of the payload, of the length field, of the CRC: each time the start refuses, at that record
        long[][] cases = {
            {offsets.get(N / 2), 30, 5},
            {offsets.get(N / 2), 1, 0},
            {offsets.get(3), 5, 7},
            {offsets.get(0), 20, 1},
        };
        for (long[] c : cases) {
            Path copy = root.resolve("flip-" + c[0] + "-" + c[1]);
            StoreFiles.copy(dir, copy);
            StoreFiles.flipBit(copy.resolve(seg.getFileName()), c[0] + c[1], (int) c[2]);
            DataDamagedException e = assertThrows(DataDamagedException.class, () -> DurableEntityStore.builder(copy).open());
            assertEquals(copy.resolve(seg.getFileName()), e.file());
            assertEquals(c[0], e.offset(), e.getMessage());
            assertTrue(e.getMessage().contains(seg.getFileName().toString()) && e.getMessage().contains("offset " + c[0]),
                    e.getMessage());
            DataCheck.Report check = DataCheck.run(copy);
            assertFalse(check.ok());
            assertEquals("DAMAGED: " + e.getMessage(), check.lines().get(0));
            // the refusal changed nothing: the lock is free and the damage is still there
            assertThrows(DataDamagedException.class, () -> DurableEntityStore.builder(copy).open());
        }
    }

    @Test
    void aDamagedHeaderOrAMissingSegmentRefusesToStart(@TempDir Path root) throws Exception {
        Path dir = root.resolve("data");
        DurableEntityStore s = DurableEntityStore.builder(dir).segmentBytes(600).open();
        for (int i = 0; i < 60; i++) {
            StoreFiles.put(s, "", StoreFiles.entity("urn:ngsi-ld:T:e" + i, i));
        }
        s.crash();
        List<Path> segs = StoreFiles.files(dir, "journal-");
        assertTrue(segs.size() >= 4, segs.toString());

        Path header = root.resolve("header");
        StoreFiles.copy(dir, header);
        StoreFiles.flipBit(header.resolve(segs.get(1).getFileName()), 9, 0);
        DataDamagedException e = assertThrows(DataDamagedException.class, () -> DurableEntityStore.builder(header).open());
        assertEquals(0, e.offset());
        assertTrue(e.getMessage().contains("header"), e.getMessage());
        assertEquals("DAMAGED: " + e.getMessage(), DataCheck.run(header).lines().get(0));

        Path missing = root.resolve("missing");
        StoreFiles.copy(dir, missing);
        Files.delete(missing.resolve(segs.get(2).getFileName()));
        e = assertThrows(DataDamagedException.class, () -> DurableEntityStore.builder(missing).open());
        assertTrue(e.getMessage().contains("are missing"), e.getMessage());
        assertEquals("DAMAGED: " + e.getMessage(), DataCheck.run(missing).lines().get(0));

        // untouched, the same directory starts with all of it
        DurableEntityStore whole = DurableEntityStore.builder(dir).open();
        assertEquals(60, whole.count(""));
        whole.close();
    }

    @Test
    void aFlippedBitInASnapshotRefusesToStart(@TempDir Path root) throws Exception {
        Path dir = root.resolve("data");
        DurableEntityStore s = DurableEntityStore.builder(dir).open();
        for (int i = 0; i < N; i++) {
            StoreFiles.put(s, "t", StoreFiles.entity("urn:ngsi-ld:T:e" + i, i));
        }
        s.close(); // the last snapshot
        List<Path> snaps = StoreFiles.files(dir, "snapshot-");
        assertEquals(1, snaps.size());
        List<Long> offsets = StoreFiles.recordOffsets(snaps.get(0));
        long victim = offsets.get(offsets.size() / 2);
        StoreFiles.flipBit(snaps.get(0), victim + 15, 2);
        DataDamagedException e = assertThrows(DataDamagedException.class, () -> DurableEntityStore.builder(dir).open());
        assertEquals(snaps.get(0), e.file());
        assertEquals(victim, e.offset());
        DataCheck.Report check = DataCheck.run(dir);
        assertEquals("DAMAGED: " + e.getMessage(), check.lines().get(0));

        StoreFiles.flipBit(snaps.get(0), victim + 15, 2); // mended
        StoreFiles.truncate(snaps.get(0), offsets.get(offsets.size() - 2)); // its end record gone
        e = assertThrows(DataDamagedException.class, () -> DurableEntityStore.builder(dir).open());
        assertTrue(e.getMessage().contains("cut short"), e.getMessage());
        assertNotNull(DataCheck.run(dir).lines());
    }
}
