package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.BrokerHttp;
import dev.cor.ngsild.conformance.ContextServer;
import dev.cor.ngsild.conformance.NotificationReceiver;
import dev.cor.ngsild.subscription.LiveSubscription;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a restart keeps of the subscriptions: one created with a remote {@code @context} (its
 * server is gone after the stop: the restart needs no network), one created with an inline
 * context and then updated (the update stands), one deleted (it stays deleted), and a periodic
 * one (it ticks again), one whose context is a Hosted one. After the restart a write reaches a real receiver with the same
 * notification - format, compaction, headers - as before. After a clean stop (the last
 * snapshot) and after a crash (the journal replayed).
 */
class SubscriptionRestartTest {
    private static final String LINK = "; rel=\"http://www.w3.org/ns/json-ld#context\"";
    private static final String REMOTE = "{\"@context\": {\"Car\": \"urn:test:Car\", \"speed\": \"urn:test:speed\"}}";
    private static final String INLINE = "{\"Auto\": \"urn:test:Car\", \"velocity\": \"urn:test:speed\"}";
    private static final String HOSTED = "{\"Wagen\": \"urn:test:Car\", \"tempo\": \"urn:test:speed\"}";
    private static final String CAR = "{\"id\": \"urn:ngsi-ld:Car:1\", \"type\": \"Car\", \"speed\": {\"type\": \"Property\", \"value\": 80}}";

    private static String subscription(String id, String endpoint, String more) {
        return "{\"id\": \"" + id + "\", \"type\": \"Subscription\", \"entities\": [{\"type\": \"Car\"}]" + more
                + ", \"notification\": {\"endpoint\": {\"uri\": \"" + endpoint + "\"}}}";
    }

    /** Every notification the receiver takes within {@code ms}, the first of each path, until each of {@code paths} has one. */
    private static Map<String, NotificationReceiver.Received> first(NotificationReceiver r, List<String> paths, long ms) {
        Map<String, NotificationReceiver.Received> out = new HashMap<>();
        long deadline = System.currentTimeMillis() + ms;
        while (!out.keySet().containsAll(paths)) {
            long left = deadline - System.currentTimeMillis();
            NotificationReceiver.Received n = left > 0 ? r.poll(left) : null;
            assertNotNull(n, "notifications for " + paths + " within " + ms + " ms; had " + out.keySet());
            out.putIfAbsent(n.path(), n);
        }
        return out;
    }

    /** A notification without what differs from one to the next (its id, its time). */
    private static String same(NotificationReceiver.Received n) {
        ObjectNode body = (ObjectNode) n.json();
        assertNotNull(body.remove("id"));
        assertNotNull(body.remove("notifiedAt"));
        return n.header("Content-Type") + " | " + n.header("Link") + " | " + body;
    }

    /** A subscription as retrieved, without the counters of its notifications (they are checked apart). */
    private static String definition(BrokerHttp http, String id) throws Exception {
        HttpResponse<String> r = http.get("/subscriptions/" + id);
        assertEquals(200, r.statusCode(), r.body());
        ObjectNode s = (ObjectNode) BrokerHttp.JSON.readTree(r.body());
        ObjectNode n = (ObjectNode) s.get("notification");
        for (String counter : List.of("timesSent", "timesFailed", "lastNotification", "lastSuccess", "lastFailure")) {
            n.remove(counter);
        }
        ContextKindsRestartTest.hostedJsonldContext(http, s, id);
        return s.toString();
    }

    private static long timesSent(BrokerHttp http, String id) throws Exception {
        JsonNode s = BrokerHttp.JSON.readTree(http.get("/subscriptions/" + id).body());
        return s.get("notification").get("timesSent").asLong();
    }

    @ParameterizedTest(name = "after {0}")
    @ValueSource(strings = {"a clean stop", "a crash"})
    void subscriptionsSurviveARestartAndNotifyAsBefore(String how, @TempDir Path dir) throws Exception {
        String a = "urn:ngsi-ld:Subscription:remote";
        String b = "urn:ngsi-ld:Subscription:updated";
        String c = "urn:ngsi-ld:Subscription:deleted";
        String d = "urn:ngsi-ld:Subscription:periodic";
        String e = "urn:ngsi-ld:Subscription:hosted";
        Map<String, NotificationReceiver.Received> before;
        String defA;
        String defB;
        long sentA;
        try (NotificationReceiver receiver = NotificationReceiver.start();
                NotificationReceiver ticks = NotificationReceiver.start()) {
            String endpoint = receiver.url().replace("/notify", "");
            try (ContextServer contexts = ContextServer.start()) {
                contexts.serve("/car.jsonld", REMOTE);
                String link = "<" + contexts.url("/car.jsonld") + ">" + LINK;
                DurableBroker broker = DurableBroker.open(dir);
                try {
                    BrokerHttp http = broker.http;
                    assertEquals(201, http.postJson("/subscriptions", subscription(a, endpoint + "/a",
                            ", \"watchedAttributes\": [\"speed\"]"), "Link", link).statusCode());
                    // inline context, the receiver takes ld+json; then an update that changes how it notifies
                    HttpResponse<String> created = http.send("POST", "/subscriptions", "application/ld+json",
                            subscription(b, endpoint + "/b", "").replace("\"Car\"", "\"Auto\"")
                                    .replace("\"uri\"", "\"accept\": \"application/ld+json\", \"uri\"")
                                    .replaceFirst("\\{", "{\"@context\": " + INLINE + ", "));
                    assertEquals(201, created.statusCode(), created.body());
                    // (the fragment's notification replaces the whole member, § 5.5.8: it names the endpoint again)
                    assertEquals(204, http.send("PATCH", "/subscriptions/" + b, "application/json",
                            "{\"notification\": {\"format\": \"concise\", \"endpoint\": {\"accept\": \"application/ld+json\","
                                    + " \"uri\": \"" + endpoint + "/b\"}}}").statusCode());
                    assertEquals(201, http.postJson("/subscriptions", subscription(c, endpoint + "/c", ""), "Link", link)
                            .statusCode());
                    assertEquals(204, http.send("DELETE", "/subscriptions/" + c, null, null).statusCode());
                    assertEquals(201, http.postJson("/subscriptions", subscription(d, ticks.url(), ", \"timeInterval\": 0.3"),
                            "Link", link).statusCode());
                    // a Hosted context named by its URL: it comes back from the store's hosted contexts
                    HttpResponse<String> hosted = http.postJson("/jsonldContexts", "{\"@context\": " + HOSTED + "}");
                    assertEquals(201, hosted.statusCode(), hosted.body());
                    String location = hosted.headers().firstValue("Location").orElseThrow();
                    String hostedLink = "<http://localhost/ngsi-ld/v1/jsonldContexts/"
                            + location.substring(location.lastIndexOf('/') + 1) + ">" + LINK;
                    assertEquals(201, http.postJson("/subscriptions", subscription(e, endpoint + "/e", "")
                            .replace("\"Car\"", "\"Wagen\""), "Link", hostedLink).statusCode());

                    assertEquals(201, http.postJson("/entities", CAR, "Link", link).statusCode());
                    before = first(receiver, List.of("/a", "/b", "/e"), 10_000);
                    assertTrue(same(before.get("/a")).contains("\"speed\""), same(before.get("/a")));
                    assertTrue(same(before.get("/b")).contains("\"velocity\":80"), "concise, compacted inline: "
                            + same(before.get("/b")));
                    assertNotNull(ticks.next(10_000), "the periodic one ticks before the stop");
                    defA = definition(http, a);
                    defB = definition(http, b);
                    assertTrue(same(before.get("/e")).contains("\"tempo\""), same(before.get("/e")));
                    sentA = timesSent(http, a);
                    assertEquals(1, sentA);
                } finally {
                    if (how.equals("a crash")) {
                        broker.crash();
                    } else {
                        broker.close();
                    }
                }
            } // the remote context's server is gone: the restart must not need it
            long reopened = System.currentTimeMillis();
            try (DurableBroker again = DurableBroker.open(dir)) {
                BrokerHttp http = again.http;
                assertEquals(defA, definition(http, a));
                assertEquals(defB, definition(http, b));
                assertEquals(404, http.get("/subscriptions/" + c).statusCode());
                if (how.equals("a clean stop")) {
                    assertEquals(sentA, timesSent(http, a), "the last snapshot keeps the counters");
                }
                // a tick of this broker's, not one the first sent before it stopped
                NotificationReceiver.Received tick = ticks.nextSentSince(reopened, 10_000);
                assertEquals(d, tick.json().get("subscriptionId").asText(), "the periodic one ticks again");

                assertEquals(204, http.send("DELETE", "/entities/urn:ngsi-ld:Car:1", null, null).statusCode());
                String expanded = CAR.replace("\"Car\"", "\"urn:test:Car\"").replace("\"speed\"", "\"urn:test:speed\"");
                assertEquals(201, http.postJson("/entities", expanded).statusCode()); // IRIs: no context needed
                Map<String, NotificationReceiver.Received> after = first(receiver, List.of("/a", "/b", "/e"), 10_000);
                assertEquals(same(before.get("/a")), same(after.get("/a")));
                assertEquals(same(before.get("/b")), same(after.get("/b")));
                assertEquals(same(before.get("/e")), same(after.get("/e")));
                // the write queued its notices before its answer: once every subscription has sent its queue, the
                // receiver holds all the write caused - a notification to /c among them if the deleted one notified
                long deadline = System.nanoTime() + 10_000_000_000L;
                for (LiveSubscription s : again.broker.subscriptions().list("")) {
                    while (s.queued() > 0 || s.sending()) {
                        assertTrue(System.nanoTime() < deadline, "subscription " + s.definition().id() + " did not send");
                        Thread.onSpinWait();
                    }
                }
                for (NotificationReceiver.Received stray; (stray = receiver.poll(0)) != null;) {
                    assertTrue(!stray.path().equals("/c"), "the deleted subscription notified: " + stray.path());
                }
            }
        }
    }
}
