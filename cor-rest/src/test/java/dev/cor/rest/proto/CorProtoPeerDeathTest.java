package dev.cor.rest.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A peer that dies, never answers, or is not there: every waiter fails in time, typed (spec § 9.2). */
class CorProtoPeerDeathTest {
    private final ProtoFixture fx = new ProtoFixture();

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private static CorProtoException failureOf(CompletableFuture<?> f) throws Exception {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        return assertInstanceOf(CorProtoException.class, e.getCause());
    }

    @Test
    void aPeerStoppedMidRequestFailsEveryWaiterAtOnceAndTheNextRequestReconnects() throws Exception {
        CorCoLoop serverLoop = fx.loop("dying-server");
        CorCoLoop clientLoop = fx.loop("death-client");
        CorProtoServer server = fx.server(request -> {
            CorCo.sleep(5000);
            request.respond(200, null, null);
        }, serverLoop);
        int port = server.port();
        CorProtoClient client = fx.client(b -> b.requestTimeoutMs(3000));
        List<CompletableFuture<Integer>> waiting = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            waiting.add(LoopTesting.coroutine(clientLoop,
                    () -> client.send("GET", "127.0.0.1", port, "/never", null, null, null, null).status()));
        }
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (server.requests() < 8 && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertEquals(8, server.requests(), "all eight in flight at the server");
        long t0 = System.nanoTime();
        server.stop();
        for (CompletableFuture<Integer> f : waiting) {
            CorProtoException e = failureOf(f);
            assertEquals(CorProtoException.Kind.CLOSED, e.kind(), e.getMessage());
            assertEquals(CorProtoError.NO_ERROR, e.code(), "the server said it was stopping: " + e.getMessage());
            assertEquals(502, e.gatewayStatus());
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 1500, "every waiter failed at once, well within its 3 s timeout: " + ms + " ms");
        assertEquals(0, ProtoFixture.liveCoroutines(clientLoop), "no coroutine left suspended");
        assertEquals(0, client.connectionsLive());

        CorProtoServer again = fx.server(request -> request.respond(204, null, null), b -> b.port(port), serverLoop);
        assertEquals(port, again.port());
        int status = LoopTesting.inCoroutine(clientLoop,
                () -> client.send("GET", "127.0.0.1", port, "/again", null, null, null, null).status());
        assertEquals(204, status);
        assertEquals(2, client.connectionsOpened(), "the next request opened a new connection");
        assertEquals(0, ProtoFixture.liveCoroutines(clientLoop));
    }

    @Test
    void aPeerThatDoesNotAnswerInTimeIsATimeoutAndTheConnectionGoesOn() throws Exception {
        CorCoLoop serverLoop = fx.loop("slow-server");
        CorCoLoop clientLoop = fx.loop("timeout-client");
        CorProtoServer server = fx.server(request -> {
            if (request.path().equals("/slow")) {
                CorCo.sleep(600);
            }
            request.respond(200, "text/plain", request.path().getBytes());
        }, serverLoop);
        CorProtoClient client = fx.client(b -> b);
        long t0 = System.nanoTime();
        CompletableFuture<Integer> late = LoopTesting.coroutine(clientLoop,
                () -> client.send("GET", "127.0.0.1", server.port(), "/slow", null, null, null, null, 200).status());
        CorProtoException e = failureOf(late);
        long ms = ProtoFixture.msSince(t0);
        assertTrue(ms >= 200, "failed after " + ms + " ms, before its 200 ms deadline");
        assertInstanceOf(CorProtoTimeoutException.class, e);
        assertEquals(CorProtoException.Kind.TIMEOUT, e.kind());
        assertEquals(504, e.gatewayStatus());
        // The connection is fine: the late answer is dropped when it comes, and others go on.
        for (int i = 0; i < 3; i++) {
            String body = LoopTesting.inCoroutine(clientLoop,
                    () -> new String(client.send("GET", "127.0.0.1", server.port(), "/quick", null, null, null, null).body()));
            assertEquals("/quick", body);
            Thread.sleep(250);
        }
        assertEquals(1, client.connectionsOpened());
        assertEquals(0, ProtoFixture.liveCoroutines(clientLoop));
    }

    @Test
    void nobodyListeningIsARetryableConnectErrorForEachRequest() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        CorCoLoop clientLoop = fx.loop("connect-client");
        CorProtoClient client = fx.client(b -> b);
        for (int i = 0; i < 2; i++) {
            CompletableFuture<Integer> f = LoopTesting.coroutine(clientLoop,
                    () -> client.send("GET", "127.0.0.1", port, "/", null, null, null, null).status());
            CorProtoException e = failureOf(f);
            assertEquals(CorProtoException.Kind.CONNECT, e.kind(), e.getMessage());
            assertTrue(e.retryable());
        }
        CorProtoException blocking = assertThrows(CorProtoException.class,
                () -> client.send("GET", "127.0.0.1", port, "/", null, null, null, null));
        assertEquals(CorProtoException.Kind.CONNECT, blocking.kind());
        assertEquals(0, ProtoFixture.liveCoroutines(clientLoop));
    }

    @Test
    void aClosedClientFailsItsCallsAndRefusesNewOnes() throws Exception {
        CorCoLoop serverLoop = fx.loop("close-server");
        CorCoLoop clientLoop = fx.loop("close-client");
        CorProtoServer server = fx.server(request -> {
            CorCo.sleep(5000);
            request.respond(200, null, null);
        }, serverLoop);
        CorProtoClient client = fx.client(b -> b);
        CompletableFuture<Integer> waiting = LoopTesting.coroutine(clientLoop,
                () -> client.send("GET", "127.0.0.1", server.port(), "/", null, null, null, null).status());
        while (server.requests() < 1) {
            Thread.sleep(5);
        }
        client.close();
        assertEquals(CorProtoException.Kind.CLOSED, failureOf(waiting).kind());
        assertThrows(IllegalStateException.class, () -> client.send("GET", "127.0.0.1", server.port(), "/", null, null, null, null));
        assertEquals(0, ProtoFixture.liveCoroutines(clientLoop));
    }

    @Test
    void aPeerThatReadsNothingFailsEveryCallByItsDeadlineAndTheLoopGoesOn() throws Exception {
        // A fake server that answers HELLO and then never reads again: the socket buffers fill up.
        try (ServerSocket fake = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CountDownLatch release = new CountDownLatch(1);
            Thread peer = Thread.ofPlatform().daemon().start(() -> {
                try (Socket s = fake.accept()) {
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    CorProtoCodec reader = new CorProtoCodec();
                    assertEquals(CorProtoCodec.HELLO, ProtoFixture.readFrame(in, reader));
                    reader.readHello();
                    CorProtoCodec w = new CorProtoCodec();
                    w.writeHelloAck(CorProtoCodec.DEFAULT_MAX_FRAME, 64, CorProtoCodec.DEFAULT_NAME_TABLE, "deaf");
                    s.getOutputStream().write(ProtoFixture.drain(w));
                    release.await(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    // the test ends it
                }
            });
            CorCoLoop clientLoop = fx.loop("deaf-client");
            CorProtoClient client = fx.client(b -> b);
            // Another task of the same loop, ticking while the calls wait: the loop is not held.
            AtomicInteger ticks = new AtomicInteger();
            AtomicBoolean ticking = new AtomicBoolean(true);
            CompletableFuture<Object> ticker = LoopTesting.coroutine(clientLoop, () -> {
                while (ticking.get()) {
                    CorCo.sleep(20);
                    ticks.incrementAndGet();
                }
                return null;
            });
            byte[] body = new byte[256 << 10];
            int calls = 48; // 12 MiB: more than the socket buffers hold
            List<CompletableFuture<Integer>> all = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                all.add(LoopTesting.coroutine(clientLoop,
                        () -> client.send("POST", "127.0.0.1", fake.getLocalPort(), "/", null, null, null, body, 1000).status()));
            }
            int ticksBefore = ticks.get();
            List<Long> failedAtMs = new ArrayList<>();
            for (CompletableFuture<Integer> f : all) {
                CorProtoException e = failureOf(f);
                failedAtMs.add(ProtoFixture.msSince(t0));
                assertInstanceOf(CorProtoTimeoutException.class, e, e.toString());
                assertEquals(CorProtoException.Kind.TIMEOUT, e.kind());
                assertEquals(504, e.gatewayStatus());
            }
            int ticksDuring = ticks.get() - ticksBefore;
            ticking.set(false);
            LoopTesting.get(ticker);
            long first = failedAtMs.stream().mapToLong(Long::longValue).min().orElseThrow();
            long last = failedAtMs.stream().mapToLong(Long::longValue).max().orElseThrow();
            // Every deadline is 1 s from its call's start, all started after t0: none may fail sooner.
            assertTrue(first >= 1000, "a call failed after " + first + " ms, before its 1 s deadline");
            assertTrue(last < 8000, "every call failed near its 1 s deadline, not later: " + last + " ms");
            // A loop held for the stall would tick once at most; a loaded machine may tick slowly.
            assertTrue(ticksDuring >= 3, "another task of the loop ticked " + ticksDuring + " times in the "
                    + first + " ms the calls waited: the stall held the loop");
            assertTrue(client.bytesSent() < (long) calls * body.length, "the peer took only part of it");
            assertEquals(0, ProtoFixture.liveCoroutines(clientLoop), "no coroutine is left waiting on the socket");
            release.countDown();
            peer.join(5000);
        }
    }
}
