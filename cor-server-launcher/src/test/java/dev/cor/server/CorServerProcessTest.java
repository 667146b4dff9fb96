package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.cor.rest.client.CorRestClient;
import dev.cor.rest.client.CorRestClientRequest;
import dev.cor.rest.client.CorRestClientResponse;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code java -jar cor-server.jar} as an operator runs it: its own process, real sockets, SIGTERM
 * to stop it. Runs after {@code package} (the pom's process-tests execution, by its tag).
 */
@Tag("process")
class CorServerProcessTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long a stop may take with nothing in flight: the server's grace (5 s) is the bound. */
    private static final long STOP_SECONDS = 10;

    /** SIGTERM, then the exit status, which must come within {@link #STOP_SECONDS}. */
    private static int sigterm(ServerProcess s) throws InterruptedException {
        s.process.destroy(); // SIGTERM
        assertTrue(s.process.waitFor(STOP_SECONDS, TimeUnit.SECONDS), "ended on SIGTERM: " + s);
        return s.process.exitValue();
    }

    @Test
    void theJarServesTheBrokerWithVersionHealthAndMetricsAndExitsZeroOnSigterm() throws Exception {
        try (ServerProcess s = ServerProcess.start("--httpLoops", "1", "--corPort", "0", "--coroutines", "8",
                "--workers", "3", "--coStack", "1m", "--contextTimeout", "1234", "--notificationTimeout", "2345", "--notificationQueue", "32",
                "--forwardTimeout", "3456", "--maxBody", "64k", "--logLevel", "warn")) {
            // GET /version: what runs, built from what, on which JDK, with which flags
            HttpResponse<String> vr = s.send("GET", "/version", null);
            assertEquals(200, vr.statusCode());
            JsonNode v = JSON.readTree(vr.body());
            BuildInfo build = BuildInfo.load();
            assertEquals("cor-server", v.get("name").asText());
            assertEquals(build.version(), v.get("version").asText());
            assertFalse(build.version().isEmpty());
            assertEquals(build.build(), v.get("build").asText());
            assertEquals(Runtime.version().toString(), v.get("jdk").asText(), "the JVM of the test ran the jar");
            JsonNode f = v.get("flags");
            assertEquals("127.0.0.1", f.get("host").asText());
            assertEquals(s.port, f.get("port").asInt());
            assertEquals(0, f.get("corPort").asInt());
            assertEquals(1, f.get("httpLoops").asInt());
            assertEquals(8, f.get("coroutines").asInt());
            assertEquals(3, f.get("workers").asInt());
            assertEquals(1024 * 1024, f.get("coStack").asInt());
            assertEquals(1234, f.get("contextTimeout").asInt());
            assertEquals(2345, f.get("notificationTimeout").asInt());
            assertEquals(32, f.get("notificationQueue").asInt());
            assertEquals(3456, f.get("forwardTimeout").asInt());
            assertEquals(64 * 1024, f.get("maxBody").asInt());
            assertEquals("warn", f.get("logLevel").asText());

            HttpResponse<String> health = s.send("GET", "/health", null);
            assertEquals(200, health.statusCode());
            assertEquals("{\"status\":\"ok\"}", health.body());

            // an entity's create and reads through the launcher, and what /metrics counts of them
            PromText before = s.metrics();
            String id = "urn:ngsi-ld:Vehicle:P1";
            HttpResponse<String> created = s.send("POST", "/ngsi-ld/v1/entities",
                    "{\"id\":\"" + id + "\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":55}}");
            assertEquals(201, created.statusCode(), created.body());
            assertEquals("/ngsi-ld/v1/entities/" + id, created.headers().firstValue("Location").orElseThrow());
            HttpResponse<String> read = s.send("GET", "/ngsi-ld/v1/entities/" + id, null);
            assertEquals(200, read.statusCode(), read.body());
            assertEquals(55, JSON.readTree(read.body()).at("/speed/value").asInt(), read.body());
            HttpResponse<String> kv = s.send("GET", "/ngsi-ld/v1/entities/" + id + "?options=keyValues", null);
            assertEquals(55, JSON.readTree(kv.body()).get("speed").asInt(), kv.body());
            PromText after = s.metrics();
            assertEquals(4, after.value("cor_http_requests_total") - before.value("cor_http_requests_total"),
                    "create, two reads and this scrape");
            assertEquals(3, after.value("cor_dispatch_total{mode=\"inline\"}") - before.value("cor_dispatch_total{mode=\"inline\"}"),
                    "two reads and this scrape");
            assertEquals(1, after.value("cor_dispatch_total{mode=\"coroutine\"}") - before.value("cor_dispatch_total{mode=\"coroutine\"}"),
                    "the create waits for the durable store's fsync: a coroutine of its loop");
            assertEquals(1, after.value("cor_store_writable"));
            assertTrue(after.value("cor_store_journal_forces_total") >= 1);
            assertEquals(0, before.valueOrZero("cor_ngsild_requests_total{operation=\"createEntity\",status=\"201\"}"));
            assertEquals(1, after.value("cor_ngsild_requests_total{operation=\"createEntity\",status=\"201\"}"));
            assertEquals(2, after.value("cor_ngsild_requests_total{operation=\"retrieveEntity\",status=\"200\"}"));
            assertEquals(0, before.value("cor_ngsild_entities{tenant=\"\"}"));
            assertEquals(1, after.value("cor_ngsild_entities{tenant=\"\"}"));
            assertEquals(0, after.value("cor_loop_coroutines_live{loop=\"0\"}"));
            assertTrue(after.value("cor_http_connections_open") >= 1, "this scrape's own connection");

            HttpResponse<String> inTenant = s.send("POST", "/ngsi-ld/v1/entities",
                    "{\"id\":\"" + id + "\",\"type\":\"Vehicle\"}", "NGSILD-Tenant", "fleet");
            assertEquals(201, inTenant.statusCode(), inTenant.body());
            assertEquals(1, s.metrics().value("cor_ngsild_entities{tenant=\"fleet\"}"));

            // --maxBody: a body past it is refused with 413 before the broker sees it
            HttpResponse<String> big = s.send("POST", "/ngsi-ld/v1/entities", "{\"id\":\"urn:x:1\",\"type\":\"T\",\"a\":\""
                    + "x".repeat(65 * 1024) + "\"}");
            assertEquals(413, big.statusCode());

            // --corPort: the broker over cor://, on the same loops and dispatch
            s.awaitStdout("cor://", Duration.ofSeconds(30));
            Matcher m = Pattern.compile("cor://127\\.0\\.0\\.1:(\\d+)").matcher(s.stdout());
            assertTrue(m.find(), s.stdout());
            try (CorRestClient cor = CorRestClient.builder().build()) {
                CorRestClientResponse r = cor.send(CorRestClientRequest.get("cor://127.0.0.1:" + m.group(1)
                        + "/ngsi-ld/v1/entities/" + id));
                assertEquals(200, r.status(), r.bodyText());
                assertEquals(55, JSON.readTree(r.body()).at("/speed/value").asInt());
            }

            // --logLevel warn: the server's INFO line about listening is not logged
            assertFalse(s.stderr().contains("listening"), s.stderr());

            assertEquals(0, sigterm(s), "a clean stop on SIGTERM exits 0: " + s);
            assertTrue(s.stdout().contains("cor-server: stopped"), s.stdout());
        }
    }

    @Test
    void aRequestInFlightWhenSigtermArrivesIsAnsweredInFull() throws Exception {
        try (ServerProcess s = ServerProcess.start("--httpLoops", "1", "--maxBody", "16m")) {
            // An entity whose answer (8 MiB) is far more than the sockets can buffer: its GET stays
            // in flight, half written, for as long as this client does not read.
            String id = "urn:ngsi-ld:Big:1";
            StringBuilder e = new StringBuilder("{\"id\":\"" + id + "\",\"type\":\"Big\"");
            String value = "x".repeat(128 * 1024);
            for (int i = 0; i < 64; i++) {
                e.append(",\"a").append(i).append("\":{\"type\":\"Property\",\"value\":\"").append(value).append("\"}");
            }
            HttpResponse<String> created = s.send("POST", "/ngsi-ld/v1/entities", e.append('}').toString());
            assertEquals(201, created.statusCode(), created.body());
            assertTrue(s.stderr().contains("cor-http: listening"), "--logLevel info (the default) logs it: " + s.stderr());

            try (Socket slow = new Socket()) {
                slow.setReceiveBufferSize(16 * 1024);
                slow.setSoTimeout(30_000);
                slow.connect(new InetSocketAddress("127.0.0.1", s.port), 10_000);
                OutputStream o = slow.getOutputStream();
                o.write(("GET /ngsi-ld/v1/entities/" + id + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                o.flush();
                // In flight: read and handled, its answer not written in full (one loop: every
                // other answer is written before the next request is read).
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (true) {
                    PromText m = s.metrics();
                    double unanswered = m.value("cor_http_requests_total") - m.value("cor_http_answers_written_total") - 1;
                    if (m.valueOrZero("cor_ngsild_requests_total{operation=\"retrieveEntity\",status=\"200\"}") == 1) {
                        assertEquals(1, unanswered, "the big GET is handled but not written yet");
                        break;
                    }
                    assertTrue(System.nanoTime() < deadline, "the big GET was never handled: " + s);
                    Thread.sleep(20);
                }

                s.process.destroy(); // SIGTERM
                s.awaitStdout("cor-server: stopping", Duration.ofSeconds(30));
                awaitRefused(s.port); // the listener is closed: the stop is under way

                InputStream in = new BufferedInputStream(slow.getInputStream());
                String head = HttpHead.read(in);
                assertNotNull(head, "the connection ended before the answer");
                assertTrue(head.startsWith("HTTP/1.1 200 "), head);
                Matcher cl = Pattern.compile("(?i)\r\ncontent-length: *(\\d+)\r\n").matcher(head);
                assertTrue(cl.find(), head);
                byte[] body = in.readNBytes(Integer.parseInt(cl.group(1)));
                assertEquals(Integer.parseInt(cl.group(1)), body.length, "the whole answer arrived");
                assertTrue(body.length > 8 * 1024 * 1024, "bigger than the sockets' buffers: " + body.length);
                JsonNode got = JSON.readTree(body);
                assertEquals(id, got.get("id").asText());
                assertEquals(value, got.at("/a63/value").asText());
            }
            assertTrue(s.process.waitFor(STOP_SECONDS, TimeUnit.SECONDS), "ended: " + s);
            assertEquals(0, s.process.exitValue(), s.toString());
        }
    }

    @Test
    void aBadFlagIsOneLineOnStderrAndExitStatus2() throws Exception {
        try (ServerProcess bad = ServerProcess.runToEnd("--coroutines", "-1")) {
            assertEquals(2, bad.process.exitValue(), bad.toString());
            assertEquals("cor-server: --coroutines takes a number from 0 to 1000000 or off, not -1 (--help lists the flags)"
                    + System.lineSeparator(), bad.stderr());
            assertEquals("", bad.stdout());
        }
        try (ServerProcess unknown = ServerProcess.runToEnd("--prot", "1026")) {
            assertEquals(2, unknown.process.exitValue(), unknown.toString());
            assertEquals("cor-server: unknown option --prot (--help lists the flags)" + System.lineSeparator(),
                    unknown.stderr());
        }
    }

    @Test
    void helpPrintsTheUsageAndExitsZero() throws Exception {
        try (ServerProcess help = ServerProcess.runToEnd("--help")) {
            assertEquals(0, help.process.exitValue(), help.toString());
            assertTrue(help.stdout().startsWith("usage: java -jar cor-server.jar"), help.stdout());
            for (String flag : new String[] {"--port", "--host", "--corPort", "--httpLoops", "--coroutines", "--workers",
                "--coStack", "--contextTimeout", "--notificationTimeout", "--notificationQueue", "--forwardTimeout",
                "--brokerId", "--maxBody", "--logLevel", "--help"}) {
                assertTrue(help.stdout().contains("  " + flag + " "), flag + " is in the usage");
            }
            assertEquals("", help.stderr());
        }
    }

    @Test
    void aPortTakenIsOneLineOnStderrAndExitStatus1() throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress("127.0.0.1", 0));
            try (ServerProcess s = ServerProcess.runToEnd("--host", "127.0.0.1", "--port", String.valueOf(taken.getLocalPort()))) {
                assertEquals(1, s.process.exitValue(), s.toString());
                assertTrue(s.stderr().startsWith("cor-server: cannot serve HTTP on 127.0.0.1:" + taken.getLocalPort()
                        + ": "), s.stderr());
                assertEquals(1, s.stderr().lines().count(), s.stderr());
            }
        }
    }

    /** Waits until a connection to {@code port} is refused. */
    private static void awaitRefused(int port) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            try (Socket probe = new Socket()) {
                probe.connect(new InetSocketAddress("127.0.0.1", port), 1_000);
            } catch (ConnectException refused) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("port " + port + " still accepts connections 10 s after SIGTERM");
    }

}
