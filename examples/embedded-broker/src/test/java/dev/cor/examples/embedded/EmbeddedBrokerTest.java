package dev.cor.examples.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.HttpServer;

import dev.cor.http.CorHttpServer;
import dev.cor.ngsild.CorNgsild;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The host application over real HTTP: the broker's API and the host's routes on one port, each
 * request where the host's hook (or, for the broker's, the broker's hook) put it - inline, as a
 * coroutine, or on the worker hop - read from the server's own counters.
 */
class EmbeddedBrokerTest {
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private CorNgsild broker;
    private CorHttpServer server;

    @BeforeEach
    void start() {
        broker = CorNgsild.builder().build();
        server = EmbeddedMain.start(broker, "127.0.0.1", 0, 2);
    }

    @AfterEach
    void stop() {
        server.stop();
        broker.close();
    }

    private HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return http.send(b.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest.Builder at(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path));
    }

    @Test
    void theBrokerAndTheHostsRoutesShareOneServer() throws Exception {
        String entity = """
                {"id": "urn:ngsi-ld:Shelf:1", "type": "Shelf", "items": {"type": "Property", "value": 12}}""";
        HttpResponse<String> created = send(at("/ngsi-ld/v1/entities").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(entity)));
        assertEquals(201, created.statusCode(), created.body());

        HttpResponse<String> read = send(at("/ngsi-ld/v1/entities/urn:ngsi-ld:Shelf:1").header("Accept", "application/json"));
        assertEquals(200, read.statusCode(), read.body());
        assertTrue(read.body().contains("\"items\""), read.body());

        long inline = server.inlineCount();
        HttpResponse<String> stock = send(at("/shop/stock"));
        assertEquals(200, stock.statusCode());
        assertEquals("{\"entities\":1}", stock.body(), "the host reads the broker's store");
        assertEquals(inline + 1, server.inlineCount(), "/shop/stock never waits: inline");

        HttpResponse<String> missing = send(at("/shop/nothing"));
        assertEquals(404, missing.statusCode());
    }

    @Test
    void theHostsHookDecidesForItsRoutesAndTheBrokersHookForTheBrokers() throws Exception {
        long co = server.coroutineCount();
        long hops = server.hopCount();
        HttpResponse<String> slow = send(at("/shop/slow?ms=30"));
        assertEquals("{\"slept\":30}", slow.body());
        assertEquals(co + 1, server.coroutineCount(), "/shop/slow may be a coroutine: the host's hook says so");

        HttpResponse<String> legacy = send(at("/shop/legacy"));
        assertEquals(200, legacy.statusCode());
        assertTrue(!legacy.body().matches(".*\"cor-http-\\d+\".*"), "not on a loop thread: " + legacy.body());
        assertEquals(hops + 1, server.hopCount(), "/shop/legacy blocks: the host's hook sends it to a worker");
        assertEquals(co + 1, server.coroutineCount());

        // A broker request that must wait (its @context is not cached: the download fails at once,
        // nothing listens on port 9) is the broker's hook's to decide: a coroutine, as the broker says.
        HttpResponse<String> ld = send(at("/ngsi-ld/v1/entities?type=Shelf")
                .header("Link", "<http://127.0.0.1:9/ctx.jsonld>; rel=\"http://www.w3.org/ns/json-ld#context\"; type=\"application/ld+json\""));
        assertEquals(504, ld.statusCode(), ld.body());
        assertTrue(ld.body().contains("LdContextNotAvailable"), ld.body());
        assertEquals(co + 2, server.coroutineCount(), "the broker's waiting request ran as a coroutine");
        assertEquals(hops + 1, server.hopCount());
    }

    /**
     * § 5.8.1.4 in an embedding: a subscription whose entities a context source registers is copied
     * to that source with its notifications addressed to the broker's own
     * {@code /ngsi-ld/ex/remote-notify} - a path outside {@code /ngsi-ld/v1/} that the host must
     * route to the broker too ({@link CorNgsild#handles}) - and the subscriber gets the source's
     * notification under the local subscription's id.
     */
    @Test
    void aSourcesNotificationOfADistributedSubscriptionReachesTheSubscriber() throws Exception {
        CorNgsild sourceBroker = CorNgsild.builder().build();
        CorHttpServer source = EmbeddedMain.start(sourceBroker, "127.0.0.1", 0, 1);
        BlockingQueue<String> received = new LinkedBlockingQueue<>();
        HttpServer subscriber = HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        subscriber.createContext("/notify", exchange -> {
            try (exchange) {
                received.add(new String(exchange.getRequestBody().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
                exchange.sendResponseHeaders(204, -1);
            }
        });
        subscriber.start();
        try {
            HttpResponse<String> registered = send(at("/ngsi-ld/v1/csourceRegistrations").header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("""
                            {"id": "urn:ngsi-ld:ContextSourceRegistration:shelves", "type": "ContextSourceRegistration",
                             "information": [{"entities": [{"type": "Shelf"}]}], "operations": ["federationOps"],
                             "endpoint": "http://127.0.0.1:%d"}""".formatted(source.port()))));
            assertEquals(201, registered.statusCode(), registered.body());
            HttpResponse<String> subscribed = send(at("/ngsi-ld/v1/subscriptions").header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("""
                            {"id": "urn:ngsi-ld:Subscription:shelves", "type": "Subscription", "entities": [{"type": "Shelf"}],
                             "notification": {"endpoint": {"uri": "http://127.0.0.1:%d/notify"}}}"""
                            .formatted(subscriber.getAddress().getPort()))));
            assertEquals(201, subscribed.statusCode(), subscribed.body());

            // the entity is written at the source alone: only the source's copy of the subscription can tell of it
            HttpResponse<String> created = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + source.port()
                    + "/ngsi-ld/v1/entities")).timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("""
                            {"id": "urn:ngsi-ld:Shelf:remote", "type": "Shelf", "items": {"type": "Property", "value": 7}}"""))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(201, created.statusCode(), created.body());

            String notification = received.poll(10, TimeUnit.SECONDS);
            assertNotNull(notification, "the subscriber got no notification: the source's never reached the broker");
            com.fasterxml.jackson.databind.JsonNode n = dev.cor.rest.CorRestJson.mapper().readTree(notification);
            assertEquals("urn:ngsi-ld:Subscription:shelves", n.path("subscriptionId").asText(), notification);
            assertEquals("urn:ngsi-ld:Shelf:remote", n.path("data").path(0).path("id").asText(), notification);
            assertEquals(7, n.path("data").path(0).path("items").path("value").asInt(), notification);
        } finally {
            subscriber.stop(0);
            source.stop();
            sourceBroker.close();
        }
    }
}
