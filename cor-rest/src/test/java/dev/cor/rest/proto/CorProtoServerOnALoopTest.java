package dev.cor.rest.proto;

import static dev.cor.rest.proto.ProtoFixture.eventually;
import static dev.cor.rest.proto.ProtoFixture.msSince;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link CorProtoServer#start()} and {@link CorProtoServer#stop()} called on a loop thread - the
 * server's own acceptor loop, another of its loops, a coroutine - neither block that loop nor
 * wait for it: a loop never blocks, and one that waits for itself waits for ever.
 */
class CorProtoServerOnALoopTest {
    private final ProtoFixture fx = new ProtoFixture();
    private final CorCoLoop clientLoop = fx.loop("on-loop-client");

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private CorProtoServer.Builder builder(CorCoLoop... loops) {
        return CorProtoServer.builder().loops(loops)
                .dispatcher(ProtoFixture.dispatcher(fx.workers, r -> r.respond(200, "text/plain", "up".getBytes())));
    }

    private String get(CorProtoClient client, int port) throws Exception {
        return LoopTesting.inCoroutine(clientLoop,
                () -> new String(client.send("GET", "127.0.0.1", port, "/", null, null, null, null).body()));
    }

    @Test
    void startOnTheAcceptorLoopItselfReturnsAtOnceAndServes() throws Exception {
        CorCoLoop loop = fx.loop("acceptor");
        CorProtoClient client = fx.client(b -> b);
        CorProtoServer plain = builder(loop).build();
        CorProtoServer fromCoroutine = builder(loop).build();
        try {
            long t0 = System.nanoTime();
            LoopTesting.onLoop(loop, plain::start);
            LoopTesting.inCoroutine(loop, fromCoroutine::start);
            long ms = msSince(t0);
            assertTrue(ms < 5000, "start on its own acceptor loop took " + ms + " ms");
            assertEquals("up", get(client, plain.port()));
            assertEquals("up", get(client, fromCoroutine.port()));
        } finally {
            plain.stop();
            fromCoroutine.stop();
        }
    }

    @Test
    void startOnAnotherLoopOfTheServerDoesNotWaitForTheAcceptorLoop() throws Exception {
        CorCoLoop acceptor = fx.loop("busy-acceptor");
        CorCoLoop other = fx.loop("other");
        CorProtoServer server = builder(acceptor, other).build();
        // The acceptor loop is held until start() has returned on the other loop: a start that
        // waited for the acceptor would wait for itself.
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Boolean> held = new CompletableFuture<>();
        acceptor.execute(() -> {
            try {
                held.complete(started.await(15, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                held.completeExceptionally(e);
            }
        });
        try {
            LoopTesting.onLoop(other, () -> {
                server.start();
                started.countDown();
                return null;
            });
            assertTrue(held.get(20, TimeUnit.SECONDS), "start() on the other loop waited for the acceptor loop");
            assertTrue(server.port() > 0);
            assertEquals("up", get(fx.client(b -> b), server.port()), "served once the acceptor loop took the listener");
        } finally {
            server.stop();
        }
    }

    @Test
    void stopOnTheServersLoopReturnsClosesItsConnectionsAndFreesThePort() throws Exception {
        for (boolean inCoroutine : new boolean[] {false, true}) {
            CorCoLoop loop = fx.loop("stopping-" + inCoroutine);
            CorProtoServer server = builder(loop).build().start();
            int port = server.port();
            CorProtoClient client = fx.client(b -> b);
            assertEquals("up", get(client, port));
            assertEquals(1, server.connectionsOpen());
            long t0 = System.nanoTime();
            if (inCoroutine) {
                LoopTesting.inCoroutine(loop, () -> {
                    server.stop();
                    return null;
                });
            } else {
                LoopTesting.onLoop(loop, () -> {
                    server.stop();
                    return null;
                });
            }
            long ms = msSince(t0);
            assertTrue(ms < 5000, "stop on the server's loop took " + ms + " ms");
            eventually("the connections closed", () -> server.connectionsOpen() == 0);
            eventually("the port is free again", () -> {
                try (ServerSocket again = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
                    return true;
                } catch (IOException inUse) {
                    return false;
                }
            });
            CorProtoException e = assertThrows(CorProtoException.class, () -> get(client, port));
            assertEquals(CorProtoException.Kind.CONNECT, e.kind(), e.getMessage());
        }
    }
}
