package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;
import dev.cor.ngsild.subscription.LiveSubscription;
import dev.cor.rest.OutboundPolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The broker's outbound policy, over real sockets: Linux answers the whole of 127.0.0.0/8 on its
 * loopback, so a peer on 127.0.0.1 is allowed and one on 127.0.0.2 denied by
 * {@code deny 127.0.0.0/8 except 127.0.0.1/32} on one machine. Every refusal happens before a
 * connection: the denied peer counts no request.
 */
class OutboundPolicyBrokerTest {
    private static final OutboundPolicy ONLY_127_0_0_1 = OutboundPolicy.ranges(List.of("127.0.0.0/8", "::1/128"),
            List.of("127.0.0.1/32"));
    private static final String CONTEXT = "{\"@context\":{\"speed\":\"https://example.org/speed\"}}";

    private final List<Peer> peers = new java.util.ArrayList<>();

    /** An HTTP peer on one loopback address: a context, a 302 to another peer, a receiver, a source. */
    private static final class Peer {
        final HttpServer server;
        final AtomicInteger requests = new AtomicInteger();
        volatile String redirectTo;

        Peer(String address) throws Exception {
            server = HttpServer.create(new InetSocketAddress(address, 0), 16);
            server.createContext("/", ex -> {
                requests.incrementAndGet();
                ex.getRequestBody().readAllBytes();
                String path = ex.getRequestURI().getPath();
                if (path.equals("/ctx.jsonld") && redirectTo != null) {
                    ex.getResponseHeaders().set("Location", redirectTo);
                    ex.sendResponseHeaders(302, -1);
                } else if (path.equals("/ctx.jsonld")) {
                    byte[] body = CONTEXT.getBytes(StandardCharsets.UTF_8);
                    ex.getResponseHeaders().set("Content-Type", "application/ld+json");
                    ex.sendResponseHeaders(200, body.length);
                    ex.getResponseBody().write(body);
                } else if (path.startsWith("/ngsi-ld/v1/entities")) {
                    byte[] body = "[]".getBytes(StandardCharsets.UTF_8);
                    ex.getResponseHeaders().set("Content-Type", "application/json");
                    ex.sendResponseHeaders(200, body.length);
                    ex.getResponseBody().write(body);
                } else {
                    ex.sendResponseHeaders(204, -1);
                }
                ex.close();
            });
            server.start();
        }

        String url(String path) {
            return "http://" + server.getAddress().getAddress().getHostAddress() + ":" + server.getAddress().getPort() + path;
        }
    }

    private Peer peer(String address) throws Exception {
        Peer p = new Peer(address);
        peers.add(p);
        return p;
    }

    @AfterEach
    void stopPeers() {
        peers.forEach(p -> p.server.stop(0));
    }

    private static HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(b.timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    private static HttpResponse<String> post(TestBroker broker, String path, String json) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(broker.baseUrl() + path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));
    }

    private static HttpResponse<String> createWithContext(TestBroker broker, String contextUrl) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(broker.baseUrl() + "/entities"))
                .header("Content-Type", "application/json")
                .header("Link", "<" + contextUrl + ">; rel=\"http://www.w3.org/ns/json-ld#context\"; type=\"application/ld+json\"")
                .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"urn:ngsi-ld:Car:" + System.nanoTime()
                        + "\",\"type\":\"Car\",\"speed\":{\"type\":\"Property\",\"value\":1}}")));
    }

    private static String detail(HttpResponse<String> r) {
        return r.body().replaceAll(".*\"detail\"\\s*:\\s*\"([^\"]*)\".*", "$1");
    }

    @Test
    void a_context_on_a_denied_address_is_504_with_the_policys_text_and_is_never_asked() throws Exception {
        Peer denied = peer("127.0.0.2");
        Peer allowed = peer("127.0.0.1");
        try (TestBroker broker = TestBroker.start(b -> b.outboundPolicy(ONLY_127_0_0_1), s -> { })) {
            HttpResponse<String> r = createWithContext(broker, denied.url("/ctx.jsonld"));
            assertEquals(504, r.statusCode(), r.body());
            assertTrue(r.body().contains("LdContextNotAvailable"), r.body());
            assertEquals("the @context " + denied.url("/ctx.jsonld") + " is not available: " + OutboundPolicy.REFUSAL, detail(r));
            assertEquals(201, createWithContext(broker, allowed.url("/ctx.jsonld")).statusCode(), "the allowed address");
            assertEquals(0, denied.requests.get());
            assertEquals(1, allowed.requests.get());
        }
    }

    @Test
    void the_refusal_is_the_same_text_whatever_the_address_and_port() throws Exception {
        try (TestBroker broker = TestBroker.start(b -> b.outboundPolicy(ONLY_127_0_0_1), s -> { })) {
            // nothing listens on the first; something does on the second: the answers differ by the URL alone
            Peer open = peer("127.0.0.2");
            String closedUrl = "http://127.0.0.3:1/ctx.jsonld";
            String a = detail(createWithContext(broker, closedUrl)).replace(closedUrl, "URL");
            String b = detail(createWithContext(broker, open.url("/ctx.jsonld"))).replace(open.url("/ctx.jsonld"), "URL");
            String c = detail(createWithContext(broker, "http://[::1]:9/ctx.jsonld")).replace("http://[::1]:9/ctx.jsonld", "URL");
            assertEquals("the @context URL is not available: " + OutboundPolicy.REFUSAL, a);
            assertEquals(a, b);
            assertEquals(a, c);
        }
    }

    @Test
    void a_redirect_from_an_allowed_address_into_a_denied_range_is_refused_at_the_redirect() throws Exception {
        Peer denied = peer("127.0.0.2");
        Peer allowed = peer("127.0.0.1");
        allowed.redirectTo = denied.url("/ctx.jsonld");
        try (TestBroker broker = TestBroker.start(b -> b.outboundPolicy(ONLY_127_0_0_1), s -> { })) {
            HttpResponse<String> r = createWithContext(broker, allowed.url("/ctx.jsonld"));
            assertEquals(504, r.statusCode(), r.body());
            assertEquals("the @context " + allowed.url("/ctx.jsonld") + " is not available: " + OutboundPolicy.REFUSAL,
                    detail(r), "the answer names the URL given, not where it redirected");
            assertEquals(1, allowed.requests.get(), "the first hop is allowed");
            assertEquals(0, denied.requests.get(), "the redirect's target was connected to");
        }
        try (TestBroker open = TestBroker.start()) {
            assertEquals(201, createWithContext(open, allowed.url("/ctx.jsonld")).statusCode(), "without the policy the redirect is followed");
            assertEquals(1, denied.requests.get());
        }
    }

    private static LiveSubscription awaitFailure(TestBroker broker, String id) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            LiveSubscription s = broker.subscriptions().get("", id);
            if (s != null && s.lastFailureReason() != null) {
                return s;
            }
            Thread.sleep(20); // polling a status with a deadline
        }
        throw new AssertionError("no failure of " + id + " within 20 s");
    }

    private static void subscribe(TestBroker broker, String id, String endpoint) throws Exception {
        HttpResponse<String> sub = post(broker, "/subscriptions", "{\"id\":\"" + id + "\",\"type\":\"Subscription\","
                + "\"entities\":[{\"type\":\"Bike\"}],\"notification\":{\"endpoint\":{\"uri\":\"" + endpoint + "\"}}}");
        assertEquals(201, sub.statusCode(), sub.body());
    }

    @Test
    void a_notification_to_a_denied_address_fails_with_the_policys_text_and_reaches_nobody() throws Exception {
        Peer denied = peer("127.0.0.2");
        try (TestBroker broker = TestBroker.start(b -> b.outboundPolicy(ONLY_127_0_0_1), s -> { })) {
            subscribe(broker, "urn:ngsi-ld:Subscription:denied-http", denied.url("/notify"));
            // nothing listens for MQTT there: without the policy this would be "cannot connect"
            subscribe(broker, "urn:ngsi-ld:Subscription:denied-mqtt", "mqtt://127.0.0.2:1/topic");
            assertEquals(201, post(broker, "/entities", "{\"id\":\"urn:ngsi-ld:Bike:p\",\"type\":\"Bike\"}").statusCode());
            LiveSubscription http = awaitFailure(broker, "urn:ngsi-ld:Subscription:denied-http");
            assertEquals(OutboundPolicy.REFUSAL, http.lastFailureReason());
            assertEquals(1, http.timesFailed());
            // the failure is counted once the attempt is over: a notification sent would have been received by now
            assertEquals(0, denied.requests.get());
            LiveSubscription mqtt = awaitFailure(broker, "urn:ngsi-ld:Subscription:denied-mqtt");
            assertEquals(OutboundPolicy.REFUSAL, mqtt.lastFailureReason());
        }
    }

    @Test
    void a_forward_to_a_registration_on_a_denied_address_warns_with_the_policys_text_and_is_never_sent() throws Exception {
        Peer denied = peer("127.0.0.2");
        try (TestBroker broker = TestBroker.start(b -> b.outboundPolicy(ONLY_127_0_0_1), s -> { })) {
            HttpResponse<String> reg = post(broker, "/csourceRegistrations", "{\"id\":\"urn:ngsi-ld:ContextSourceRegistration:p\","
                    + "\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[{\"type\":\"Room\"}]}],"
                    + "\"endpoint\":\"" + denied.url("") + "\"}");
            assertEquals(201, reg.statusCode(), reg.body());
            HttpResponse<String> q = send(HttpRequest.newBuilder(URI.create(broker.baseUrl() + "/entities?type=Room")).GET());
            assertEquals(200, q.statusCode(), q.body());
            String warning = q.headers().firstValue("NGSILD-Warning").orElse(null);
            assertNotNull(warning, q.headers().map().toString());
            assertTrue(warning.contains(OutboundPolicy.REFUSAL), warning);
            assertFalse(warning.contains("no answer"), warning);
            assertEquals(0, denied.requests.get());
        }
    }
}
