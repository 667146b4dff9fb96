package dev.cor.rest.proto;

import static dev.cor.rest.proto.ProtoFixture.drain;
import static dev.cor.rest.proto.ProtoFixture.eventually;
import static dev.cor.rest.proto.ProtoFixture.header;
import static dev.cor.rest.proto.ProtoFixture.msSince;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoCancelledException;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTask;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * CANCEL (spec § 5.5) over real sockets: a call past its deadline frees its stream at once on
 * the client and on the server, the server's coroutine for it is cancelled at its wait and sends
 * nothing, and an answer that crossed the CANCEL is dropped, never taken for a later stream's.
 */
class CorProtoCancelTest {
    private final ProtoFixture fx = new ProtoFixture();
    private final CorCoLoop clientLoop = fx.loop("cancel-client");
    private final CorCoLoop serverLoop = fx.loop("cancel-server");
    /** What the server's /hang coroutine was told when its wait ended. */
    private final AtomicReference<Throwable> hangEnded = new AtomicReference<>();

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private CorProtoServer server() throws Exception {
        return fx.server(r -> {
            if (r.path().equals("/hang")) {
                try {
                    CorCo.sleep(30_000); // stuck: only a CANCEL ends this wait early
                } catch (Throwable t) {
                    hangEnded.set(t);
                    throw t;
                }
            }
            r.respond(200, "text/plain", r.path().getBytes(StandardCharsets.UTF_8));
        }, serverLoop);
    }

    private boolean serverLoopIdle() {
        try {
            return ProtoFixture.liveCoroutines(serverLoop) == 0;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private <T> T run(boolean fromThread, CorCoTask task) throws Exception {
        return ProtoFixture.run(clientLoop, fromThread, task);
    }

    private static String body(CorProtoResponse r) {
        return ProtoFixture.body(r);
    }

    @ParameterizedTest(name = "from a thread: {0}")
    @ValueSource(booleans = {false, true})
    void aCallPastItsDeadlineCancelsTheServersCoroutineAndItsOneStreamIsFreeAtOnce(boolean fromThread) throws Exception {
        CorProtoServer server = server();
        // One stream: without CANCEL the second call would find it reserved for the late answer.
        CorProtoClient client = fx.client(b -> b.maxStreams(1));
        int port = server.port();
        CorProtoException late = assertThrows(CorProtoException.class,
                () -> run(fromThread, () -> client.send("GET", "127.0.0.1", port, "/hang", null, null, null, null, 300)));
        assertInstanceOf(CorProtoTimeoutException.class, late, late.toString());
        long t0 = System.nanoTime();
        assertEquals("/next", run(fromThread, () -> body(client.send("GET", "127.0.0.1", port, "/next", null, null, null, null, 5000))));
        assertTrue(msSince(t0) < 3000, "the next call waited " + msSince(t0) + " ms for the one stream");
        assertEquals(1, client.connectionsOpened(), "the same connection, its one stream free again");
        assertEquals(1, client.callsCancelled());

        eventually("the server saw the CANCEL", () -> server.cancelled() == 1);
        eventually("the server's coroutine ended at its wait", () -> hangEnded.get() != null);
        assertInstanceOf(CorCoCancelledException.class, hangEnded.get(), String.valueOf(hangEnded.get()));
        assertTrue(hangEnded.get().getMessage().contains("CANCEL"), hangEnded.get().getMessage());
        eventually("no coroutine left on the server loop", this::serverLoopIdle);
        assertEquals(1, server.responses(), "nothing was sent for the cancelled stream");
    }

    @Test
    void callsStartedAndNotAwaitedGiveUpTheirStreamsToACallThatNeedsOne() throws Exception {
        CorProtoServer server = server();
        CorProtoClient client = fx.client(b -> b.maxStreams(2));
        int port = server.port();
        List<Object> got = LoopTesting.inCoroutine(clientLoop, () -> {
            CorProtoCall a = client.start("GET", "127.0.0.1", port, "/hang", null, null, null, null, 300);
            CorProtoCall b = client.start("GET", "127.0.0.1", port, "/hang", null, null, null, null, 300);
            // Both streams taken, and nobody awaits a or b: this start waits for a stream.
            long t0 = System.nanoTime();
            CorProtoCall c = client.start("GET", "127.0.0.1", port, "/ok", null, null, null, null, 5000);
            boolean aDone = a.isDone();
            String body = body(c.await());
            assertInstanceOf(CorProtoTimeoutException.class, assertThrows(CorProtoException.class, b::await));
            return List.of(body, msSince(t0), aDone);
        });
        assertEquals("/ok", got.get(0));
        assertTrue((long) got.get(1) < 3000, "the call waited " + got.get(1) + " ms for a stream freed at 300 ms");
        assertEquals(true, got.get(2), "the first call past its deadline was failed, unawaited");
        assertEquals(1, client.connectionsOpened(), "the cancelled streams were freed on the same connection");
        assertEquals(2, client.callsCancelled());
        eventually("both cancels reached the server", () -> server.cancelled() == 2);
    }

    @Test
    void theServerForgetsACancelledStreamAtOnceAndIgnoresACancelForNone() throws Exception {
        CorProtoServer server = fx.server(r -> {
            if (r.path().equals("/hang")) {
                CorCo.sleep(30_000);
            }
            r.respond(200, "text/plain", r.path().getBytes(StandardCharsets.UTF_8));
        }, b -> b.maxStreams(1), serverLoop);
        try (RawPeer p = new RawPeer(server.port(), null, 0)) {
            p.open();
            p.write(p.request(1, "/hang"));
            p.write(header(0, CorProtoCodec.CANCEL, 0, 1));
            p.write(header(0, CorProtoCodec.CANCEL, 0, 7)); // nothing in flight on 7: ignored
            // Stream 1 at once again, with the one stream agreed: neither STREAM_IN_USE nor REFUSED.
            p.write(p.request(1, "/ok"));
            CorProtoCodec c = p.readFrame();
            assertEquals(CorProtoCodec.RESPONSE, c.frameType());
            assertEquals(1, c.stream());
            assertEquals("/ok", body(c.readResponse()));
        }
        assertEquals(1, server.cancelled());
        assertEquals(0, server.violations());
        eventually("the /hang coroutine was cancelled", this::serverLoopIdle);
    }

    @Test
    void aCancelWithAPayloadIsInvalidPayload() throws Exception { // spec § 5.5, § 8.3
        CorProtoServer server = server();
        try (RawPeer p = new RawPeer(server.port(), null, 0)) {
            p.open();
            p.write(header(1, CorProtoCodec.CANCEL, 0, 1)).write(new byte[] {0});
            p.expectGoAwayAndClose(CorProtoError.INVALID_PAYLOAD);
        }
    }

    @Test
    void anAnswerThatCrossedTheCancelIsDroppedAndTheConnectionGoesOn() throws Exception {
        try (LatePeer peer = new LatePeer()) {
            CorProtoClient client = fx.client(b -> b);
            CorProtoException late = assertThrows(CorProtoException.class, () -> LoopTesting.inCoroutine(clientLoop,
                    () -> client.send("GET", "127.0.0.1", peer.port(), "/late", null, null, null, null, 300)));
            assertInstanceOf(CorProtoTimeoutException.class, late);
            eventually("the peer answered the cancelled stream", () -> peer.lateAnswers.get() == 1);
            assertEquals("ok /next", LoopTesting.inCoroutine(clientLoop,
                    () -> body(client.send("GET", "127.0.0.1", peer.port(), "/next", null, null, null, null, 5000))));
            assertEquals(1, client.connectionsOpened(), "the late answer was no violation");
            assertEquals(1, peer.cancelledStream.get(), "CANCEL named the stream of /late");
        }
    }

    /**
     * A cor:// server on a plain socket that answers /late only once the CANCEL for it has come,
     * so that its answer certainly crosses the CANCEL; everything else at once.
     */
    private static final class LatePeer implements AutoCloseable {
        final AtomicInteger lateAnswers = new AtomicInteger();
        final AtomicInteger cancelledStream = new AtomicInteger();
        private final ServerSocket listener = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
        private final CompletableFuture<Void> served = new CompletableFuture<>();

        LatePeer() throws Exception {
            Thread.ofPlatform().daemon().name("late-cor-peer").start(this::serve);
        }

        int port() {
            return listener.getLocalPort();
        }

        private void serve() {
            try (Socket s = listener.accept()) {
                s.setSoTimeout(10_000);
                DataInputStream in = new DataInputStream(s.getInputStream());
                OutputStream out = s.getOutputStream();
                CorProtoCodec reader = new CorProtoCodec();
                CorProtoCodec writer = new CorProtoCodec();
                ProtoFixture.readFrame(in, reader);
                reader.readHello();
                writer.writeHelloAck(CorProtoCodec.DEFAULT_MAX_FRAME, 16, CorProtoCodec.DEFAULT_NAME_TABLE, "late");
                out.write(drain(writer));
                reader.agree(CorProtoCodec.DEFAULT_MAX_FRAME, CorProtoCodec.DEFAULT_NAME_TABLE);
                writer.agree(CorProtoCodec.DEFAULT_MAX_FRAME, CorProtoCodec.DEFAULT_NAME_TABLE);
                while (true) {
                    int t = ProtoFixture.readFrame(in, reader);
                    if (t == CorProtoCodec.REQUEST) {
                        String path = reader.readRequest().path();
                        if (!path.equals("/late")) {
                            writer.writeResponse(reader.stream(), 200, null, null, ("ok " + path).getBytes(StandardCharsets.UTF_8));
                        }
                    } else if (t == CorProtoCodec.CANCEL) {
                        reader.readCancel();
                        cancelledStream.set(reader.stream());
                        writer.writeResponse(reader.stream(), 200, null, null, "too late".getBytes(StandardCharsets.UTF_8));
                        lateAnswers.incrementAndGet();
                    } else if (t == CorProtoCodec.PING) {
                        writer.writePing(CorProtoCodec.PONG, reader.readPing());
                    } else if (t == CorProtoCodec.GOAWAY) {
                        return;
                    }
                    out.write(drain(writer));
                }
            } catch (Exception e) {
                // the client closed, or the test ended
            } finally {
                served.complete(null);
            }
        }

        @Override
        public void close() throws Exception {
            listener.close();
            served.get(15, TimeUnit.SECONDS);
        }
    }
}
