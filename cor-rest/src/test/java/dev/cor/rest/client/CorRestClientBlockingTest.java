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
    void virtualThreadsShareOneKeepAlivePool() throws Exception {
        int threads = 100;
        int callsEach = 5;
        java.util.concurrent.Semaphore atOnce = new java.util.concurrent.Semaphore(4);
        java.util.concurrent.atomic.AtomicInteger ok = new java.util.concurrent.atomic.AtomicInteger();
        List<Thread> started = new java.util.ArrayList<>();
        java.util.Queue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
        for (int i = 0; i < threads; i++) {
            String who = "v" + i;
            started.add(Thread.ofVirtual().name(who).start(() -> {
                try {
                    atOnce.acquire();
                    try {
                        for (int c = 0; c < callsEach; c++) {
                            String body = client.send(CorRestClientRequest.get(server.url("/?id=" + who + "-" + c))).bodyText();
                            if (body.equals("true id=" + who + "-" + c + " body=")) {
                                ok.incrementAndGet();
                            }
                        }
                    } finally {
                        atOnce.release();
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        for (Thread t : started) {
            assertTrue(t.join(java.time.Duration.ofSeconds(30)), t + " did not end");
        }
        assertTrue(failures.isEmpty(), failures.toString());
        assertEquals(threads * callsEach, ok.get());
        // Four callers at a time: with a pool per virtual thread this would be one connection each (100).
        assertTrue(server.connections.get() <= 8, server.connections.get() + " connections for " + threads + " virtual threads");
        CompletableFuture<List<Integer>> pool = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> pool.complete(List.of(client.openConnections(), client.idleConnections())));
        List<Integer> seen = pool.get(10, TimeUnit.SECONDS);
        assertEquals(server.connections.get(), seen.get(0), "every connection made is still open, in the shared pool");
        assertEquals(seen.get(0), seen.get(1), "and idle");
        assertEquals(0, client.openConnections(), "the test thread's own pool is another");
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
