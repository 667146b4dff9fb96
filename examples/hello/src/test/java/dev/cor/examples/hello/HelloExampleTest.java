package dev.cor.examples.hello;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.cor.http.CorHttpServer;
import org.junit.jupiter.api.Test;

/** The example from outside: its own process, real HTTP. */
class HelloExampleTest {
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theExampleRunsAsItsOwnProcessAndOnSigtermItsHookStopsTheServerAfterAnsweringWhatWasInFlight() throws Exception {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                System.getProperty("cor.test.jvm.flags"), "-cp", System.getProperty("java.class.path"),
                HelloMain.class.getName(), "--host", "127.0.0.1", "--port", "0", "--httpLoops", "2");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
                String l;
                while ((l = out.readLine()) != null) {
                    lines.add(l);
                }
            } catch (java.io.IOException e) {
                lines.add("(output ended: " + e + ")");
            }
        });
        try {
            int port = -1;
            Pattern listening = Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");
            String line;
            while (port < 0 && (line = lines.poll(60, TimeUnit.SECONDS)) != null) {
                Matcher m = listening.matcher(line);
                if (m.find()) {
                    port = Integer.parseInt(m.group(1));
                }
            }
            assertTrue(port > 0, "the example said where it listens");
            HttpResponse<String> hello = get(port, "/hello");
            assertEquals(200, hello.statusCode());
            assertEquals("{\"hello\":\"world\"}", hello.body());
            assertEquals("{\"slept\":50}", get(port, "/slow?ms=50").body());

            try (Socket c = new Socket("127.0.0.1", port)) {
                c.setSoTimeout(20_000);
                // Pipelined: once /hello is answered, /slow is in the server's buffer and on its way.
                c.getOutputStream().write(("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"
                        + "GET /slow?ms=1000 HTTP/1.1\r\nHost: t\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                InputStream in = c.getInputStream();
                String first = readUntil(in, "{\"hello\":\"world\"}");
                assertTrue(first.startsWith("HTTP/1.1 200"), first);
                // SIGTERM (through the handle: Process.destroy would close our end of its output too).
                // The JVM ends either way; only the hook answers /slow first.
                assertTrue(p.toHandle().destroy());
                String rest = new String(in.readAllBytes(), StandardCharsets.US_ASCII); // to the server's close
                assertTrue(rest.startsWith("HTTP/1.1 200"), "the request in flight was answered: " + rest);
                assertTrue(rest.contains("Connection: close"), rest);
                assertTrue(rest.endsWith("{\"slept\":1000}"), rest);
            }
            assertTrue(p.waitFor(20, TimeUnit.SECONDS), "ended on SIGTERM");
            reader.join(10_000);
            List<String> after = new ArrayList<>(lines);
            assertTrue(after.contains("hello: stopped after 4 answer(s)"), "the hook stopped the server: " + after);
        } finally {
            p.destroyForcibly();
        }
    }

    /** Reads until {@code end} has been read; what was read. */
    private static String readUntil(InputStream in, String end) throws Exception {
        StringBuilder b = new StringBuilder();
        int ch;
        while (!b.toString().endsWith(end) && (ch = in.read()) != -1) {
            b.append((char) ch);
        }
        return b.toString();
    }

    @Test
    void slowSleepsOnTheLoopAsACoroutineAndOnAWorkerWithCoroutinesOff() throws Exception {
        for (int coroutines : new int[] {1024, 0}) {
            CorHttpServer s = HelloMain.start(HelloOptions.parse(new String[] {
                "--host", "127.0.0.1", "--port", "0", "--httpLoops", "1", "--coroutines", String.valueOf(coroutines), "--workers", "2"}));
            try {
                assertEquals("{\"slept\":30}", get(s.port(), "/slow?ms=30").body());
                assertEquals(coroutines == 0 ? 0 : 1, s.coroutineCount());
                assertEquals(coroutines == 0 ? 1 : 0, s.hopCount());
                assertEquals(200, get(s.port(), "/hello").statusCode());
                assertEquals(1, s.inlineCount());
            } finally {
                s.stop();
            }
        }
    }

    @Test
    void echoAnswersTheBodyAndItsTypeAndErrorsAreProblemDetails() throws Exception {
        CorHttpServer s = HelloMain.start(HelloOptions.parse(new String[] {"--host", "127.0.0.1", "--port", "0", "--httpLoops", "1"}));
        try {
            HttpResponse<String> echo = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/echo"))
                    .header("Content-Type", "text/csv").POST(HttpRequest.BodyPublishers.ofString("a,b\n1,2")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals("a,b\n1,2", echo.body());
            assertEquals("text/csv", echo.headers().firstValue("content-type").orElseThrow());
            assertEquals(404, get(s.port(), "/nope").statusCode());
            HttpResponse<String> bad = get(s.port(), "/slow?ms=lots");
            assertEquals(400, bad.statusCode());
            assertTrue(bad.body().contains("milliseconds"), bad.body());
            assertEquals(405, get(s.port(), "/echo").statusCode());
        } finally {
            s.stop();
        }
    }

    @Test
    void badFlagsAreRefusedWithAReason() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HelloOptions.parse(new String[] {"--coroutines", "-1"}));
        assertTrue(e.getMessage().contains("--coroutines"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> HelloOptions.parse(new String[] {"--port"}));
        assertThrows(IllegalArgumentException.class, () -> HelloOptions.parse(new String[] {"--bogus"}));
    }
}
