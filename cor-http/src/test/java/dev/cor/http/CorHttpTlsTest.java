package dev.cor.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** HTTPS on the loops, with a certificate made at test time by keytool. */
class CorHttpTlsTest {
    private static CorHttpServer server;
    private static HttpClient client;
    private static SSLContext serverCtx;
    private static SSLContext clientCtx;

    @BeforeAll
    static void start() throws Exception {
        Path dir = Files.createTempDirectory("cor-tls");
        Path store = dir.resolve("server.p12");
        char[] pass = "changeit".toCharArray();
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
                "-ext", "san=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12",
                "-keystore", store.toString(), "-storepass", "changeit", "-keypass", "changeit").inheritIO().start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "keytool made the test certificate");
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(store.toFile())) {
            ks.load(in, pass);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pass);
        serverCtx = SSLContext.getInstance("TLS");
        serverCtx.init(kmf.getKeyManagers(), null, null);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        clientCtx = SSLContext.getInstance("TLS");
        clientCtx.init(null, tmf.getTrustManagers(), null);
        server = CorHttpServer.builder().host("127.0.0.1").port(0).loops(2).application(new TestApp())
                .coroutineHook(r -> true).tls(serverCtx).headerTimeoutMs(30_000).build().start();
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(clientCtx).build();
    }

    @AfterAll
    static void stop() {
        server.stop(500);
    }

    private static URI uri(String path) {
        return URI.create("https://127.0.0.1:" + server.port() + path);
    }

    @Test
    void httpsRequestsAreAnsweredOnOneKeptAliveConnection() throws Exception {
        for (String path : List.of("/hello", "/slow?ms=20", "/id?n=3")) {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri(path)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), path);
        }
        assertEquals("7", client.send(HttpRequest.newBuilder(uri("/nowait?n=7")).build(), HttpResponse.BodyHandlers.ofString()).body());
    }

    @Test
    void bodiesSpanningManyTlsRecordsArriveWholeBothWays() throws Exception {
        byte[] up = new byte[300 * 1024];
        for (int i = 0; i < up.length; i++) {
            up[i] = (byte) (i * 31);
        }
        HttpResponse<byte[]> echo = client.send(HttpRequest.newBuilder(uri("/echo")).header("Content-Type", "application/octet-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(up)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertTrue(java.util.Arrays.equals(up, echo.body()), "echoed 300 KiB intact");
        for (String path : List.of("/big?bytes=5000000", "/big-co?bytes=5000000")) {
            HttpResponse<byte[]> big = client.send(HttpRequest.newBuilder(uri(path)).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(5_000_000, big.body().length, path);
            assertEquals((byte) ('a' + 4_999_999 % 26), big.body()[4_999_999], path);
        }
    }

    @Test
    void aClientThatNeverHandshakesIsClosedAndOthersAreServed() throws Exception {
        // A server of its own with a short deadline: the shared one's keeps the client's pooled
        // connections open between tests (a deadline that closes an idle kept-alive connection
        // races the client's next POST on it, which the client cannot retry).
        CorHttpServer quick = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).application(new TestApp())
                .coroutineHook(r -> true).tls(serverCtx).headerTimeoutMs(500).build().start();
        try (RawHttp silent = new RawHttp(quick.port())) {
            long t0 = System.nanoTime();
            assertTrue(silent.closedByServer(), "closed after the handshake deadline");
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms >= 400 && ms < 4000, "closed after " + ms + " ms");
            HttpClient fresh = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(clientCtx).build();
            assertEquals(200, fresh.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + quick.port() + "/hello")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode(), "another client is served meanwhile");
        } finally {
            quick.stop(500);
        }
    }

    @Test
    void plainHttpToTheTlsPortIsClosedAndTheServerLivesOn() throws Exception {
        try (RawHttp plain = new RawHttp(server.port())) {
            plain.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
            assertTrue(closesSoon(plain), "a plain request on the TLS port ends the connection");
        }
        assertEquals(200, client.send(HttpRequest.newBuilder(uri("/hello")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    /** Reads until the server ends the connection (an alert may come first); false on a timeout. */
    private static boolean closesSoon(RawHttp c) throws Exception {
        try {
            InputStream in = c.socket.getInputStream();
            while (in.read() != -1) {
                // a TLS alert, then the end
            }
            return true;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (java.net.SocketException e) {
            return true;
        }
    }

    /** A TLS client's handshake and one GET on a raw socket; the status, or what it threw. */
    private static int handshakeAndGet(int port, List<javax.net.ssl.SSLSocket> keep) throws IOException {
        javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) clientCtx.getSocketFactory().createSocket("127.0.0.1", port);
        keep.add(s);
        s.setSoTimeout(10_000);
        s.startHandshake();
        s.getOutputStream().write("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        byte[] status = s.getInputStream().readNBytes(12);
        if (status.length < 12) {
            throw new EOFException("no answer");
        }
        return Integer.parseInt(new String(status, 9, 3, StandardCharsets.US_ASCII));
    }

    private static void closeAll(List<javax.net.ssl.SSLSocket> sockets) throws IOException {
        for (javax.net.ssl.SSLSocket s : sockets) {
            s.close();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void handshakeTasksPastTheirQueueCloseTheConnectionAtOnceAndTheServerServesAgainOnceTheyDrain() throws Exception {
        CorHttpServer bounded = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).application(new TestApp())
                .tls(serverCtx).tlsTaskPool(1, 1).headerTimeoutMs(20_000).build().start();
        CountDownLatch hold = new CountDownLatch(1);
        List<javax.net.ssl.SSLSocket> sockets = new ArrayList<>();
        try {
            CountDownLatch running = new CountDownLatch(1);
            bounded.tlsTasks().execute(() -> {
                running.countDown();
                awaitQuietly(hold);
            });
            assertTrue(running.await(10, TimeUnit.SECONDS));
            bounded.tlsTasks().execute(() -> awaitQuietly(hold)); // the queue of one is full now
            long t0 = System.nanoTime();
            IOException refused = assertThrows(IOException.class, () -> handshakeAndGet(bounded.port(), sockets));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertFalse(refused instanceof SocketTimeoutException, "the handshake stalled: " + refused);
            assertTrue(ms < 5000, "closed after " + ms + " ms");
            hold.countDown();
            // the held tasks end on the pool's thread after the latch opens: wait for them, not for a guess
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (bounded.tlsTasks().getActiveCount() + bounded.tlsTasks().getQueue().size() > 0) {
                assertTrue(System.nanoTime() < until, "the held tasks did not drain within 10 s");
                Thread.sleep(5);
            }
            assertEquals(200, handshakeAndGet(bounded.port(), sockets), "served once the tasks drained");
        } finally {
            hold.countDown();
            closeAll(sockets);
            bounded.stop(500);
        }
    }

    @Test
    void pastMaxConnectionsATlsConnectionIsClosedBeforeItsHandshakeAndCounted() throws Exception {
        CorHttpServer capped = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).application(new TestApp())
                .tls(serverCtx).maxConnections(1).build().start();
        List<javax.net.ssl.SSLSocket> sockets = new ArrayList<>();
        try {
            assertEquals(200, handshakeAndGet(capped.port(), sockets));
            IOException refused = assertThrows(IOException.class, () -> handshakeAndGet(capped.port(), sockets));
            assertFalse(refused instanceof SocketTimeoutException, "the handshake stalled: " + refused);
            assertEquals(1, capped.connectionsRefused());
            assertEquals(1, capped.connectionsOpen());
        } finally {
            closeAll(sockets);
            capped.stop(500);
        }
    }

    @Test
    void aTlsBufferDoesNotGrowPastItsCap() throws Exception {
        ByteBuffer half = ByteBuffer.allocate(dev.cor.rest.tls.LoopTls.MAX_BUFFER / 2 + 1);
        half.position(half.capacity());
        ByteBuffer grown = dev.cor.rest.tls.LoopTls.grow(half, 1);
        assertEquals(dev.cor.rest.tls.LoopTls.MAX_BUFFER, grown.capacity(), "doubled, but only up to the cap");
        assertEquals(half.capacity(), grown.position(), "what it held is kept");
        grown.position(grown.capacity());
        SSLException e = assertThrows(SSLException.class, () -> dev.cor.rest.tls.LoopTls.grow(grown, 1));
        assertTrue(e.getMessage().contains(String.valueOf(dev.cor.rest.tls.LoopTls.MAX_BUFFER)), e.getMessage());
    }

    /** An SSLContext over the test's that records which thread creates each engine. */
    private static SSLContext recording(SSLContext real, List<String> creators) {
        javax.net.ssl.SSLContextSpi spi = new javax.net.ssl.SSLContextSpi() {
            @Override
            protected void engineInit(javax.net.ssl.KeyManager[] km, javax.net.ssl.TrustManager[] tm, java.security.SecureRandom sr) {
                throw new UnsupportedOperationException("already initialised");
            }

            @Override
            protected javax.net.ssl.SSLSocketFactory engineGetSocketFactory() {
                return real.getSocketFactory();
            }

            @Override
            protected javax.net.ssl.SSLServerSocketFactory engineGetServerSocketFactory() {
                return real.getServerSocketFactory();
            }

            @Override
            protected javax.net.ssl.SSLEngine engineCreateSSLEngine() {
                creators.add(Thread.currentThread().getName());
                return real.createSSLEngine();
            }

            @Override
            protected javax.net.ssl.SSLEngine engineCreateSSLEngine(String host, int port) {
                creators.add(Thread.currentThread().getName());
                return real.createSSLEngine(host, port);
            }

            @Override
            protected javax.net.ssl.SSLSessionContext engineGetServerSessionContext() {
                return real.getServerSessionContext();
            }

            @Override
            protected javax.net.ssl.SSLSessionContext engineGetClientSessionContext() {
                return real.getClientSessionContext();
            }
        };
        return new SSLContext(spi, real.getProvider(), real.getProtocol()) { };
    }

    @Test
    void theFirstSslEngineIsMadeWhenTheServerIsBuiltNotOnALoop() throws Exception {
        List<String> creators = new java.util.concurrent.CopyOnWriteArrayList<>();
        CorHttpServer s = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).application(new TestApp())
                .tls(recording(serverCtx, creators)).build();
        assertEquals(List.of(Thread.currentThread().getName()), creators, "made by build(), on the caller's thread");
        s.start();
        List<javax.net.ssl.SSLSocket> sockets = new ArrayList<>();
        try {
            assertEquals(200, handshakeAndGet(s.port(), sockets));
            assertEquals(2, creators.size(), "then one per connection: " + creators);
        } finally {
            closeAll(sockets);
            s.stop(500);
        }
    }
}
