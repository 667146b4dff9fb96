package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.cor.base.testing.TestCa;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The broker's own clients reach https:// peers: a context server with a certificate made here. */
class OutboundTlsTest {
    private static final String CONTEXT = "{\"@context\":{\"speed\":\"https://example.org/speed\"}}";

    private static TestCa ca;
    private static SSLContext trusting;
    private static HttpsServer contexts;

    @BeforeAll
    static void makeCertificateAndContextServer() throws Exception {
        ca = TestCa.make("cor outbound TLS test CA");
        SSLContext server = ca.issue().serverContext();
        trusting = ca.trusting();

        contexts = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        contexts.setHttpsConfigurator(new HttpsConfigurator(server));
        contexts.createContext("/ctx.jsonld", ex -> {
            byte[] body = CONTEXT.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/ld+json");
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        contexts.createContext("/notify", ex -> {
            notified.offer(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            ex.sendResponseHeaders(204, -1);
            ex.close();
        });
        contexts.start();
    }

    private static final java.util.concurrent.BlockingQueue<String> notified = new java.util.concurrent.LinkedBlockingQueue<>();

    private static HttpResponse<String> post(TestBroker broker, String path, String json) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(broker.baseUrl() + path)).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build();
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(req, HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void a_notification_reaches_an_https_receiver_whose_certificate_the_broker_trusts() throws Exception {
        try (TestBroker broker = TestBroker.start(b -> b.sslContext(trusting), s -> { })) {
            String endpoint = "https://localhost:" + contexts.getAddress().getPort() + "/notify";
            HttpResponse<String> sub = post(broker, "/subscriptions", "{\"id\":\"urn:ngsi-ld:Subscription:tls\","
                    + "\"type\":\"Subscription\",\"entities\":[{\"type\":\"Bike\"}],"
                    + "\"notification\":{\"endpoint\":{\"uri\":\"" + endpoint + "\"}}}");
            assertEquals(201, sub.statusCode(), sub.body());
            HttpResponse<String> created = post(broker, "/entities",
                    "{\"id\":\"urn:ngsi-ld:Bike:tls\",\"type\":\"Bike\"}");
            assertEquals(201, created.statusCode(), created.body());
            String body = notified.poll(20, TimeUnit.SECONDS);
            assertTrue(body != null && body.contains("urn:ngsi-ld:Bike:tls"), "no notification over https: " + body);
        }
    }

    @AfterAll
    static void stopContextServer() throws Exception {
        contexts.stop(0);
        ca.delete();
    }

    private static HttpResponse<String> createWithHttpsContext(TestBroker broker) throws Exception {
        String link = "<https://localhost:" + contexts.getAddress().getPort() + "/ctx.jsonld>; "
                + "rel=\"http://www.w3.org/ns/json-ld#context\"; type=\"application/ld+json\"";
        HttpRequest req = HttpRequest.newBuilder(URI.create(broker.baseUrl() + "/entities"))
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json").header("Link", link)
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"id\":\"urn:ngsi-ld:Car:1\",\"type\":\"Car\",\"speed\":{\"type\":\"Property\",\"value\":1}}"))
                .build();
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(req, HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void a_context_from_an_https_server_whose_certificate_the_broker_trusts_is_downloaded() throws Exception {
        try (TestBroker broker = TestBroker.start(b -> b.sslContext(trusting), s -> { })) {
            HttpResponse<String> r = createWithHttpsContext(broker);
            assertEquals(201, r.statusCode(), r.body());
        }
    }

    @Test
    void an_untrusted_https_context_fails_and_the_answer_names_no_code() throws Exception {
        try (TestBroker broker = TestBroker.start()) {
            HttpResponse<String> r = createWithHttpsContext(broker);
            assertEquals(504, r.statusCode(), r.body());
            assertTrue(r.body().contains("LdContextNotAvailable"), r.body());
            assertFalse(r.body().contains("sslContext"), r.body());
            assertFalse(r.body().contains("CorRestClient"), r.body());
            assertTrue(r.body().contains("is not available: TLS with its server failed: its certificate is not trusted"), r.body());
        }
    }
}
