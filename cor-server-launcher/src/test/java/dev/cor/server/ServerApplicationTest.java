package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.cor.ngsild.KeepAliveHttp;
import dev.cor.ngsild.store.durable.DataFiles;
import dev.cor.ngsild.store.durable.FaultyFiles;

/**
 * The launcher's server in this JVM, over real sockets: its own routes around the broker, and the
 * broker's requests dispatched as the broker alone would have them.
 */
class ServerApplicationTest {
    private final KeepAliveHttp http = new KeepAliveHttp();
    private CorServer server;
    @TempDir
    Path dataDir;

    @BeforeEach
    void start() {
        server = CorServer.start(ServerOptions.parse(new String[] {"--host", "127.0.0.1", "--port", "0", "--httpLoops", "1",
            "--dataDir", dataDir.toString()}), BuildInfo.load());
    }

    @AfterEach
    void stop() {
        http.close();
        server.stop();
    }

    private HttpResponse<String> send(String method, String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(30)).method(method, HttpRequest.BodyPublishers.noBody());
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return http.sendString(b.build());
    }

    private HttpResponse<String> create(String tenant, String entity) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/ngsi-ld/v1/entities"))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(entity));
        if (tenant != null) {
            b.header("NGSILD-Tenant", tenant);
        }
        return http.sendString(b.build());
    }

    @Test
    void healthAndMetricsSayWhenTheDiskFailsAndWritesAre503WhileReadsAreServed(@TempDir Path otherDir) throws Exception {
        FaultyFiles disk = new FaultyFiles();
        CorServer s = CorServer.start(ServerOptions.parse(new String[] {"--host", "127.0.0.1", "--port", "0", "--httpLoops",
            "1", "--dataDir", otherDir.toString()}), BuildInfo.load(), disk);
        CorServer mine = server;
        server = s;
        try {
            assertEquals(201, create(null, "{\"id\":\"urn:ngsi-ld:D:1\",\"type\":\"D\"}").statusCode());
            disk.fault = FaultyFiles.Fault.FULL;
            HttpResponse<String> refused = create(null, "{\"id\":\"urn:ngsi-ld:D:2\",\"type\":\"D\"}");
            assertEquals(503, refused.statusCode());
            assertTrue(refused.body().contains("\"type\":\"https://uri.etsi.org/ngsi-ld/errors/ServiceUnavailable\"")
                    && refused.body().contains("No space left on device"), refused.body());
            HttpResponse<String> health = send("GET", "/health");
            assertEquals(503, health.statusCode());
            assertTrue(health.body().startsWith("{\"status\":\"degraded\",\"detail\":\"writes are refused (503) while the"
                    + " journal cannot write to " + otherDir) && health.body().contains("No space left on device"), health.body());
            PromText m = PromText.parse(send("GET", "/metrics").body());
            assertEquals(0, m.value("cor_store_writable"));
            assertTrue(m.value("cor_store_journal_failures_total") >= 1);
            assertEquals(200, send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:D:1").statusCode(), "reads are served");
            disk.fault = FaultyFiles.Fault.NONE;
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (send("GET", "/health").statusCode() != 200) {
                assertTrue(System.nanoTime() < deadline, "healthy again within 20 s of the disk's return");
                Thread.sleep(20);
            }
            assertEquals(201, create(null, "{\"id\":\"urn:ngsi-ld:D:3\",\"type\":\"D\"}").statusCode());
            assertEquals(1, PromText.parse(send("GET", "/metrics").body()).value("cor_store_writable"));
        } finally {
            server = mine;
            s.stop();
        }
    }

    @Test
    void theStartIsAnnouncedBeforeTheServerIsReadyAndBeforeItsFirstAccessLine(@TempDir Path otherDir) throws Exception {
        Path accessLog = otherDir.resolve("access.log");
        List<String> seen = new ArrayList<>();
        CorServer s = CorServer.start(ServerOptions.parse(new String[] {"--host", "127.0.0.1", "--port", "0", "--httpLoops",
            "1", "--store", "memory", "--accessLog", accessLog.toString()}), BuildInfo.load(), DataFiles.system(), started -> {
                try {
                    HttpResponse<String> probe = http.sendString(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + started.port() + "/health")).timeout(Duration.ofSeconds(30)).build());
                    seen.add(probe.statusCode() + " " + probe.body());
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                seen.add("writer running: " + Thread.getAllStackTraces().keySet().stream()
                        .anyMatch(t -> t.getName().equals("cor-access-log") && t.isAlive()));
            });
        try {
            assertEquals(List.of("503 {\"status\":\"starting\"}", "writer running: false"), seen,
                    "announced once the port answers, before readiness and before an access line can be written");
            HttpResponse<String> up = http.sendString(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + s.port() + "/health")).timeout(Duration.ofSeconds(30)).build());
            assertEquals(200, up.statusCode());
        } finally {
            s.stop();
        }
        List<String> lines = Files.readAllLines(accessLog);
        assertEquals(2, lines.size(), "the probe answered while announcing is logged, not lost: " + lines);
        assertTrue(lines.get(0).contains("GET /health 503 "), lines.toString());
        assertTrue(lines.get(1).contains("GET /health 200 "), lines.toString());
    }

    @Test
    void theHistoryIsKeptByDefaultAndTemporalOffAnswersTheTemporalApi501() throws Exception {
        assertEquals(201, create(null, "{\"id\":\"urn:ngsi-ld:T:1\",\"type\":\"T\",\"p\":{\"type\":\"Property\",\"value\":1}}")
                .statusCode());
        HttpResponse<String> kept = send("GET", "/ngsi-ld/v1/temporal/entities/urn:ngsi-ld:T:1");
        assertEquals(200, kept.statusCode(), kept.body());
        assertTrue(kept.body().contains("\"instanceId\""), kept.body());
        CorServer off = CorServer.start(ServerOptions.parse(new String[] {"--host", "127.0.0.1", "--port", "0", "--httpLoops",
            "1", "--store", "memory", "--temporal", "off"}), BuildInfo.load());
        try {
            HttpResponse<String> r = http.sendString(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + off.port()
                    + "/ngsi-ld/v1/temporal/entities?type=T")).timeout(Duration.ofSeconds(30)).build());
            assertEquals(501, r.statusCode(), r.body());
            assertTrue(r.body().contains("--temporal off"), r.body());
        } finally {
            off.stop();
        }
    }

    @Test
    void healthTurns503OnceTheServerIsStopping() throws Exception {
        HttpResponse<String> up = send("GET", "/health");
        assertEquals(200, up.statusCode());
        assertEquals("{\"status\":\"ok\"}", up.body());
        assertEquals("application/json", up.headers().firstValue("Content-Type").orElseThrow());
        server.markStopping();
        HttpResponse<String> down = send("GET", "/health");
        assertEquals(503, down.statusCode());
        assertEquals("{\"status\":\"stopping\"}", down.body());
    }

    @Test
    void theOperatorRoutesAreReadOnlyAndRunInlineOnTheLoop() throws Exception {
        HttpResponse<String> post = send("POST", "/metrics");
        assertEquals(405, post.statusCode());
        assertEquals("GET, HEAD", post.headers().firstValue("Allow").orElseThrow());
        assertTrue(post.body().contains("/metrics is read with GET"), post.body());
        HttpResponse<String> head = send("HEAD", "/version");
        assertEquals(200, head.statusCode());
        assertEquals("", head.body());
        assertEquals(200, send("GET", "/version").statusCode());
        assertEquals(200, send("GET", "/metrics").statusCode());
        assertEquals(4, server.http().inlineCount(), "every operator request ran inline");
        assertEquals(0, server.http().coroutineCount());
        assertEquals(0, server.http().hopCount());
    }

    @Test
    void everyOtherPathIsTheBrokersAndItsCanWaitAnswerDecidesTheDispatch() throws Exception {
        HttpResponse<String> none = send("GET", "/nothing-here");
        assertEquals(404, none.statusCode());
        assertTrue(none.body().contains("https://uri.etsi.org/ngsi-ld/errors/"), "the broker's ProblemDetails: " + none.body());
        long inline = server.http().inlineCount();
        assertEquals(201, create(null, "{\"id\":\"urn:ngsi-ld:T:1\",\"type\":\"T\"}").statusCode());
        assertEquals(1, server.http().coroutineCount(), "a write waits for the durable store's fsync: a coroutine");
        assertEquals(200, send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:T:1").statusCode());
        assertEquals(1, server.http().coroutineCount(), "a read cannot wait");
        assertEquals(inline + 1, server.http().inlineCount());
        // A user context named by Link is not cached: the broker says the request can wait, and
        // with its coroutine hook it runs as a coroutine of the loop (the download fails: 504).
        HttpResponse<String> linked = send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:T:1",
                "Link", "<http://127.0.0.1:1/no-context.jsonld>; rel=\"http://www.w3.org/ns/json-ld#context\";"
                        + " type=\"application/ld+json\"");
        assertEquals(504, linked.statusCode(), linked.body());
        assertEquals(2, server.http().coroutineCount());
        assertEquals(0, server.http().hopCount());
        PromText m = PromText.parse(send("GET", "/metrics").body());
        assertEquals(1, m.value("cor_ngsild_context_downloads_total"), "the failed download is counted");
        assertEquals(1, m.value("cor_ngsild_context_download_failures_total"));
        assertEquals(1, m.value("cor_ngsild_context_negative_entries"), "and its URL is in the negative cache");
    }

    @Test
    void metricsAreTheTextFormatAndEscapeATenantsName() throws Exception {
        String tenant = "odd\"tenant\\name";
        assertEquals(201, create(tenant, "{\"id\":\"urn:ngsi-ld:T:1\",\"type\":\"T\"}").statusCode());
        assertEquals(201, create(tenant, "{\"id\":\"urn:ngsi-ld:T:2\",\"type\":\"T\"}").statusCode());
        HttpResponse<String> r = send("GET", "/metrics");
        assertEquals(200, r.statusCode());
        assertEquals("text/plain; version=0.0.4; charset=utf-8", r.headers().firstValue("Content-Type").orElseThrow());
        PromText m = PromText.parse(r.body());
        assertEquals(2, m.value("cor_ngsild_entities{tenant=\"odd\\\"tenant\\\\name\"}"), r.body());
        assertEquals(0, m.value("cor_ngsild_entities{tenant=\"\"}"));
        assertEquals(2, m.value("cor_ngsild_requests_total{operation=\"createEntity\",status=\"201\"}"));
        assertEquals(0, m.value("cor_loop_coroutines_live{loop=\"0\"}"));
        // the library writes the labels in their names' order
        assertTrue(m.has("cor_server_info{build=\"" + BuildInfo.load().build() + "\",jdk=\"" + Runtime.version()
                + "\",version=\"" + BuildInfo.load().version() + "\"}"), r.body());
    }

    @Test
    void liveAnswers503WhileALoopIsStalledPastTheWatchdogAndReadyIsNotTheSame() throws Exception {
        CorServer two = CorServer.start(ServerOptions.parse(new String[] {"--host", "127.0.0.1", "--port", "0", "--httpLoops",
            "2", "--store", "memory"}), BuildInfo.load());
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        // the acceptor deals connections in turn: the first to loop 0, the second to loop 1
        try (java.net.Socket first = new java.net.Socket("127.0.0.1", two.port());
                java.net.Socket second = new java.net.Socket("127.0.0.1", two.port())) {
            assertEquals(200, get(first, "/health/live"));
            assertEquals(200, get(second, "/health/live"));
            // a fault of the kind the watchdog names: loop 1 blocked (a loop must never block)
            two.http().loops().get(1).execute(() -> {
                try {
                    release.await(60, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (get(first, "/health/live") != 503) {
                assertTrue(System.nanoTime() < deadline, "live never answered 503 while loop 1 was blocked");
                Thread.sleep(50);
            }
            assertEquals(200, get(first, "/health/ready"), "readiness is about serving and writing, not this");
            release.countDown();
            while (get(first, "/health/live") != 200) {
                assertTrue(System.nanoTime() < deadline, "live again once loop 1 came back");
                Thread.sleep(50);
            }
        } finally {
            release.countDown();
            two.stop();
        }
    }

    /** {@code GET path} on a kept-alive raw connection: the status (the body read and dropped). */
    private static int get(java.net.Socket c, String path) throws Exception {
        c.setSoTimeout(30_000);
        c.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        java.io.InputStream in = c.getInputStream();
        String head = HttpHead.read(in);
        in.readNBytes(HttpHead.contentLength(head));
        return Integer.parseInt(HttpHead.startLineWord(head, 1));
    }
}
