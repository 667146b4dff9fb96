package dev.cor.base;

import static dev.cor.base.testing.LoopTesting.onLoop;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.cor.base.testing.LogCapture;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The scheduler on its own thread: channels, deadlines, the inbox, blocking, stop, the watchdog. */
class CorCoLoopTest {
    private final List<CorCoLoop> loops = new ArrayList<>();
    private final List<Pipe> pipes = new ArrayList<>();

    private CorCoLoop loop(CorCoLoop.Builder b) {
        CorCoLoop l = b.build().start();
        loops.add(l);
        return l;
    }

    private Pipe pipe() throws IOException {
        Pipe p = Pipe.open();
        p.source().configureBlocking(false);
        pipes.add(p);
        return p;
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (CorCoLoop l : loops) {
            LoopTesting.stop(l);
        }
        for (Pipe p : pipes) {
            p.source().close();
            p.sink().close();
        }
    }

    @Test
    void hundredThousandCoroutinesSuspendedAtOnceOnDeadlinesAllFinish() throws Exception {
        int n = 100_000;
        CorCoLoop l = loop(CorCoLoop.builder().coroutineCap(n));
        AtomicInteger finished = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(n);
        CorCoListener done = co -> {
            if (co.error() == null) {
                finished.incrementAndGet();
            }
            all.countDown();
        };
        int liveAfterStarting = onLoop(l, () -> {
            for (int i = 0; i < n; i++) {
                long ms = 300 + (i % 200);
                if (CorCo.start(() -> {
                    CorCo.sleep(ms);
                    return null;
                }, done) == null) {
                    throw new AssertionError("start " + i + " refused");
                }
            }
            return l.liveCoroutines();
        });
        assertEquals(n, liveAfterStarting, "all suspended at once");
        assertTrue(all.await(60, TimeUnit.SECONDS), "finished " + finished.get());
        assertEquals(n, finished.get());
        assertEquals(0, (int) onLoop(l, l::liveCoroutines));
    }

    @Test
    void thousandCoroutinesOnTheirOwnPipesResumeWithTheRightOpsInRandomOrder() throws Exception {
        int n = 1000;
        CorCoLoop l = loop(CorCoLoop.builder());
        List<Pipe> ps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ps.add(pipe());
        }
        AtomicIntegerArray got = new AtomicIntegerArray(n);
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        CountDownLatch waiting = new CountDownLatch(1);
        CountDownLatch all = new CountDownLatch(n);
        onLoop(l, () -> {
            for (int i = 0; i < n; i++) {
                int me = i;
                Pipe.SourceChannel src = ps.get(i).source();
                CorCo.start(() -> {
                    int ops = CorCo.waitFd(src, SelectionKey.OP_READ, 30_000);
                    ByteBuffer b = ByteBuffer.allocate(4);
                    int r = src.read(b);
                    if (ops != SelectionKey.OP_READ || r != 4 || b.getInt(0) != me) {
                        wrong.add(me + ": ops " + ops + " read " + r);
                    }
                    got.incrementAndGet(me);
                    return null;
                }, co -> all.countDown());
            }
            waiting.countDown();
            return null;
        });
        waiting.await();
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            order.add(i);
        }
        Collections.shuffle(order, new java.util.Random(7));
        Thread writer = Thread.ofPlatform().name("writer").start(() -> {
            try {
                for (int i : order) {
                    ByteBuffer b = ByteBuffer.allocate(4).putInt(0, i);
                    ps.get(i).sink().write(b);
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        writer.join();
        assertTrue(all.await(30, TimeUnit.SECONDS), "resumed " + (n - all.getCount()));
        assertTrue(wrong.isEmpty(), wrong.toString());
        for (int i = 0; i < n; i++) {
            assertEquals(1, got.get(i), "coroutine " + i + " resumed once");
        }
    }

    @Test
    void aWaitThatTimesOutSaysSo() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        Pipe p = pipe();
        AtomicReference<Object> outcome = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        long t0 = System.nanoTime();
        onLoop(l, () -> CorCo.start(() -> CorCo.waitFd(p.source(), SelectionKey.OP_READ, 100),
                co -> {
                    outcome.set(co.error() != null ? co.error() : co.result());
                    done.countDown();
                }));
        assertTrue(done.await(10, TimeUnit.SECONDS));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(0, outcome.get(), "0 ready ops: the timeout");
        assertTrue(ms >= 100, "returned after " + ms + " ms");
        SelectionKey key = onLoop(l, () -> l.keyFor(p.source()));
        assertNotNull(key, "the channel stays registered");
        assertEquals(0, (int) onLoop(l, key::interestOps), "disarmed, not cancelled");
    }

    @Test
    void inboxUnderContentionLosesNoneAndRunsEachOnce() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        int threads = 4;
        int perThread = 250_000;
        AtomicIntegerArray runs = new AtomicIntegerArray(threads * perThread);
        CountDownLatch all = new CountDownLatch(threads * perThread);
        Thread loopThread = l.thread();
        AtomicInteger offLoop = new AtomicInteger();
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int base = t * perThread;
            producers.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < perThread; i++) {
                    int id = base + i;
                    l.execute(() -> {
                        if (Thread.currentThread() != loopThread) {
                            offLoop.incrementAndGet();
                        }
                        runs.incrementAndGet(id);
                        all.countDown();
                    });
                }
            }));
        }
        for (Thread t : producers) {
            t.join();
        }
        assertTrue(all.await(60, TimeUnit.SECONDS), "ran " + (threads * perThread - all.getCount()));
        assertEquals(0, offLoop.get());
        for (int i = 0; i < runs.length(); i++) {
            if (runs.get(i) != 1) {
                throw new AssertionError("task " + i + " ran " + runs.get(i) + " times");
            }
        }
    }

    @Test
    void tasksHandedToAStoppingLoopEachRunOrAreRejectedToTheirCallerAndNoneIsLost() throws Exception {
        // Producers hand tasks over without pause while the loop stops: each task either runs or
        // its execute throws; a task accepted and never run is lost (an accepted channel leaks).
        int threads = 4;
        for (int round = 0; round < 30; round++) {
            CorCoLoop l = CorCoLoop.builder().name("stopping-" + round).build().start();
            AtomicLong ran = new AtomicLong();
            AtomicLong accepted = new AtomicLong();
            AtomicLong rejected = new AtomicLong();
            Runnable task = ran::incrementAndGet;
            List<Thread> producers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                producers.add(Thread.ofPlatform().start(() -> {
                    while (true) {
                        try {
                            l.execute(task);
                            accepted.incrementAndGet();
                        } catch (RejectedExecutionException e) {
                            rejected.incrementAndGet();
                            return; // rejected once the loop has ended: every later one would be too
                        }
                    }
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ran.get() < 1_000 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            l.stop();
            assertTrue(l.awaitTermination(10, TimeUnit.SECONDS), "the loop ended");
            for (Thread t : producers) {
                t.join(10_000);
                assertTrue(!t.isAlive(), "a producer was never rejected");
            }
            assertEquals(threads, rejected.get());
            assertEquals(accepted.get(), ran.get(), "round " + round + ": tasks accepted and never run");
        }
    }

    @Test
    void aStreamOfTasksFromOtherThreadsIsNotMistakenForTheEpollSpin() throws Exception {
        // Rounds that find tasks waiting select without waiting: an empty answer there is no spin.
        CorCoLoop l = loop(CorCoLoop.builder().selectorSpinThreshold(4));
        int perThread = 200_000;
        CountDownLatch all = new CountDownLatch(2 * perThread);
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            producers.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < perThread; i++) {
                    l.execute(all::countDown);
                }
            }));
        }
        for (Thread t : producers) {
            t.join();
        }
        assertTrue(all.await(60, TimeUnit.SECONDS));
        assertEquals(0, l.selectorRebuilds(), "selector rebuilt for a busy inbox");
    }

    @Test
    void blockingRunsOffTheLoopWhileTheLoopServesOtherCoroutines() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger ticks = new AtomicInteger();
        AtomicReference<Object> blockingOutcome = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        onLoop(l, () -> {
            CorCo.start(() -> CorCo.blocking(() -> {
                release.await();
                return Thread.currentThread().getName();
            }, 30_000), co -> {
                blockingOutcome.set(co.error() != null ? co.error() : co.result());
                done.countDown();
            });
            CorCo.start(() -> {
                for (int i = 0; i < 20; i++) {
                    CorCo.sleep(5);
                    ticks.incrementAndGet();
                }
                return null;
            });
            return null;
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ticks.get() < 20 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(20, ticks.get(), "the loop went on while the blocking call blocked");
        assertEquals(1, done.getCount(), "the blocking call is still waiting");
        release.countDown();
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertInstanceOf(String.class, blockingOutcome.get());
        String ranOn = (String) blockingOutcome.get();
        assertTrue(ranOn.startsWith("cor-blocking-"), ranOn);
        assertNotEquals(l.name(), ranOn);
    }

    @Test
    void blockingReportsWhatTheCallThrew() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        AtomicReference<Throwable> err = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        onLoop(l, () -> CorCo.start(() -> CorCo.blocking(() -> {
            throw new IOException("resolver down");
        }, 10_000), co -> {
            err.set(co.error());
            done.countDown();
        }));
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertInstanceOf(IOException.class, err.get());
        assertEquals("resolver down", err.get().getMessage());
    }

    @Test
    void stopWithThousandSuspendedCoroutinesEndsPromptlyAndEachSeesTheCancellation() throws Exception {
        CorCoLoop l = CorCoLoop.builder().build().start();
        int n = 1000;
        Pipe p = pipe();
        List<Pipe> own = new ArrayList<>();
        for (int i = 0; i < n / 4; i++) {
            own.add(pipe());
        }
        AtomicInteger sawCancel = new AtomicInteger();
        AtomicInteger ended = new AtomicInteger();
        AtomicInteger begun = new AtomicInteger();
        AtomicInteger interrupted = new AtomicInteger();
        CountDownLatch started = new CountDownLatch(1);
        onLoop(l, () -> {
            for (int i = 0; i < n; i++) {
                int kind = i % 4;
                Pipe.SourceChannel src = own.get(i / 4).source();
                CorCo.start(() -> {
                    try {
                        switch (kind) {
                            case 0 -> CorCo.sleep(60_000);
                            case 1 -> CorCo.park(60_000);
                            case 2 -> CorCo.waitFd(src, SelectionKey.OP_READ, 60_000);
                            default -> CorCo.blocking(() -> {
                                begun.incrementAndGet();
                                try {
                                    Thread.sleep(60_000);
                                } catch (InterruptedException e) {
                                    interrupted.incrementAndGet();
                                }
                                return null;
                            }, CorCo.NO_DEADLINE);
                        }
                    } catch (CorCoCancelledException e) {
                        sawCancel.incrementAndGet();
                        throw e;
                    }
                    return null;
                }, co -> ended.incrementAndGet());
            }
            started.countDown();
            return null;
        });
        started.await();
        assertEquals(n, (int) onLoop(l, l::liveCoroutines));
        long t0 = System.nanoTime();
        l.stop();
        assertTrue(l.awaitTermination(5, TimeUnit.SECONDS), "the loop ended");
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < 2000, "stop took " + ms + " ms");
        assertEquals(n, sawCancel.get());
        assertEquals(n, ended.get());
        assertEquals(0, l.liveCoroutines());
        assertTrue(p.source().isOpen());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (interrupted.get() < begun.get() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(begun.get() > 0);
        assertEquals(begun.get(), interrupted.get(), "every blocking call of a cancelled coroutine was interrupted");
        Thread.sleep(50);
        assertEquals(interrupted.get(), begun.get(), "and the queued ones never began");
    }

    @Test
    void stopWakesAnIdleLoopAtOnce() throws Exception {
        CorCoLoop l = CorCoLoop.builder().build().start();
        onLoop(l, () -> null);
        long t0 = System.nanoTime();
        l.stop();
        assertTrue(l.awaitTermination(5, TimeUnit.SECONDS));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < 500, "an idle loop took " + ms + " ms to stop");
    }

    @Test
    void untaggedKeysGoToTheHandlerTheOwnerRegistered() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        Pipe p = pipe();
        ByteBuffer got = ByteBuffer.allocate(3);
        CountDownLatch read = new CountDownLatch(1);
        AtomicReference<Thread> handlerThread = new AtomicReference<>();
        onLoop(l, () -> l.register(p.source(), SelectionKey.OP_READ, key -> {
            handlerThread.set(Thread.currentThread());
            p.source().read(got);
            if (!got.hasRemaining()) {
                key.interestOps(0);
                read.countDown();
            }
        }));
        p.sink().write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        assertTrue(read.await(10, TimeUnit.SECONDS));
        assertEquals(l.thread(), handlerThread.get());
        assertArrayEquals(new byte[] {1, 2, 3}, got.array());
    }

    @Test
    void aCoroutineWaitOnAHandlersChannelGivesTheChannelBackAfter() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        Pipe p = pipe();
        AtomicInteger handlerCalls = new AtomicInteger();
        CorCoLoopHandler handler = key -> {
            handlerCalls.incrementAndGet();
            key.interestOps(0);
        };
        CountDownLatch coDone = new CountDownLatch(1);
        AtomicInteger coOps = new AtomicInteger(-1);
        onLoop(l, () -> {
            l.register(p.source(), 0, handler);
            CorCo.start(() -> CorCo.waitFd(p.source(), SelectionKey.OP_READ, 10_000),
                    co -> {
                        coOps.set((Integer) co.result());
                        coDone.countDown();
                    });
            return null;
        });
        p.sink().write(ByteBuffer.wrap(new byte[] {9}));
        assertTrue(coDone.await(10, TimeUnit.SECONDS));
        assertEquals(SelectionKey.OP_READ, coOps.get());
        assertEquals(0, handlerCalls.get(), "the coroutine had the channel");
        SelectionKey key = onLoop(l, () -> l.keyFor(p.source()));
        assertEquals(handler, onLoop(l, key::attachment));
        onLoop(l, () -> key.interestOps(SelectionKey.OP_READ));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (handlerCalls.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(1, handlerCalls.get(), "the handler has its channel back");
    }

    @Test
    void twoCoroutinesCannotWaitOnOneChannelAtOnce() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        Pipe p = pipe();
        AtomicReference<Throwable> second = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        onLoop(l, () -> {
            CorCo.start(() -> CorCo.waitFd(p.source(), SelectionKey.OP_READ, 200));
            CorCo.start(() -> CorCo.waitFd(p.source(), SelectionKey.OP_READ, 200), co -> {
                second.set(co.error());
                done.countDown();
            });
            return null;
        });
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, second.get());
    }

    @Test
    void parkAndWakeBetweenCoroutinesOfOneLoop() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        int rounds = 10_000;
        AtomicInteger pongs = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(2);
        AtomicReference<CorCo> pingRef = new AtomicReference<>();
        AtomicReference<CorCo> pongRef = new AtomicReference<>();
        int[] ball = {0};
        onLoop(l, () -> {
            pongRef.set(CorCo.create(() -> {
                while (ball[0] < 2 * rounds) {
                    if (ball[0] % 2 == 1) {
                        ball[0]++;
                        pongs.incrementAndGet();
                        pingRef.get().wake();
                    }
                    CorCo.park(10_000);
                }
                return null;
            }, co -> done.countDown()));
            pingRef.set(CorCo.create(() -> {
                while (ball[0] < 2 * rounds) {
                    if (ball[0] % 2 == 0) {
                        ball[0]++;
                        pongRef.get().wake();
                    }
                    if (ball[0] < 2 * rounds) {
                        CorCo.park(10_000);
                    }
                }
                pongRef.get().wake();
                return null;
            }, co -> done.countDown()));
            pongRef.get().resume();
            pingRef.get().resume();
            return null;
        });
        assertTrue(done.await(30, TimeUnit.SECONDS), "ball at " + ball[0]);
        assertEquals(rounds, pongs.get());
    }

    @Test
    void aWakeFromAnotherThreadResumesAParkedCoroutine() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Object> woken = new AtomicReference<>();
        CorCo co = onLoop(l, () -> CorCo.start(() -> CorCo.park(10_000), c -> {
            woken.set(c.result());
            done.countDown();
        }));
        co.wake();
        assertTrue(done.await(5, TimeUnit.SECONDS));
        assertEquals(true, woken.get());
    }

    @Test
    void timersRunAfterTheirDelayAndCancelledOnesDoNot() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        ConcurrentLinkedQueue<String> fired = new ConcurrentLinkedQueue<>();
        CountDownLatch last = new CountDownLatch(1);
        long t0 = System.nanoTime();
        onLoop(l, () -> {
            l.schedule(50, () -> fired.add("50"));
            CorCoTimer cancelled = l.schedule(60, () -> fired.add("cancelled"));
            l.schedule(20, () -> fired.add("20"));
            l.schedule(100, () -> {
                fired.add("100");
                last.countDown();
            });
            cancelled.cancel();
            return null;
        });
        assertTrue(last.await(10, TimeUnit.SECONDS));
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(100));
        assertEquals(List.of("20", "50", "100"), List.copyOf(fired));
        CountDownLatch fresh = new CountDownLatch(1);
        CorCoTimer[] timers = onLoop(l, () -> new CorCoTimer[] {l.schedule(0, fresh::countDown), l.schedule(60_000, () -> { })});
        assertTrue(fresh.await(10, TimeUnit.SECONDS));
        assertEquals(List.of(false, true, false), onLoop(l, () -> {
            boolean beforeCancel = timers[1].pending();
            timers[1].cancel();
            return List.of(timers[0].pending(), beforeCancel, timers[1].pending());
        }), "pending: the fired one, the waiting one, the same once cancelled");
    }

    @Test
    void aTimerPendingWhenItsLoopStopsRunsItsStopActionInsteadAndOnlyIt() throws Exception {
        CorCoLoop l = CorCoLoop.builder().name("timers-at-stop").build().start();
        ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();
        CountDownLatch firedEarly = new CountDownLatch(1);
        onLoop(l, () -> {
            Thread loopThread = Thread.currentThread();
            l.schedule(60_000, () -> seen.add("pending fired"), () -> {
                seen.add("pending stopped" + (Thread.currentThread() == loopThread ? "" : " off the loop"));
                // a stop action that schedules another timer: that one is told too
                l.schedule(60_000, () -> seen.add("late fired"), () -> seen.add("late stopped"));
            });
            l.schedule(60_000, () -> seen.add("plain fired"));
            l.schedule(0, () -> {
                seen.add("early fired");
                firedEarly.countDown();
            }, () -> seen.add("early stopped"));
            l.schedule(60_000, () -> seen.add("cancelled fired"), () -> seen.add("cancelled stopped")).cancel();
            return null;
        });
        assertTrue(firedEarly.await(10, TimeUnit.SECONDS));
        LoopTesting.stop(l);
        List<String> got = new ArrayList<>(seen);
        Collections.sort(got);
        assertEquals(List.of("early fired", "late stopped", "pending stopped"), got);
    }

    @Test
    void aSelectThatKeepsReturningEmptyIsTakenForTheEpollSpinAndTheSelectorIsRebuiltByItself() throws Exception {
        // An honest premature return: OP_CONNECT armed on a socket that is already connected. epoll
        // (level-triggered) reports it writable on every select, and the JDK, seeing no connection
        // pending, reports no key ready: select returns at once with nothing, round after round.
        CorCoLoop l = loop(CorCoLoop.builder().name("spinning").selectorSpinThreshold(64));
        try (java.nio.channels.ServerSocketChannel server = java.nio.channels.ServerSocketChannel.open();
                java.nio.channels.SocketChannel client = java.nio.channels.SocketChannel.open()) {
            server.bind(new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0));
            client.connect(server.getLocalAddress());
            try (java.nio.channels.SocketChannel accepted = server.accept()) {
                client.configureBlocking(false);
                AtomicInteger handled = new AtomicInteger();
                SelectionKey key = onLoop(l, () -> l.register(client, SelectionKey.OP_CONNECT, k -> handled.incrementAndGet()));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (l.selectorRebuilds() == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                assertTrue(l.selectorRebuilds() > 0, "64 empty selects in a row never rebuilt the selector");
                assertEquals(0, handled.get(), "the handler was called: select did return a key");
                // the loop still serves, its channel carried over to the new selector
                assertEquals(SelectionKey.OP_CONNECT, (int) onLoop(l, () -> {
                    SelectionKey now = l.keyFor(client);
                    int ops = now.interestOps();
                    now.cancel(); // end the spin
                    return ops;
                }));
                assertTrue(!key.isValid(), "the old key was left registered");
            }
        }
    }

    @Test
    void deadlineWaitsThatTimeOutAreNotMistakenForTheEpollSpin() throws Exception {
        // A select that waited its whole timeout returns empty, as a spinning one does: only the
        // time it took tells them apart.
        CorCoLoop l = loop(CorCoLoop.builder().selectorSpinThreshold(4));
        String done = LoopTesting.inCoroutine(l, () -> {
            for (int i = 0; i < 100; i++) {
                CorCo.sleep(3);
            }
            return "slept";
        });
        assertEquals("slept", done);
        assertEquals(0, l.selectorRebuilds(), "selector rebuilt for selects that timed out as asked");
    }

    @Test
    void aRebuildClosesTheSelectorItReplaces() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        java.nio.file.Path fds = java.nio.file.Path.of("/proc/self/fd");
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isDirectory(fds), "counts descriptors through /proc");
        onLoop(l, () -> {
            l.rebuildSelector(); // the first: whatever one selector costs is counted in before
            return null;
        });
        long before;
        try (var s = java.nio.file.Files.list(fds)) {
            before = s.count();
        }
        onLoop(l, () -> {
            for (int i = 0; i < 50; i++) {
                l.rebuildSelector();
            }
            return null;
        });
        long after;
        try (var s = java.nio.file.Files.list(fds)) {
            after = s.count();
        }
        assertEquals(51, l.selectorRebuilds());
        assertTrue(after - before < 20, "50 rebuilds left " + (after - before) + " more descriptors open");
    }

    @Test
    void aZeroTimeoutWaitHasPassedAlready() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        Pipe p = pipe();
        assertEquals(List.of(0, false), LoopTesting.inCoroutine(l, () -> List.of(
                CorCo.waitFd(p.source(), SelectionKey.OP_READ, 0), CorCo.park(0))));
    }

    @Test
    void theWatchdogStaysQuietForALoopThatKeepsComingBackToSelect() throws Exception {
        try (LogCapture log = LogCapture.of(CorCoLoop.class)) {
            CorCoLoop l = loop(CorCoLoop.builder().name("healthy").watchdogMs(150));
            // a second of short tasks and idle selects: busy often, never for long
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (System.nanoTime() < end) {
                onLoop(l, () -> {
                    long until = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(200);
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                    return null;
                });
                Thread.sleep(1);
            }
            Thread.sleep(300); // idle now: a watchdog that took idleness for a stall would say so
            assertEquals(List.of(), log.messages(java.util.logging.Level.ALL, "loop healthy has not come back to select"));
        }
    }

    @Test
    void aRebuiltSelectorKeepsItsWaitersAndHandlers() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        Pipe waited = pipe();
        Pipe handled = pipe();
        CountDownLatch both = new CountDownLatch(2);
        AtomicInteger coOps = new AtomicInteger();
        onLoop(l, () -> {
            CorCo.start(() -> CorCo.waitFd(waited.source(), SelectionKey.OP_READ, 10_000), co -> {
                coOps.set(co.result() == null ? -1 : (Integer) co.result());
                both.countDown();
            });
            l.register(handled.source(), SelectionKey.OP_READ, key -> {
                key.interestOps(0);
                both.countDown();
            });
            l.rebuildSelector();
            return null;
        });
        assertEquals(1, l.selectorRebuilds());
        waited.sink().write(ByteBuffer.wrap(new byte[] {1}));
        handled.sink().write(ByteBuffer.wrap(new byte[] {1}));
        assertTrue(both.await(10, TimeUnit.SECONDS));
        assertEquals(SelectionKey.OP_READ, coOps.get());
    }

    @Test
    void watchdogReportsABlockedLoopOnceWithItsStack() throws Exception {
        try (LogCapture log = LogCapture.of(CorCoLoop.class)) {
            CorCoLoop l = loop(CorCoLoop.builder().name("stalled").watchdogMs(150));
            onLoop(l, () -> {
                Thread.sleep(800); // what a loop must never do
                return null;
            });
            onLoop(l, () -> null);
            Thread.sleep(300); // idle in select now: nothing more to report
            List<String> stalls = log.messages(java.util.logging.Level.ALL, "loop stalled has not come back to select");
            assertEquals(1, stalls.size(), "reported once: " + stalls.size());
            assertTrue(stalls.get(0).contains("java.lang.Thread.sleep"), stalls.get(0));
        }
    }

    @Test
    void aLoopIsOnlyDrivenFromItsOwnThread() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        Pipe p = pipe();
        CorCoTimer timer = onLoop(l, () -> l.schedule(60_000, () -> { }));
        List<org.junit.jupiter.api.function.Executable> loopOnly = List.of(
                () -> l.register(p.source(), SelectionKey.OP_READ, key -> { }),
                () -> l.keyFor(p.source()),
                () -> l.schedule(1, () -> { }),
                () -> l.schedule(1, () -> { }, () -> { }),
                timer::cancel,
                () -> l.beforeNextSelect(() -> { }),
                () -> l.runOnce(0),
                l::rebuildSelector,
                () -> CorCo.create(() -> null, null));
        for (int i = 0; i < loopOnly.size(); i++) {
            IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    loopOnly.get(i), "call " + i + " from another thread");
            assertTrue(e.getMessage().contains("loop thread only") || e.getMessage().contains("not a loop thread"),
                    "call " + i + ": " + e.getMessage());
        }
        assertTrue(timer.pending(), "the refused cancel cancelled it");
        assertEquals(0, l.selectorRebuilds(), "the refused rebuild rebuilt");
        IllegalStateException again = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, l::attach);
        assertTrue(again.getMessage().contains("already has its thread"), again.getMessage());
        assertTrue(onLoop(l, l::inLoop));
        assertTrue(!l.inLoop());
    }

    @Test
    void aHandlerThatThrowsWithTheDefaultFailedHasItsChannelClosedAndTheLoopGoesOn() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        Pipe p = pipe();
        onLoop(l, () -> l.register(p.source(), SelectionKey.OP_READ, key -> {
            throw new IOException("bad peer");
        }));
        p.sink().write(ByteBuffer.wrap(new byte[] {1}));
        awaitClosed(p.source()); // the default failed(): a handler that holds nothing else
        assertEquals(7, (int) onLoop(l, () -> 7), "the loop still serves");
    }

    @Test
    void aHandlerThatThrowsHasItsOwnerCloseTheChannelAndTheLoopGoesOn() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        Pipe p = pipe();
        IOException boom = new IOException("bad peer");
        java.util.Set<Pipe.SourceChannel> table = java.util.concurrent.ConcurrentHashMap.newKeySet();
        AtomicReference<Throwable> seen = new AtomicReference<>();
        AtomicReference<Thread> seenOn = new AtomicReference<>();
        AtomicInteger failures = new AtomicInteger();
        CountDownLatch ownerClosed = new CountDownLatch(1);
        CorCoLoopHandler owner = new CorCoLoopHandler() {
            @Override
            public void onReady(SelectionKey key) throws IOException {
                throw boom;
            }

            @Override
            public void failed(SelectionKey key, Throwable failure) {
                failures.incrementAndGet();
                seen.set(failure);
                seenOn.set(Thread.currentThread());
                try {
                    key.channel().close(); // the owner's own close: channel and table entry together
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                table.remove(p.source());
                ownerClosed.countDown();
            }
        };
        table.add(p.source());
        onLoop(l, () -> l.register(p.source(), SelectionKey.OP_READ, owner));
        p.sink().write(ByteBuffer.wrap(new byte[] {1}));
        assertTrue(ownerClosed.await(10, TimeUnit.SECONDS), "the owner's failed() was not called");
        assertEquals(boom, seen.get(), "the owner sees what onReady threw");
        assertEquals(l.thread(), seenOn.get(), "on the loop's thread");
        assertTrue(table.isEmpty(), "the owner released what it held for the channel");
        assertTrue(!p.source().isOpen());
        assertEquals(7, (int) onLoop(l, () -> 7), "the loop still serves");
        assertEquals(1, failures.get(), "one failure, one call");
    }

    @Test
    void aHandlerWhoseFailedThrowsTooStillHasItsChannelClosed() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        Pipe p = pipe();
        AtomicInteger failures = new AtomicInteger();
        onLoop(l, () -> l.register(p.source(), SelectionKey.OP_READ, new CorCoLoopHandler() {
            @Override
            public void onReady(SelectionKey key) throws IOException {
                throw new IOException("bad peer");
            }

            @Override
            public void failed(SelectionKey key, Throwable failure) {
                failures.incrementAndGet();
                throw new IllegalStateException("owner's close broke too");
            }
        }));
        p.sink().write(ByteBuffer.wrap(new byte[] {1}));
        awaitClosed(p.source());
        assertEquals(1, failures.get());
        assertEquals(7, (int) onLoop(l, () -> 7), "the loop still serves");
    }

    private static void awaitClosed(java.nio.channels.Channel ch) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ch.isOpen()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the channel was still open after 10 s");
            }
            Thread.sleep(5);
        }
    }

    @Test
    void randomSleepsFinishInDeadlineOrder() throws Exception {
        CorCoLoop l = loop(CorCoLoop.builder());
        int n = 200;
        // Each deadline is the coroutine's own start plus its delay: record that, not the delay,
        // so a slow start on a loaded machine does not make a correct order look wrong.
        ConcurrentLinkedQueue<Long> woke = new ConcurrentLinkedQueue<>();
        CountDownLatch all = new CountDownLatch(n);
        int[] delays = ThreadLocalRandom.current().ints(n, 0, 40).map(d -> d * 5).toArray();
        onLoop(l, () -> {
            for (int i = 0; i < n; i++) {
                int d = delays[i];
                CorCo.start(() -> {
                    long due = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(d);
                    CorCo.sleep(d);
                    woke.add(due);
                    return null;
                }, co -> all.countDown());
            }
            return null;
        });
        assertTrue(all.await(10, TimeUnit.SECONDS));
        long prev = Long.MIN_VALUE;
        long slackNanos = TimeUnit.MILLISECONDS.toNanos(1); // deadlines are kept to the millisecond
        int i = 0;
        for (long due : woke) {
            i++;
            assertTrue(i == 1 || due >= prev - slackNanos, "woke out of deadline order at " + i + ": due " + (prev - due) / 1000 + " us before the one woken earlier");
            prev = Math.max(prev, due);
        }
    }
}
