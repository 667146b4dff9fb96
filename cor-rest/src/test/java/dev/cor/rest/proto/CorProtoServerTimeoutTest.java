package dev.cor.rest.proto;

import static dev.cor.rest.proto.ProtoFixture.drain;
import static dev.cor.rest.proto.ProtoFixture.eventually;
import static dev.cor.rest.proto.ProtoFixture.msSince;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A peer cannot hold a server connection, or the answers buffered for it, for ever (spec § 9.1):
 * an idle one is closed after the idle timeout with GOAWAY {@code NO_ERROR}, one that reads
 * nothing after the write timeout - so peers that idle cannot lock real ones out for good.
 */
class CorProtoServerTimeoutTest {
    private final ProtoFixture fx = new ProtoFixture();

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    void aPeerThatSaysHelloAndThenNothingGetsGoAwayNoErrorAfterTheIdleTimeoutAndIsClosed() throws Exception {
        CorProtoServer server = fx.server(r -> r.respond(204, null, null), b -> b.idleTimeoutMs(300), fx.loop("idle-server"));
        try (RawPeer p = new RawPeer(server.port(), null, 0)) {
            long t0 = System.nanoTime();
            p.open();
            CorProtoCodec.Problem goAway = p.expectGoAwayAndClose(CorProtoError.NO_ERROR);
            long ms = msSince(t0);
            assertTrue(ms >= 300, "closed after " + ms + " ms, before its idle timeout of 300 ms");
            assertTrue(goAway.reason().contains("idle"), goAway.reason());
            assertEquals(0, goAway.lastStream(), "no request was accepted");
        }
        eventually("the idle connection left the server", () -> server.connectionsOpen() == 0);
        assertEquals(1, server.connectionsTimedOut());
        assertEquals(0, server.violations(), "an idle peer broke no rule");
    }

    @Test
    void aPeerThatSendsPingsOrWaitsForAnAnswerIsNotIdle() throws Exception {
        CorProtoServer server = fx.server(r -> {
            CorCo.sleep(900);
            r.respond(200, "text/plain", "slow".getBytes());
        }, b -> b.idleTimeoutMs(300), fx.loop("busy-server"));
        try (RawPeer p = new RawPeer(server.port(), null, 0)) {
            p.open();
            long t0 = System.nanoTime();
            for (int i = 0; msSince(t0) < 1200; i++) { // four idle timeouts, a PING every 100 ms
                CorProtoCodec ping = CorProtoCodec.open(CorProtoCodec.DEFAULT_MAX_FRAME, 0);
                ping.writePing(CorProtoCodec.PING, i);
                p.write(drain(ping));
                CorProtoCodec pong = p.readFrame();
                assertEquals(CorProtoCodec.PONG, pong.frameType(), "PING " + i + " at " + msSince(t0) + " ms");
                assertEquals(i, pong.readPing());
                Thread.sleep(100);
            }
            // A request in flight for three idle timeouts: its answer comes, not a GOAWAY.
            p.write(p.request(1, "/slow"));
            CorProtoCodec answer = p.readFrame();
            assertEquals(CorProtoCodec.RESPONSE, answer.frameType(), CorProtoCodec.typeName(answer.frameType()));
            assertEquals(200, answer.readResponse().status());
            // Then nothing: idle.
            assertEquals(1, p.expectGoAwayAndClose(CorProtoError.NO_ERROR).lastStream());
        }
        assertEquals(1, server.connectionsTimedOut());
    }

    @Test
    void aPeerThatNeverReadsIsClosedAfterTheWriteTimeoutAndItsAnswersAreReleased() throws Exception {
        byte[] big = new byte[32 << 10]; // the raw peer's frames are 64 KiB at most
        CorProtoServer server = fx.server(r -> r.respond(200, "application/octet-stream", big),
                b -> b.writeTimeoutMs(500), fx.loop("write-server"));
        try (RawPeer p = new RawPeer(server.port(), null, 4096)) {
            p.open();
            eventually("the server holds the connection", () -> server.connectionsOpen() == 1);
            WeakReference<ServerConnection> connection = new WeakReference<>(server.connections.iterator().next());
            long t0 = System.nanoTime();
            int requests = 512; // 16 MiB of answers, more than the socket buffers take
            for (int i = 0; i < requests; i++) {
                p.write(p.request(2 * i + 1, "/big"));
            }
            eventually("the server closed the connection that reads nothing", () -> server.connectionsOpen() == 0);
            long ms = msSince(t0);
            assertTrue(ms >= 500, "closed after " + ms + " ms, before its write timeout of 500 ms");
            assertEquals(1, server.connectionsTimedOut());
            assertTrue(server.responses() > 0 && server.bytesWritten() < (long) requests * big.length, "the peer read only part of it: " + server.bytesWritten());
            // Nothing holds the connection any more: its codec and the answers queued in it are garbage.
            eventually("the connection and its buffered answers released", () -> {
                System.gc();
                return connection.get() == null;
            });
        }
    }

    @Test
    void withTheConnectionCapTakenByIdlePeersARealPeerIsServedOnceTheyAreReaped() throws Exception {
        CorProtoServer server = fx.server(r -> r.respond(200, "text/plain", "served".getBytes()),
                b -> b.maxConnections(3).idleTimeoutMs(1500), fx.loop("capped-server"));
        CorCoLoop clientLoop = fx.loop("real-peer");
        CorProtoClient client = fx.client(b -> b);
        List<RawPeer> idlers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                idlers.add(new RawPeer(server.port(), null, 0).open());
            }
            CorProtoException refused = assertThrows(CorProtoException.class, () -> LoopTesting.inCoroutine(clientLoop,
                    () -> client.send("GET", "127.0.0.1", server.port(), "/", null, null, null, null)));
            assertEquals(CorProtoException.Kind.REFUSED, refused.kind(), "the cap is taken: " + refused.getMessage());
            assertTrue(refused.retryable());

            String body = null;
            long until = System.nanoTime() + 10_000_000_000L;
            while (body == null && System.nanoTime() - until < 0) {
                try {
                    body = LoopTesting.inCoroutine(clientLoop,
                            () -> new String(client.send("GET", "127.0.0.1", server.port(), "/", null, null, null, null).body()));
                } catch (CorProtoException e) {
                    assertEquals(CorProtoException.Kind.REFUSED, e.kind(), e.getMessage());
                    Thread.sleep(50);
                }
            }
            assertEquals("served", body, "the real peer was served once the idle ones were reaped");
            for (RawPeer p : idlers) {
                assertTrue(p.expectGoAwayAndClose(CorProtoError.NO_ERROR).reason().contains("idle"));
            }
            assertEquals(3, server.connectionsTimedOut());
        } finally {
            for (RawPeer p : idlers) {
                p.close();
            }
        }
    }
}
