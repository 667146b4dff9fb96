package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * {@code --accessLog} and {@code --logFormat} through the jar: one line a request with its
 * fields, never a credential; JSON lines that parse; and a stdout nobody reads, which costs
 * access-log lines (dropped and counted) but never an answer.
 */
@Tag("process")
class AccessLogProcessTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** time tenant method target status microseconds bytes */
    private static final Pattern TEXT_LINE = Pattern.compile(
            "(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z) (\\S+) (\\S+) (\\S+) (\\d{3}) (\\d+) (\\d+)");
    private static final String TOKEN = "s3cr3t-token-4f9a1c7e2b8d6a05";
    private static final String QUERY_TOKEN = "query-token-9d2e7b4a1f6c3e80";

    record Line(Instant time, String tenant, String method, String target, int status, long micros, long bytes) {
    }

    /** Waits until stdout holds an access line {@code which} accepts, and returns it. */
    private static Line awaitTextLine(ServerProcess s, Predicate<Line> which) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            for (String l : s.stdout().split("\n")) {
                Matcher m = TEXT_LINE.matcher(l);
                if (m.matches()) {
                    Line line = new Line(Instant.parse(m.group(1)), m.group(2), m.group(3), m.group(4),
                            Integer.parseInt(m.group(5)), Long.parseLong(m.group(6)), Long.parseLong(m.group(7)));
                    if (which.test(line)) {
                        return line;
                    }
                }
            }
            assertTrue(System.nanoTime() < deadline, "no such access line: " + s);
            Thread.sleep(20);
        }
    }

    private static void assertLine(Line line, Instant from, String tenant, String method, String target, HttpResponse<String> r) {
        assertEquals(List.of(tenant, method, target, r.statusCode(), (long) r.body().getBytes(StandardCharsets.UTF_8).length),
                List.of(line.tenant(), line.method(), line.target(), line.status(), line.bytes()), line.toString());
        assertFalse(line.time().isBefore(from.minusSeconds(1)) || line.time().isAfter(Instant.now().plusSeconds(1)),
                "the time of the answer, in UTC: " + line);
        assertTrue(line.micros() > 0 && line.micros() < TimeUnit.SECONDS.toMicros(30), line.toString());
    }

    @Test
    void each_request_is_one_line_with_its_tenant_method_target_status_time_and_bytes_and_never_a_token(@TempDir Path dir)
            throws Exception {
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, TOKEN + "  *  rw\n");
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--httpLoops", "1", "--accessLog", "-",
                "--tokens", tokens.toString())) {
            Instant from = Instant.now();
            HttpResponse<String> created = s.send("POST", "/ngsi-ld/v1/entities", "{\"id\":\"urn:ngsi-ld:T:1\",\"type\":\"T\"}",
                    "Authorization", "Bearer " + TOKEN, "NGSILD-Tenant", "city1");
            assertEquals(201, created.statusCode(), created.body());
            HttpResponse<String> read = s.send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:T:1", null,
                    "Authorization", "Bearer " + TOKEN, "NGSILD-Tenant", "city1");
            assertEquals(200, read.statusCode(), read.body());
            HttpResponse<String> missing = s.send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:T:404?options=keyValues", null,
                    "Authorization", "Bearer " + TOKEN);
            assertEquals(404, missing.statusCode(), missing.body());
            HttpResponse<String> inQuery = s.send("GET", "/ngsi-ld/v1/types?access_token=" + QUERY_TOKEN + "&details=true", null);
            assertEquals(401, inQuery.statusCode(), inQuery.body());

            assertLine(awaitTextLine(s, l -> l.method().equals("POST")), from, "city1", "POST", "/ngsi-ld/v1/entities", created);
            assertLine(awaitTextLine(s, l -> l.status() == 200 && l.target().startsWith("/ngsi-ld/v1/entities/")), from, "city1",
                    "GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:T:1", read);
            assertLine(awaitTextLine(s, l -> l.status() == 404), from, "-", "GET",
                    "/ngsi-ld/v1/entities/urn:ngsi-ld:T:404?options=keyValues", missing);
            assertLine(awaitTextLine(s, l -> l.status() == 401), from, "-", "GET",
                    "/ngsi-ld/v1/types?access_token=-&details=true", inQuery);
            for (String out : List.of(s.stdout(), s.stderr())) {
                assertFalse(out.contains(TOKEN) || out.contains(QUERY_TOKEN) || out.contains("Bearer"), out);
            }
        }
    }

    @Test
    void with_logFormat_json_every_line_on_stdout_and_stderr_is_a_json_object_and_trace_shows_each_route() throws Exception {
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--httpLoops", "1", "--accessLog", "-",
                "--logFormat", "json", "--logLevel", "trace")) {
            HttpResponse<String> types = s.send("GET", "/ngsi-ld/v1/types", null, "NGSILD-Tenant", "t\"1");
            assertEquals(404, types.statusCode(), types.body()); // no such tenant
            JsonNode access = awaitJson(s, n -> "/ngsi-ld/v1/types".equals(n.path("target").asText()));
            assertEquals("GET", access.path("method").asText());
            assertEquals("t%221", access.path("tenant").asText(), "a quote in a header is escaped, the line stays JSON");
            assertEquals(404, access.path("status").asInt());
            assertEquals(types.body().getBytes(StandardCharsets.UTF_8).length, access.path("bytes").asLong());
            assertTrue(access.path("micros").asLong() > 0, access.toString());
            Instant.parse(access.path("time").asText());

            List<JsonNode> out = jsonLines(s.stdout());
            assertTrue(out.stream().anyMatch(n -> n.path("message").asText().contains("NGSI-LD broker on")),
                    "the start line is a JSON record too: " + s);
            List<JsonNode> err = jsonLines(s.stderr());
            assertTrue(err.size() > 1, "trace prints more than one line: " + s);
            for (JsonNode n : err) {
                Instant.parse(n.path("time").asText());
                assertTrue(List.of("ERROR", "WARN", "INFO", "DEBUG", "TRACE").contains(n.path("level").asText()), n.toString());
                assertFalse(n.path("logger").asText().isEmpty(), n.toString());
                assertTrue(n.has("message"), n.toString());
            }
            assertTrue(err.stream().anyMatch(n -> n.path("level").asText().equals("TRACE")
                    && n.path("logger").asText().equals("dev.cor.rest.CorRestDispatcher")
                    && n.path("message").asText().contains("GET /ngsi-ld/v1/types on cor-http-0: inline")),
                    "each request's route at trace: " + s);
            assertTrue(err.stream().noneMatch(n -> !n.path("logger").asText().startsWith("dev.cor.")
                    && List.of("DEBUG", "TRACE").contains(n.path("level").asText())),
                    "trace opens cor's loggers, not the JDK's (a line per trusted CA): " + s);
        }
    }

    /** Every non-empty line of {@code text}, each of which must be one JSON object. */
    private static List<JsonNode> jsonLines(String text) throws Exception {
        List<JsonNode> nodes = new ArrayList<>();
        for (String l : text.split("\n")) {
            if (l.isEmpty()) {
                continue;
            }
            JsonNode n;
            try {
                n = JSON.readTree(l);
            } catch (Exception e) {
                throw new AssertionError("not a JSON line: " + l, e);
            }
            assertTrue(n.isObject(), l);
            nodes.add(n);
        }
        return nodes;
    }

    private static JsonNode awaitJson(ServerProcess s, Predicate<JsonNode> which) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            String out = s.stdout();
            // only whole lines: the last may still be being written
            for (JsonNode n : jsonLines(out.substring(0, out.lastIndexOf('\n') + 1))) {
                if (which.test(n)) {
                    return n;
                }
            }
            assertTrue(System.nanoTime() < deadline, "no such JSON line: " + s);
            Thread.sleep(20);
        }
    }

    @Test
    void a_stdout_nobody_reads_never_stalls_the_broker_its_access_lines_are_dropped_and_counted() throws Exception {
        // lines of about 1 KiB: 2000 of them are 30 times what the pipe (64 KiB) and the loop's ring (256 KiB) hold
        String target = "/version?pad=" + "x".repeat(960);
        try (ServerProcess s = ServerProcess.startWithStdoutUnread("--store", "memory", "--httpLoops", "1",
                "--accessLog", "-")) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 2000; i++) {
                HttpResponse<String> r = s.send("GET", target, null);
                assertEquals(200, r.statusCode(), "request " + i);
            }
            double dropped = s.metrics().value("cor_access_log_dropped_total");
            assertTrue(dropped > 0, "the output was stalled, so lines were dropped: " + dropped);
            assertTrue(s.process.isAlive());
            // what was written is whole lines, the start line first
            byte[] head = s.stdoutPipe().readNBytes(4096);
            String first = new String(head, StandardCharsets.UTF_8).split("\n")[0];
            assertTrue(first.contains("NGSI-LD broker on"), first);
            System.out.println("2000 requests with stdout stalled: " + Duration.ofNanos(System.nanoTime() - t0).toMillis()
                    + " ms, " + (long) dropped + " lines dropped");
        }
    }
}
