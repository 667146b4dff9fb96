package dev.cor.rest.client;

import static dev.cor.base.testing.LoopTesting.coroutine;
import static dev.cor.base.testing.LoopTesting.inCoroutine;
import static dev.cor.base.testing.LoopTesting.onLoop;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import dev.cor.rest.client.CorRestClientException.Kind;
import dev.cor.rest.tls.TestCertificate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** https through SSLEngine on the loop and on a plain thread, with a certificate made for the test. */
class CorRestClientTlsTest {
    private static final byte[] BIG = new byte[200 * 1024];

    @TempDir
    static Path dir;
    private static SSLContext serverContext;
    private static SSLContext clientContext;
    private static TestServer https;

    private CorCoLoop loop;
    private CorRestClient client;

    @BeforeAll
    static void makeCertificateAndServer() throws Exception {
        TestCertificate certificate = TestCertificate.make(dir, "localhost");
        serverContext = certificate.serverContext;
        clientContext = certificate.clientContext;

        for (int i = 0; i < BIG.length; i++) {
            BIG[i] = (byte) (i * 31 + (i >>> 9));
        }
        SSLServerSocket ss = (SSLServerSocket) serverContext.getServerSocketFactory()
                .createServerSocket(0, 128, InetAddress.getByName("127.0.0.1"));
        https = TestServer.http(ss, (req, s, out) -> {
            if (req.target().startsWith("/big")) {
                TestServer.respond(out, 200, BIG);
            } else {
                TestServer.respond(out, 200, "tls " + req.header("Host") + " " + new String(req.body()));
            }
        });
    }

    @AfterAll
    static void stopServer() throws Exception {
        https.close();
    }

    /** Counts the calls run off the loop with CorCo.blocking: the TLS delegated tasks. */
    private final AtomicInteger offLoop = new AtomicInteger();

    @BeforeEach
    void setUp() {
        loop = CorCoLoop.builder().name("tls-loop").coroutineCap(64).blockingExecutor(task -> {
            offLoop.incrementAndGet();
            Thread.ofPlatform().daemon().start(task);
        }).build().start();
        client = CorRestClient.builder().sslContext(clientContext).handshakeTimeoutMs(500).build();
    }

    @AfterEach
    void tearDown() throws Exception {
        client.close();
        LoopTesting.stop(loop);
    }

    private String url(String host, String path) {
        return "https://" + host + ":" + https.port() + path;
    }

    @Test
    void anHttpsGetInsideACoroutineReadsABodyOfManyRecordsAndKeepsTheConnection() throws Exception {
        int accepted = https.connections.get();
        List<Object> got = inCoroutine(loop, () -> {
            byte[] big = client.send(CorRestClientRequest.get(url("localhost", "/big"))).body();
            String small = null;
            for (int i = 0; i < 4; i++) {
                small = client.send(CorRestClientRequest.post(url("localhost", "/echo"), "text/plain", "hello".getBytes())).bodyText();
            }
            return List.of(big, small, client.openConnections(), client.idleConnections());
        });
        assertArrayEquals(BIG, (byte[]) got.get(0));
        assertEquals("tls localhost:" + https.port() + " hello", got.get(1));
        assertEquals(List.of(1, 1), got.subList(2, 4), "the TLS connection was not kept alive");
        assertEquals(1, https.connections.get() - accepted, "five requests, one TLS connection accepted by the server");
        assertTrue(offLoop.get() > 0, "the handshake's delegated tasks did not run off the loop");
        assertEquals(0, (int) onLoop(loop, loop::liveCoroutines));
    }

    @Test
    void anHttpsGetFromAPlainThreadWorksBlocking() throws Exception {
        int accepted = https.connections.get();
        CorRestClientResponse big = client.send(CorRestClientRequest.get(url("127.0.0.1", "/big")));
        assertArrayEquals(BIG, big.body());
        assertEquals("tls 127.0.0.1:" + https.port() + " ", client.send(CorRestClientRequest.get(url("127.0.0.1", "/"))).bodyText());
        assertEquals(1, client.idleConnections());
        assertEquals(1, https.connections.get() - accepted, "two requests, one TLS connection accepted by the server");
    }

    @Test
    void anUntrustedCertificateAndACertificateForAnotherNameAreTlsErrors() throws Exception {
        try (CorRestClient untrusting = CorRestClient.builder().sslContext(SSLContext.getDefault()).build()) {
            CorRestClientException e = assertThrows(CorRestClientException.class,
                    () -> untrusting.send(CorRestClientRequest.get(url("127.0.0.1", "/"))));
            assertEquals(Kind.TLS, e.kind(), e.toString());
            assertEquals(0, untrusting.openConnections());
        }
        // trusted, but it names localhost and 127.0.0.1: endpoint identification must refuse another name
        CorRestResolver toLoopback = CorRestResolver.of(host -> new InetAddress[] {InetAddress.getByAddress(host, new byte[] {127, 0, 0, 1})}, 1000);
        try (CorRestClient named = CorRestClient.builder().sslContext(clientContext).resolver(toLoopback).build()) {
            CorRestClientException e = inCoroutine(loop, () -> {
                try {
                    named.send(CorRestClientRequest.get(url("other.test", "/")));
                    return null;
                } catch (CorRestClientException x) {
                    return x;
                }
            });
            assertEquals(Kind.TLS, e.kind(), e.toString());
            assertEquals(List.of(0, 0), onLoop(loop, () -> List.of(named.openConnections(), loop.liveCoroutines())));
        }
    }

    @Test
    void aServerThatStallsTheHandshakeTimesOutNamingTheHandshakeWhileTheLoopKeepsTicking() throws Exception {
        try (TestServer stall = TestServer.raw(TestServer::drain)) {
            AtomicInteger ticks = new AtomicInteger();
            AtomicBoolean ticking = new AtomicBoolean(true);
            CompletableFuture<Object> ticker = coroutine(loop, () -> {
                while (ticking.get()) {
                    CorCo.sleep(20);
                    ticks.incrementAndGet();
                }
                return null;
            });
            int before = ticks.get();
            long t0 = System.nanoTime();
            CorRestClientException e = inCoroutine(loop, () -> {
                try {
                    client.send(CorRestClientRequest.get("https://127.0.0.1:" + stall.port() + "/"));
                    return null;
                } catch (CorRestClientException x) {
                    return x;
                }
            });
            long ms = (System.nanoTime() - t0) / 1_000_000;
            int during = ticks.get() - before;
            ticking.set(false);
            LoopTesting.get(ticker);

            assertEquals(Kind.TIMEOUT, e.kind(), e.toString());
            assertTrue(e.getMessage().contains("handshake"), e.getMessage());
            assertTrue(ms >= 490 && ms < 3000, "the handshake deadline was 500 ms, it took " + ms);
            // A loop held for the handshake would tick once at most; a loaded machine may tick slowly.
            assertTrue(during >= 3, "the ticker ticked " + during + " times in " + ms + " ms: the handshake held the loop");
            assertEquals(List.of(0, 0), onLoop(loop, () -> List.of(client.openConnections(), loop.liveCoroutines())));

            // from a plain thread the same deadline holds
            CorRestClientException blocking = assertThrows(CorRestClientException.class,
                    () -> client.send(CorRestClientRequest.get("https://127.0.0.1:" + stall.port() + "/")));
            assertEquals(Kind.TIMEOUT, blocking.kind());
            assertTrue(blocking.getMessage().contains("handshake"), blocking.getMessage());
        }
    }

    @Test
    void aCertificateCheckThatHangsEndsAtTheHandshakeDeadlineAndIsInterrupted() throws Exception {
        long hungMs = 20_000;
        java.util.concurrent.CountDownLatch checking = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch interrupted = new java.util.concurrent.CountDownLatch(1);
        // A trust manager that never answers (a revocation check against a dead responder, say): the
        // SSLEngine runs it in a delegated task, which goes to the blocking pool.
        javax.net.ssl.X509TrustManager hanging = new javax.net.ssl.X509TrustManager() {
            @Override
            public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType)
                    throws java.security.cert.CertificateException {
                checking.countDown();
                try {
                    Thread.sleep(hungMs);
                } catch (InterruptedException e) {
                    interrupted.countDown();
                }
                throw new java.security.cert.CertificateException("no answer from the trust check");
            }

            @Override
            public java.security.cert.X509Certificate[] getAcceptedIssuers() {
                return new java.security.cert.X509Certificate[0];
            }
        };
        SSLContext hangingContext = SSLContext.getInstance("TLS");
        hangingContext.init(null, new javax.net.ssl.TrustManager[] {hanging}, null);
        try (CorRestClient slow = CorRestClient.builder().sslContext(hangingContext).handshakeTimeoutMs(500).build()) {
            record Outcome(CorRestClientException failure, long ms, String after) {
            }
            Outcome o = inCoroutine(loop, () -> {
                long t0 = System.nanoTime();
                CorRestClientException e = assertThrows(CorRestClientException.class,
                        () -> slow.send(CorRestClientRequest.get(url("127.0.0.1", "/"))));
                long ms = (System.nanoTime() - t0) / 1_000_000;
                // the coroutine goes on: a request through the trusting client
                return new Outcome(e, ms, client.send(CorRestClientRequest.get(url("127.0.0.1", "/after"))).bodyText());
            });
            assertTrue(checking.await(10, TimeUnit.SECONDS), "the trust check never ran");
            assertEquals(Kind.TIMEOUT, o.failure().kind(), o.failure().toString());
            assertTrue(o.failure().getMessage().contains("handshake"), o.failure().getMessage());
            assertTrue(o.ms() >= 500 && o.ms() < hungMs / 2, "the 500 ms handshake deadline took " + o.ms() + " ms");
            assertTrue(interrupted.await(10, TimeUnit.SECONDS), "the delegated task's thread was not interrupted");
            assertEquals("tls 127.0.0.1:" + https.port() + " ", o.after());
            assertEquals(List.of(0, 0), onLoop(loop, () -> List.of(slow.openConnections(), loop.liveCoroutines())));
        }
    }
}
