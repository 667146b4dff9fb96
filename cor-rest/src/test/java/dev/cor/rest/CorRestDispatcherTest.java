package dev.cor.rest;

import static dev.cor.base.testing.LoopTesting.onLoop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LogCapture;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The dispatch decision and the post-response phase, on a real loop with real workers. */
class CorRestDispatcherTest {
    private final List<CorCoLoop> loops = new ArrayList<>();
    private final CorRestWorkers workers = CorRestWorkers.create(4);

    @AfterEach
    void tearDown() throws Exception {
        for (CorCoLoop l : loops) {
            LoopTesting.stop(l);
        }
        workers.close();
    }

    private CorCoLoop loop(int cap) {
        CorCoLoop l = CorCoLoop.builder().coroutineCap(cap).build().start();
        loops.add(l);
        return l;
    }

    /** Where the handler ran and what it saw; the answers received, in order. */
    private static class Probe implements CorRestApplication {
        final boolean canWait;
        final long sleepMs;
        final ConcurrentLinkedQueue<String> events = new ConcurrentLinkedQueue<>();
        volatile Thread handlerThread;
        volatile boolean handlerInCoroutine;
        volatile CorRest currentInHandler;

        Probe(boolean canWait, long sleepMs) {
            this.canWait = canWait;
            this.sleepMs = sleepMs;
        }

        @Override
        public boolean canWait(CorRest request) {
            return canWait;
        }

        @Override
        public void handle(CorRest request) throws Exception {
            handlerThread = Thread.currentThread();
            handlerInCoroutine = CorCo.current() != null;
            currentInHandler = CorRest.current();
            if (sleepMs > 0) {
                if (CorCo.current() != null) {
                    CorCo.sleep(sleepMs);
                } else {
                    Thread.sleep(sleepMs);
                }
            }
            events.add("handled " + request.path());
            request.respond(200, "text/plain", request.path().getBytes(StandardCharsets.UTF_8));
        }
    }

    private static final class Answers implements CorRestResponder {
        final ConcurrentLinkedQueue<String> got = new ConcurrentLinkedQueue<>();
        final CountDownLatch latch;
        volatile Thread thread;
        volatile boolean inCoroutine;

        Answers(int expected) {
            latch = new CountDownLatch(expected);
        }

        /** Every answer each request got: the threads it was given on, in order. */
        final Map<CorRest, List<Thread>> byRequest = Collections.synchronizedMap(new IdentityHashMap<>());

        @Override
        public void respond(CorRest request) {
            thread = Thread.currentThread();
            inCoroutine = CorCo.current() != null;
            byRequest.computeIfAbsent(request, r -> Collections.synchronizedList(new ArrayList<>())).add(Thread.currentThread());
            got.add(request.status() + " " + new String(request.responseBody(), StandardCharsets.UTF_8));
            latch.countDown();
        }

        void await() throws InterruptedException {
            assertTrue(latch.await(10, TimeUnit.SECONDS), "answers: " + got);
        }

        /**
         * Each request was answered exactly once, on its loop's thread. Call it once nothing more can
         * come: the workers idle ({@link CorRestWorkers#shutdown}) and the loop past what they handed it.
         */
        void assertEachAnsweredOnceOn(CorCoLoop loop, List<CorRest> requests) {
            for (CorRest r : requests) {
                List<Thread> threads = byRequest.get(r);
                assertNotNull(threads, r + " was never answered");
                assertEquals(1, threads.size(), r + " was answered " + threads.size() + " times");
                assertSame(loop.thread(), threads.get(0), r + " was answered on " + threads.get(0).getName());
            }
            assertEquals(requests.size(), byRequest.size(), "answers to requests never dispatched");
        }
    }

    /** Nothing more can be answered: the workers have finished, and the loop has run what they handed it. */
    private static void quiesce(CorCoLoop l, CorRestWorkers w) throws Exception {
        w.shutdown(10_000);
        assertEquals(0, (int) onLoop(l, l::liveCoroutines), "coroutines still running");
    }

    private CorRestDispatcher dispatcher(CorRestApplication app, CorRestCoroutineHook hook, CorRestFinishCoroutineHook finish) {
        return CorRestDispatcher.builder().application(app).coroutineHook(hook).finishCoroutineHook(finish)
                .workers(workers).build();
    }

    @Test
    void aRequestThatCannotWaitRunsInlineAndIsAnsweredBeforeDispatchReturns() throws Exception {
        CorCoLoop l = loop(16);
        Probe app = new Probe(false, 0);
        CorRestDispatcher d = dispatcher(app, r -> true, null);
        Answers answers = new Answers(1);
        CorRest req = CorRest.builder("GET", "/inline").build();
        String seen = onLoop(l, () -> d.dispatch(req, answers) + " answered=" + answers.got.size());
        assertEquals("INLINE answered=1", seen);
        assertSame(l.thread(), app.handlerThread);
        assertTrue(!app.handlerInCoroutine);
        assertSame(req, app.currentInHandler);
        assertEquals(List.of("200 /inline"), List.copyOf(answers.got));
        assertEquals(1, d.inlineCount());
    }

    @Test
    void aRequestThatCanWaitAndMayBeACoroutineIsAnsweredFromInsideItsCoroutine() throws Exception {
        CorCoLoop l = loop(16);
        Probe app = new Probe(true, 50);
        CorRestDispatcher d = dispatcher(app, r -> true, null);
        Answers answers = new Answers(1);
        CorRest req = CorRest.builder("GET", "/co").build();
        assertEquals(CorRestDispatcher.Path.COROUTINE, onLoop(l, () -> d.dispatch(req, answers)));
        answers.await();
        assertSame(l.thread(), app.handlerThread);
        assertTrue(app.handlerInCoroutine);
        assertSame(req, app.currentInHandler);
        assertSame(l.thread(), answers.thread);
        assertTrue(answers.inCoroutine, "answered from inside the coroutine, no inbox round trip");
        assertEquals(0, (int) onLoop(l, l::liveCoroutines));
    }

    @Test
    void keepAliveCoroutineThatNeverWaitsAnswersEachRequestExactlyOnceInOrder() throws Exception {
        CorCoLoop l = loop(16);
        Probe app = new Probe(true, 0);
        CorRestDispatcher d = dispatcher(app, r -> true, null);
        Answers answers = new Answers(3);
        onLoop(l, () -> {
            for (int i = 1; i <= 3; i++) {
                d.dispatch(CorRest.builder("PATCH", "/batch" + i).build(), answers);
            }
            return null;
        });
        answers.await();
        quiesce(l, workers); // a second answer would have come by now
        assertEquals(List.of("200 /batch1", "200 /batch2", "200 /batch3"), List.copyOf(answers.got));
        answers.assertEachAnsweredOnceOn(l, List.copyOf(answers.byRequest.keySet()));
        assertEquals(3, d.coroutineCount());
    }

    @Test
    void everyPathAnswersEachRequestExactlyOnceOnItsLoopThreadFailuresIncluded() throws Exception {
        CorCoLoop l = loop(16);
        CorRestApplication app = new CorRestApplication() {
            @Override
            public boolean canWait(CorRest request) {
                if (request.path().equals("/canwait-throws")) {
                    throw new IllegalStateException("canWait failed");
                }
                return !request.path().startsWith("/inline");
            }

            @Override
            public void handle(CorRest request) throws Exception {
                String p = request.path();
                if (p.contains("wait")) {
                    if (CorCo.current() != null) {
                        CorCo.sleep(20);
                    } else {
                        Thread.sleep(20);
                    }
                }
                if (p.contains("throws")) {
                    throw new IllegalStateException("handler failed on " + p);
                }
                request.respond(200, "text/plain", p.getBytes(StandardCharsets.UTF_8));
            }
        };
        // the hook sends /hop... to the workers, the rest that can wait becomes a coroutine
        CorRestDispatcher d = dispatcher(app, r -> !r.path().startsWith("/hop"), null);
        List<String> paths = List.of("/inline", "/inline-throws", "/canwait-throws", "/co", "/co-wait", "/co-throws",
                "/co-wait-throws", "/hop", "/hop-wait", "/hop-throws");
        List<CorRest> reqs = new ArrayList<>();
        for (String p : paths) {
            reqs.add(CorRest.builder("GET", p).build());
        }
        Answers answers = new Answers(reqs.size());
        List<CorRestDispatcher.Path> taken = onLoop(l, () -> {
            List<CorRestDispatcher.Path> t = new ArrayList<>();
            for (CorRest r : reqs) {
                t.add(d.dispatch(r, answers));
            }
            return t;
        });
        assertEquals(List.of(CorRestDispatcher.Path.INLINE, CorRestDispatcher.Path.INLINE, CorRestDispatcher.Path.INLINE,
                CorRestDispatcher.Path.COROUTINE, CorRestDispatcher.Path.COROUTINE, CorRestDispatcher.Path.COROUTINE,
                CorRestDispatcher.Path.COROUTINE, CorRestDispatcher.Path.HOP, CorRestDispatcher.Path.HOP,
                CorRestDispatcher.Path.HOP), taken);
        answers.await();
        quiesce(l, workers);
        answers.assertEachAnsweredOnceOn(l, reqs);
        for (CorRest r : reqs) {
            assertEquals(r.path().contains("throws") ? 500 : 200, r.status(), r.path());
        }
        assertEquals(List.of(3L, 4L, 3L, 0L), List.of(d.inlineCount(), d.coroutineCount(), d.hopCount(),
                d.finishInlineCount() + d.finishCoroutineCount() + d.finishHopCount()),
                "inline, coroutine, hop, and post-response phases (none was deferred)");
        assertNull(onLoop(l, CorRest::current), "the loop thread still holds a request it ran inline");
    }

    @Test
    void aRequestRefusedByFullWorkersIsAnswered503OnceOnItsLoopThread() throws Exception {
        CorCoLoop l = loop(16);
        try (FullWorkers full = new FullWorkers()) {
            CorRestDispatcher d = CorRestDispatcher.builder().application(new Probe(true, 0)).workers(full.pool).build();
            CorRest req = CorRest.builder("GET", "/refused").build();
            Answers answers = new Answers(1);
            assertEquals(CorRestDispatcher.Path.HOP, onLoop(l, () -> d.dispatch(req, answers)));
            answers.await();
            full.release.countDown();
            quiesce(l, full.pool);
            answers.assertEachAnsweredOnceOn(l, List.of(req));
            assertEquals(503, req.status());
            assertEquals(1, d.refusedCount());
        }
    }

    @Test
    void pastTheCapARequestTakesTheHopAndIsAnsweredOnItsLoop() throws Exception {
        CorCoLoop l = loop(1);
        Probe app = new Probe(true, 200);
        CorRestDispatcher d = dispatcher(app, r -> true, null);
        Answers answers = new Answers(2);
        List<CorRestDispatcher.Path> paths = onLoop(l, () -> List.of(
                d.dispatch(CorRest.builder("GET", "/first").build(), answers),
                d.dispatch(CorRest.builder("GET", "/second").build(), answers)));
        assertEquals(List.of(CorRestDispatcher.Path.COROUTINE, CorRestDispatcher.Path.HOP), paths);
        answers.await();
        quiesce(l, workers);
        assertEquals(2, answers.byRequest.size());
        answers.assertEachAnsweredOnceOn(l, List.copyOf(answers.byRequest.keySet()));
        assertEquals(1, d.hopCount());
        List<String> got = new ArrayList<>(answers.got);
        Collections.sort(got);
        assertEquals(List.of("200 /first", "200 /second"), got);
    }

    @Test
    void withNoHookEveryRequestThatCanWaitTakesTheHop() throws Exception {
        CorCoLoop l = loop(16);
        Probe app = new Probe(true, 10);
        CorRestDispatcher d = dispatcher(app, null, null);
        Answers answers = new Answers(1);
        CorRest req = CorRest.builder("GET", "/hop").build();
        assertEquals(CorRestDispatcher.Path.HOP, onLoop(l, () -> d.dispatch(req, answers)));
        answers.await();
        quiesce(l, workers);
        answers.assertEachAnsweredOnceOn(l, List.of(req));
        assertTrue(workers.isWorker(app.handlerThread), app.handlerThread.getName());
        assertTrue(!workers.isWorker(l.thread()), "the loop thread taken for a worker");
        assertTrue(!app.handlerInCoroutine);
        assertSame(req, app.currentInHandler, "on a worker the current request is the thread's");
        assertNull(CorRest.current());
    }

    @Test
    void aHookThatSaysNoSendsTheRequestToTheHop() throws Exception {
        CorCoLoop l = loop(16);
        Probe app = new Probe(true, 0);
        CorRestDispatcher d = dispatcher(app, r -> !r.path().equals("/blocking-store"), null);
        Answers answers = new Answers(2);
        List<CorRestDispatcher.Path> paths = onLoop(l, () -> List.of(
                d.dispatch(CorRest.builder("GET", "/memory-store").build(), answers),
                d.dispatch(CorRest.builder("GET", "/blocking-store").build(), answers)));
        assertEquals(List.of(CorRestDispatcher.Path.COROUTINE, CorRestDispatcher.Path.HOP), paths);
        answers.await();
    }

    @Test
    void hooksAreFoundThroughServiceLoaderAndAnExplicitHookWins() throws Exception {
        CorCoLoop l = loop(16);
        ConcurrentLinkedQueue<String> deferredIn = new ConcurrentLinkedQueue<>();
        Probe app = new Probe(true, 0) {
            @Override
            public void handle(CorRest request) throws Exception {
                request.defer(r -> deferredIn.add(r.path() + (CorCo.current() != null ? " in a coroutine" : " on a thread")));
                super.handle(request);
            }
        };
        // both found: the request and its post-response phase are coroutines
        CorRestDispatcher found = CorRestDispatcher.builder().application(app).workers(workers).discoverHooks().build();
        Answers answers = new Answers(2);
        assertEquals(CorRestDispatcher.Path.COROUTINE,
                onLoop(l, () -> found.dispatch(CorRest.builder("GET", "/found").build(), answers)));
        assertEquals(1, found.finishCoroutineCount(), "the finish hook was not found");
        // set explicitly (both say no): discovery does not replace them
        CorRestDispatcher explicit = CorRestDispatcher.builder().application(app).workers(workers)
                .coroutineHook(r -> false).finishCoroutineHook(r -> false).discoverHooks().build();
        assertEquals(CorRestDispatcher.Path.HOP,
                onLoop(l, () -> explicit.dispatch(CorRest.builder("GET", "/explicit").build(), answers)));
        answers.await();
        waitUntil(() -> deferredIn.size() == 2, "both post-response phases ran: " + deferredIn);
        assertEquals(1, explicit.finishHopCount());
        List<String> got = new ArrayList<>(deferredIn);
        Collections.sort(got);
        assertEquals(List.of("/explicit on a thread", "/found in a coroutine"), got);
    }

    @Test
    void errorsAreAnsweredAsProblemDetails() throws Exception {
        CorCoLoop l = loop(16);
        CorRestApplication app = new CorRestApplication() {
            @Override
            public boolean canWait(CorRest request) {
                return request.path().startsWith("/wait");
            }

            @Override
            public void handle(CorRest request) {
                if (request.path().endsWith("missing")) {
                    throw new CorRestException(404, "Not Found", "no entity " + request.path());
                }
                throw new IllegalStateException("bug");
            }
        };
        for (CorRestCoroutineHook hook : new CorRestCoroutineHook[] {null, r -> true}) {
            CorRestDispatcher d = dispatcher(app, hook, null);
            Answers answers = new Answers(4);
            List<CorRest> reqs = List.of(CorRest.builder("GET", "/missing").build(), CorRest.builder("GET", "/bug").build(),
                    CorRest.builder("GET", "/wait/missing").build(), CorRest.builder("GET", "/wait/bug").build());
            onLoop(l, () -> {
                for (CorRest r : reqs) {
                    d.dispatch(r, answers);
                }
                return null;
            });
            answers.await();
            for (CorRest r : reqs) {
                JsonNode p = CorRestJson.mapper().readTree(r.responseBody());
                boolean missing = r.path().endsWith("missing");
                assertEquals(missing ? 404 : 500, r.status(), r.path());
                assertEquals("application/problem+json", r.responseHeaders().get("Content-Type"));
                assertEquals(missing ? "Not Found" : "Internal Server Error", p.get("title").asText());
                assertEquals(r.status(), p.get("status").asInt());
                assertNotNull(p.get("type"));
                assertTrue(p.get("detail").asText().contains(missing ? "no entity" : "bug"), p.toString());
            }
        }
    }

    @Test
    void aStormOf500sLogsOneStackTraceAndAnswersEveryRequest() throws Exception {
        CorCoLoop l = loop(16);
        CorRestApplication failing = new CorRestApplication() {
            @Override
            public boolean canWait(CorRest request) {
                return request.path().startsWith("/wait");
            }

            @Override
            public void handle(CorRest request) {
                throw new IllegalStateException("broken " + request.path());
            }
        };
        try (LogCapture log = LogCapture.of(CorRestDispatcher.class.getName())) {
            CorRestDispatcher d = dispatcher(failing, r -> !r.path().endsWith("hop"), null);
            Answers answers = new Answers(60);
            onLoop(l, () -> {
                for (int i = 0; i < 20; i++) {
                    d.dispatch(CorRest.builder("GET", "/inline").build(), answers);
                    d.dispatch(CorRest.builder("GET", "/wait-co").build(), answers);
                    d.dispatch(CorRest.builder("GET", "/wait-hop").build(), answers);
                }
                return null;
            });
            answers.await();
            assertEquals(60, answers.got.stream().filter(a -> a.startsWith("500 ")).count(), "every one answered 500");
            List<java.util.logging.LogRecord> traces = log.withStackTraces();
            assertEquals(1, traces.size(), "one stack trace for 60 failures within the interval: " + log.records().size() + " records");
            assertTrue(traces.get(0).getThrown() instanceof IllegalStateException);
        }
    }

    @Test
    void theCurrentRequestFollowsItsCoroutineAcrossInterleavedYields() throws Exception {
        CorCoLoop l = loop(16);
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> order = new ConcurrentLinkedQueue<>();
        CorRestApplication app = new CorRestApplication() {
            @Override
            public boolean canWait(CorRest request) {
                return true;
            }

            @Override
            public void handle(CorRest request) {
                for (int i = 0; i < 5; i++) {
                    request.state().userData(request.path() + i);
                    CorCo.sleep(request.path().equals("/a") ? 3 : 4);
                    order.add(request.path());
                    CorRest cur = CorRest.current();
                    if (cur != request || !(request.path() + i).equals(cur.state().userData())) {
                        wrong.add(request.path() + " saw " + cur);
                    }
                }
                request.respond(204, null, null);
            }
        };
        CorRestDispatcher d = dispatcher(app, r -> true, null);
        Answers answers = new Answers(2);
        onLoop(l, () -> {
            d.dispatch(CorRest.builder("GET", "/a").build(), answers);
            d.dispatch(CorRest.builder("GET", "/b").build(), answers);
            return null;
        });
        answers.await();
        assertTrue(wrong.isEmpty(), wrong.toString());
        String seq = String.join("", order);
        assertTrue(seq.contains("/a/b") && seq.contains("/b/a"), "the two interleaved: " + seq);
    }

    @Test
    void thePostResponsePhaseRunsAfterTheAnswerOnThePathItsHookChose() throws Exception {
        CorCoLoop l = loop(16);
        record Seen(String path, boolean inCoroutine, boolean onWorker, Thread thread, CorRest current) { }
        ConcurrentLinkedQueue<String> events = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
        CountDownLatch deferredRan = new CountDownLatch(4);
        CorRestApplication app = new CorRestApplication() {
            @Override
            public boolean canWait(CorRest request) {
                return !request.path().startsWith("/inline");
            }

            @Override
            public void handle(CorRest request) {
                request.defer(r -> {
                    if (CorCo.current() != null) {
                        CorCo.sleep(20); // a notification that waits: only a coroutine may
                    }
                    events.add("deferred " + r.path());
                    seen.add(new Seen(r.path(), CorCo.current() != null, workers.isWorker(Thread.currentThread()),
                            Thread.currentThread(), CorRest.current()));
                    deferredRan.countDown();
                });
                request.respond(201, null, null);
            }

            @Override
            public boolean finishCanWait(CorRest request) {
                return !request.path().equals("/inline-finish");
            }
        };
        CorRestDispatcher d = dispatcher(app, r -> true, r -> !r.path().endsWith("worker-finish"));
        CorRestResponder responder = r -> events.add("answered " + r.path());
        onLoop(l, () -> {
            d.dispatch(CorRest.builder("POST", "/co-finish").build(), responder);
            d.dispatch(CorRest.builder("POST", "/worker-finish").build(), responder);
            d.dispatch(CorRest.builder("POST", "/inline-finish").build(), responder);
            d.dispatch(CorRest.builder("POST", "/inline-co-finish").build(), responder);
            return null;
        });
        assertTrue(deferredRan.await(10, TimeUnit.SECONDS));
        List<String> ev = List.copyOf(events);
        for (String p : List.of("/co-finish", "/worker-finish", "/inline-finish", "/inline-co-finish")) {
            assertTrue(ev.indexOf("answered " + p) >= 0 && ev.indexOf("answered " + p) < ev.indexOf("deferred " + p),
                    "after the answer: " + ev);
        }
        for (Seen s : seen) {
            switch (s.path()) {
                case "/co-finish", "/inline-co-finish" -> assertTrue(s.inCoroutine() && s.thread() == l.thread(), s.toString());
                case "/worker-finish" -> assertTrue(s.onWorker() && !s.inCoroutine(), s.toString());
                case "/inline-finish" -> assertTrue(!s.inCoroutine() && s.thread() == l.thread(), s.toString());
                default -> throw new AssertionError(s);
            }
            assertEquals(s.path(), s.current().path(), "the current request in the post-response phase");
        }
        assertEquals(2, d.finishCoroutineCount());
        assertEquals(1, d.finishHopCount());
        assertEquals(1, d.finishInlineCount());
    }

    @Test
    void aFullWorkerPoolAnswers503AndLosesNoPostResponseWork() throws Exception {
        CorCoLoop l = loop(0);
        CorRestWorkers tiny = CorRestWorkers.create("tiny", 1, 1);
        try {
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch firstRunning = new CountDownLatch(1);
            AtomicInteger deferred = new AtomicInteger();
            CorRestApplication app = new CorRestApplication() {
                @Override
                public boolean canWait(CorRest request) {
                    return true;
                }

                @Override
                public void handle(CorRest request) throws Exception {
                    firstRunning.countDown();
                    release.await();
                    request.defer(r -> deferred.incrementAndGet());
                    request.respond(200, "text/plain", request.path().getBytes(StandardCharsets.UTF_8));
                }
            };
            CorRestDispatcher d = CorRestDispatcher.builder().application(app).workers(tiny).build();
            Answers answers = new Answers(3);
            onLoop(l, () -> d.dispatch(CorRest.builder("GET", "/0").build(), answers));
            assertTrue(firstRunning.await(5, TimeUnit.SECONDS));
            onLoop(l, () -> {
                for (int i = 1; i < 3; i++) {
                    d.dispatch(CorRest.builder("GET", "/" + i).build(), answers);
                }
                return null;
            });
            assertEquals(1, d.refusedCount(), "one running, one queued, the third refused");
            release.countDown();
            answers.await();
            List<String> got = new ArrayList<>(answers.got);
            Collections.sort(got);
            assertEquals(List.of("200 /0", "200 /1"), got.subList(0, 2));
            assertTrue(got.get(2).startsWith("503 "), got.get(2));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (deferred.get() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(2, deferred.get(), "the post-response work of both answered requests ran");
        } finally {
            tiny.close();
        }
    }

    /** One worker, held with its one queue slot taken too, until {@link #release}: every submit is refused meanwhile. */
    private static final class FullWorkers implements AutoCloseable {
        final CorRestWorkers pool = CorRestWorkers.create("full", 1, 1);
        final CountDownLatch release = new CountDownLatch(1);

        FullWorkers() throws InterruptedException {
            CountDownLatch running = new CountDownLatch(1);
            assertTrue(pool.submit(() -> {
                running.countDown();
                awaitQuietly(release);
            }));
            assertTrue(running.await(10, TimeUnit.SECONDS));
            assertTrue(pool.submit(() -> awaitQuietly(release)));
            assertTrue(!pool.submit(() -> { }), "the pool is not full");
        }

        private static void awaitQuietly(CountDownLatch l) {
            try {
                l.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void close() {
            release.countDown();
            pool.close();
        }
    }

    /** Answers inline and defers work that may wait: with no finish hook it goes to the workers. */
    private static CorRestApplication deferring(ConcurrentLinkedQueue<String> ran) {
        return new CorRestApplication() {
            @Override
            public boolean canWait(CorRest request) {
                return false;
            }

            @Override
            public void handle(CorRest request) {
                request.defer(r -> ran.add(r.path()));
                request.respond(204, null, null);
            }
        };
    }

    private static void dispatchAll(CorCoLoop l, CorRestDispatcher d, String... paths) throws Exception {
        onLoop(l, () -> {
            for (String p : paths) {
                d.dispatch(CorRest.builder("POST", p).build(), r -> { });
            }
            return null;
        });
    }

    private static void waitUntil(java.util.function.BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 10 s: " + what);
            }
            Thread.sleep(5);
        }
    }

    @Test
    void postResponseWorkPastTheBacklogIsRefusedCountedAndLoggedOnceAndTheRestRunsWhenAWorkerFrees() throws Exception {
        CorCoLoop l = loop(16);
        ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
        try (FullWorkers full = new FullWorkers(); LogCapture log = LogCapture.of(CorRestDispatcher.class)) {
            CorRestDispatcher d = CorRestDispatcher.builder().application(deferring(ran)).workers(full.pool)
                    .finishBacklog(2, 60_000).build();
            dispatchAll(l, d, "/1", "/2", "/3", "/4", "/5");
            assertEquals(5, d.finishHopCount());
            assertEquals(2, d.finishWaitingCount(), "the backlog holds two");
            assertEquals(3, d.finishRefusedCount(), "the three past the backlog are refused at once");
            assertEquals(1, log.messages(Level.WARNING, "was dropped").size(), "three refusals, one log line: "
                    + log.messages(Level.ALL, ""));
            Thread.sleep(200); // twenty retries find the workers still full: the two keep waiting
            assertEquals(2, d.finishWaitingCount());
            assertEquals(3, d.finishRefusedCount());
            full.release.countDown();
            waitUntil(() -> ran.size() == 2, "the two waiting ran once a worker was free: " + ran);
            assertEquals(List.of("/1", "/2"), List.copyOf(ran), "in order, and none of the refused");
            waitUntil(() -> d.finishWaitingCount() == 0, "the backlog empties");
            assertEquals(3, d.finishRefusedCount());
        }
    }

    @Test
    void postResponseWorkIsRefusedAtItsDeadlineNotBeforeAndNeverRuns() throws Exception {
        CorCoLoop l = loop(16);
        ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
        try (FullWorkers full = new FullWorkers()) {
            CorRestDispatcher d = CorRestDispatcher.builder().application(deferring(ran)).workers(full.pool)
                    .finishBacklog(100, 3_000).build();
            long t0 = System.nanoTime();
            dispatchAll(l, d, "/late");
            Thread.sleep(200); // retries that find the workers full, well within its deadline
            assertEquals(List.of(1L, 0L), List.of((long) d.finishWaitingCount(), d.finishRefusedCount()),
                    "still waiting before its deadline");
            waitUntil(() -> d.finishRefusedCount() == 1, "refused after its 3 s");
            assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(3_000), "refused before its deadline");
            assertEquals(0, d.finishWaitingCount());
            full.release.countDown();
            // a worker is free now: new work runs at once, the refused one never
            dispatchAll(l, d, "/fresh");
            waitUntil(() -> ran.contains("/fresh"), "fresh work ran");
            assertEquals(List.of("/fresh"), List.copyOf(ran));
        }
    }

    @Test
    void newPostResponseWorkQueuesBehindTheWorkAlreadyWaitingEvenWhenAWorkerIsFree() throws Exception {
        CorCoLoop l = loop(16);
        ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
        try (FullWorkers full = new FullWorkers()) {
            CorRestDispatcher d = CorRestDispatcher.builder().application(deferring(ran)).workers(full.pool)
                    .finishBacklog(100, 60_000).build();
            dispatchAll(l, d, "/1", "/2");
            assertEquals(2, d.finishWaitingCount());
            onLoop(l, () -> {
                // Free the worker, and before the backlog's next retry can run (this task holds the
                // loop) send a third: it must not overtake the two waiting.
                full.release.countDown();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (full.pool.queued() > 0 && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                Thread.sleep(50); // the blocker running on the worker ends too
                d.dispatch(CorRest.builder("POST", "/3").build(), r -> { });
                return null;
            });
            waitUntil(() -> ran.size() == 3, "all three ran: " + ran);
            assertEquals(List.of("/1", "/2", "/3"), List.copyOf(ran), "in the order they came");
        }
    }

    @Test
    void aLoopThatStopsWithPostResponseWorkWaitingSaysHowManyAndNoneVanishesUncounted() throws Exception {
        CorCoLoop l = CorCoLoop.builder().name("finish-at-stop").build().start();
        ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
        try (FullWorkers full = new FullWorkers(); LogCapture log = LogCapture.of(CorRestDispatcher.class)) {
            CorRestDispatcher d = CorRestDispatcher.builder().application(deferring(ran)).workers(full.pool)
                    .finishBacklog(100, 60_000).build();
            dispatchAll(l, d, "/a", "/b", "/c");
            assertEquals(3, d.finishWaitingCount());
            LoopTesting.stop(l);
            assertEquals(0, d.finishWaitingCount());
            assertEquals(3, d.finishRefusedCount(), "the workers were still full: all three dropped, and counted");
            List<String> said = log.messages(Level.WARNING, "loop finish-at-stop stopped with 3 post-response phase(s) waiting");
            assertEquals(1, said.size(), log.messages(Level.ALL, "").toString());
            assertTrue(said.get(0).contains("3 dropped"), said.get(0));
        }
        assertTrue(ran.isEmpty(), ran.toString());
    }
}
