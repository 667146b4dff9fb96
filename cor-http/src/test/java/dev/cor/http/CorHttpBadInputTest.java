package dev.cor.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestJson;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every bad input gets its status (RFC 9112), the connection is closed, and the next one is served. */
class CorHttpBadInputTest {
    private static CorHttpServer server;

    @BeforeAll
    static void start() {
        server = CorHttpServer.builder().host("127.0.0.1").port(0).loops(2).application(new TestApp())
                .coroutineHook(r -> true).maxBodyBytes(1024 * 1024).headerTimeoutMs(400).build().start();
    }

    @AfterAll
    static void stop() {
        server.stop(500);
    }

    static Stream<Arguments> badInputs() {
        String big = "x".repeat(9 * 1024);
        return Stream.of(
                Arguments.of("header section over 8 KiB", "GET /hello HTTP/1.1\r\nHost: t\r\nX-Big: " + big + "\r\n\r\n", 431),
                Arguments.of("too many header fields", "GET /hello HTTP/1.1\r\nHost: t\r\n" + "X-F: 1\r\n".repeat(101) + "\r\n", 431),
                Arguments.of("request target over the limit", "GET /" + big + " HTTP/1.1\r\nHost: t\r\n\r\n", 414),
                Arguments.of("body over the limit, not read", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2097152\r\n\r\n", 413),
                Arguments.of("chunked body over the limit", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n200000\r\n", 413),
                Arguments.of("malformed request line", "GET/hello HTTP/1.1\r\nHost: t\r\n\r\n", 400),
                Arguments.of("three spaces in the request line", "GET /a b HTTP/1.1\r\nHost: t\r\n\r\n", 400),
                Arguments.of("invalid method", "G@T /hello HTTP/1.1\r\nHost: t\r\n\r\n", 400),
                Arguments.of("missing Host", "GET /hello HTTP/1.1\r\n\r\n", 400),
                Arguments.of("two Host fields", "GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
                Arguments.of("obs-fold", "GET /hello HTTP/1.1\r\nHost: t\r\nX-A: one\r\n two\r\n\r\n", 400),
                Arguments.of("whitespace before the colon", "GET /hello HTTP/1.1\r\nHost : t\r\n\r\n", 400),
                Arguments.of("invalid Content-Length", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 12a\r\n\r\n", 400),
                Arguments.of("negative Content-Length", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n", 400),
                Arguments.of("duplicated Content-Length", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nab", 400),
                Arguments.of("Content-Length with Transfer-Encoding",
                        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
                Arguments.of("unknown transfer coding", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
                Arguments.of("chunked not last", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400),
                Arguments.of("invalid chunk size", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
                Arguments.of("HTTP/2.0", "GET /hello HTTP/2.0\r\nHost: t\r\n\r\n", 505),
                Arguments.of("HTTP/1.2", "GET /hello HTTP/1.2\r\nHost: t\r\n\r\n", 505),
                Arguments.of("garbage version", "GET /hello HTTQ/1.1\r\nHost: t\r\n\r\n", 400),
                Arguments.of("control character in a field", "GET /hello HTTP/1.1\r\nHost: t\r\nX-A: a\u0001b\r\n\r\n", 400),
                Arguments.of("bare CR", "GET /hello HTTP/1.1\rHost: t\r\n\r\n", 400),
                Arguments.of("a fragment in the target", "GET /hello#frag HTTP/1.1\r\nHost: t\r\n\r\n", 400),
                Arguments.of("a relative target", "GET hello HTTP/1.1\r\nHost: t\r\n\r\n", 400),
                Arguments.of("a request cut short, then silence", "GET /hello HTTP/1.1\r\nHost: t\r\n", 408));
    }

    @ParameterizedTest(name = "{0} -> {2}")
    @MethodSource("badInputs")
    void aBadInputGetsItsStatusTheConnectionClosesAndTheNextIsServed(String what, String input, int status) throws Exception {
        try (RawHttp c = new RawHttp(server.port())) {
            c.send(input);
            RawHttp.Answer a = c.read();
            assertEquals(status, a.status(), what + ": " + a.statusLine());
            assertEquals("close", a.fields().get("connection"), what);
            JsonNode problem = CorRestJson.mapper().readTree(a.body());
            assertEquals(status, problem.get("status").asInt());
            assertTrue(problem.get("detail").asText().length() > 5, what + ": a reason is given");
            assertTrue(c.closedByServer(), what + ": closed after the error");
        }
        try (RawHttp next = new RawHttp(server.port())) {
            assertEquals(200, next.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n").read().status(), "served after " + what);
        }
    }

    @Test
    void aClientStillSendingARefusedBodyReadsThe413() throws Exception {
        int declared = 2 * 1024 * 1024;
        try (RawHttp c = new RawHttp(server.port())) {
            c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: " + declared + "\r\n\r\n");
            Thread sender = Thread.ofPlatform().start(() -> {
                byte[] chunk = new byte[64 * 1024];
                try {
                    for (int i = 0; i < declared / chunk.length; i++) {
                        c.socket.getOutputStream().write(chunk);
                        Thread.sleep(1); // a client that sends at its own pace while the server has answered
                    }
                } catch (IOException e) {
                    // the server closes once it has drained what it will
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            RawHttp.Answer a = c.read();
            assertEquals(413, a.status());
            assertTrue(CorRestJson.mapper().readTree(a.body()).get("detail").asText().contains(String.valueOf(declared)));
            sender.join(10_000);
        }
    }

    @Test
    void anAbsoluteFormTargetIsAccepted() throws Exception {
        try (RawHttp c = new RawHttp(server.port())) {
            RawHttp.Answer a = c.send("GET http://t/id?n=abs HTTP/1.1\r\nHost: t\r\n\r\n").read();
            assertEquals("abs", a.text());
        }
    }

    @Test
    void anEmptyLineBeforeTheRequestLineIsIgnored() throws Exception {
        try (RawHttp c = new RawHttp(server.port())) {
            assertEquals(200, c.send("\r\nGET /hello HTTP/1.1\r\nHost: t\r\n\r\n").read().status());
        }
    }

    @Test
    void seededRandomInputNeverKillsALoop() throws Exception {
        Random rnd = new Random(20261202);
        String[] prefixes = {"", "GET ", "GET / HTTP/1.1\r\n", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n", "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"};
        int answeredWithStatus = 0;
        for (int i = 0; i < 2500; i++) {
            byte[] prefix = prefixes[rnd.nextInt(prefixes.length)].getBytes(StandardCharsets.ISO_8859_1);
            byte[] noise = new byte[rnd.nextInt(300)];
            rnd.nextBytes(noise);
            if (rnd.nextBoolean()) {
                for (int j = 0; j < noise.length; j++) {
                    noise[j] = (byte) (" \r\n:/abcHTTP1.0123456789\t".charAt(rnd.nextInt(25)));
                }
            }
            byte[] input = new byte[prefix.length + noise.length];
            System.arraycopy(prefix, 0, input, 0, prefix.length);
            System.arraycopy(noise, 0, input, prefix.length, noise.length);
            try (RawHttp c = new RawHttp(server.port())) {
                c.socket.setSoTimeout(2000);
                c.send(input);
                c.socket.shutdownOutput();
                RawHttp.Answer a = c.read();
                if (a != null) {
                    answeredWithStatus++;
                    assertTrue(a.status() >= 200 && a.status() < 600, "input " + i + ": " + a.statusLine());
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("input " + i + " left the connection hanging", e);
            } catch (SocketException | NumberFormatException | StringIndexOutOfBoundsException e) {
                // reset or a partial answer to a partial request: fine, the loop lives on
            } catch (IOException e) {
                // likewise
            }
        }
        assertTrue(answeredWithStatus > 100, "most inputs got an answer: " + answeredWithStatus);
        for (int loop = 0; loop < 4; loop++) {
            try (RawHttp c = new RawHttp(server.port())) {
                assertEquals(200, c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n").read().status());
            }
        }
        assertEquals(0, server.liveCoroutines()[0] + server.liveCoroutines()[1]);
    }
}
