package dev.cor.rest.client;

import static dev.cor.base.testing.LoopTesting.coroutine;
import static dev.cor.base.testing.LoopTesting.onLoop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import dev.cor.rest.CorRest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The client never blocks a loop: every wait goes through CorRest.waitFd, every socket is non-blocking. */
class CorRestClientNeverBlocksALoopTest {
    private CorCoLoop loop;
    private TestServer server;
    private CorRestClient client;

    @BeforeEach
    void setUp() throws Exception {
        loop = LoopTesting.start("never-blocks-loop", 64);
        server = TestServer.http((req, s, out) -> {
            Thread.sleep(200);
            TestServer.respond(out, 200, "ok");
        });
        client = CorRestClient.builder().build();
    }

    @AfterEach
    void tearDown() throws Exception {
        client.close();
        LoopTesting.stop(loop);
        server.close();
    }

    @Test
    void onALoopThreadOutsideACoroutineTheClientFailsInCorRestWaitFdAndLeaksNothing() throws Exception {
        Object outcome = onLoop(loop, () -> {
            try {
                return client.send(CorRestClientRequest.get(server.url("/")));
            } catch (IllegalStateException e) {
                return e;
            }
        });
        IllegalStateException e = assertInstanceOfIse(outcome);
        StackTraceElement top = e.getStackTrace()[0];
        assertEquals(CorRest.class.getName() + ".waitFd", top.getClassName() + "." + top.getMethodName(),
                "the refusal did not come from the one wait");
        assertTrue(e.getMessage().contains("a loop never blocks"), e.getMessage());
        assertEquals(List.of(0, 0), onLoop(loop, () -> List.of(client.openConnections(), loop.liveCoroutines())));
    }

    private static IllegalStateException assertInstanceOfIse(Object o) {
        if (o instanceof IllegalStateException e) {
            return e;
        }
        throw new AssertionError("expected the IllegalStateException of CorRest.waitFd, got " + o);
    }

    @Test
    void everyChannelTheClientOpensIsNonBlockingWhileRequestsRunOnALoop() throws Exception {
        ConcurrentLinkedQueue<SocketChannel> opened = new ConcurrentLinkedQueue<>();
        client.onChannelOpened = opened::add;
        int n = 8;
        List<CompletableFuture<String>> calls = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            calls.add(coroutine(loop, () -> client.send(CorRestClientRequest.get(server.url("/"))).bodyText()));
        }
        // while they wait for their answers: every channel open, non-blocking, and the loop's to wait on
        while (opened.size() < n) {
            Thread.sleep(5);
        }
        List<Boolean> blocking = onLoop(loop, () -> opened.stream().map(SocketChannel::isBlocking).toList());
        assertEquals(n, blocking.size());
        assertFalse(blocking.contains(true), "a blocking channel: " + blocking);
        for (CompletableFuture<String> c : calls) {
            assertEquals("ok", LoopTesting.get(c));
        }
        for (SocketChannel ch : opened) {
            assertFalse(ch.isBlocking());
        }
        assertEquals(n, server.connections.get(), "a channel the hook did not see");
    }
}
