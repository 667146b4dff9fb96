package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.BrokerHttp;
import dev.cor.ngsild.store.RegistrationKeeper;
import dev.cor.ngsild.store.SubscriptionKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the broker acknowledged before it refused more stays acknowledged: a subscription whose q
 * holds an unquoted value the 4.9 grammar now refuses ({@code speed>>4}) and whose idPattern is
 * longer than the 256 characters now allowed, and a registration with such an idPattern, kept in
 * the journal, are in force again after a restart - read as they were accepted, their matches
 * bounded all the same.
 */
class KeptPatternRestartTest {
    private static final String LONG_PATTERN = "a".repeat(300) + "|^urn:test:.*";

    @Test
    void aSubscriptionAndARegistrationKeptBeforeTheRefusalsAreRestored(@TempDir Path root) throws Exception {
        Path dir = root.resolve("data");
        ObjectNode sub = (ObjectNode) BrokerHttp.JSON.readTree("{\"entities\": [{\"type\": \"urn:test:Car\", \"idPattern\": \""
                + LONG_PATTERN + "\"}], \"q\": \"urn:test:speed>>4\","
                + " \"notification\": {\"endpoint\": {\"uri\": \"http://127.0.0.1:9/n\"}}}");
        ObjectNode reg = (ObjectNode) BrokerHttp.JSON.readTree("{\"information\": [{\"entities\": [{\"type\": \"urn:test:Car\","
                + " \"idPattern\": \"" + LONG_PATTERN + "\"}]}], \"endpoint\": \"http://127.0.0.1:9/s\"}");
        JsonNode context = BrokerHttp.JSON.readTree("[{\"x\": \"urn:x\"}]");
        DurableEntityStore s = DurableEntityStore.builder(dir).open();
        s.keep(new SubscriptionKeeper.Kept("", "urn:s:kept", sub, context, List.of(), "http://127.0.0.1:1026",
                new SubscriptionKeeper.Status(1_700_000_000_000L, 1_700_000_000_000L, 0, 0, -1, -1, -1)), () -> { });
        s.keepRegistration(new RegistrationKeeper.Kept("", "urn:r:kept", reg, context, List.of(), 1_700_000_000_000L,
                1_700_000_000_000L), () -> { });
        s.sync();
        s.crash();
        try (DurableBroker again = DurableBroker.open(dir)) {
            HttpResponse<String> got = again.http.get("/subscriptions/urn:s:kept");
            assertEquals(200, got.statusCode(), got::body);
            assertTrue(got.body().contains("speed>>4"), got::body);
            HttpResponse<String> registration = again.http.get("/csourceRegistrations/urn:r:kept");
            assertEquals(200, registration.statusCode(), registration::body);
        }
    }
}
