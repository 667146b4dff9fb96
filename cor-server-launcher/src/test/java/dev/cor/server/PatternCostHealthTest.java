package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The launcher's server on one loop, in this JVM, over real sockets: four clients send, again and
 * again, a q whose pattern backtracks without bound over a 900 kB value (the issue's
 * reproduction: 403 only after 3.9 s, and {@code /health} waiting 28 s behind four such
 * clients). With a match bounded in absolute terms, each of their requests is a 403 in about a
 * millisecond, so {@code /health} on another connection answers within its deadline throughout.
 */
class PatternCostHealthTest {
    /** What {@code /health} may take while the loop is shared with the four clients: a generous deadline, not a speed. */
    private static final Duration HEALTH_DEADLINE = Duration.ofMillis(1500);
    private static final long LOAD_MS = 5_000;

    private CorServer server;

    @BeforeEach
    void start() {
        server = CorServer.start(ServerOptions.parse(new String[] {"--host", "127.0.0.1", "--port", "0", "--httpLoops", "1",
            "--store", "memory"}), BuildInfo.load());
    }

    @AfterEach
    void stop() {
        server.stop();
    }

    private static HttpClient client() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
    }

    private URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + server.port() + pathAndQuery);
    }

    @Test
    void healthAnswersWithinItsDeadlineWhileFourClientsSendAPathologicalPattern() throws Exception {
        HttpClient setup = client();
        String entity = "{\"id\": \"urn:ngsi-ld:Huge:1\", \"type\": \"Huge\", \"name\": {\"type\": \"Property\", \"value\": \""
                + "a".repeat(900_000) + "\"}}";
        HttpResponse<String> created = setup.send(HttpRequest.newBuilder(uri("/ngsi-ld/v1/entities"))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(entity)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(201, created.statusCode(), created::body);
        URI evil = uri("/ngsi-ld/v1/entities?type=Huge&q="
                + URLEncoder.encode("name~=\"((a+)+)+b\"", StandardCharsets.UTF_8).replace("+", "%20"));

        AtomicBoolean running = new AtomicBoolean(true);
        Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Thread> clients = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread t = Thread.ofPlatform().name("evil-q-" + i).start(() -> {
                HttpClient http = client();
                try {
                    while (running.get()) {
                        HttpResponse<String> a = http.send(HttpRequest.newBuilder(evil).timeout(Duration.ofSeconds(60)).GET()
                                .build(), HttpResponse.BodyHandlers.ofString());
                        statuses.merge(a.statusCode(), 1, Integer::sum);
                    }
                } catch (Exception e) {
                    failures.add(e);
                }
            });
            clients.add(t);
        }
        HttpClient health = client();
        int probes = 0;
        long end = System.nanoTime() + LOAD_MS * 1_000_000;
        try {
            while (System.nanoTime() < end) {
                // a timeout here (HttpTimeoutException) is the failure: the loop held by the clients' patterns
                HttpResponse<String> h = health.send(HttpRequest.newBuilder(uri("/health")).timeout(HEALTH_DEADLINE).GET()
                        .build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, h.statusCode(), h::body);
                probes++;
            }
        } finally {
            running.set(false);
            for (Thread t : clients) {
                t.join(120_000);
            }
        }
        assertTrue(failures.isEmpty(), () -> "the clients' requests were answered: " + failures);
        assertEquals(java.util.Set.of(403), statuses.keySet(), () -> "every pathological q is a 403: " + statuses);
        assertTrue(statuses.get(403) >= 4, () -> "the clients were at it: " + statuses);
        assertTrue(probes > 0, "health was asked");
    }
}
