package dev.cor.rest.client;

import static dev.cor.base.testing.LoopTesting.inCoroutine;
import static dev.cor.base.testing.LoopTesting.onLoop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import dev.cor.rest.client.CorRestClientException.Kind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every way a peer can fail a request ends in a typed error - and leaves no busy connection in
 * the pool and no coroutine behind on the loop.
 */
class CorRestClientFaultTest {
    private final List<TestServer> servers = new ArrayList<>();
    private CorCoLoop loop;
    private CorRestClient client;

    @BeforeEach
    void setUp() {
        loop = LoopTesting.start("fault-loop", 64);
        client = CorRestClient.builder().responseTimeoutMs(300).maxResponseBytes(64 * 1024).maxHeaderBytes(4096).build();
    }

    @AfterEach
    void tearDown() throws Exception {
        client.close();
        LoopTesting.stop(loop);
        for (TestServer s : servers) {
            s.close();
        }
    }

    private TestServer http(TestServer.Handler h) throws Exception {
        TestServer s = TestServer.http(h);
        servers.add(s);
        return s;
    }

    private TestServer raw(TestServer.Conn c) throws Exception {
        TestServer s = TestServer.raw(c);
        servers.add(s);
        return s;
    }

    /** A handler that writes {@code text} as it is, then closes if asked. */
    private TestServer canned(String text, boolean close) throws Exception {
        return http((req, s, out) -> {
            TestServer.write(out, text);
            if (close) {
                s.close();
            }
        });
    }

    /** Sends in a coroutine, expects a failure, and checks nothing is left behind on the loop. */
    private CorRestClientException failsInCoroutine(CorRestClientRequest req) throws Exception {
        CorRestClientException e = inCoroutine(loop, () -> {
            try {
                return "no failure, got " + client.send(req);
            } catch (CorRestClientException x) {
                return x;
            }
        }) instanceof CorRestClientException x ? x : null;
        assertNotNull(e, "the request did not fail");
        assertNothingLeftOnTheLoop();
        return e;
    }

    private void assertNothingLeftOnTheLoop() throws Exception {
        List<Integer> c = onLoop(loop, () -> List.of(client.openConnections(), client.idleConnections(), loop.liveCoroutines()));
        assertEquals(c.get(1), c.get(0), "a busy connection was left in the pool");
        assertEquals(0, c.get(2), "a coroutine was left on the loop");
    }

    private static int deadPort() throws Exception {
        try (ServerSocket ss = TestServer.listen()) {
            return ss.getLocalPort();
        }
    }

    private static String url(TestServer s) {
        return s.url("/");
    }

    @Test
    void aPortNobodyListensOnIsRefused() throws Exception {
        CorRestClientException e = failsInCoroutine(CorRestClientRequest.get("http://127.0.0.1:" + deadPort() + "/"));
        assertEquals(Kind.REFUSED, e.kind());
        assertEquals(502, e.gatewayStatus());
    }

    @Test
    void aServerThatNeverAnswersIsATimeoutAndAGateway504() throws Exception {
        TestServer s = raw(TestServer::drain);
        long t0 = System.nanoTime();
        CorRestClientException e = failsInCoroutine(CorRestClientRequest.get(url(s)));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(Kind.TIMEOUT, e.kind(), e.toString());
        assertEquals(504, e.gatewayStatus());
        assertTrue(ms >= 290 && ms < 3000, "timed out after " + ms + " ms, the deadline was 300");
        assertTrue(e.getMessage().contains("300 ms"), e.getMessage());
    }

    @Test
    void aRequestsOwnDeadlineReplacesTheClientsAndTheNextUsesTheClientsAgain() throws Exception {
        TestServer s = raw(TestServer::drain);
        long t0 = System.nanoTime();
        CorRestClientException e = failsInCoroutine(CorRestClientRequest.builder("GET", url(s)).timeoutMs(100).build());
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(Kind.TIMEOUT, e.kind(), e.toString());
        assertTrue(ms >= 90 && ms < 3000, "timed out after " + ms + " ms");
        assertTrue(e.getMessage().contains("100 ms"), "the request's 100 ms, not the client's 300: " + e.getMessage());
        long t1 = System.nanoTime();
        CorRestClientException plain = failsInCoroutine(CorRestClientRequest.get(url(s)));
        assertTrue((System.nanoTime() - t1) / 1_000_000 >= 290, "a request without its own deadline keeps the client's");
        assertTrue(plain.getMessage().contains("300 ms"), plain.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CorRestClientRequest.builder("GET", url(s)).timeoutMs(0));
    }

    @Test
    void aResetInTheMiddleOfTheBodyIsResetOrClosed() throws Exception {
        TestServer s = http((req, sock, out) -> {
            TestServer.write(out, "HTTP/1.1 200 OK\r\nContent-Length: 60000\r\n\r\n" + "x".repeat(1000));
            Thread.sleep(50);
            sock.setSoLinger(true, 0);
            sock.close();
        });
        CorRestClientException e = failsInCoroutine(CorRestClientRequest.get(url(s)));
        assertTrue(Set.of(Kind.RESET, Kind.CLOSED).contains(e.kind()), e.toString());
    }

    @Test
    void aMalformedStatusLineIsMalformed() throws Exception {
        for (String bad : List.of("HTTP/1.1 two hundred OK\r\n\r\n", "SSH-2.0-OpenSSH_9.6\r\n\r\n", "HTTP/1.1 200OK\r\n\r\n",
                "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 200 OK\r\nbad header\r\n\r\n", "HTTP/1.1 200 OK\r\n folded: x\r\n\r\n",
                "HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab")) {
            CorRestClientException e = failsInCoroutine(CorRestClientRequest.get(url(canned(bad, false))));
            assertEquals(Kind.MALFORMED, e.kind(), bad + " -> " + e);
        }
    }

    @Test
    void aChunkedBodyCutShortIsClosed() throws Exception {
        TestServer s = canned("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n10\r\nabc", true);
        CorRestClientException e = failsInCoroutine(CorRestClientRequest.get(url(s)));
        assertTrue(Set.of(Kind.CLOSED, Kind.MALFORMED).contains(e.kind()), e.toString());
    }

    @Test
    void aBadChunkSizeIsMalformed() throws Exception {
        TestServer s = canned("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", false);
        assertEquals(Kind.MALFORMED, failsInCoroutine(CorRestClientRequest.get(url(s))).kind());
    }

    @Test
    void aPeerThatClosesBeforeAnyResponseIsClosed() throws Exception {
        TestServer s = http((req, sock, out) -> sock.close());
        CorRestClientException e = failsInCoroutine(CorRestClientRequest.get(url(s)));
        assertEquals(Kind.CLOSED, e.kind(), e.toString());
        assertEquals(1, s.connections.get(), "a fresh connection is never retried");
    }

    @Test
    void bodiesAndHeaderSectionsOverTheLimitsAreTooLarge() throws Exception {
        String big = "y".repeat(64 * 1024 + 1);
        List<String> over = List.of(
                "HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n",
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(big.length()) + "\r\n" + big + "\r\n0\r\n\r\n",
                "HTTP/1.1 200 OK\r\n\r\n" + big,
                "HTTP/1.1 200 OK\r\nX-Big: " + "h".repeat(5000) + "\r\n\r\n",
                "HTTP/1.1 200 OK\r\n" + "X-Many: v\r\n".repeat(500) + "\r\n");
        for (String text : over) {
            CorRestClientException e = failsInCoroutine(CorRestClientRequest.get(url(canned(text, true))));
            assertEquals(Kind.TOO_LARGE, e.kind(), e.toString());
        }
    }

    @Test
    void anEndlessRunOfInterimResponsesIsBoundedByTheHeaderLimit() throws Exception {
        TestServer s = http((req, sock, out) -> {
            for (int i = 0; i < 2000 && !sock.isClosed(); i++) {
                TestServer.write(out, "HTTP/1.1 100 Continue\r\n\r\n");
            }
        });
        assertEquals(Kind.TOO_LARGE, failsInCoroutine(CorRestClientRequest.get(url(s))).kind());
    }

    @Test
    void aStaleKeepAliveConnectionIsRetriedOnceForAnIdempotentRequestOnly() throws Exception {
        // the second request on each connection finds it closed under it, before any answer byte
        TestServer s = http((req, sock, out) -> {
            if (req.index() == 0) {
                TestServer.respond(out, 200, "first");
            } else {
                sock.close();
            }
        });
        String body = inCoroutine(loop, () -> {
            client.send(CorRestClientRequest.get(url(s)));
            return client.send(CorRestClientRequest.get(url(s))).bodyText();
        });
        assertEquals("first", body, "the GET was not sent again on a new connection");
        assertEquals(2, s.connections.get());
        assertNothingLeftOnTheLoop();

        // a POST may have done its work: it is not sent twice
        CorRestClientException e = failsInCoroutine(CorRestClientRequest.post(url(s), "text/plain", "once".getBytes()));
        assertEquals(Kind.CLOSED, e.kind(), e.toString());
        assertEquals(2, s.connections.get(), "the POST went out again");
    }

    @Test
    void anIdleConnectionThePeerClosedIsNotReused() throws Exception {
        TestServer s = http((req, sock, out) -> {
            TestServer.respond(out, 200, "c" + req.connection());
            sock.shutdownOutput();
        });
        List<String> bodies = inCoroutine(loop, () -> {
            String a = client.send(CorRestClientRequest.get(url(s))).bodyText();
            dev.cor.base.CorCo.sleep(50);
            String b = client.send(CorRestClientRequest.get(url(s))).bodyText();
            return List.of(a, b);
        });
        assertEquals(List.of("c1", "c2"), bodies);
        assertNothingLeftOnTheLoop();
    }

    @Test
    void theLoopClosesAnIdleConnectionAsSoonAsThePeerClosesItWithoutWaitingForTheNextRequest() throws Exception {
        TestServer s = http((req, sock, out) -> {
            TestServer.respond(out, 200, "bye later");
            Thread.sleep(100); // the connection is idle in the pool by now
            sock.shutdownOutput();
        });
        assertEquals("bye later", inCoroutine(loop, () -> client.send(CorRestClientRequest.get(url(s))).bodyText()));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        List<Integer> c;
        do {
            Thread.sleep(10);
            c = onLoop(loop, () -> List.of(client.openConnections(), client.idleConnections()));
        } while (!c.equals(List.of(0, 0)) && System.nanoTime() < deadline);
        assertEquals(List.of(0, 0), c, "the closed connection left the pool on its own");
    }

    @Test
    void connectionCloseAndHttp10WithoutKeepAliveAreNotKept() throws Exception {
        TestServer close = http((req, sock, out) -> TestServer.respond(out, 200, "bye", "Connection: close"));
        TestServer old = http((req, sock, out) -> TestServer.write(out, "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nold"));
        TestServer oldAlive = http((req, sock, out) -> TestServer.write(out,
                "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nalive"));
        List<String> bodies = inCoroutine(loop, () -> List.of(
                client.send(CorRestClientRequest.get(url(close))).bodyText(),
                client.send(CorRestClientRequest.get(url(old))).bodyText(),
                client.send(CorRestClientRequest.get(url(oldAlive))).bodyText()));
        assertEquals(List.of("bye", "old", "alive"), bodies);
        assertEquals(List.of(1, 1), onLoop(loop, () -> List.of(client.openConnections(), client.idleConnections())));
    }

    @Test
    void httpsWithoutAnSslContextAndAnUnknownSchemeAreRefusedClearly() throws Exception {
        CorRestClientException tls = failsInCoroutine(CorRestClientRequest.get("https://127.0.0.1:1/"));
        assertEquals(Kind.TLS, tls.kind());
        assertTrue(tls.getMessage().endsWith("https is not enabled for this client"), tls.getMessage());
        assertFalse(tls.getMessage().contains("sslContext"), "a hint at code: " + tls.getMessage());
        CorRestClientException scheme = failsInCoroutine(CorRestClientRequest.get("ftp://127.0.0.1:1/"));
        assertEquals(Kind.REFUSED, scheme.kind());
        assertTrue(scheme.getMessage().contains("no transport"), scheme.getMessage());
    }

    @Test
    void theSameFaultsFromAPlainThreadAreTypedAndLeaveNothingBusy() throws Exception {
        TestServer silent = raw(TestServer::drain);
        TestServer garbage = canned("NOT HTTP\r\n\r\n", false);
        assertEquals(Kind.REFUSED, assertThrows(CorRestClientException.class,
                () -> client.send(CorRestClientRequest.get("http://127.0.0.1:" + deadPort() + "/"))).kind());
        assertEquals(Kind.TIMEOUT, assertThrows(CorRestClientException.class,
                () -> client.send(CorRestClientRequest.get(url(silent)))).kind());
        assertEquals(Kind.MALFORMED, assertThrows(CorRestClientException.class,
                () -> client.send(CorRestClientRequest.get(url(garbage)))).kind());
        assertEquals(0, client.openConnections());
    }

    @Test
    void badUrlsAndHeaderInjectionFailAtTheCaller() {
        for (String bad : List.of("127.0.0.1:80/", "http://", "http://host:0/", "http://host:99999/", "http://us@host/",
                "http://host/a b", "http://[::1/", "1http://host/")) {
            assertThrows(IllegalArgumentException.class, () -> CorRestClientRequest.get(bad), bad);
        }
        assertThrows(IllegalArgumentException.class,
                () -> CorRestClientRequest.builder("GET", "http://h/").header("X", "a\r\nInjected: 1"));
        assertThrows(IllegalArgumentException.class, () -> CorRestClientRequest.builder("G T", "http://h/"));
    }
}
