package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.cor.ngsild.BrokerHttp;

/**
 * Snapshots taken while 16 writers run - creates, updates, batch upserts and deletes, in two
 * tenants - and then a crash: the state recovered from the last snapshot and the journal after
 * it is exactly the state before the crash, and the snapshots deleted the segments they held.
 */
class SnapshotUnderLoadTest {
    private static final int WRITERS = 16;
    private static final int OPS = 60;

    /** Every entity of both tenants as the broker answers it, with its system times. */
    private static List<String> state(BrokerHttp http) throws Exception {
        List<String> out = new ArrayList<>();
        for (String tenant : new String[] {"", "other"}) {
            HttpResponse<String> r = tenant.isEmpty()
                    ? http.get("/entities?type=L&options=sysAttrs&limit=1000&count=true")
                    : http.get("/entities?type=L&options=sysAttrs&limit=1000&count=true", "NGSILD-Tenant", tenant);
            assertEquals(200, r.statusCode(), r.body());
            out.add(r.headers().firstValue("NGSILD-Results-Count").orElse("?") + " " + r.body());
        }
        return out;
    }

    private static String entity(String id, int v) {
        return "{\"id\": \"" + id + "\", \"type\": \"L\", \"v\": {\"type\": \"Property\", \"value\": " + v
                + "}, \"pad\": {\"type\": \"Property\", \"value\": \"" + "x".repeat(200) + "\"}}";
    }

    @Test
    void theStateRecoveredAfterSnapshotsUnderLoadIsTheStateBeforeTheCrash(@TempDir Path dir) throws Exception {
        DurableBroker b = DurableBroker.open(dir, s -> s.snapshotBytes(64 * 1024).segmentBytes(16 * 1024), s -> { });
        Set<String> failures = ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            threads.add(Thread.ofPlatform().start(() -> {
                Random rnd = new Random(writer);
                String[] tenant = writer % 2 == 0 ? new String[0] : new String[] {"NGSILD-Tenant", "other"};
                try {
                    for (int i = 0; i < OPS; i++) {
                        String id = "urn:ngsi-ld:L:" + writer + "-" + rnd.nextInt(8);
                        HttpResponse<String> r = switch (rnd.nextInt(4)) {
                            case 0 -> b.http.postJson("/entities", entity(id, i), tenant);
                            case 1 -> b.http.send("PATCH", "/entities/" + id + "/attrs", "application/json",
                                    "{\"v\": {\"type\": \"Property\", \"value\": " + i + "}}", tenant);
                            case 2 -> {
                                StringBuilder batch = new StringBuilder("[");
                                for (int k = 0; k < 5; k++) {
                                    batch.append(k == 0 ? "" : ",").append(entity("urn:ngsi-ld:L:" + writer + "-b" + k, i));
                                }
                                yield b.http.postJson("/entityOperations/upsert", batch + "]", tenant);
                            }
                            default -> b.http.send("DELETE", "/entities/" + id, null, null, tenant);
                        };
                        if (r.statusCode() >= 500 || r.statusCode() == 400) {
                            failures.add(r.statusCode() + " " + r.body());
                        }
                    }
                } catch (Exception e) {
                    failures.add(e.toString());
                }
            }));
        }
        for (Thread t : threads) {
            t.join(120_000);
        }
        assertEquals(Set.of(), failures);
        long snapshots = b.store.stats().snapshots();
        assertTrue(snapshots >= 2, "snapshots taken under the load: " + snapshots);
        List<String> before = state(b.http);
        assertTrue(before.get(0).length() > 10_000, before.get(0));
        List<Path> segments = StoreFiles.files(dir, "journal-");
        long written = b.store.stats().records();
        b.crash();
        assertTrue(segments.size() < 20, "the snapshots deleted the segments they held: " + segments);
        DataCheck.Report check = DataCheck.run(dir);
        assertTrue(check.ok(), check.lines().toString());
        try (DurableBroker again = DurableBroker.open(dir)) {
            assertEquals(before, state(again.http));
            DurableEntityStore.Stats s = again.store.stats();
            assertTrue(s.snapshotSeq() > 0 && s.replayed() < written / 2,
                    "recovered from a snapshot and the records after it: " + s + ", " + written + " written");
        }
    }
}
