package dev.cor.rest.client;

import static dev.cor.base.testing.LoopTesting.coroutine;
import static dev.cor.base.testing.LoopTesting.inCoroutine;
import static dev.cor.base.testing.LoopTesting.onLoop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Names are looked up off the loop, once per time to live; addresses and localhost never. */
class CorRestResolverTest {
    private CorCoLoop loop;
    private TestServer server;

    @BeforeEach
    void setUp() throws Exception {
        loop = LoopTesting.start("resolver-loop", 64);
        server = TestServer.http((req, s, out) -> TestServer.respond(out, 200, "host " + req.header("Host")));
    }

    @AfterEach
    void tearDown() throws Exception {
        LoopTesting.stop(loop);
        server.close();
    }

    @Test
    void aSlowLookupRunsOffTheLoopWhileTheLoopKeepsTickingAndIsCachedForItsTtl() throws Exception {
        AtomicInteger lookups = new AtomicInteger();
        AtomicReference<Thread> lookupThread = new AtomicReference<>();
        CorRestResolver resolver = CorRestResolver.of(host -> {
            lookups.incrementAndGet();
            lookupThread.set(Thread.currentThread());
            try {
                Thread.sleep(500); // a slow name service
            } catch (InterruptedException e) {
                throw new java.io.InterruptedIOException();
            }
            return new InetAddress[] {InetAddress.getByAddress(host, new byte[] {127, 0, 0, 1})};
        }, 60_000);
        try (CorRestClient client = CorRestClient.builder().resolver(resolver).maxIdlePerOrigin(0).build()) {
            AtomicInteger ticks = new AtomicInteger();
            AtomicBoolean ticking = new AtomicBoolean(true);
            CompletableFuture<Object> ticker = coroutine(loop, () -> {
                while (ticking.get()) {
                    CorCo.sleep(20);
                    ticks.incrementAndGet();
                }
                return null;
            });
            String url = "http://slowname.test:" + server.port() + "/";
            int before = ticks.get();
            long t0 = System.nanoTime();
            String first = inCoroutine(loop, () -> client.send(CorRestClientRequest.get(url)).bodyText());
            long firstMs = (System.nanoTime() - t0) / 1_000_000;
            int during = ticks.get() - before;

            assertEquals("host slowname.test:" + server.port(), first);
            assertTrue(firstMs >= 500, "the lookup did not take its 500 ms: " + firstMs);
            // A loop held for the lookup would tick once at most; a loaded machine may tick slowly.
            assertTrue(during >= 3, "the ticker ticked " + during + " times in " + firstMs + " ms: the lookup held the loop");
            assertNotNull(lookupThread.get());
            assertNotEquals(loop.thread(), lookupThread.get(), "the lookup ran on the loop thread");

            long t1 = System.nanoTime();
            String second = inCoroutine(loop, () -> client.send(CorRestClientRequest.get(url)).bodyText());
            assertEquals(first, second);
            assertEquals(1, lookups.get(), "the name was looked up again within its time to live");
            assertTrue((System.nanoTime() - t1) / 1_000_000 < 400, "the second request waited for a lookup");
            ticking.set(false);
            LoopTesting.get(ticker);
        }
    }

    @Test
    void aNamePastItsTimeToLiveIsLookedUpAgainAndTheNewAddressUsed() throws Exception {
        AtomicInteger lookups = new AtomicInteger();
        CorRestResolver resolver = CorRestResolver.of(host -> {
            int n = lookups.incrementAndGet(); // each lookup answers another address
            return new InetAddress[] {InetAddress.getByAddress(host, new byte[] {127, 0, 0, (byte) n})};
        }, 50);
        // On a plain thread the lookup runs right here.
        assertEquals("127.0.0.1", resolver.resolve("ttl.test", 1_000).getHostAddress());
        Thread.sleep(150); // past the 50 ms time to live
        assertEquals("127.0.0.2", resolver.resolve("TTL.test", 1_000).getHostAddress(), "the expired entry was used");
        assertEquals(2, lookups.get());
    }

    @Test
    void aHungLookupCannotStretchTheConnectTimeoutIsInterruptedAtItAndTheCallerGoesOn() throws Exception {
        long hungMs = 20_000;
        CountDownLatch interrupted = new CountDownLatch(2);
        CorRestResolver resolver = CorRestResolver.of(host -> {
            try {
                Thread.sleep(hungMs); // a name service that does not answer
            } catch (InterruptedException e) {
                interrupted.countDown();
                throw new java.io.InterruptedIOException("lookup interrupted");
            }
            return new InetAddress[] {InetAddress.getByAddress(host, new byte[] {127, 0, 0, 1})};
        }, 60_000);
        record Outcome(CorRestClientException failure, long ms, String after) {
        }
        String slow = "http://slowname.test:" + server.port() + "/";
        String literal = "http://127.0.0.1:" + server.port() + "/";
        try (CorRestClient client = CorRestClient.builder().resolver(resolver).connectTimeoutMs(300).maxIdlePerOrigin(0).build()) {
            Outcome inCo = inCoroutine(loop, () -> {
                long t0 = System.nanoTime();
                CorRestClientException e = assertThrows(CorRestClientException.class, () -> client.send(CorRestClientRequest.get(slow)));
                long ms = (System.nanoTime() - t0) / 1_000_000;
                // the same coroutine goes on with another request
                return new Outcome(e, ms, client.send(CorRestClientRequest.get(literal)).bodyText());
            });
            assertEquals(CorRestClientException.Kind.TIMEOUT, inCo.failure().kind(), inCo.failure().toString());
            assertTrue(inCo.ms() >= 300 && inCo.ms() < hungMs / 2, "the 300 ms connect timeout took " + inCo.ms() + " ms");
            assertEquals("host 127.0.0.1:" + server.port(), inCo.after());
            assertEquals(List.of(0, 0), onLoop(loop, () -> List.of(loop.liveCoroutines(), client.openConnections())),
                    "the loop goes on, with nothing left behind");

            // a plain thread (a worker) under the same deadline
            long t0 = System.nanoTime();
            CorRestClientException e = assertThrows(CorRestClientException.class, () -> client.send(CorRestClientRequest.get(slow)));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(CorRestClientException.Kind.TIMEOUT, e.kind(), e.toString());
            assertTrue(ms >= 300 && ms < hungMs / 2, "on a plain thread the 300 ms connect timeout took " + ms + " ms");
            assertTrue(interrupted.await(10, TimeUnit.SECONDS), "each lookup's helper thread is interrupted at the deadline");
        }
    }

    @Test
    void numericAddressesAndLocalhostNeedNoLookup() throws Exception {
        CorRestResolver resolver = CorRestResolver.of(host -> {
            throw new AssertionError("looked up " + host);
        }, 1000);
        // a literal needs no lookup, so even a deadline that has passed (0) gets its answer
        assertEquals(InetAddress.getByName("127.0.0.1"), resolver.resolve("127.0.0.1", 0));
        assertEquals(InetAddress.getByName("::1"), resolver.resolve("::1", 0));
        assertSame(InetAddress.getLoopbackAddress(), resolver.resolve("localhost", 0));
        // on the loop thread, outside any coroutine: nothing is looked up, so nothing blocks and nothing is refused
        assertEquals(InetAddress.getLoopbackAddress(), onLoop(loop, () -> resolver.resolve("LocalHost", 1000)));
        try (CorRestClient client = CorRestClient.builder().resolver(resolver).build()) {
            String body = inCoroutine(loop, () -> client.send(CorRestClientRequest.get("http://localhost:" + server.port() + "/")).bodyText());
            assertEquals("host localhost:" + server.port(), body);
        }
    }

    @Test
    void aNameThatDoesNotResolveIsAResolveErrorAndALookupOnTheLoopOutsideACoroutineIsRefused() throws Exception {
        CorRestResolver resolver = CorRestResolver.of(host -> {
            throw new java.net.UnknownHostException(host);
        }, 1000);
        try (CorRestClient client = CorRestClient.builder().resolver(resolver).build()) {
            CorRestClientException e = inCoroutine(loop, () -> {
                try {
                    client.send(CorRestClientRequest.get("http://no.such.name.test/"));
                    return null;
                } catch (CorRestClientException x) {
                    return x;
                }
            });
            assertEquals(CorRestClientException.Kind.RESOLVE, e.kind());
            assertEquals(List.of(0, 0), onLoop(loop, () -> List.of(client.openConnections(), loop.liveCoroutines())));
            assertEquals(CorRestClientException.Kind.RESOLVE, assertThrows(CorRestClientException.class,
                    () -> client.send(CorRestClientRequest.get("http://no.such.name.test/"))).kind());
        }
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> onLoop(loop, () -> resolver.resolve("some.name.test", 1000)));
        assertTrue(refused.getMessage().contains("a loop never blocks"), refused.getMessage());
    }
}
