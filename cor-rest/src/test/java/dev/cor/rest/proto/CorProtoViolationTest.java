package dev.cor.rest.proto;

import static dev.cor.rest.proto.ProtoFixture.drain;
import static dev.cor.rest.proto.ProtoFixture.header;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Every protocol violation (spec § 8.3) sent by a raw socket peer gets GOAWAY with its code and a
 * reason, then the connection closes - while a good client's one connection to the same server
 * is served before, during and after.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CorProtoViolationTest {
    private static final String TOKEN = "s3cret";

    private final ProtoFixture fx = new ProtoFixture();
    private CorProtoServer server;
    private CorProtoClient good;
    private CorCoLoop clientLoop;
    private CompletableFuture<Integer> goodDuring;

    @BeforeAll
    void startServer() throws Exception {
        server = fx.server(request -> {
            if (request.path().equals("/slow")) {
                CorCo.sleep(500);
            }
            request.respond(200, "text/plain", request.path().getBytes());
        }, b -> b.token(TOKEN).frameTimeoutMs(300).handshakeTimeoutMs(400).maxFrameBytes(64 << 10), fx.loop("bad-server"));
        clientLoop = fx.loop("good-client");
        good = fx.client(b -> b.token(TOKEN));
        assertEquals(200, goodRequest("/before"));
    }

    @AfterAll
    void stop() throws Exception {
        fx.close();
    }

    private int goodRequest(String path) throws Exception {
        return LoopTesting.inCoroutine(clientLoop,
                () -> good.send("GET", "127.0.0.1", server.port(), path, null, null, null, null).status());
    }

    /** A slow request of the good client is in flight while each bad peer does its worst. */
    private void goodRequestInFlight() {
        goodDuring = LoopTesting.coroutine(clientLoop,
                () -> good.send("GET", "127.0.0.1", server.port(), "/slow", null, null, null, null).status());
    }

    @AfterEach
    void theGoodClientIsStillServedOnItsOneConnection() throws Exception {
        if (goodDuring != null) {
            assertEquals(200, goodDuring.get(10, java.util.concurrent.TimeUnit.SECONDS));
            goodDuring = null;
        }
        assertEquals(200, goodRequest("/after"));
        assertEquals(1, good.connectionsOpened(), "the good client never lost its connection");
    }

    /** A raw peer of the server; {@link RawPeer#open()} says HELLO with the right token. */
    private RawPeer rawPeer() throws IOException {
        return new RawPeer(server.port(), TOKEN, 0);
    }

    // ---------------------------------------------------------------- the violations

    @Test
    void aFrameBeforeHelloIsHelloExpected() throws Exception { // spec § 4, § 8.3
        goodRequestInFlight();
        try (RawPeer p = rawPeer()) {
            p.write(p.request(1, "/x"));
            assertTrue(p.expectGoAwayAndClose(CorProtoError.HELLO_EXPECTED).reason().contains("before HELLO"));
        }
    }

    @Test
    void aHelloOfAnotherVersionIsVersionMismatch() throws Exception { // spec § 4.1
        goodRequestInFlight();
        try (RawPeer p = rawPeer()) {
            p.hello(2, TOKEN);
            assertTrue(p.expectGoAwayAndClose(CorProtoError.VERSION_MISMATCH).reason().contains("version 2"));
        }
    }

    @Test
    void aMissingTokenIsUnauthorized() throws Exception { // spec § 4.3
        goodRequestInFlight();
        try (RawPeer p = rawPeer()) {
            p.hello(CorProtoCodec.VERSION, "");
            assertTrue(p.expectGoAwayAndClose(CorProtoError.UNAUTHORIZED).reason().contains("requires a token"));
        }
    }

    @Test
    void aWrongTokenIsUnauthorized() throws Exception { // spec § 4.3
        try (RawPeer p = rawPeer()) {
            p.hello(CorProtoCodec.VERSION, "guess");
            p.expectGoAwayAndClose(CorProtoError.UNAUTHORIZED);
        }
    }

    @Test
    void aClientWithTheWrongTokenIsRefusedWithATypedError() throws Exception { // spec § 4.3
        CorProtoClient wrong = fx.client(b -> b.token("guess"));
        CorProtoException e = org.junit.jupiter.api.Assertions.assertThrows(CorProtoException.class,
                () -> wrong.send("GET", "127.0.0.1", server.port(), "/x", null, null, null, null));
        assertEquals(CorProtoException.Kind.REFUSED, e.kind());
        assertEquals(CorProtoError.UNAUTHORIZED, e.code());
        assertEquals(502, e.gatewayStatus());
    }

    @Test
    void anUnknownFrameTypeIsUnknownType() throws Exception { // spec § 3.2
        goodRequestInFlight();
        try (RawPeer p = rawPeer()) {
            p.open().write(header(0, 42, 0, 0));
            assertTrue(p.expectGoAwayAndClose(CorProtoError.UNKNOWN_TYPE).reason().contains("42"));
        }
    }

    @Test
    void anOversizedFrameIsFrameTooLargeFromItsHeaderAlone() throws Exception { // spec § 3.5
        goodRequestInFlight();
        try (RawPeer p = rawPeer()) {
            p.open().write(header((64 << 10) + 1, CorProtoCodec.REQUEST, 0, 1)); // no payload follows
            p.expectGoAwayAndClose(CorProtoError.FRAME_TOO_LARGE);
        }
    }

    @Test
    void aStreamReusedWhileInFlightIsStreamInUse() throws Exception { // spec § 3.3
        goodRequestInFlight();
        try (RawPeer p = rawPeer()) {
            p.open().write(p.request(7, "/slow"));
            p.write(p.request(7, "/slow"));
            CorProtoCodec.Problem problem = p.expectGoAwayAndClose(CorProtoError.STREAM_IN_USE);
            assertEquals(7, problem.lastStream(), "the last stream accepted");
        }
    }

    @Test
    void aFrameTruncatedByTheClosingPeerIsInvalidPayload() throws Exception { // spec § 3.6
        goodRequestInFlight();
        try (RawPeer p = rawPeer()) {
            byte[] frame = p.open().request(1, "/x");
            p.write(java.util.Arrays.copyOf(frame, frame.length / 2));
            p.socket.shutdownOutput();
            assertTrue(p.expectGoAwayAndClose(CorProtoError.INVALID_PAYLOAD).reason().contains("middle of a frame"));
        }
    }

    @Test
    void aFrameLeftUnfinishedByAnIdlePeerIsTimeout() throws Exception { // spec § 3.6
        goodRequestInFlight();
        try (RawPeer p = rawPeer()) {
            byte[] frame = p.open().request(1, "/x");
            p.write(java.util.Arrays.copyOf(frame, frame.length - 1));
            assertTrue(p.expectGoAwayAndClose(CorProtoError.TIMEOUT).reason().contains("unfinished"));
        }
    }

    @Test
    void noHelloWithinTheHandshakeTimeoutIsTimeout() throws Exception { // spec § 4
        try (RawPeer p = rawPeer()) {
            assertTrue(p.expectGoAwayAndClose(CorProtoError.TIMEOUT).reason().contains("HELLO"));
        }
    }

    @Test
    void aMalformedPayloadIsInvalidPayload() throws Exception { // spec § 5.1
        goodRequestInFlight();
        try (RawPeer p = rawPeer()) {
            p.open().write(header(3, CorProtoCodec.REQUEST, 0, 1)).write(new byte[] {99, 0, 0}); // method code 99
            p.expectGoAwayAndClose(CorProtoError.INVALID_PAYLOAD);
        }
    }

    @Test
    void aSecondHelloAndAFrameOnlyAClientReceivesAreProtocolErrors() throws Exception { // spec § 8.3
        try (RawPeer p = rawPeer()) {
            p.open().hello(CorProtoCodec.VERSION, TOKEN);
            assertTrue(p.expectGoAwayAndClose(CorProtoError.PROTOCOL_ERROR).reason().contains("second HELLO"));
        }
        try (RawPeer p = rawPeer()) {
            CorProtoCodec c = CorProtoCodec.open(64 << 10, 16);
            c.writeResponse(1, 200, null, null, null);
            p.open().write(drain(c));
            p.expectGoAwayAndClose(CorProtoError.PROTOCOL_ERROR);
        }
    }

    @Test
    void aPingIsAnsweredWithAPongCarryingTheSameBytes() throws Exception { // spec § 7
        try (RawPeer p = rawPeer()) {
            CorProtoCodec c = CorProtoCodec.open(64 << 10, 16);
            c.writePing(CorProtoCodec.PING, 0x0123456789ABCDEFL);
            p.open().write(drain(c));
            CorProtoCodec pong = p.readFrame();
            assertEquals(CorProtoCodec.PONG, pong.frameType());
            assertEquals(0x0123456789ABCDEFL, pong.readPing());
        }
    }
}
