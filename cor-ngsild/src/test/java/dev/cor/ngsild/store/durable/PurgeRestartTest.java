package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Purge Entities (5.6.21) writes through the store like any delete: after a crash the journal
 * replays it - the purged entities stay gone, a dropped attribute stays dropped, the rest is kept.
 */
class PurgeRestartTest {

    @Test
    void aPurgeSurvivesACrash(@TempDir Path dir) throws Exception {
        DurableBroker b = DurableBroker.open(dir);
        try {
            for (int i = 0; i < 3; i++) {
                assertEquals(201, b.http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:Purged:" + i + "\", \"type\": \"Purged\","
                        + " \"n\": {\"type\": \"Property\", \"value\": " + i + "}}").statusCode());
            }
            assertEquals(201, b.http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:Kept:1\", \"type\": \"Kept\","
                    + " \"a\": {\"type\": \"Property\", \"value\": 1}, \"b\": {\"type\": \"Property\", \"value\": 2}}").statusCode());
            assertEquals(204, b.http.send("DELETE", "/entities?type=Purged", null, null).statusCode());
            assertEquals(204, b.http.send("DELETE", "/entities?type=Kept&drop=a", null, null).statusCode());
        } finally {
            b.crash();
        }
        try (DurableBroker again = DurableBroker.open(dir)) {
            for (int i = 0; i < 3; i++) {
                assertEquals(404, again.http.get("/entities/urn:ngsi-ld:Purged:" + i).statusCode());
            }
            String kept = again.http.get("/entities/urn:ngsi-ld:Kept:1").body();
            assertFalse(kept.contains("\"a\""), kept);
            assertTrue(kept.contains("\"b\""), kept);
        }
    }
}
