package dev.cor.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The server from outside: real sockets, raw and through java.net.http. */
class CorHttpServerTest {
    private final List<CorHttpServer> servers = new ArrayList<>();
    private final TestApp app = new TestApp();

    private CorHttpServer server(java.util.function.Consumer<CorHttpServer.Builder> config) {
        CorHttpServer.Builder b = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).application(app)
                .coroutineHook(r -> true).finishCoroutineHook(r -> true).workerThreads(4);
        config.accept(b);
        CorHttpServer s = b.build().start();
        servers.add(s);
        return s;
    }

    private CorHttpServer server() {
        return server(b -> { });
    }

    @AfterEach
    void stopAll() {
        for (CorHttpServer s : servers) {
            s.stop(1000);
        }
    }

    private static String get(String path) {
        return "GET " + path + " HTTP/1.1\r\nHost: t\r\n\r\n";
    }

    @Test
    void keepAliveCoroutineThatNeverWaitsAnswersThreePipelinedRequestsExactlyOnceInOrder() throws Exception {
        CorHttpServer s = server();
        try (RawHttp c = new RawHttp(s.port())) {
            c.send(get("/nowait?n=1") + get("/nowait?n=2") + get("/nowait?n=3"));
            for (int i = 1; i <= 3; i++) {
                RawHttp.Answer a = c.read();
                assertEquals(200, a.status());
                assertEquals(String.valueOf(i), a.text());
            }
            c.socket.setSoTimeout(300);
            assertThrowsTimeout(c, "no fourth answer");
        }
        assertEquals(3, s.coroutineCount());
    }

    private static void assertThrowsTimeout(RawHttp c, String what) throws Exception {
        try {
            int b = c.socket.getInputStream().read();
            throw new AssertionError(what + ": read " + b);
        } catch (java.net.SocketTimeoutException expected) {
            // nothing more came
        }
    }

    @Test
    void aWaitingRequestHoldsItsConnectionsLaterRequestsBackAndAnswersStayInOrder() throws Exception {
        CorHttpServer s = server();
        try (RawHttp c = new RawHttp(s.port())) {
            c.send(get("/slow?ms=150") + get("/hello") + get("/id?n=third"));
            assertEquals("slept 150", c.read().text());
            assertEquals("{\"hello\":\"world\"}", c.read().text());
            assertEquals("third", c.read().text());
        }
    }

    @Test
    void requestsSentWhileOneWaitsAreAnsweredAfterItInOrderAndAHalfCloseBehindThemIsHonoured() throws Exception {
        CorHttpServer s = server();
        try (RawHttp c = new RawHttp(s.port())) {
            c.send(get("/slow?ms=300"));
            Thread.sleep(50); // in flight now: the next ones come while it waits
            c.send(get("/hello"));
            Thread.sleep(20);
            c.send(get("/id?n=third"));
            c.socket.shutdownOutput();
            assertEquals("slept 300", c.read().text());
            assertEquals("{\"hello\":\"world\"}", c.read().text());
            assertEquals("third", c.read().text());
            c.socket.setSoTimeout(2000);
            assertTrue(c.closedByServer(), "closed after the last answer");
        }
    }

    @Test
    void aClientThatHalfClosesWhileItsRequestWaitsStillGetsTheAnswer() throws Exception {
        CorHttpServer s = server();
        try (RawHttp c = new RawHttp(s.port())) {
            c.send(get("/slow?ms=200"));
            Thread.sleep(50);
            c.socket.shutdownOutput();
            RawHttp.Answer a = c.read();
            assertEquals("slept 200", a.text());
            c.socket.setSoTimeout(2000);
            assertTrue(c.closedByServer(), "closed after the answer");
        }
    }

    @Test
    void aSlowRequestDoesNotDelayHelloOnTheSameLoop() throws Exception {
        CorHttpServer s = server(b -> b.loops(1));
        try (RawHttp slow = new RawHttp(s.port()); RawHttp hello = new RawHttp(s.port())) {
            slow.send(get("/slow?ms=1000"));
            Thread.sleep(50);
            long t0 = System.nanoTime();
            RawHttp.Answer a = hello.send(get("/hello")).read();
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(200, a.status());
            assertTrue(ms < 500, "/hello took " + ms + " ms behind a waiting /slow");
            assertEquals("slept 1000", slow.read().text());
        }
    }

    @Test
    void sixteenConnectionsToATwoLoopServerSplitEvenly() throws Exception {
        CorHttpServer s = server(b -> b.loops(2));
        List<RawHttp> conns = new ArrayList<>();
        try {
            for (int i = 0; i < 16; i++) {
                RawHttp c = new RawHttp(s.port());
                conns.add(c);
                assertEquals(200, c.send(get("/hello")).read().status());
            }
            int[] split = s.connectionsPerLoop();
            assertEquals(16, split[0] + split[1]);
            assertTrue(Math.abs(split[0] - split[1]) <= 2, "split " + split[0] + "/" + split[1]);
        } finally {
            for (RawHttp c : conns) {
                c.close();
            }
        }
    }

    @Test
    void stopOfAnIdleServerReturnsPromptly() {
        CorHttpServer s = CorHttpServer.builder().host("127.0.0.1").port(0).loops(2).application(app).build().start();
        long t0 = System.nanoTime();
        s.stop();
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < 500, "stop took " + ms + " ms");
    }

    @Test
    void stopLetsShortRequestsFinishOnEveryPathAndAnswers503ToThoseThatOutliveTheGrace() throws Exception {
        CorHttpServer s = server(b -> b.loops(2).stopGraceMs(300).coroutineHook(r -> !"hop".equals(r.queryParam("via"))));
        try (RawHttp shortCo = new RawHttp(s.port()); RawHttp longCo = new RawHttp(s.port());
             RawHttp shortHop = new RawHttp(s.port()); RawHttp longHop = new RawHttp(s.port());
             RawHttp idle = new RawHttp(s.port())) {
            assertEquals(200, idle.send(get("/hello")).read().status());
            shortCo.send(get("/slow?ms=100"));
            longCo.send(get("/slow?ms=10000"));
            shortHop.send(get("/slow?ms=100&via=hop"));
            longHop.send(get("/slow?ms=10000&via=hop"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (s.requests() < 5 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertEquals(2, s.hopCount());
            long t0 = System.nanoTime();
            s.stop();
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            for (RawHttp c : List.of(shortCo, shortHop)) {
                RawHttp.Answer a = c.read();
                assertEquals("slept 100", a.text());
                assertEquals("close", a.fields().get("connection"));
            }
            for (RawHttp c : List.of(longCo, longHop)) {
                RawHttp.Answer late = c.read();
                assertEquals(503, late.status());
                assertEquals("close", late.fields().get("connection"));
                assertTrue(c.closedByServer(), "one answer, then the end");
            }
            assertTrue(idle.closedByServer(), "an idle keep-alive connection is closed");
            assertTrue(ms < 5000, "stop took " + ms + " ms");
        }
    }

    @Test
    void theHopAnswersEveryWaitingRequestWhenCoroutinesAreOff() throws Exception {
        CorHttpServer s = server(b -> b.coroutineCap(0));
        try (RawHttp c = new RawHttp(s.port())) {
            for (int i = 0; i < 3; i++) {
                assertEquals("slept 20", c.send(get("/slow?ms=20")).read().text());
            }
            assertEquals("7", c.send(get("/nowait?n=7")).read().text());
        }
        assertEquals(4, s.hopCount());
        assertEquals(0, s.coroutineCount());
    }

    @Test
    void aRealClientGetsHelloAndAnEcho() throws Exception {
        CorHttpServer s = server(b -> b.loops(2));
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<String> hello = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/hello")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, hello.statusCode());
        assertEquals("application/json", hello.headers().firstValue("content-type").orElseThrow());
        assertTrue(hello.headers().firstValue("date").isPresent(), "a Date field (RFC 9110 § 6.6.1)");
        HttpResponse<String> echo = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/echo"))
                .header("Content-Type", "application/ld+json").POST(HttpRequest.BodyPublishers.ofString("{\"a\":1}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals("{\"a\":1}", echo.body());
        assertEquals("application/ld+json", echo.headers().firstValue("content-type").orElseThrow());
        HttpResponse<String> missing = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/nope")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(404, missing.statusCode());
        assertTrue(missing.body().contains("\"title\":\"Not Found\""), missing.body());
    }

    @Test
    void sixteenParallelKeepAliveClientsEachGetTheirOwnAnswers() throws Exception {
        CorHttpServer s = server(b -> b.loops(2));
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Void>> clients = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            int client = t;
            clients.add(CompletableFuture.runAsync(() -> {
                try (RawHttp c = new RawHttp(s.port())) {
                    for (int i = 0; i < 150; i++) {
                        String id = client + "-" + i;
                        String path = switch (i % 3) {
                            case 0 -> "/id?n=" + id;
                            case 1 -> "/nowait?n=" + id;
                            default -> "/slow?ms=1&n=" + id;
                        };
                        RawHttp.Answer a = c.send(get(path)).read();
                        String want = i % 3 == 2 ? "slept 1" : id;
                        if (a == null || a.status() != 200 || !a.text().equals(want)) {
                            wrong.add(id + " got " + (a == null ? "nothing" : a.status() + " " + a.text()));
                        }
                    }
                } catch (Exception e) {
                    wrong.add(client + ": " + e);
                }
            }, java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()));
        }
        CompletableFuture.allOf(clients.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertTrue(wrong.isEmpty(), wrong.size() + " wrong: " + wrong.stream().limit(5).toList());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (s.answersWritten() < 16 * 150 && System.nanoTime() < deadline) {
            Thread.sleep(1); // the last answer can reach its client before the loop counts it
        }
        assertEquals(16 * 150, s.answersWritten());
    }

    @Test
    void headAnswersTheLengthWithoutABodyAndTheConnectionGoesOn() throws Exception {
        CorHttpServer s = server();
        try (RawHttp c = new RawHttp(s.port())) {
            RawHttp.Answer h = c.send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n").read(true);
            assertEquals(200, h.status());
            assertEquals("17", h.fields().get("content-length"));
            assertEquals("7", c.send(get("/id?n=7")).read().text(), "no stray body bytes before the next answer");
        }
    }

    @Test
    void expectContinueGetsA100BeforeTheBody() throws Exception {
        CorHttpServer s = server();
        try (RawHttp c = new RawHttp(s.port())) {
            c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
            RawHttp.Answer cont = c.read();
            assertEquals(100, cont.status());
            RawHttp.Answer a = c.send("hello").read();
            assertEquals(200, a.status());
            assertEquals("hello", a.text());
        }
    }

    @Test
    void aChunkedRequestBodyIsReassembled() throws Exception {
        CorHttpServer s = server();
        try (RawHttp c = new RawHttp(s.port())) {
            c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n");
            assertEquals("hello world", c.read().text());
        }
    }

    @Test
    void http10ClosesUnlessAskedToKeepAlive() throws Exception {
        CorHttpServer s = server();
        try (RawHttp c = new RawHttp(s.port())) {
            assertEquals(200, c.send("GET /hello HTTP/1.0\r\n\r\n").read().status());
            assertTrue(c.closedByServer());
        }
        try (RawHttp c = new RawHttp(s.port())) {
            RawHttp.Answer a = c.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").read();
            assertEquals("keep-alive", a.fields().get("connection"));
            assertEquals(200, c.send("GET /hello HTTP/1.0\r\n\r\n").read().status());
        }
    }

    @Test
    void connectionCloseIsHonoured() throws Exception {
        CorHttpServer s = server();
        try (RawHttp c = new RawHttp(s.port())) {
            RawHttp.Answer a = c.send("GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").read();
            assertEquals("close", a.fields().get("connection"));
            assertTrue(c.closedByServer());
        }
    }

    @Test
    void aLargeAnswerToAClientThatReadsSlowlyArrivesWholeInlineAndFromACoroutine() throws Exception {
        CorHttpServer s = server();
        int n = 8 * 1024 * 1024;
        for (String path : List.of("/big", "/big-co")) {
            try (RawHttp c = new RawHttp(s.port())) {
                c.send(get(path + "?bytes=" + n));
                Thread.sleep(200); // the server fills the socket buffers and must wait
                RawHttp.Answer a = c.read();
                assertEquals(n, a.body().length, path);
                for (int i = 0; i < n; i += 4099) {
                    if (a.body()[i] != (byte) ('a' + i % 26)) {
                        throw new AssertionError(path + ": byte " + i);
                    }
                }
                assertEquals("5", c.send(get("/id?n=5")).read().text());
            }
        }
    }

    /**
     * The selector is rebuilt (the epoll-spin remedy) while a large answer is in flight and again
     * while it is being written; a request that came meanwhile waits in the connection. The whole
     * answer arrives, then the waiting request's, then one sent afterwards: the connection never
     * talks to a cancelled key.
     */
    @ParameterizedTest
    @ValueSource(strings = {"inline", "coroutine", "hop"})
    void aSelectorRebuiltBeforeAndDuringALargeAnswerLosesNothingOnThatPath(String path) throws Exception {
        CorHttpServer s = server(b -> b.writeTimeoutMs(3000).coroutineHook(r -> !"hop".equals(r.queryParam("via"))));
        CorCoLoop loop = s.loops().get(0);
        int n = 32 * 1024 * 1024;
        String target = path.equals("inline") ? "/big?bytes=" + n : "/gated-big?via=" + path + "&bytes=" + n;
        try (RawHttp c = new RawHttp(s.port())) {
            c.send(get(target));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (s.requests() < 1 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            c.send(get("/id?n=2")); // read while the first is in flight: the connection stops reading
            Thread.sleep(200);
            LoopTesting.rebuildSelector(loop); // before the answer
            app.gate.complete(null);
            InputStream in = c.socket.getInputStream();
            byte[] first = in.readNBytes(1024 * 1024);
            LoopTesting.rebuildSelector(loop); // while it is written
            String head = new String(first, 0, 512, StandardCharsets.ISO_8859_1);
            int headLen = head.indexOf("\r\n\r\n") + 4;
            assertTrue(head.startsWith("HTTP/1.1 200 "), head);
            byte[] rest = in.readNBytes(headLen + n - first.length);
            assertEquals(headLen + n - first.length, rest.length, "the whole answer arrived");
            for (int i = 0; i < n; i += 4099) {
                int at = headLen + i;
                byte b = at < first.length ? first[at] : rest[at - first.length];
                if (b != (byte) ('a' + i % 26)) {
                    throw new AssertionError(path + ": byte " + i);
                }
            }
            assertEquals("2", c.read().text(), "the request that waited is answered");
            assertEquals("3", c.send(get("/id?n=3")).read().text(), "the connection still reads");
        }
        assertEquals(2, loop.selectorRebuilds());
        assertEquals(path.equals("coroutine") ? 1 : 0, s.coroutineCount());
        assertEquals(path.equals("hop") ? 1 : 0, s.hopCount());
    }

    @Test
    void thePostResponsePhaseRunsOnEveryPath() throws Exception {
        for (int cap : new int[] {16, 0}) {
            CorHttpServer s = server(b -> b.coroutineCap(cap));
            try (RawHttp c = new RawHttp(s.port())) {
                assertEquals("deferred cap" + cap, c.send(get("/defer?tag=cap" + cap)).read().text());
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (app.deferredRan.size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(app.deferredRan.contains("cap16 coroutine"), app.deferredRan.toString());
        assertTrue(app.deferredRan.contains("cap0 thread"), app.deferredRan.toString());
    }

    @Test
    void operatorCountersAddUp() throws Exception {
        CorHttpServer s = server(b -> b.loops(2));
        try (RawHttp c = new RawHttp(s.port())) {
            c.send(get("/hello")).read();
            c.send(get("/slow?ms=1")).read();
            assertEquals(1, s.connectionsOpen());
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (s.connectionsOpen() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(0, s.connectionsOpen());
        assertEquals(2, s.requests());
        assertEquals(1, s.inlineCount());
        assertEquals(1, s.coroutineCount());
        assertEquals(2, s.liveCoroutines().length);
        assertEquals(0, s.liveCoroutines()[0] + s.liveCoroutines()[1]);
    }

    @Test
    void idleKeepAliveConnectionsAreClosedAfterTheIdleTimeout() throws Exception {
        CorHttpServer s = server(b -> b.idleTimeoutMs(300));
        try (RawHttp c = new RawHttp(s.port())) {
            assertEquals(200, c.send(get("/hello")).read().status());
            long t0 = System.nanoTime();
            assertTrue(c.closedByServer());
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms >= 250 && ms < 3000, "closed after " + ms + " ms");
        }
    }

    @Test
    void aBodyReadByHttpClientStreamsWhole() throws Exception {
        CorHttpServer s = server();
        HttpClient client = HttpClient.newHttpClient();
        HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port()
                + "/big?bytes=3000000")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofInputStream());
        byte[] body = r.body().readAllBytes();
        assertEquals(3_000_000, body.length);
        assertNotNull(r.headers().firstValue("content-length").orElse(null));
        assertNull(r.headers().firstValue("transfer-encoding").orElse(null));
        assertArrayEquals("abc".getBytes(StandardCharsets.US_ASCII), java.util.Arrays.copyOf(body, 3));
    }
}
