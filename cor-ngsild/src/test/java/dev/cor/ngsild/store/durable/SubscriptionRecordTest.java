package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.BrokerHttp;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.store.SubscriptionKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The subscription records on their own, through the store's {@link SubscriptionKeeper} side:
 * what is kept comes back equal (document, context, kept documents, counters), from the journal
 * and from a snapshot; a deletion stays one; a torn subscription record at the journal's tail is
 * truncated like any other; a flipped bit inside one refuses the start and names the place.
 */
class SubscriptionRecordTest {
    private static SubscriptionKeeper.Kept kept(String tenant, String id, long timesSent) throws Exception {
        ObjectNode doc = (ObjectNode) BrokerHttp.JSON.readTree("{\"entities\": [{\"type\": \"urn:test:Car\"}],"
                + " \"q\": \"urn:test:speed>50\", \"throttling\": 2.5,"
                + " \"notification\": {\"endpoint\": {\"uri\": \"http://127.0.0.1:9/n\"}, \"format\": \"keyValues\"}}");
        JsonNode context = BrokerHttp.JSON.readTree("[\"http://example.org/car.jsonld\", {\"x\": \"urn:x\"}]");
        LdContexts.RemoteDocument remote = new LdContexts.RemoteDocument("http://example.org/car.jsonld",
                "http://example.org/moved/car.jsonld", BrokerHttp.JSON.readTree("{\"Car\": \"urn:test:Car\"}"));
        return new SubscriptionKeeper.Kept(tenant, id, doc, context, List.of(remote), "http://127.0.0.1:1026",
                new SubscriptionKeeper.Status(1_700_000_000_000L, 1_700_000_000_500L, timesSent, 2, 1_700_000_001_000L,
                        1_700_000_001_000L, -1));
    }

    private static List<SubscriptionKeeper.Kept> recovered(DurableEntityStore s) {
        return s.attachSubscriptions(List::of);
    }

    /** A journal (no snapshot) whose records are: sub a, sub b, sub a again (updated), sub b deleted, sub c. */
    private static Path journalOnly(Path root) throws Exception {
        Path dir = root.resolve("data");
        DurableEntityStore s = DurableEntityStore.builder(dir).open();
        s.keep(kept("", "urn:s:a", 0), () -> { });
        s.keep(kept("t1", "urn:s:b", 0), () -> { });
        s.keep(kept("", "urn:s:a", 7), () -> { });
        assertTrue(s.forget("t1", "urn:s:b", () -> true));
        s.sync();
        assertFalse(s.forget("t1", "urn:s:none", () -> false), "nothing removed: nothing recorded");
        s.keep(kept("t1", "urn:s:c", 1), () -> { });
        s.sync();
        s.crash();
        return dir;
    }

    @Test
    void whatIsKeptComesBackEqualFromTheJournalAndFromASnapshot(@TempDir Path root) throws Exception {
        Path dir = journalOnly(root);
        List<SubscriptionKeeper.Kept> expected = List.of(kept("", "urn:s:a", 7), kept("t1", "urn:s:c", 1));
        DurableEntityStore s = DurableEntityStore.builder(dir).open();
        assertEquals(expected, recovered(s));
        assertTrue(s.recoverySummary().contains("2 subscription(s)"), s.recoverySummary());
        // the snapshot at close reads what the broker has in force: here, what was recovered
        List<SubscriptionKeeper.Kept> inForce = recovered(s);
        s.attachSubscriptions(() -> inForce);
        s.close();
        assertEquals(1, StoreFiles.files(dir, "snapshot-").size());
        assertEquals(0, StoreFiles.files(dir, "journal-").size());
        String check = String.join("\n", DataCheck.run(dir).lines());
        assertTrue(check.contains("2 subscription(s)"), check);
        DurableEntityStore again = DurableEntityStore.builder(dir).open();
        try {
            assertEquals(expected, recovered(again));
        } finally {
            again.crash();
        }
    }

    @Test
    void aTornSubscriptionRecordAtTheTailIsTruncated(@TempDir Path root) throws Exception {
        Path dir = journalOnly(root);
        List<Path> segs = StoreFiles.files(dir, "journal-");
        Path seg = segs.get(0);
        List<Long> offsets = StoreFiles.recordOffsets(seg);
        long lastStart = offsets.get(offsets.size() - 2);
        long end = offsets.get(offsets.size() - 1);
        for (long cut = lastStart + 1; cut < end; cut += Math.max(1, (end - lastStart) / 40)) {
            Path copy = root.resolve("cut-" + cut);
            StoreFiles.copy(dir, copy);
            StoreFiles.truncate(copy.resolve(seg.getFileName()), cut);
            DataCheck.Report check = DataCheck.run(copy);
            assertTrue(check.ok() && String.join("\n", check.lines()).contains("1 subscription(s)"), check.lines().toString());
            DurableEntityStore[] opened = new DurableEntityStore[1];
            List<String> warnings = StoreFiles.warnings(() -> opened[0] = DurableEntityStore.builder(copy).open());
            try {
                assertEquals(1, warnings.size(), warnings.toString());
                assertEquals(List.of(kept("", "urn:s:a", 7)), recovered(opened[0]), "cut at " + cut);
            } finally {
                opened[0].crash();
            }
        }
    }

    @Test
    void aFlippedBitInsideASubscriptionRecordRefusesToStart(@TempDir Path root) throws Exception {
        Path dir = journalOnly(root);
        Path seg = StoreFiles.files(dir, "journal-").get(0);
        long second = StoreFiles.recordOffsets(seg).get(1); // sub b: neither the first nor the last record
        StoreFiles.flipBit(seg, second + 40, 2);
        DataDamagedException e = assertThrows(DataDamagedException.class, () -> DurableEntityStore.builder(dir).open());
        assertEquals(second, e.offset(), e.getMessage());
        assertFalse(DataCheck.run(dir).ok());
    }
}
