package dev.cor.base;

import static dev.cor.base.testing.LoopTesting.inCoroutine;
import static dev.cor.base.testing.LoopTesting.onLoop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link CorCo#await}: a coroutine parks until another thread completes the future, its loop
 * serving other coroutines meanwhile; the deadline releases it and leaves the future alone; a
 * plain thread blocks; a loop thread outside a coroutine is refused.
 */
class CorCoAwaitTest {
    private CorCoLoop loop;

    @BeforeEach
    void setUp() {
        loop = LoopTesting.start("await-loop", 64);
    }

    @AfterEach
    void tearDown() throws Exception {
        LoopTesting.stop(loop);
    }

    @Test
    void aCoroutineGetsTheValueAnotherThreadCompletesWhileItsLoopServesOthers() throws Exception {
        CompletableFuture<String> f = new CompletableFuture<>();
        CountDownLatch parked = new CountDownLatch(1);
        var waiter = LoopTesting.<String>coroutine(loop, () -> {
            parked.countDown();
            return CorCo.await(f, 30_000);
        });
        assertTrue(parked.await(10, TimeUnit.SECONDS));
        // the loop runs another coroutine to its end while the first one waits
        assertEquals("other", inCoroutine(loop, () -> "other"));
        assertFalse(waiter.isDone());
        f.complete("value");
        assertEquals("value", LoopTesting.get(waiter));
    }

    @Test
    void anExceptionalCompletionIsThrownAsItsCause() throws Exception {
        CompletableFuture<String> f = new CompletableFuture<>();
        IOException cause = new IOException("refused");
        var waiter = LoopTesting.<Object>coroutine(loop, () -> {
            try {
                return CorCo.await(f, 30_000);
            } catch (IOException e) {
                return e;
            }
        });
        new Thread(() -> f.completeExceptionally(cause)).start();
        assertSame(cause, LoopTesting.get(waiter));
    }

    @Test
    void theDeadlineReleasesTheCoroutineAndLeavesTheFutureAsItIs() throws Exception {
        CompletableFuture<String> f = new CompletableFuture<>();
        AtomicInteger ticks = new AtomicInteger();
        var ticker = LoopTesting.coroutine(loop, () -> {
            for (int i = 0; i < 5; i++) {
                CorCo.sleep(20);
                ticks.incrementAndGet();
            }
            return null;
        });
        CorCoTimeoutException e = inCoroutine(loop, () -> {
            long t0 = System.nanoTime();
            CorCoTimeoutException x = assertThrows(CorCoTimeoutException.class, () -> CorCo.await(f, 200));
            assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(200), "released before its deadline");
            return x;
        });
        assertTrue(e.getMessage().contains("200 ms"), e.getMessage());
        assertFalse(f.isDone(), "a waiter's deadline is not the future's");
        LoopTesting.get(ticker);
        assertEquals(5, ticks.get(), "the loop served the other coroutine meanwhile");
        f.complete("late"); // wakes nobody: the task that waited has ended
        assertEquals("after", inCoroutine(loop, () -> "after"));
    }

    @Test
    void aFutureDoneAlreadyGivesItsValueEvenWithADeadlineOfZero() throws Exception {
        assertEquals("now", inCoroutine(loop, () -> CorCo.await(CompletableFuture.completedFuture("now"), 0)));
        assertThrows(CorCoTimeoutException.class, () -> inCoroutine(loop, () -> CorCo.await(new CompletableFuture<>(), 0)));
    }

    @Test
    void aPlainThreadBlocksUntilTheValueOrTheDeadline() throws Exception {
        CompletableFuture<String> f = new CompletableFuture<>();
        new Thread(() -> f.complete("plain")).start();
        assertEquals("plain", CorCo.await(f, 30_000));
        assertThrows(CorCoTimeoutException.class, () -> CorCo.await(new CompletableFuture<>(), 50));
        assertThrows(IllegalArgumentException.class, () -> CorCo.await(new CompletableFuture<>(), -1));
    }

    @Test
    void aLoopThreadOutsideACoroutineIsRefused() throws Exception {
        IllegalStateException e = onLoop(loop, () -> assertThrows(IllegalStateException.class,
                () -> CorCo.await(new CompletableFuture<>(), 1_000)));
        assertTrue(e.getMessage().contains("a loop never blocks"), e.getMessage());
    }
}
