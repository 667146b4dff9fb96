package dev.cor.rest.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.cor.rest.CorRestWorkers;

/** The same client code outside coroutines: it blocks the calling thread, and only it. */
class CorRestClientBlockingTest {
    private TestServer server;
    private CorRestClient client;

    @BeforeEach
    void setUp() throws Exception {
        server = TestServer.http((req, s, out) -> TestServer.respond(out, 200,
                Thread.currentThread().isVirtual() + " id=" + req.query("id") + " body=" + new String(req.body())));
        client = CorRestClient.builder().build();
    }

    @AfterEach
    void tearDown() throws Exception {
        client.close();
        server.close();
    }

    /** Two GETs and a POST from the calling thread, and what its pool holds after. */
    private List<Object> threeRequests(String who) throws Exception {
        String a = client.send(CorRestClientRequest.get(server.url("/?id=" + who + "1"))).bodyText();
        String b = client.send(CorRestClientRequest.post(server.url("/?id=" + who + "2"), "text/plain", "hi".getBytes())).bodyText();
        CorRestClientResponse head = client.send(CorRestClientRequest.head(server.url("/")));
        return List.of(a, b, head.body().length, client.openConnections(), client.idleConnections());
    }

    @Test
    void aPlainThreadSendsBlockingAndKeepsItsConnectionAlive() throws Exception {
        CompletableFuture<List<Object>> f = new CompletableFuture<>();
        Thread.ofPlatform().name("plain-caller").start(() -> {
            try {
                f.complete(threeRequests("t"));
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        assertEquals(List.of("true id=t1 body=", "true id=t2 body=hi", 0, 1, 1), f.get(10, TimeUnit.SECONDS));
        assertEquals(1, server.connections.get());
    }

    @Test
    void aWorkerSendsBlockingWithAPoolOfItsOwn() throws Exception {
        try (CorRestWorkers workers = CorRestWorkers.create(1)) {
            CompletableFuture<List<Object>> f = new CompletableFuture<>();
            assertTrue(workers.submit(() -> {
                try {
                    f.complete(threeRequests("w"));
                } catch (Throwable t) {
                    f.completeExceptionally(t);
                }
            }));
            assertEquals(List.of("true id=w1 body=", "true id=w2 body=hi", 0, 1, 1), f.get(10, TimeUnit.SECONDS));
        }
        // the test thread has its own pool, untouched by the worker's
        assertEquals(0, client.openConnections());
    }

    @Test
    void startOutsideACoroutineRunsTheCallBeforeItReturns() throws Exception {
        CorRestCall call = client.start(CorRestClientRequest.get(server.url("/?id=s")));
        assertTrue(call.isDone());
        assertNull(call.error());
        CorRestClient.awaitAll(call);
        assertEquals("true id=s body=", call.await().bodyText());
    }
}
