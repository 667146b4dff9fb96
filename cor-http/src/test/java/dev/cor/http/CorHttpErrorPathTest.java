package dev.cor.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LogCapture;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestWorkers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Every request gets one answer - or its connection closes - whatever fails on the way; nothing leaks. */
class CorHttpErrorPathTest {
    private final List<CorHttpServer> servers = new ArrayList<>();

    @AfterEach
    void stopAll() {
        for (CorHttpServer s : servers) {
            s.stop(1000);
        }
    }

    /**
     * {@code /bad-status?via=P} answers status 1000, {@code /informational?via=P} 103 as a final
     * answer, {@code /null-header?via=P} a header without a value; anything else 200.
     */
    private static final class Broken implements CorRestApplication {
        @Override
        public boolean canWait(CorRest r) {
            return !"inline".equals(r.queryParam("via"));
        }

        @Override
        public void handle(CorRest r) throws Exception {
            if (CorCo.current() != null) {
                CorCo.sleep(1); // a coroutine that waited: its answer leaves from the coroutine, not from onReady
            }
            switch (r.path()) {
                case "/bad-status" -> r.respond(1000, "text/plain", "x".getBytes(StandardCharsets.UTF_8));
                case "/informational" -> r.respond(103, null, null);
                case "/null-header" -> {
                    r.responseHeaders().add("X-Missing", null);
                    r.respond(200, "text/plain", "x".getBytes(StandardCharsets.UTF_8));
                }
                default -> r.respond(200, "text/plain", r.path().getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    private CorHttpServer server(Consumer<CorHttpServer.Builder> config) {
        CorHttpServer.Builder b = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).application(new Broken())
                .coroutineHook(r -> !"hop".equals(r.queryParam("via"))).workerThreads(2);
        config.accept(b);
        CorHttpServer s = b.build().start();
        servers.add(s);
        return s;
    }

    private static String get(String target) {
        return "GET " + target + " HTTP/1.1\r\nHost: t\r\n\r\n";
    }

    private static void awaitNoConnection(CorHttpServer s) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (s.connectionsOpen() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertEquals(0, s.connectionsOpen(), "connections left open");
    }

    @ParameterizedTest
    @ValueSource(strings = {"inline", "coroutine", "hop"})
    void aStatusOutsideTheRangeIsAnswered500OnThatPath(String via) throws Exception {
        CorHttpServer s = server(b -> { });
        try (RawHttp c = new RawHttp(s.port())) {
            RawHttp.Answer a = c.send(get("/bad-status?via=" + via)).read();
            assertEquals(500, a.status());
            assertTrue(a.text().contains("1000"), a.text());
            assertEquals("/ok", c.send(get("/ok?via=" + via)).read().text(), "the connection goes on");
        }
        awaitNoConnection(s);
    }

    @ParameterizedTest
    @CsvSource({"/null-header,inline", "/null-header,coroutine", "/null-header,hop", "/informational,inline",
        "/informational,coroutine", "/informational,hop"})
    void anAnswerWhoseHeadCannotBeWrittenBecomesA500AndAClose(String route, String via) throws Exception {
        CorHttpServer s = server(b -> { });
        try (RawHttp c = new RawHttp(s.port())) {
            RawHttp.Answer a = c.send(get(route + "?via=" + via)).read();
            assertEquals(500, a.status());
            assertEquals("close", a.fields().get("connection"));
            assertTrue(c.closedByServer(), "closed after the 500");
        }
        awaitNoConnection(s);
        try (RawHttp c = new RawHttp(s.port())) {
            assertEquals("/ok", c.send(get("/ok?via=" + via)).read().text(), "the server goes on");
        }
    }

    @Test
    void aHookThatThrowsForAPipelinedRequestPickedUpAfterACoroutinesAnswerClosesTheConnection() throws Exception {
        CorHttpServer s = server(b -> b.coroutineHook(r -> {
            if (r.path().equals("/hook-throws")) {
                throw new IllegalStateException("the hook failed");
            }
            return true;
        }));
        try (RawHttp c = new RawHttp(s.port())) {
            // The first answers from its coroutine; the second is then dispatched from the loop's inbox.
            c.send(get("/ok?via=coroutine") + get("/hook-throws?via=coroutine"));
            assertEquals("/ok", c.read().text());
            assertTrue(c.closedByServer(), "the connection is closed");
        }
        awaitNoConnection(s);
    }

    @Test
    void manyAnswersThatCannotBeWrittenLogOneStackTrace() throws Exception {
        try (LogCapture log = LogCapture.of(HttpConnection.class.getName())) {
            CorHttpServer s = server(b -> { });
            for (int i = 0; i < 20; i++) {
                try (RawHttp c = new RawHttp(s.port())) {
                    assertEquals(500, c.send(get("/null-header?via=inline")).read().status());
                }
            }
            assertEquals(1, log.withStackTraces().size(), "one stack trace for 20 answers that failed within the interval");
        }
    }

    @Test
    void aCoroutineHookThatThrowsClosesTheConnectionThroughItsOwnCloseAndTheServerGoesOn() throws Exception {
        CorHttpServer s = server(b -> b.coroutineHook(r -> {
            if (r.path().equals("/hook-throws")) {
                throw new IllegalStateException("the hook failed");
            }
            return true;
        }));
        for (int i = 0; i < 3; i++) {
            try (RawHttp c = new RawHttp(s.port())) {
                c.send(get("/hook-throws?via=coroutine"));
                assertTrue(c.closedByServer(), "the connection is closed");
            }
        }
        awaitNoConnection(s);
        assertEquals(0, s.connectionsPerLoop()[0], "the loop's table is empty");
        try (RawHttp c = new RawHttp(s.port())) {
            assertEquals("/ok", c.send(get("/ok?via=coroutine")).read().text(), "the server goes on");
        }
    }

    @Test
    void aHopRequestPastTheGraceGets503FromAFreshAnswerAndTheWorkersLaterWritesTouchNothing() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(1);
        AtomicReference<String> seen = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CorRestApplication late = new CorRestApplication() {
            @Override
            public boolean canWait(CorRest r) {
                return true;
            }

            @Override
            public void handle(CorRest r) throws Exception {
                started.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                    // What the worker finds of its own request once the server has answered 503 for it.
                    seen.set(r.status() + " " + r.responseHeaders().size() + " " + r.responseBody().length);
                    r.responseHeaders().add("X-Worker", "late");
                    r.respond(200, "text/plain", "late".getBytes(StandardCharsets.UTF_8));
                } catch (Throwable t) {
                    failure.set(t);
                    throw t;
                } finally {
                    finished.countDown();
                }
            }
        };
        try (CorRestWorkers pool = CorRestWorkers.create(2)) { // the test's: stop() does not interrupt its worker
            CorHttpServer s = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).application(late)
                    .workers(pool).stopGraceMs(200).build().start();
            try (RawHttp c = new RawHttp(s.port())) {
                c.send(get("/late"));
                assertTrue(started.await(10, TimeUnit.SECONDS), "the worker took the request");
                long t0 = System.nanoTime();
                s.stop();
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                RawHttp.Answer a = c.read();
                assertEquals(503, a.status());
                assertTrue(a.text().contains("stopped"), a.text());
                assertTrue(c.closedByServer(), "one answer, then the end");
                assertTrue(ms < 5000, "stop took " + ms + " ms");
                release.countDown();
                assertTrue(finished.await(10, TimeUnit.SECONDS));
                assertEquals(null, failure.get(), "the worker's writes failed");
                assertEquals("200 0 0", seen.get(), "the 503 was written into the worker's own request");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"inline", "coroutine", "hop"})
    void stopCalledByARequestOnThatPathReturnsAtOnceAndTheRequestIsAnsweredAndTheServerEnds(String via) throws Exception {
        AtomicReference<CorHttpServer> self = new AtomicReference<>();
        AtomicLong stopCallMs = new AtomicLong(-1);
        CorRestApplication stopper = new CorRestApplication() {
            @Override
            public boolean canWait(CorRest r) {
                return !via.equals("inline");
            }

            @Override
            public void handle(CorRest r) {
                long t0 = System.nanoTime();
                self.get().stop();
                stopCallMs.set(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                r.respond(200, "text/plain", "stopping".getBytes(StandardCharsets.UTF_8));
            }
        };
        CorHttpServer s = CorHttpServer.builder().host("127.0.0.1").port(0).loops(2).application(stopper)
                .coroutineHook(r -> via.equals("coroutine")).workerThreads(2).stopGraceMs(2000).build();
        self.set(s);
        s.start();
        try (RawHttp c = new RawHttp(s.port())) {
            RawHttp.Answer a = c.send(get("/stop")).read();
            assertEquals(200, a.status());
            assertEquals("stopping", a.text());
            assertTrue(c.closedByServer(), "closed by the stop");
        }
        assertTrue(stopCallMs.get() >= 0 && stopCallMs.get() < 1000, "stop() took " + stopCallMs.get() + " ms on the " + via + " path");
        for (CorCoLoop l : s.loops()) {
            assertTrue(l.awaitTermination(15, TimeUnit.SECONDS), l.name() + " ended");
        }
        assertEquals(via.equals("coroutine") ? 1 : 0, s.coroutineCount());
        assertEquals(via.equals("hop") ? 1 : 0, s.hopCount());
    }
}
