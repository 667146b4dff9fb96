package dev.cor.rest.client;

import static dev.cor.base.testing.LoopTesting.coroutine;
import static dev.cor.base.testing.LoopTesting.get;
import static dev.cor.base.testing.LoopTesting.inCoroutine;
import static dev.cor.base.testing.LoopTesting.onLoop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The client inside coroutines: many at once on one loop, the fan-out, keep-alive per loop. */
class CorRestClientCoroutineTest {
    private final List<AutoCloseable> closing = new ArrayList<>();
    private final List<CorCoLoop> loops = new ArrayList<>();

    private CorCoLoop loop(int cap) {
        CorCoLoop l = LoopTesting.start("client-test-" + loops.size(), cap);
        loops.add(l);
        return l;
    }

    private <T extends AutoCloseable> T closing(T c) {
        closing.add(c);
        return c;
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
        for (CorCoLoop l : loops) {
            LoopTesting.stop(l);
        }
    }

    /** Answers after {@code delayMs} with the request's id. */
    private TestServer delayedEcho(long delayMs) throws Exception {
        return closing(TestServer.http((req, s, out) -> {
            Thread.sleep(delayMs);
            TestServer.respond(out, 200, "id=" + req.query("id"));
        }));
    }

    @Test
    void thousandCoroutinesOnOneLoopEachGetTheirOwnAnswerAtOnceWhileTheLoopStaysResponsive() throws Exception {
        int n = 1000;
        TestServer server = delayedEcho(200);
        CorRestClient client = closing(CorRestClient.builder().build());
        CorCoLoop loop = loop(n + 24);
        // warm the path up, so that what is measured is the waiting, not the interpreter
        int warmUp = 200;
        List<String> warm = LoopTesting.inCoroutine(loop, () -> {
            List<CorRestCall> calls = new ArrayList<>();
            for (int i = 0; i < warmUp; i++) {
                calls.add(client.start(CorRestClientRequest.get(server.url("/echo?id=w" + i))));
            }
            CorRestClient.awaitAll(calls);
            List<String> b = new ArrayList<>();
            for (CorRestCall c : calls) {
                b.add(c.await().bodyText());
            }
            return b;
        });
        assertEquals(warmUp, warm.size());

        String[] answers = new String[n];
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(n);
        long t0 = System.nanoTime();
        loop.execute(() -> {
            for (int i = 0; i < n; i++) {
                int id = i;
                CorCo co = CorCo.start(() -> {
                    answers[id] = client.send(CorRestClientRequest.get(server.url("/echo?id=" + id))).bodyText();
                    return null;
                }, c -> {
                    if (c.error() != null) {
                        errors.add(c.error());
                    }
                    finished.countDown();
                });
                if (co == null) {
                    errors.add(new AssertionError("coroutine " + id + " refused"));
                    finished.countDown();
                }
            }
            started.countDown();
        });
        assertTrue(started.await(10, TimeUnit.SECONDS));
        // every request sent: they all wait for their answers now (the early ones may have theirs)
        long sentBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (server.requests.get() < warmUp + n && System.nanoTime() < sentBy) {
            Thread.sleep(1);
        }

        // the loop is free while the thousand wait: a plain task handed to it runs at once
        AtomicLong probeNanos = new AtomicLong();
        CountDownLatch probed = new CountDownLatch(1);
        long handed = System.nanoTime();
        loop.execute(() -> {
            probeNanos.set(System.nanoTime() - handed);
            probed.countDown();
        });
        assertTrue(probed.await(5, TimeUnit.SECONDS));
        assertTrue(probeNanos.get() < TimeUnit.MILLISECONDS.toNanos(100),
                "a task handed to the loop waited " + probeNanos.get() / 1_000_000 + " ms");

        assertTrue(finished.await(30, TimeUnit.SECONDS), "not all requests finished");
        long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(errors.isEmpty(), () -> errors.size() + " failed, first: " + errors.peek());
        for (int i = 0; i < n; i++) {
            assertEquals("id=" + i, answers[i], "request " + i + " got someone else's answer");
        }
        assertTrue(elapsedMs < 10_000, "1000 requests of 200 ms each took " + elapsedMs + " ms");
        int[] counts = onLoop(loop, () -> new int[] {client.openConnections(), client.idleConnections(), loop.liveCoroutines()});
        assertEquals(counts[1], counts[0], "busy connections left");
        assertTrue(counts[1] <= CorRestClient.DEFAULT_MAX_IDLE_PER_ORIGIN, "idle kept past the limit: " + counts[1]);
        assertEquals(0, counts[2], "coroutines left");
    }

    @Test
    void fanOutOfTwoOneSecondRequestsFromOneCoroutineTakesOneSecondNotTwo() throws Exception {
        TestServer a = delayedEcho(1000);
        TestServer b = delayedEcho(1000);
        CorRestClient client = closing(CorRestClient.builder().build());
        CorCoLoop loop = loop(64);
        long[] elapsed = new long[1];
        List<String> bodies = inCoroutine(loop, () -> {
            long t0 = System.nanoTime();
            CorRestCall ca = client.start(CorRestClientRequest.get(a.url("/?id=a")));
            CorRestCall cb = client.start(CorRestClientRequest.get(b.url("/?id=b")));
            CorRestClient.awaitAll(ca, cb);
            elapsed[0] = (System.nanoTime() - t0) / 1_000_000;
            assertNull(ca.error());
            assertNull(cb.error());
            return List.of(ca.response().bodyText(), cb.response().bodyText());
        });
        assertEquals(List.of("id=a", "id=b"), bodies);
        assertTrue(elapsed[0] >= 950 && elapsed[0] < 1800, "the fan-out took " + elapsed[0] + " ms");
        assertEquals(0, (int) onLoop(loop, loop::liveCoroutines));
    }

    @Test
    void fanOutChildrenInheritTheCallersContextAndFailuresStayWithTheirCall() throws Exception {
        TestServer server = closing(TestServer.http((req, s, out) -> TestServer.respond(out, 200, "ok")));
        int deadPort;
        try (var ss = TestServer.listen()) {
            deadPort = ss.getLocalPort();
        }
        CorRestClient client = closing(CorRestClient.builder().resolver(CorRestResolver.of(host -> {
            throw new java.net.UnknownHostException(host);
        }, 1000)).build());
        // Runs inside whoever opens a connection - the call's child coroutine: what context does it see?
        ConcurrentLinkedQueue<String> seenByChildren = new ConcurrentLinkedQueue<>();
        client.onChannelOpened = ch -> {
            CorCo co = CorCo.current();
            seenByChildren.add(co == null ? "no coroutine" : co.name() + " sees " + co.context());
        };
        CorCoLoop loop = loop(64);
        String request = "the request";
        List<Object> out = inCoroutine(loop, () -> {
            CorCo parent = CorCo.current();
            parent.context(request);
            CorRestCall ok = client.start(CorRestClientRequest.get(server.url("/")));
            CorRestCall refused = client.start(CorRestClientRequest.get("http://127.0.0.1:" + deadPort + "/"));
            CorRestCall unresolved = client.start(CorRestClientRequest.get("http://nowhere.test/"));
            CorRestClient.awaitAll(List.of(ok, refused, unresolved));
            return List.of(ok.response().status(), ((CorRestClientException) refused.error()).kind(),
                    ((CorRestClientException) unresolved.error()).kind(), parent.name());
        });
        assertEquals(List.of(200, CorRestClientException.Kind.REFUSED, CorRestClientException.Kind.RESOLVE), out.subList(0, 3));
        String parentName = (String) out.get(3);
        // the two calls that got as far as a connection ran in children of their own, and each saw the caller's context
        assertEquals(2, seenByChildren.size(), seenByChildren.toString());
        for (String seen : seenByChildren) {
            assertTrue(seen.endsWith(" sees " + request), seen);
            assertTrue(!seen.startsWith(parentName + " "), "the call ran in the caller, not a child: " + seen);
        }
    }

    @Test
    void fanOutPastTheCapRunsTheRefusedCallInTheCaller() throws Exception {
        TestServer server = delayedEcho(100);
        CorRestClient client = closing(CorRestClient.builder().build());
        CorCoLoop loop = loop(2); // the caller and one child
        List<String> bodies = inCoroutine(loop, () -> {
            List<CorRestCall> calls = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                calls.add(client.start(CorRestClientRequest.get(server.url("/?id=" + i))));
            }
            CorRestClient.awaitAll(calls);
            List<String> b = new ArrayList<>();
            for (CorRestCall c : calls) {
                b.add(c.await().bodyText());
            }
            return b;
        });
        assertEquals(List.of("id=0", "id=1", "id=2"), bodies);
        // call 1 found the cap full and ran in the caller (call 0's child finished meanwhile)
        assertTrue(onLoop(loop, loop::refusedCoroutines) >= 1, "the cap never refused a child");
    }

    @Test
    void sixteenCoroutinesChurningOnePoolNeverShareAConnectionAndEachGetsItsOwnAnswer() throws Exception {
        // few idle slots, so connections are taken, given back, closed and opened all the time
        TestServer server = closing(TestServer.http((req, s, out) -> {
            Thread.sleep(Integer.parseInt(req.query("ms")));
            TestServer.respond(out, 200, "id=" + req.query("id"));
        }));
        CorRestClient client = closing(CorRestClient.builder().maxIdlePerOrigin(4).build());
        CorCoLoop loop = loop(64);
        List<CompletableFuture<Integer>> callers = new ArrayList<>();
        for (int c = 0; c < 16; c++) {
            int caller = c;
            callers.add(coroutine(loop, () -> {
                for (int i = 0; i < 20; i++) {
                    String id = caller + "-" + i;
                    String body = client.send(CorRestClientRequest.get(server.url("/?id=" + id + "&ms=" + ((caller + i) % 3)))).bodyText();
                    assertEquals("id=" + id, body);
                }
                return caller;
            }));
        }
        for (CompletableFuture<Integer> f : callers) {
            get(f);
        }
        assertEquals(16 * 20, server.requests.get());
        List<Integer> counts = onLoop(loop, () -> List.of(client.openConnections(), client.idleConnections(), loop.liveCoroutines()));
        assertEquals(counts.get(1), counts.get(0), "busy connections left");
        assertTrue(counts.get(1) <= 4);
        assertEquals(0, counts.get(2));
    }

    @Test
    void twoSequentialRequestsFromOneCoroutineReuseOneConnection() throws Exception {
        TestServer server = delayedEcho(0);
        CorRestClient client = closing(CorRestClient.builder().build());
        CorCoLoop loop = loop(64);
        List<String> bodies = inCoroutine(loop, () -> List.of(
                client.send(CorRestClientRequest.get(server.url("/?id=1"))).bodyText(),
                client.send(CorRestClientRequest.get(server.url("/?id=2"))).bodyText()));
        assertEquals(List.of("id=1", "id=2"), bodies);
        assertEquals(1, server.connections.get(), "the second request opened a connection of its own");
        assertEquals(2, server.requests.get());
        assertEquals(List.of(1, 1), onLoop(loop, () -> List.of(client.openConnections(), client.idleConnections())));
    }

    @Test
    void twoConcurrentCoroutinesUseTwoConnectionsNeverOneAtOnce() throws Exception {
        ConcurrentHashMap<Integer, Integer> requestsPerConnection = new ConcurrentHashMap<>();
        TestServer server = closing(TestServer.http((req, s, out) -> {
            requestsPerConnection.merge(req.connection(), 1, Integer::sum);
            Thread.sleep(200);
            TestServer.respond(out, 200, "id=" + req.query("id"));
        }));
        CorRestClient client = closing(CorRestClient.builder().build());
        CorCoLoop loop = loop(64);
        for (int round = 0; round < 2; round++) {
            int r = round;
            CompletableFuture<String> one = coroutine(loop, () -> client.send(CorRestClientRequest.get(server.url("/?id=" + r + "a"))).bodyText());
            CompletableFuture<String> two = coroutine(loop, () -> client.send(CorRestClientRequest.get(server.url("/?id=" + r + "b"))).bodyText());
            assertEquals("id=" + r + "a", get(one));
            assertEquals("id=" + r + "b", get(two));
            // two at once on one connection would have shown as one connection carrying both
            assertEquals(2, server.connections.get(), "round " + r);
        }
        // the second round reused both idle connections, one request each at a time
        assertEquals(2, requestsPerConnection.size());
        requestsPerConnection.values().forEach(v -> assertEquals(2, v));
        assertEquals(List.of(2, 2), onLoop(loop, () -> List.of(client.openConnections(), client.idleConnections())));
    }
}
