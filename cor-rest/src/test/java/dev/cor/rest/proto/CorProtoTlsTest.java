package dev.cor.rest.proto;

import static dev.cor.rest.proto.ProtoFixture.drain;
import static dev.cor.rest.proto.ProtoFixture.eventually;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.client.CorRestClient;
import dev.cor.rest.client.CorRestClientException;
import dev.cor.rest.client.CorRestClientRequest;
import dev.cor.rest.tls.TestCertificate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code cors://}: the protocol inside TLS (spec § 4.4), over real sockets, with certificates made for the test. */
class CorProtoTlsTest {
    @TempDir
    static Path dir;
    private static TestCertificate certificate;
    /** A certificate of its own: its client trusts nothing this test's servers present. */
    private static TestCertificate stranger;

    private final ProtoFixture fx = new ProtoFixture();

    @BeforeAll
    static void makeCertificates() throws Exception {
        certificate = TestCertificate.make(dir, "server");
        stranger = TestCertificate.make(dir, "stranger");
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private CorProtoServer echoServer(CorCoLoop loop, int maxFrame) throws Exception {
        return fx.server(r -> r.respond(200, "application/octet-stream", echo(r.path(), r.body())),
                b -> b.tls(certificate.serverContext).maxFrameBytes(maxFrame), loop);
    }

    private static byte[] echo(String path, byte[] body) {
        byte[] p = path.getBytes(StandardCharsets.UTF_8);
        byte[] out = Arrays.copyOf(p, p.length + 1 + body.length);
        out[p.length] = ' ';
        System.arraycopy(body, 0, out, p.length + 1, body.length);
        return out;
    }

    private static CorProtoResponse get(CorProtoClient client, int port, String path) throws CorProtoException {
        return client.send("GET", "127.0.0.1", port, path, null, new CorRestHeaders(), null, null);
    }

    @Test
    void aTlsClientIsAnsweredByATlsServerFromACoroutineAndFromAThread() throws Exception {
        CorProtoServer server = echoServer(fx.loop("tls-server"), CorProtoCodec.DEFAULT_MAX_FRAME);
        CorProtoClient client = fx.client(b -> b.tls(certificate.clientContext));
        assertTrue(server.isTls() && client.isTls());
        CorCoLoop loop = fx.loop("tls-client");
        String viaCoroutine = LoopTesting.inCoroutine(loop, () -> ProtoFixture.body(get(client, server.port(), "/co")));
        assertEquals("/co ", viaCoroutine);
        assertEquals("/thread ", ProtoFixture.body(get(client, server.port(), "/thread")));
        assertEquals(2, client.connectionsOpened(), "one connection for the loop, one for the thread");
    }

    @Test
    void manyStreamsInFlightOnOneTlsConnectionEachAnswerReachesItsRequest() throws Exception { // spec § 5.3
        CorProtoServer server = fx.server(r -> {
            CorCo.sleep(ThreadLocalRandom.current().nextInt(3)); // answers finish out of order
            r.respond(200, "text/plain", r.path().getBytes(StandardCharsets.UTF_8));
        }, b -> b.tls(certificate.serverContext), fx.loop("tls-mux-server"));
        CorProtoClient client = fx.client(b -> b.tls(certificate.clientContext));
        CorCoLoop loop = fx.loop("tls-mux-client");
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Object>> done = new ArrayList<>();
        for (int c = 0; c < 16; c++) {
            int co = c;
            done.add(LoopTesting.coroutine(loop, () -> {
                for (int i = 0; i < 200; i++) {
                    String path = "/c" + co + "/" + i;
                    String got = ProtoFixture.body(get(client, server.port(), path));
                    if (!got.equals(path)) {
                        wrong.add(path + " got " + got);
                    }
                }
                return null;
            }));
        }
        for (CompletableFuture<Object> f : done) {
            f.get(60, TimeUnit.SECONDS);
        }
        assertEquals(List.of(), List.copyOf(wrong));
        assertEquals(1, client.connectionsOpened(), "sixteen coroutines of a loop share one TLS connection");
        assertEquals(3200, server.responses());
    }

    @Test
    void bodiesOfMegabytesCrossManyTlsRecordsWholeBothWays() throws Exception {
        int maxFrame = 4 << 20;
        CorProtoServer server = echoServer(fx.loop("tls-big-server"), maxFrame);
        CorProtoClient client = fx.client(b -> b.tls(certificate.clientContext).maxFrameBytes(maxFrame));
        CorCoLoop loop = fx.loop("tls-big-client");
        // Four at once: their answers together pass one frame of unsent output, so the server
        // pauses reading and takes up what its TLS already decrypted when it resumes.
        List<CompletableFuture<Object>> done = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            byte[] body = new byte[3_000_000 + c];
            for (int i = 0; i < body.length; i++) {
                body[i] = (byte) (i * 31 + (i >>> 11) + c);
            }
            String path = "/big" + c;
            done.add(LoopTesting.coroutine(loop, () -> {
                CorProtoResponse r = client.send("POST", "127.0.0.1", server.port(), path, null,
                        new CorRestHeaders().add("Content-Type", "application/octet-stream"), null, body);
                assertEquals(200, r.status());
                assertArrayEquals(echo(path, body), r.body(), path);
                return null;
            }));
        }
        for (CompletableFuture<Object> f : done) {
            f.get(60, TimeUnit.SECONDS);
        }
        byte[] fromThread = new byte[2_000_000];
        ThreadLocalRandom.current().nextBytes(fromThread);
        CorProtoResponse r = client.send("PUT", "127.0.0.1", server.port(), "/thread", null,
                new CorRestHeaders().add("Content-Type", "application/octet-stream"), null, fromThread);
        assertArrayEquals(echo("/thread", fromThread), r.body());
    }

    @Test
    void aTlsPeerClosingInTheMiddleOfAFrameGetsInvalidPayloadAndIsClosed() throws Exception { // spec § 3.6
        CorProtoServer server = echoServer(fx.loop("tls-cut-server"), CorProtoCodec.DEFAULT_MAX_FRAME);
        SSLSocket socket = (SSLSocket) certificate.clientContext.getSocketFactory().createSocket("127.0.0.1", server.port());
        try (RawPeer p = new RawPeer(socket, null)) {
            byte[] frame = p.open().request(1, "/x");
            p.write(Arrays.copyOf(frame, frame.length / 2));
            socket.shutdownOutput(); // close_notify, half a frame behind it
            assertTrue(p.expectGoAwayAndClose(CorProtoError.INVALID_PAYLOAD).reason().contains("middle of a frame"));
        }
        assertEquals(1, server.violations());
        eventually("the connection is gone from the server", () -> server.connectionsOpen() == 0);
    }

    @Test
    void aTlsServerClosingInTheMiddleOfAnAnswerFailsTheCallAtOnce() throws Exception {
        SSLServerSocket listener = (SSLServerSocket) certificate.serverContext.getServerSocketFactory()
                .createServerSocket(0, 8, InetAddress.getByName("127.0.0.1"));
        CompletableFuture<Void> served = CompletableFuture.runAsync(() -> {
            try (listener; Socket s = listener.accept()) {
                s.setSoTimeout(10_000);
                DataInputStream in = new DataInputStream(s.getInputStream());
                CorProtoCodec reader = new CorProtoCodec();
                assertEquals(CorProtoCodec.HELLO, ProtoFixture.readFrame(in, reader));
                reader.readHello();
                reader.agree(64 << 10, 0);
                CorProtoCodec writer = CorProtoCodec.open(64 << 10, 0);
                writer.writeHelloAck(64 << 10, 16, 0, "cut-server");
                s.getOutputStream().write(drain(writer));
                assertEquals(CorProtoCodec.REQUEST, ProtoFixture.readFrame(in, reader));
                writer.writeResponse(reader.stream(), 200, new CorRestHeaders(), null, new byte[50_000]);
                byte[] answer = drain(writer);
                s.getOutputStream().write(Arrays.copyOf(answer, answer.length / 2));
                s.getOutputStream().flush();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        CorProtoClient client = fx.client(b -> b.tls(certificate.clientContext).requestTimeoutMs(20_000));
        long t0 = System.nanoTime();
        CorProtoException e = assertThrows(CorProtoException.class,
                () -> LoopTesting.inCoroutine(fx.loop("tls-cut-client"), () -> get(client, listener.getLocalPort(), "/x")));
        assertEquals(CorProtoException.Kind.CLOSED, e.kind(), e.toString());
        assertTrue(ProtoFixture.msSince(t0) < 10_000, "failed when the peer closed, not at the deadline");
        served.get(10, TimeUnit.SECONDS);
        eventually("the connection left the client", () -> client.connectionsLive() == 0);
    }

    @Test
    void aPlainClientAtTheTlsPortIsRefusedAndTheServerServesOn() throws Exception {
        CorProtoServer server = echoServer(fx.loop("tls-refuse-server"), CorProtoCodec.DEFAULT_MAX_FRAME);
        CorProtoClient plain = fx.client(b -> b.connectTimeoutMs(5000));
        long t0 = System.nanoTime();
        CorProtoException e = assertThrows(CorProtoException.class, () -> get(plain, server.port(), "/plain"));
        assertFalse(e instanceof CorProtoTimeoutException, "refused at once, not left to time out: " + e);
        assertTrue(ProtoFixture.msSince(t0) < 5000, e.toString());
        // A plain HELLO's bytes are no TLS record: the server's alert, then the end.
        try (RawPeer p = new RawPeer(server.port(), null, 0)) {
            p.hello(CorProtoCodec.VERSION, null);
            InputStream in = p.socket.getInputStream();
            assertEquals(0x15, in.read(), "a TLS alert record");
            assertEquals(-1, p.readUntilEnd(), "then the server closes");
        }
        CorProtoClient tls = fx.client(b -> b.tls(certificate.clientContext));
        assertEquals("/after ", ProtoFixture.body(get(tls, server.port(), "/after")), "the loop serves on");
        eventually("the refused connections are gone", () -> server.connectionsOpen() == 1);
    }

    @Test
    void aTlsClientThatDoesNotTrustTheServerFailsSayingWhy() throws Exception {
        CorProtoServer server = echoServer(fx.loop("tls-trust-server"), CorProtoCodec.DEFAULT_MAX_FRAME);
        CorProtoClient doubting = fx.client(b -> b.tls(stranger.clientContext));
        for (boolean fromThread : new boolean[] {false, true}) {
            CorProtoException e = assertThrows(CorProtoException.class,
                    () -> ProtoFixture.run(fx.loop("tls-trust-client"), fromThread, () -> get(doubting, server.port(), "/x")));
            assertEquals(CorProtoException.Kind.CONNECT, e.kind(), e.toString());
            assertTrue(e.getMessage().startsWith("TLS handshake with cors://127.0.0.1:" + server.port() + " failed: "), e.getMessage());
            assertTrue(e.getMessage().contains("PKIX path"), "says the certificate is not trusted: " + e.getMessage());
        }
        assertEquals(0, server.requests());
        CorProtoClient trusting = fx.client(b -> b.tls(certificate.clientContext));
        assertEquals("/ok ", ProtoFixture.body(get(trusting, server.port(), "/ok")));
    }

    @Test
    void aCertificateForAnotherNameFailsTheHandshakeThoughItsIssuerIsTrusted() throws Exception {
        // Bound to every address: 127.0.0.2 reaches it, and the certificate names 127.0.0.1 and localhost alone.
        CorProtoServer server = fx.server(r -> r.respond(200, "text/plain", new byte[0]),
                b -> b.host("0.0.0.0").tls(certificate.serverContext), fx.loop("tls-name-server"));
        CorProtoClient client = fx.client(b -> b.tls(certificate.clientContext));
        CorProtoException e = assertThrows(CorProtoException.class, () -> client.send("GET", "127.0.0.2", server.port(), "/x",
                null, new CorRestHeaders(), null, null));
        assertEquals(CorProtoException.Kind.CONNECT, e.kind(), e.toString());
        assertTrue(e.getMessage().contains("subject alternative names matching IP address 127.0.0.2"),
                "names the address the certificate does not cover: " + e.getMessage());
        assertEquals(200, get(client, server.port(), "/x").status(), "the name it covers is served");
    }

    @Test
    void aTlsClientAtAPlainPortFailsAtOnce() throws Exception {
        CorProtoServer plain = fx.server(r -> r.respond(200, "text/plain", new byte[0]), fx.loop("plain-server"));
        CorProtoClient tls = fx.client(b -> b.tls(certificate.clientContext).connectTimeoutMs(5000));
        long t0 = System.nanoTime();
        CorProtoException e = assertThrows(CorProtoException.class, () -> get(tls, plain.port(), "/x"));
        assertEquals(CorProtoException.Kind.CONNECT, e.kind(), e.toString());
        assertFalse(e instanceof CorProtoTimeoutException, e.toString());
        assertTrue(ProtoFixture.msSince(t0) < 5000, e.toString());
    }

    @Test
    void aClientThatNeverBeginsTlsIsClosedAtTheHandshakeTimeoutWithoutAGoAway() throws Exception { // spec § 4.4
        CorProtoServer server = fx.server(r -> r.respond(200, "text/plain", new byte[0]),
                b -> b.tls(certificate.serverContext).handshakeTimeoutMs(300), fx.loop("tls-silent-server"));
        try (RawPeer silent = new RawPeer(server.port(), null, 0)) {
            long t0 = System.nanoTime();
            assertEquals(-1, silent.socket.getInputStream().read(), "nothing - no GOAWAY outside TLS - then the end");
            long ms = ProtoFixture.msSince(t0);
            assertTrue(ms >= 250 && ms < 5000, "closed after " + ms + " ms");
        }
        CorProtoClient tls = fx.client(b -> b.tls(certificate.clientContext));
        assertEquals(200, get(tls, server.port(), "/after").status());
    }

    @Test
    void aCorsUrlGoesOverTlsInTheHttpClientAndNeedsItsSslContext() throws Exception { // spec § 9.3
        CorProtoServer server = echoServer(fx.loop("cors-url-server"), CorProtoCodec.DEFAULT_MAX_FRAME);
        String url = "cors://127.0.0.1:" + server.port() + "/entities/x";
        try (CorRestClient withTls = CorRestClient.builder().sslContext(certificate.clientContext).build();
                CorRestClient without = CorRestClient.builder().build()) {
            assertEquals("/entities/x ", LoopTesting.inCoroutine(fx.loop("cors-url-client"),
                    () -> withTls.send(CorRestClientRequest.get(url)).bodyText()));
            assertEquals("/entities/x ", withTls.send(CorRestClientRequest.get(url)).bodyText());
            CorRestClientException e = assertThrows(CorRestClientException.class, () -> without.send(CorRestClientRequest.get(url)));
            assertEquals(CorRestClientException.Kind.TLS, e.kind(), e.toString());
            CorRestClientException plain = assertThrows(CorRestClientException.class,
                    () -> withTls.send(CorRestClientRequest.get("cor://127.0.0.1:" + server.port() + "/x")));
            assertEquals(CorRestClientException.Kind.REFUSED, plain.kind(), "cor:// stays plain, and the TLS port refuses it: " + plain);
        }
    }
}
