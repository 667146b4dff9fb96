package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.BrokerHttp;
import dev.cor.ngsild.conformance.ContextServer;
import dev.cor.ngsild.conformance.NotificationReceiver;

/**
 * Every kind of acknowledged write survives a restart, whatever {@code @context} it was made
 * with: an entity created and then updated, a subscription, a registration - each made with an
 * inline context, a {@code Link} to a remote one (its server gone after the stop), to a Hosted
 * one, to a Hosted one deleted (204) after the writes, and to an ImplicitlyCreated one the broker
 * listed for an {@code application/json} answer. After a clean stop and after a crash, each is
 * retrieved as it was, and each subscription notifies.
 */
class ContextKindsRestartTest {
    private static final String LINK = "; rel=\"http://www.w3.org/ns/json-ld#context\"";
    private static final List<String> KINDS = List.of("inline", "remote", "hosted", "hostedDeleted", "implicit");

    /** Each kind's context: the same two names, and one of its own (so that no two are one stored context). */
    private static String context(String kind) {
        return "{\"Car\": \"urn:test:Car\", \"speed\": \"urn:test:speed\", \"" + kind + "\": \"urn:test:" + kind + "\"}";
    }

    /** Sends {@code body} with {@code kind}'s context: inline in the body, or as the {@code Link} {@code links} holds. */
    private static HttpResponse<String> send(BrokerHttp http, Map<String, String> links, String kind, String method,
            String path, String body) throws Exception {
        if (kind.equals("inline")) {
            return http.send(method, path, "application/ld+json", body.replaceFirst("\\{", "{\"@context\": " + context(kind) + ", "));
        }
        return http.send(method, path, "application/json", body, "Link", "<" + links.get(kind) + ">" + LINK);
    }

    /** The URL of a new Hosted context. */
    private static String hosted(BrokerHttp http, String kind) throws Exception {
        HttpResponse<String> r = http.postJson("/jsonldContexts", "{\"@context\": " + context(kind) + "}");
        assertEquals(201, r.statusCode(), r.body());
        return "http://localhost" + r.headers().firstValue("Location").orElseThrow(); // Location is a path
    }

    /** The URL of the ImplicitlyCreated context an {@code application/json} answer to an inline context links. */
    private static String implicit(BrokerHttp http, String kind) throws Exception {
        HttpResponse<String> r = http.send("POST", "/entityOperations/query", "application/ld+json",
                "{\"type\": \"Query\", \"entities\": [{\"type\": \"Car\"}], \"@context\": " + context(kind) + "}",
                "Accept", "application/json");
        assertEquals(200, r.statusCode(), r.body());
        String link = r.headers().firstValue("Link").orElseThrow();
        String url = link.substring(link.indexOf('<') + 1, link.indexOf('>'));
        assertEquals(200, http.get(url.substring(url.indexOf("/ngsi-ld/v1") + "/ngsi-ld/v1".length())).statusCode(),
                "the implicit context is listed: " + url);
        return url;
    }

    /** What the broker answers for {@code path}, without the counters of what this process sent. */
    private static String retrieved(BrokerHttp http, String path) throws Exception {
        HttpResponse<String> r = http.get(path);
        assertEquals(200, r.statusCode(), path + ": " + r.body());
        ObjectNode n = (ObjectNode) BrokerHttp.JSON.readTree(r.body());
        // a subscription's notifications, a registration's forwards (the reads forward to them): counted by this process
        for (ObjectNode counted : n.get("notification") instanceof ObjectNode notification ? List.of(n, notification) : List.of(n)) {
            for (String counter : List.of("timesSent", "timesFailed", "lastNotification", "lastSuccess", "lastFailure", "status")) {
                counted.remove(counter);
            }
        }
        hostedJsonldContext(http, n, path);
        return n.toString();
    }

    /**
     * A subscription's {@code jsonldContext} that names an ImplicitlyCreated context of this
     * broker (one made for an inline context, or for one this broker no longer serves) is the URL
     * its notifications link now: those are not kept, so after a restart it is another URL with
     * the same content (doc/storage.md). It dereferences, and stands in the comparison as such.
     */
    static void hostedJsonldContext(BrokerHttp http, ObjectNode s, String what) throws Exception {
        String url = s.path("jsonldContext").asText();
        int at = url.indexOf("/ngsi-ld/v1/jsonldContexts/");
        if (at < 0) {
            return;
        }
        HttpResponse<String> r = http.get(url.substring(at + "/ngsi-ld/v1".length()));
        assertEquals(200, r.statusCode(), what + ": its jsonldContext " + url + " dereferences: " + r.body());
        s.put("jsonldContext", "(an ImplicitlyCreated context of this broker)");
    }

    /** The notification's Link names a context the broker serves, and it holds {@code kind}'s terms. */
    private static void assertLinkServes(BrokerHttp http, NotificationReceiver.Received n, String kind, String when) throws Exception {
        String link = n.header("Link");
        assertNotNull(link, kind + ": a JSON notification links its context");
        String url = link.substring(link.indexOf('<') + 1, link.indexOf('>'));
        int at = url.indexOf("/ngsi-ld/v1/jsonldContexts/");
        if (kind.equals("remote")) {
            return; // the remote server's, gone with it: not the broker's to serve
        }
        assertTrue(at >= 0, kind + " " + when + ": the Link names a context the broker serves: " + url);
        HttpResponse<String> r = http.get(url.substring(at + "/ngsi-ld/v1".length()));
        assertEquals(200, r.statusCode(), kind + " " + when + ": the Link " + url + " dereferences: " + r.body());
        assertEquals("urn:test:" + kind, BrokerHttp.JSON.readTree(r.body()).path("@context").path(kind).asText(), r.body());
    }

    private static List<String> paths(String kind) {
        return List.of("/entities/urn:ngsi-ld:Car:" + kind, "/subscriptions/urn:ngsi-ld:Subscription:" + kind,
                "/csourceRegistrations/urn:ngsi-ld:ContextSourceRegistration:" + kind);
    }

    @ParameterizedTest(name = "after {0}")
    @ValueSource(strings = {"a clean stop", "a crash"})
    void everyAcknowledgedWriteSurvivesWhateverContextItWasMadeWith(String how, @TempDir Path dir) throws Exception {
        Map<String, String> before = new LinkedHashMap<>();
        try (NotificationReceiver receiver = NotificationReceiver.start()) {
            String endpoint = receiver.url().replace("/notify", "");
            try (ContextServer remote = ContextServer.start()) {
                remote.serve("/car.jsonld", "{\"@context\": " + context("remote") + "}");
                DurableBroker broker = DurableBroker.open(dir);
                try {
                    BrokerHttp http = broker.http;
                    Map<String, String> links = new HashMap<>();
                    links.put("remote", remote.url("/car.jsonld"));
                    links.put("hosted", hosted(http, "hosted"));
                    links.put("hostedDeleted", hosted(http, "hostedDeleted"));
                    links.put("implicit", implicit(http, "implicit"));
                    for (String kind : KINDS) {
                        HttpResponse<String> r = send(http, links, kind, "POST", "/entities",
                                "{\"id\": \"urn:ngsi-ld:Car:" + kind + "\", \"type\": \"Car\", \"speed\": {\"type\": \"Property\", \"value\": 1}}");
                        assertEquals(201, r.statusCode(), kind + ": " + r.body());
                        r = send(http, links, kind, "POST", "/entities/urn:ngsi-ld:Car:" + kind + "/attrs",
                                "{\"speed\": {\"type\": \"Property\", \"value\": 2}}");
                        assertEquals(204, r.statusCode(), kind + ": " + r.body());
                        r = send(http, links, kind, "POST", "/subscriptions", "{\"id\": \"urn:ngsi-ld:Subscription:" + kind
                                + "\", \"type\": \"Subscription\", \"entities\": [{\"type\": \"Car\"}], \"watchedAttributes\": [\"speed\"],"
                                + " \"notification\": {\"endpoint\": {\"uri\": \"" + endpoint + "/" + kind + "\"}}}");
                        assertEquals(201, r.statusCode(), kind + ": " + r.body());
                        r = send(http, links, kind, "POST", "/csourceRegistrations", "{\"id\": \"urn:ngsi-ld:ContextSourceRegistration:"
                                + kind + "\", \"type\": \"ContextSourceRegistration\", \"information\": [{\"entities\": [{\"type\": \"Car\"}],"
                                + " \"propertyNames\": [\"speed\"]}], \"endpoint\": \"http://127.0.0.1:9/source\"}");
                        assertEquals(201, r.statusCode(), kind + ": " + r.body());
                    }
                    String deleted = links.get("hostedDeleted");
                    HttpResponse<String> gone = http.send("DELETE", deleted.substring(deleted.indexOf("/ngsi-ld/v1")
                            + "/ngsi-ld/v1".length()), null, null);
                    assertEquals(204, gone.statusCode(), gone.body());
                    long deletedAt = System.currentTimeMillis();
                    assertEquals(204, http.send("PATCH", "/entities/urn:ngsi-ld:Car:inline/attrs", "application/json",
                            "{\"urn:test:speed\": {\"type\": \"Property\", \"value\": 5}}").statusCode());
                    NotificationReceiver.Received n;
                    do { // the notifications of the writes above come first: skip to the deleted one's after the delete
                        n = receiver.nextSentSince(deletedAt, 10_000);
                    } while (!n.path().equals("/hostedDeleted"));
                    assertLinkServes(http, n, "hostedDeleted", "once its Hosted context was deleted");
                    for (String kind : KINDS) {
                        for (String path : paths(kind)) {
                            before.put(path, retrieved(http, path));
                        }
                    }
                } finally {
                    if (how.equals("a crash")) {
                        broker.crash();
                    } else {
                        broker.close();
                    }
                }
            } // the remote context's server is gone: the restart must not need it

            long restarted = System.currentTimeMillis();
            try (DurableBroker again = DurableBroker.open(dir)) {
                BrokerHttp http = again.http;
                for (Map.Entry<String, String> e : before.entrySet()) {
                    assertEquals(e.getValue(), retrieved(http, e.getKey()), "after " + how + ": " + e.getKey());
                }
                assertEquals(204, http.send("PATCH", "/entities/urn:ngsi-ld:Car:inline/attrs", "application/json",
                        "{\"urn:test:speed\": {\"type\": \"Property\", \"value\": 3}}").statusCode());
                Map<String, NotificationReceiver.Received> notified = new HashMap<>();
                while (!notified.keySet().containsAll(KINDS.stream().map(k -> "/" + k).toList())) {
                    // fails the test when none comes: every kind's subscription notifies after the restart
                    NotificationReceiver.Received n = receiver.nextSentSince(restarted, 10_000);
                    notified.putIfAbsent(n.path(), n);
                }
                // § 6.3.6: the Link of each (a JSON receiver's) dereferences to its kind's context, even where
                // the context it was made with is served no more (deleted; ImplicitlyCreated before the restart)
                for (String kind : KINDS) {
                    assertLinkServes(http, notified.get("/" + kind), kind, "after " + how);
                }
            }
        }
    }
}
