package dev.cor.examples.hello;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
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
    void theExampleRunsAsItsOwnProcessAndAnswersAndStopsOnSigterm() throws Exception {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                System.getProperty("cor.test.jvm.flags"), "-cp", System.getProperty("java.class.path"),
                HelloMain.class.getName(), "--host", "127.0.0.1", "--port", "0", "--httpLoops", "2");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream()));
            String line;
            int port = -1;
            Pattern listening = Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");
            while ((line = out.readLine()) != null) {
                Matcher m = listening.matcher(line);
                if (m.find()) {
                    port = Integer.parseInt(m.group(1));
                    break;
                }
            }
            assertTrue(port > 0, "the example said where it listens");
            HttpResponse<String> hello = get(port, "/hello");
            assertEquals(200, hello.statusCode());
            assertEquals("{\"hello\":\"world\"}", hello.body());
            assertEquals("{\"slept\":50}", get(port, "/slow?ms=50").body());
            p.destroy(); // SIGTERM: the shutdown hook stops the server
            assertTrue(p.waitFor(10, TimeUnit.SECONDS), "ended on SIGTERM");
        } finally {
            p.destroyForcibly();
        }
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
