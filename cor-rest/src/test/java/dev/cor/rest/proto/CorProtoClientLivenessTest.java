package dev.cor.rest.proto;

import static dev.cor.rest.proto.ProtoFixture.eventually;
import static dev.cor.rest.proto.ProtoFixture.msSince;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTask;
import dev.cor.base.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client finds a peer that stopped answering and moves on (spec § 9.2): PING finds one that
 * keeps the TCP connection open but answers nothing, before a call reuses a connection silent for
 * long and while calls wait on it; a connection whose streams its callers abandoned at their
 * deadlines is retired, and new calls go to a fresh one. From a coroutine and from a thread.
 */
class CorProtoClientLivenessTest {
    private final ProtoFixture fx = new ProtoFixture();
    private final CorCoLoop clientLoop = fx.loop("liveness-client");

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    /** Runs {@code task} in a coroutine of the client loop, or here on the test thread. */
    private <T> T run(boolean fromThread, CorCoTask task) throws Exception {
        if (fromThread) {
            @SuppressWarnings("unchecked")
            T t = (T) task.run();
            return t;
        }
        return LoopTesting.inCoroutine(clientLoop, task);
    }

    private static String body(CorProtoResponse r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "from a thread: {0}")
    @ValueSource(booleans = {false, true})
    void aPeerThatStopsAnsweringButKeepsTheConnectionIsFoundDeadByPingAndTheNextCallGoesToAFreshOne(boolean fromThread)
            throws Exception {
        try (FakePeer peer = new FakePeer(1)) {
            CorProtoClient client = fx.client(b -> b.pingIdleMs(200).pingTimeoutMs(300).requestTimeoutMs(10_000));
            assertEquals("ok /a", run(fromThread, () -> body(client.send("GET", "127.0.0.1", peer.port(), "/a", null, null, null, null))));
            // The peer now reads everything and answers nothing, PING included.
            long t0 = System.nanoTime();
            CorProtoException dead = assertThrows(CorProtoException.class,
                    () -> run(fromThread, () -> client.send("GET", "127.0.0.1", peer.port(), "/b", null, null, null, null)));
            long ms = msSince(t0);
            assertInstanceOf(CorProtoTimeoutException.class, dead, dead.toString());
            assertTrue(dead.getMessage().contains("PONG"), dead.getMessage());
            assertTrue(ms >= 300 && ms < 5000, "failed after " + ms + " ms: after a PING timeout, well before its 10 s deadline");
            assertTrue(peer.pingsIgnored.get() >= 1, "the client sent PING");
            // The next call opens a fresh connection, which the peer answers.
            assertEquals("ok /c", run(fromThread, () -> body(client.send("GET", "127.0.0.1", peer.port(), "/c", null, null, null, null))));
            assertEquals(2, client.connectionsOpened());
            assertEquals(0, ProtoFixture.liveCoroutines(clientLoop));
        }
    }

    @ParameterizedTest(name = "from a thread: {0}")
    @ValueSource(booleans = {false, true})
    void aConnectionSilentForLongIsProbedBeforeReuseAndADeadOneReplacedWithoutFailingTheCall(boolean fromThread)
            throws Exception {
        try (FakePeer peer = new FakePeer(1)) {
            CorProtoClient client = fx.client(b -> b.pingIdleMs(200).pingTimeoutMs(300).requestTimeoutMs(10_000));
            assertEquals("ok /a", run(fromThread, () -> body(client.send("GET", "127.0.0.1", peer.port(), "/a", null, null, null, null))));
            Thread.sleep(500); // silent for longer than the ping idle time, with nothing in flight
            long t0 = System.nanoTime();
            assertEquals("ok /b", run(fromThread, () -> body(client.send("GET", "127.0.0.1", peer.port(), "/b", null, null, null, null))));
            long ms = msSince(t0);
            assertTrue(ms < 5000, "the call waited " + ms + " ms");
            assertTrue(peer.pingsIgnored.get() >= 1, "the silent connection was probed with PING before reuse");
            assertEquals(2, client.connectionsOpened(), "the dead one was replaced");
            assertEquals(0, peer.requestsIgnored.get(), "no request was sent to the dead connection");
        }
    }

    @ParameterizedTest(name = "from a thread: {0}")
    @ValueSource(booleans = {false, true})
    void aCallAbandonedAtItsDeadlineSendsPingAndTheDeadPeerIsReplacedForTheNextCall(boolean fromThread) throws Exception {
        try (FakePeer peer = new FakePeer(1)) {
            // A ping idle time far beyond the test: only the abandoned call can make the client ask.
            CorProtoClient client = fx.client(b -> b.pingIdleMs(600_000).pingTimeoutMs(300));
            assertEquals("ok /a", run(fromThread, () -> body(client.send("GET", "127.0.0.1", peer.port(), "/a", null, null, null, null))));
            CorProtoException late = assertThrows(CorProtoException.class,
                    () -> run(fromThread, () -> client.send("GET", "127.0.0.1", peer.port(), "/b", null, null, null, null, 300)));
            assertInstanceOf(CorProtoTimeoutException.class, late);
            eventually("the client sent PING after abandoning the call", () -> peer.pingsIgnored.get() == 1);
            Thread.sleep(400); // past the ping timeout
            assertEquals("ok /c", run(fromThread, () -> body(client.send("GET", "127.0.0.1", peer.port(), "/c", null, null, null, null, 5000))));
            assertEquals(2, client.connectionsOpened(), "the dead connection was replaced");
            assertEquals(1, peer.requestsIgnored.get(), "only the abandoned call went to the dead connection");
        }
    }

    @ParameterizedTest(name = "from a thread: {0}")
    @ValueSource(booleans = {false, true})
    void aLiveConnectionSilentForLongAnswersTheProbeAndIsKept(boolean fromThread) throws Exception {
        try (FakePeer peer = new FakePeer(Integer.MAX_VALUE)) {
            CorProtoClient client = fx.client(b -> b.pingIdleMs(100).pingTimeoutMs(2000));
            assertEquals("ok /a", run(fromThread, () -> body(client.send("GET", "127.0.0.1", peer.port(), "/a", null, null, null, null))));
            Thread.sleep(300);
            assertEquals("ok /b", run(fromThread, () -> body(client.send("GET", "127.0.0.1", peer.port(), "/b", null, null, null, null))));
            assertTrue(peer.pingsAnswered.get() >= 1, "probed with PING before reuse");
            assertEquals(1, client.connectionsOpened());
        }
    }

    @Test
    void aConnectionWhoseStreamsAreAbandonedIsRetiredAndNewCallsGoToAFreshOne() throws Exception {
        CorProtoServer server = fx.server(r -> {
            if (r.path().equals("/hang")) {
                CorCo.sleep(30_000); // the application is stuck; the loop (and PONG) is not
            }
            r.respond(200, "text/plain", r.path().getBytes(StandardCharsets.UTF_8));
        }, fx.loop("stuck-server"));
        CorProtoClient client = fx.client(b -> b.maxStreams(4));
        int port = server.port();
        List<CorProtoException> timedOut = LoopTesting.inCoroutine(clientLoop, () -> {
            List<CorProtoCall> calls = new java.util.ArrayList<>();
            for (int i = 0; i < 4; i++) { // every stream of the connection
                calls.add(client.start("GET", "127.0.0.1", port, "/hang", null, null, null, null, 300));
            }
            CorProtoCall.awaitAll(calls);
            List<CorProtoException> failures = new java.util.ArrayList<>();
            for (CorProtoCall c : calls) {
                failures.add(assertThrows(CorProtoException.class, c::response));
            }
            return failures;
        });
        for (CorProtoException e : timedOut) {
            assertInstanceOf(CorProtoTimeoutException.class, e, e.toString());
        }
        // Every stream number is still reserved for a late answer (spec § 5.5), yet new calls go through.
        for (int i = 0; i < 3; i++) {
            String path = "/ok/" + i;
            assertEquals(path, LoopTesting.inCoroutine(clientLoop,
                    () -> body(client.send("GET", "127.0.0.1", port, path, null, null, null, null, 2000))));
        }
        assertEquals(2, client.connectionsOpened());
        assertEquals(1, client.connectionsRetired());
        // The retired one had no live call left: it closed.
        eventually("the retired connection closed", () -> client.connectionsLive() == 1);
        assertEquals(0, ProtoFixture.liveCoroutines(clientLoop));
    }

    @Test
    void aCallWaitingForAStreamGetsOneWhenTheCallsHoldingThemPassTheirDeadlinesUnawaited() throws Exception {
        CorProtoServer server = fx.server(r -> {
            if (r.path().equals("/hang")) {
                CorCo.sleep(30_000);
            }
            r.respond(200, "text/plain", r.path().getBytes(StandardCharsets.UTF_8));
        }, fx.loop("stuck-server"));
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
        assertEquals(2, client.connectionsOpened());
        assertEquals(1, client.connectionsRetired());
    }

    @Test
    void aRetiredConnectionFinishesItsLiveCallThenCloses() throws Exception {
        CorProtoServer server = fx.server(r -> {
            CorCo.sleep(r.path().equals("/hang") ? 30_000 : 800);
            r.respond(200, "text/plain", r.path().getBytes(StandardCharsets.UTF_8));
        }, fx.loop("stuck-server"));
        CorProtoClient client = fx.client(b -> b.maxStreams(4));
        int port = server.port();
        List<String> got = LoopTesting.inCoroutine(clientLoop, () -> {
            CorProtoCall live = client.start("GET", "127.0.0.1", port, "/slow", null, null, null, null, 5000);
            CorProtoCall a = client.start("GET", "127.0.0.1", port, "/hang", null, null, null, null, 200);
            CorProtoCall b = client.start("GET", "127.0.0.1", port, "/hang", null, null, null, null, 200);
            CorProtoCall.awaitAll(a, b); // two of four abandoned: retired, one live call on it
            String fresh = body(client.send("GET", "127.0.0.1", port, "/fresh", null, null, null, null));
            return List.of(body(live.await()), fresh);
        });
        assertEquals(List.of("/slow", "/fresh"), got, "the live call on the retired connection got its own answer");
        assertEquals(1, client.connectionsRetired());
        assertEquals(2, client.connectionsOpened());
        eventually("the retired connection closed after its live call", () -> client.connectionsLive() == 1);
    }

    @Test
    void aLateAnswerGoesToItsAbandonedCallAndNeverToALaterStream() throws Exception {
        CorProtoServer server = fx.server(r -> {
            if (r.path().startsWith("/sleep/")) {
                CorCo.sleep(Long.parseLong(r.path().substring(7)));
            }
            r.respond(200, "text/plain", r.path().getBytes(StandardCharsets.UTF_8));
        }, fx.loop("late-server"));
        CorProtoClient client = fx.client(b -> b.maxStreams(16));
        int port = server.port();
        List<String> got = LoopTesting.inCoroutine(clientLoop, () -> {
            CorProtoCall late = client.start("GET", "127.0.0.1", port, "/sleep/600", null, null, null, null, 200);
            CorProtoException e = assertThrows(CorProtoException.class, late::await);
            assertInstanceOf(CorProtoTimeoutException.class, e);
            // In flight when the late answer comes (at 600 ms), answered after it (at ~1400 ms).
            CorProtoCall after = client.start("GET", "127.0.0.1", port, "/sleep/1200", null, null, null, null, 5000);
            String a = body(after.await());
            String b = body(client.send("GET", "127.0.0.1", port, "/sleep/0", null, null, null, null));
            return List.of(a, b);
        });
        assertEquals(List.of("/sleep/1200", "/sleep/0"), got);
        assertEquals(3, server.responses(), "the late answer was sent, and dropped by the client");
        assertEquals(1, client.connectionsOpened(), "one abandoned stream of 16 retires nothing");
        assertEquals(0, client.connectionsRetired());
    }

    /**
     * A fake cor:// server on a socket: HELLO-ACK, then each connection answers requests ("ok
     * PATH") and PINGs. The first connection answers only its first {@code answered} requests;
     * after them it reads on and answers nothing, PING included - a peer whose TCP connection
     * lives on but which is gone.
     */
    private static final class FakePeer implements AutoCloseable {
        final AtomicInteger pingsIgnored = new AtomicInteger();
        final AtomicInteger pingsAnswered = new AtomicInteger();
        final AtomicInteger requestsIgnored = new AtomicInteger();
        private final ServerSocket listener = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
        private final Thread acceptor;

        FakePeer(int answered) throws IOException {
            acceptor = Thread.ofPlatform().daemon().name("fake-cor-peer").start(() -> {
                int index = 0;
                while (!listener.isClosed()) {
                    try {
                        Socket s = listener.accept();
                        sockets.add(s);
                        int limit = index++ == 0 ? answered : Integer.MAX_VALUE;
                        Thread.ofPlatform().daemon().start(() -> serve(s, limit));
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        }

        int port() {
            return listener.getLocalPort();
        }

        private void serve(Socket s, int limit) {
            try (s) {
                DataInputStream in = new DataInputStream(s.getInputStream());
                OutputStream out = s.getOutputStream();
                CorProtoCodec reader = new CorProtoCodec();
                CorProtoCodec writer = new CorProtoCodec();
                assertEquals(CorProtoCodec.HELLO, ProtoFixture.readFrame(in, reader));
                reader.readHello();
                writer.writeHelloAck(CorProtoCodec.DEFAULT_MAX_FRAME, 64, CorProtoCodec.DEFAULT_NAME_TABLE, "fake");
                out.write(ProtoFixture.drain(writer));
                reader.agree(CorProtoCodec.DEFAULT_MAX_FRAME, CorProtoCodec.DEFAULT_NAME_TABLE);
                writer.agree(CorProtoCodec.DEFAULT_MAX_FRAME, CorProtoCodec.DEFAULT_NAME_TABLE);
                int answered = 0;
                while (true) {
                    int t = ProtoFixture.readFrame(in, reader);
                    boolean silent = answered >= limit;
                    if (t == CorProtoCodec.REQUEST) {
                        String path = reader.readRequest().path();
                        if (silent) {
                            requestsIgnored.incrementAndGet();
                            continue;
                        }
                        answered++;
                        writer.writeResponse(reader.stream(), 200, null, null, ("ok " + path).getBytes(StandardCharsets.UTF_8));
                    } else if (t == CorProtoCodec.PING) {
                        long data = reader.readPing();
                        if (silent) {
                            pingsIgnored.incrementAndGet();
                            continue;
                        }
                        pingsAnswered.incrementAndGet();
                        writer.writePing(CorProtoCodec.PONG, data);
                    } else if (t == CorProtoCodec.GOAWAY) {
                        return;
                    }
                    out.write(ProtoFixture.drain(writer));
                }
            } catch (Exception e) {
                // the client closed, or the test ended
            } finally {
                sockets.remove(s);
            }
        }

        @Override
        public void close() throws Exception {
            listener.close();
            for (Socket s : sockets) {
                s.close();
            }
            acceptor.join(5000);
        }
    }
}
