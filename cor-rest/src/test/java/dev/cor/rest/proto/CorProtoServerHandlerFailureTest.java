package dev.cor.rest.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.Test;

/**
 * The loop's contract with a handler whose {@code onReady} threw: it calls {@code failed}, and a
 * cor:// server connection then ends through its own close - it leaves the server's count (which
 * {@code maxConnections} is checked against), and the server goes on serving. (A request whose
 * dispatch throws does not get here: the connection answers it with an ERROR frame and lives.)
 */
class CorProtoServerHandlerFailureTest {
    @Test
    void aClientConnectionTheLoopReportsFailedDiesAndTheNextCallTakesANewOne() throws Exception {
        try (ProtoFixture f = new ProtoFixture()) {
            CorCoLoop serverLoop = f.loop("handler-failed-server");
            CorCoLoop clientLoop = f.loop("handler-failed-client");
            CorProtoServer server = f.server(r -> r.respond(200, "text/plain", "ok".getBytes()), serverLoop);
            CorProtoClient client = f.client(b -> b.requestTimeoutMs(5_000));
            int port = server.port();
            assertEquals(200, (int) LoopTesting.<Integer>inCoroutine(clientLoop,
                    () -> client.send("GET", "127.0.0.1", port, "/one", null, null, null, null).status()));
            assertEquals(1, client.connectionsLive());
            LoopTesting.onLoop(clientLoop, () -> {
                ClientConnection c = client.live.iterator().next(); java.nio.channels.SocketChannel ch = null; try { var f1 = ClientConnection.class.getDeclaredField("channel"); f1.setAccessible(true); ch = (java.nio.channels.SocketChannel) f1.get(c); } catch (ReflectiveOperationException e) { throw new AssertionError(e); }
                c.failed(clientLoop.keyFor(ch), new IllegalStateException("what onReady threw"));
                return null;
            });
            assertEquals(0, client.connectionsLive(), "the connection died and left the client's table");
            assertEquals(200, (int) LoopTesting.<Integer>inCoroutine(clientLoop,
                    () -> client.send("GET", "127.0.0.1", port, "/two", null, null, null, null).status()),
                    "the next call opens a new connection");
            assertEquals(1, client.connectionsLive());
        }
    }

    @Test
    void aConnectionTheLoopReportsFailedLeavesTheServersCountAndTheServerGoesOn() throws Exception {
        try (ProtoFixture f = new ProtoFixture()) {
            CorCoLoop loop = f.loop("handler-failed");
            CorProtoServer server = f.server(r -> r.respond(200, "text/plain", "ok".getBytes()), loop);
            CorProtoClient client = f.client(b -> b.requestTimeoutMs(5_000));
            assertEquals(200, client.send("GET", "127.0.0.1", server.port(), "/one", null, null, null, null).status());
            assertEquals(1, server.connectionsOpen());
            LoopTesting.onLoop(loop, () -> {
                ServerConnection c = server.connections.iterator().next();
                c.failed(loop.keyFor(c.channel), new IllegalStateException("what onReady threw"));
                return null;
            });
            assertEquals(0, server.connectionsOpen(), "the connection left the server's count at once");
            assertEquals(200, client.send("GET", "127.0.0.1", server.port(), "/two", null, null, null, null).status(),
                    "the client finds the connection gone and the server serves it on a new one");
            assertEquals(1, server.connectionsOpen());
        }
    }
}
