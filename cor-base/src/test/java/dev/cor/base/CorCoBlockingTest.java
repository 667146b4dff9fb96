package dev.cor.base;

import static dev.cor.base.testing.LoopTesting.inCoroutine;
import static dev.cor.base.testing.LoopTesting.onLoop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link CorCo#blocking(java.util.concurrent.Callable, long)} and its deadline: a hung call
 * releases its caller at the deadline and is interrupted; the coroutine and the loop go on.
 * Durations are checked only against bounds far from the deadline (a hung call here hangs for a
 * minute), never tightly.
 */
class CorCoBlockingTest {
    private static final long HUNG_MS = 60_000;

    private CorCoLoop loop;

    @BeforeEach
    void setUp() {
        loop = LoopTesting.start("blocking-loop", 64);
    }

    @AfterEach
    void tearDown() throws Exception {
        LoopTesting.stop(loop);
    }

    /** A call that hangs for a minute unless interrupted; says when it began and whether it was interrupted. */
    private static final class HungCall implements java.util.concurrent.Callable<String> {
        final CountDownLatch began = new CountDownLatch(1);
        final CountDownLatch interrupted = new CountDownLatch(1);
        final AtomicReference<Thread> thread = new AtomicReference<>();

        @Override
        public String call() {
            thread.set(Thread.currentThread());
            began.countDown();
            try {
                Thread.sleep(HUNG_MS);
                return "returned";
            } catch (InterruptedException e) {
                interrupted.countDown();
                return "interrupted";
            }
        }
    }

    @Test
    void aHungCallReleasesItsCoroutineAtTheDeadlineIsInterruptedAndTheCoroutineGoesOn() throws Exception {
        HungCall hung = new HungCall();
        AtomicInteger ticks = new AtomicInteger();
        var ticker = LoopTesting.coroutine(loop, () -> {
            for (int i = 0; i < 10; i++) {
                CorCo.sleep(20);
                ticks.incrementAndGet();
            }
            return null;
        });
        String outcome = inCoroutine(loop, () -> {
            long t0 = System.nanoTime();
            CorCoTimeoutException e = assertThrows(CorCoTimeoutException.class, () -> CorCo.blocking(hung, 300));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms >= 300, "released before its deadline: " + ms + " ms");
            assertTrue(ms < HUNG_MS / 2, "released only when the call ended: " + ms + " ms");
            assertTrue(e.getMessage().contains("300 ms"), e.getMessage());
            CorCo.sleep(1); // the coroutine goes on waiting like any other
            return "went on";
        });
        assertEquals("went on", outcome);
        assertTrue(hung.interrupted.await(10, TimeUnit.SECONDS), "the helper thread was not interrupted");
        assertFalse(hung.thread.get() == loop.thread());
        LoopTesting.get(ticker);
        assertEquals(10, ticks.get(), "the loop served its other coroutine meanwhile");
        assertEquals(List.of(0, "loop"), onLoop(loop, () -> List.of(loop.liveCoroutines(), "loop")));
    }

    @Test
    void aCallThatEndsAfterItsDeadlineDoesNotWakeItsCoroutineLater() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(1);
        Boolean wokenByTheLateCall = inCoroutine(loop, () -> {
            assertThrows(CorCoTimeoutException.class, () -> CorCo.blocking(() -> {
                // a call that ignores interrupts (as a name lookup does) and ends late
                boolean released = false;
                while (!released) {
                    try {
                        released = release.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException ignored) {
                        // not for this call
                    }
                }
                ended.countDown();
                return null;
            }, 100));
            release.countDown();
            // Parked: the late call's completion must not wake this park; only its timeout ends it.
            return CorCo.park(1_500);
        });
        assertTrue(ended.await(10, TimeUnit.SECONDS));
        assertFalse(wokenByTheLateCall, "the call that ended after its deadline woke an unrelated park");
    }

    @Test
    void aCallNotYetBegunAtItsDeadlineNeverRuns() throws Exception {
        // One helper thread, held by a hung call: the second call waits in the queue past its deadline.
        java.util.concurrent.ExecutorService one = java.util.concurrent.Executors.newSingleThreadExecutor();
        CorCoLoop l = CorCoLoop.builder().name("one-helper").blockingExecutor(one).build().start();
        try {
            HungCall hung = new HungCall();
            AtomicInteger ranLate = new AtomicInteger();
            var first = LoopTesting.coroutine(l, () -> CorCo.blocking(hung, 1_000));
            assertTrue(hung.began.await(10, TimeUnit.SECONDS));
            Throwable second = assertThrows(CorCoTimeoutException.class, () -> inCoroutine(l, () -> CorCo.blocking(() -> {
                ranLate.incrementAndGet();
                return null;
            }, 100)));
            assertInstanceOf(CorCoTimeoutException.class, assertThrows(Exception.class, () -> LoopTesting.get(first)));
            assertTrue(hung.interrupted.await(10, TimeUnit.SECONDS));
            // the queue moves on: the abandoned call is skipped, a fresh one runs
            assertEquals("fresh", inCoroutine(l, () -> CorCo.blocking(() -> "fresh", 10_000)));
            assertEquals(0, ranLate.get(), "a call abandoned before it began ran anyway: " + second);
        } finally {
            LoopTesting.stop(l);
            one.shutdownNow();
        }
    }

    @Test
    void aZeroDeadlineHasPassedAlreadyAndTheCallNeverRuns() throws Exception {
        AtomicInteger ran = new AtomicInteger();
        assertThrows(CorCoTimeoutException.class, () -> inCoroutine(loop, () -> CorCo.blocking(ran::incrementAndGet, 0)));
        assertThrows(CorCoTimeoutException.class, () -> CorCo.blocking(ran::incrementAndGet, 0));
        assertEquals(0, ran.get());
    }

    @Test
    void onAPlainThreadAHungCallReleasesTheThreadAtTheDeadlineAndIsInterrupted() throws Exception {
        HungCall hung = new HungCall();
        long t0 = System.nanoTime();
        assertThrows(CorCoTimeoutException.class, () -> CorCo.blocking(hung, 300));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms >= 300 && ms < HUNG_MS / 2, "released after " + ms + " ms");
        assertTrue(hung.interrupted.await(10, TimeUnit.SECONDS), "the helper thread was not interrupted");
        assertFalse(hung.thread.get() == Thread.currentThread(), "with a deadline the call runs on a helper thread");
    }

    @Test
    void onAPlainThreadAQuickCallReturnsAsSoonAsItIsDoneNotAtItsDeadline() throws Exception {
        long t0 = System.nanoTime();
        assertEquals("quick", CorCo.blocking(() -> "quick", HUNG_MS));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < HUNG_MS / 2, "the waiting thread was let go only at the deadline: " + ms + " ms");
    }

    @Test
    void aPlainThreadInterruptedWhileItWaitsGivesUpAndTheCallIsInterruptedToo() throws Exception {
        HungCall hung = new HungCall();
        java.util.concurrent.CompletableFuture<Throwable> outcome = new java.util.concurrent.CompletableFuture<>();
        Thread waiter = Thread.ofPlatform().start(() -> {
            try {
                CorCo.blocking(hung, HUNG_MS);
                outcome.complete(null);
            } catch (Throwable t) {
                outcome.complete(t);
            }
        });
        assertTrue(hung.began.await(10, TimeUnit.SECONDS));
        waiter.interrupt();
        assertInstanceOf(InterruptedException.class, outcome.get(10, TimeUnit.SECONDS));
        assertTrue(hung.interrupted.await(10, TimeUnit.SECONDS), "the call went on after its waiter gave up");
    }

    @Test
    void onAPlainThreadWithNoDeadlineTheCallRunsRightHere() throws Exception {
        Thread here = Thread.currentThread();
        assertSame(here, CorCo.blocking(Thread::currentThread, CorCo.NO_DEADLINE));
    }

    @Test
    void onAPlainThreadWhatTheCallThrewIsThrown() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> CorCo.blocking(() -> {
            throw new IllegalStateException("resolver down");
        }, 10_000));
        assertEquals("resolver down", e.getMessage());
    }

    @Test
    void onALoopThreadOutsideACoroutineABlockingCallIsRefused() throws Exception {
        AtomicInteger ran = new AtomicInteger();
        for (long timeout : new long[] {10_000, CorCo.NO_DEADLINE}) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> onLoop(loop, () -> CorCo.blocking(ran::incrementAndGet, timeout)));
            assertTrue(e.getMessage().contains("a loop never blocks"), e.getMessage());
        }
        assertEquals(0, ran.get());
    }
}
