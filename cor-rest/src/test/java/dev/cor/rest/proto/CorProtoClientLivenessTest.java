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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTask;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client finds a peer that stopped answering and moves on (spec § 9.2): PING finds one that
 * keeps the TCP connection open but answers nothing, before a call reuses a connection silent for
 * long and while calls wait on it, and after a call is cancelled at its deadline. From a
 * coroutine and from a thread. (What CANCEL does is in {@link CorProtoCancelTest}.)
 */
class CorProtoClientLivenessTest {
    private final ProtoFixture fx = new ProtoFixture();
    private final CorCoLoop clientLoop = fx.loop("liveness-client");

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private <T> T run(boolean fromThread, CorCoTask task) throws Exception {
        return ProtoFixture.run(clientLoop, fromThread, task);
    }

    private static String body(CorProtoResponse r) {
        return ProtoFixture.body(r);
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
                    } else if (t == CorProtoCodec.CANCEL) {
                        reader.readCancel();
                        continue;
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
