package dev.cor.rest.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestJson;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The same client from a plain or worker thread: it blocks, on a connection of that thread (spec § 9.2). */
class CorProtoBlockingClientTest {
    private final ProtoFixture fx = new ProtoFixture();

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private CorProtoServer echo() throws Exception {
        return fx.server(request -> {
            ObjectNode o = CorRestJson.mapper().createObjectNode().put("method", request.method()).put("path", request.path());
            o.put("query", request.query());
            o.set("body", request.json());
            request.respondJson(200, o);
        }, fx.loop("blocking-server"));
    }

    @Test
    void aPlainThreadSendsBlockingOnAConnectionOfItsOwnAndKeepsIt() throws Exception {
        CorProtoServer server = echo();
        CorProtoClient client = fx.client(b -> b);
        for (int i = 0; i < 50; i++) {
            ObjectNode body = CorRestJson.mapper().createObjectNode().put("i", i);
            CorProtoResponse r = client.send("PUT", "127.0.0.1", server.port(), "/things/" + i, "q=" + i, null, body, null);
            assertEquals(200, r.status());
            assertEquals("/things/" + i, r.json().get("path").asText());
            assertEquals("q=" + i, r.json().get("query").asText());
            assertEquals(body, r.json().get("body"));
        }
        assertEquals(1, client.connectionsOpened(), "the thread keeps its connection");
        // Another thread has a connection of its own.
        CompletableFuture<Integer> other = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                other.complete(client.send("GET", "127.0.0.1", server.port(), "/other", null, null, null, null).status());
            } catch (Throwable e) {
                other.completeExceptionally(e);
            }
        });
        assertEquals(200, other.get(10, TimeUnit.SECONDS));
        t.join();
        assertEquals(2, client.connectionsOpened());
    }

    @Test
    void aWorkerThreadSendsBlockingToo() throws Exception {
        CorProtoServer server = echo();
        CorProtoClient client = fx.client(b -> b);
        CompletableFuture<String> f = new CompletableFuture<>();
        assertTrue(fx.workers.submit(() -> {
            try {
                f.complete(client.send("GET", "127.0.0.1", server.port(), "/from-worker", null, null, null, null)
                        .json().get("path").asText());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }));
        assertEquals("/from-worker", f.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aLoopThreadOutsideACoroutineIsRefusedBecauseALoopNeverBlocks() throws Exception {
        CorProtoServer server = echo();
        CorCoLoop loop = fx.loop("blocking-refused");
        CorProtoClient client = fx.client(b -> b);
        String message = LoopTesting.onLoop(loop, () -> assertThrows(IllegalStateException.class,
                () -> client.send("GET", "127.0.0.1", server.port(), "/x", null, null, null, null)).getMessage());
        assertTrue(message.contains("never blocks"), message);
    }
}
