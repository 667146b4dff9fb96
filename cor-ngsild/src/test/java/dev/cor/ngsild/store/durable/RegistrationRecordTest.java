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
import dev.cor.ngsild.store.RegistrationKeeper;
import dev.cor.ngsild.store.SubscriptionKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registration records (types 8 and 9) and the subscription-to-registrations records (10 and
 * 11) on their own, through the store's keepers: what is kept comes back equal, from the journal
 * and from a snapshot, each kind to its own keeper; a deletion stays one; a torn registration
 * record at the journal's tail is truncated like any other; a flipped bit inside one refuses the
 * start and names the place.
 */
class RegistrationRecordTest {
    private static RegistrationKeeper.Kept kept(String tenant, String id, long modifiedAt) throws Exception {
        ObjectNode doc = (ObjectNode) BrokerHttp.JSON.readTree("{\"information\": [{\"entities\": [{\"type\": \"urn:test:Car\","
                + " \"idPattern\": \"^urn:c:[0-9]+$\"}], \"propertyNames\": [\"urn:test:speed\"]}],"
                + " \"endpoint\": \"http://127.0.0.1:9/s\", \"mode\": \"redirect\", \"management\": {\"timeout\": 1500.5}}");
        JsonNode context = BrokerHttp.JSON.readTree("[\"http://example.org/car.jsonld\", {\"x\": \"urn:x\"}]");
        LdContexts.RemoteDocument remote = new LdContexts.RemoteDocument("http://example.org/car.jsonld",
                "http://example.org/moved/car.jsonld", BrokerHttp.JSON.readTree("{\"Car\": \"urn:test:Car\"}"));
        return new RegistrationKeeper.Kept(tenant, id, doc, context, List.of(remote), 1_700_000_000_000L, modifiedAt);
    }

    private static SubscriptionKeeper.Kept csourceSubscription(String id) throws Exception {
        ObjectNode doc = (ObjectNode) BrokerHttp.JSON.readTree("{\"entities\": [{\"type\": \"urn:test:Car\"}],"
                + " \"notification\": {\"endpoint\": {\"uri\": \"http://127.0.0.1:9/n\"}}}");
        return new SubscriptionKeeper.Kept("", id, doc, BrokerHttp.JSON.readTree("\"http://example.org/car.jsonld\""),
                List.of(), "http://127.0.0.1:1026", new SubscriptionKeeper.Status(1, 2, 0, 0, -1, -1, -1));
    }

    /** A journal (no snapshot): reg a, reg b, reg a again (updated), reg b deleted, a csourceSubscription, reg c. */
    private static Path journalOnly(Path root) throws Exception {
        Path dir = root.resolve("data");
        DurableEntityStore s = DurableEntityStore.builder(dir).open();
        s.keepRegistration(kept("", "urn:r:a", 1), () -> { });
        s.keepRegistration(kept("t1", "urn:r:b", 1), () -> { });
        s.keepRegistration(kept("", "urn:r:a", 2), () -> { });
        assertTrue(s.forgetRegistration("t1", "urn:r:b", () -> true));
        assertFalse(s.forgetRegistration("t1", "urn:r:none", () -> false), "nothing removed: nothing recorded");
        s.contextSources().keep(csourceSubscription("urn:s:csr"), () -> { });
        s.keepRegistration(kept("t1", "urn:r:c", 3), () -> { });
        s.sync();
        s.crash();
        return dir;
    }

    @Test
    void whatIsKeptComesBackEqualFromTheJournalAndFromASnapshotEachToItsKeeper(@TempDir Path root) throws Exception {
        Path dir = journalOnly(root);
        List<RegistrationKeeper.Kept> expected = List.of(kept("", "urn:r:a", 2), kept("t1", "urn:r:c", 3));
        DurableEntityStore s = DurableEntityStore.builder(dir).open();
        assertEquals(expected, s.attachRegistrations(List::of));
        assertEquals(List.of(csourceSubscription("urn:s:csr")), s.contextSources().attachSubscriptions(List::of));
        assertEquals(List.of(), s.attachSubscriptions(List::of), "not an entity subscription");
        // the snapshot at close reads what the broker has in force: here, what was recovered
        s.attachRegistrations(() -> expected);
        List<SubscriptionKeeper.Kept> csr = List.of(csourceSubscription("urn:s:csr"));
        s.contextSources().attachSubscriptions(() -> csr);
        s.close();
        assertEquals(1, StoreFiles.files(dir, "snapshot-").size());
        assertEquals(0, StoreFiles.files(dir, "journal-").size());
        String check = String.join("\n", DataCheck.run(dir).lines());
        assertTrue(check.contains("2 registration(s), 1 subscription(s) to registrations"), check);
        DurableEntityStore again = DurableEntityStore.builder(dir).open();
        try {
            assertEquals(expected, again.attachRegistrations(List::of));
            assertEquals(csr, again.contextSources().attachSubscriptions(List::of));
        } finally {
            again.crash();
        }
    }

    @Test
    void aTornRegistrationRecordAtTheTailIsTruncated(@TempDir Path root) throws Exception {
        Path dir = journalOnly(root);
        Path seg = StoreFiles.files(dir, "journal-").get(0);
        List<Long> offsets = StoreFiles.recordOffsets(seg);
        long lastStart = offsets.get(offsets.size() - 2);
        long end = offsets.get(offsets.size() - 1);
        for (long cut = lastStart + 1; cut < end; cut += Math.max(1, (end - lastStart) / 40)) {
            Path copy = root.resolve("cut-" + cut);
            StoreFiles.copy(dir, copy);
            StoreFiles.truncate(copy.resolve(seg.getFileName()), cut);
            DataCheck.Report check = DataCheck.run(copy);
            assertTrue(check.ok() && String.join("\n", check.lines()).contains("1 registration(s)"), check.lines().toString());
            DurableEntityStore[] opened = new DurableEntityStore[1];
            List<String> warnings = StoreFiles.warnings(() -> opened[0] = DurableEntityStore.builder(copy).open());
            try {
                assertEquals(1, warnings.size(), warnings.toString());
                assertEquals(List.of(kept("", "urn:r:a", 2)), opened[0].attachRegistrations(List::of), "cut at " + cut);
            } finally {
                opened[0].crash();
            }
        }
    }

    @Test
    void aFlippedBitInsideARegistrationRecordRefusesToStart(@TempDir Path root) throws Exception {
        Path dir = journalOnly(root);
        Path seg = StoreFiles.files(dir, "journal-").get(0);
        long second = StoreFiles.recordOffsets(seg).get(1); // reg b: neither the first nor the last record
        StoreFiles.flipBit(seg, second + 40, 2);
        DataDamagedException e = assertThrows(DataDamagedException.class, () -> DurableEntityStore.builder(dir).open());
        assertEquals(second, e.offset(), e.getMessage());
        assertFalse(DataCheck.run(dir).ok());
    }
}
