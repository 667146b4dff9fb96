package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The broker's own clients reach https:// peers: a context server with a certificate made here. */
class OutboundTlsTest {
    private static final char[] PASSWORD = "test-only".toCharArray();
    private static final String CONTEXT = "{\"@context\":{\"speed\":\"https://example.org/speed\"}}";

    @TempDir
    static Path dir;
    private static SSLContext trusting;
    private static HttpsServer contexts;

    @BeforeAll
    static void makeCertificateAndContextServer() throws Exception {
        Path store = dir.resolve("localhost.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "localhost", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=localhost", "-ext", "san=ip:127.0.0.1,dns:localhost", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", store.toString(),
                "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD))
                .redirectErrorStream(true).start();
        String output = new String(keytool.getInputStream().readAllBytes());
        assertTrue(keytool.waitFor(60, TimeUnit.SECONDS) && keytool.exitValue() == 0, "keytool failed: " + output);
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, PASSWORD);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, PASSWORD);
        SSLContext server = SSLContext.getInstance("TLS");
        server.init(kmf.getKeyManagers(), null, null);
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("localhost", keys.getCertificate("localhost"));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        trusting = SSLContext.getInstance("TLS");
        trusting.init(null, tmf.getTrustManagers(), null);

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
    static void stopContextServer() {
        contexts.stop(0);
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
            assertEquals(503, r.statusCode(), r.body());
            assertTrue(r.body().contains("LdContextNotAvailable"), r.body());
            assertFalse(r.body().contains("sslContext"), r.body());
            assertFalse(r.body().contains("CorRestClient"), r.body());
        }
    }
}
