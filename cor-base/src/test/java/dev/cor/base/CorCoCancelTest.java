package dev.cor.base;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link CorCo#cancel}: a task cancelled while it waits - on a deadline, a park, a channel, a
 * blocking call - ends that wait at once with {@link CorCoCancelledException} carrying the
 * reason, its later waits are refused, the loop lives on, and a handle already reused by the
 * next task is left alone.
 */
class CorCoCancelTest {
    private final CorCoLoop loop = LoopTesting.start("cancel-loop", 64);

    @AfterEach
    void stop() throws Exception {
        LoopTesting.stop(loop);
    }

    /** Starts {@code task}, lets it reach its wait, cancels it, and returns how it ended. */
    private Throwable cancelWhileWaiting(CorCoTask task) throws Exception {
        AtomicReference<CorCo> co = new AtomicReference<>();
        CompletableFuture<Object> done = new CompletableFuture<>();
        LoopTesting.onLoop(loop, () -> {
            co.set(CorCo.start(task, c -> {
                if (c.error() != null) {
                    done.completeExceptionally(c.error());
                } else {
                    done.complete(c.result());
                }
            }));
            return null;
        });
        assertEquals(CorCo.State.SUSPENDED, LoopTesting.onLoop(loop, () -> co.get().state()));
        long t0 = System.nanoTime();
        assertTrue(LoopTesting.onLoop(loop, () -> co.get().cancel(co.get().taskId(), "the caller gave up")));
        ExecutionException e = assertThrows(ExecutionException.class, () -> done.get(10, TimeUnit.SECONDS));
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) < 5_000, "the wait ended at once, not at its deadline");
        return e.getCause();
    }

    @Test
    void aSleepIsCancelledAtOnceWithTheReason() throws Exception {
        Throwable t = cancelWhileWaiting(() -> {
            CorCo.sleep(30_000);
            return "slept";
        });
        assertInstanceOf(CorCoCancelledException.class, t);
        assertTrue(t.getMessage().contains("the caller gave up"), t.getMessage());
    }

    @Test
    void aParkAndEveryLaterWaitAreRefused() throws Exception {
        AtomicReference<Throwable> second = new AtomicReference<>();
        Throwable t = cancelWhileWaiting(() -> {
            try {
                CorCo.park(30_000);
            } catch (CorCoCancelledException first) {
                try {
                    CorCo.sleep(1); // a wait after the cancel: refused too
                } catch (CorCoCancelledException again) {
                    second.set(again);
                }
                throw first;
            }
            return "woken";
        });
        assertInstanceOf(CorCoCancelledException.class, t);
        assertInstanceOf(CorCoCancelledException.class, second.get(), "a later wait of the cancelled task");
    }

    @Test
    void aChannelWaitIsCancelledAndTheLoopServesTheNextTask() throws Exception {
        Pipe pipe = Pipe.open();
        try {
            pipe.source().configureBlocking(false);
            Throwable t = cancelWhileWaiting(() -> CorCo.waitFd(pipe.source(), SelectionKey.OP_READ, 30_000));
            assertInstanceOf(CorCoCancelledException.class, t);
            // the key was given back: another coroutine may wait on the same channel
            pipe.sink().write(java.nio.ByteBuffer.wrap(new byte[] {1}));
            assertEquals(SelectionKey.OP_READ, (int) LoopTesting.inCoroutine(loop,
                    () -> CorCo.waitFd(pipe.source(), SelectionKey.OP_READ, 5_000)));
        } finally {
            pipe.source().close();
            pipe.sink().close();
        }
    }

    @Test
    void aBlockingCallIsCancelled() throws Exception {
        Throwable t = cancelWhileWaiting(() -> CorCo.blocking(() -> {
            Thread.sleep(30_000);
            return "done";
        }, 60_000));
        assertInstanceOf(CorCoCancelledException.class, t);
    }

    @Test
    void aTaskThatEndedOrAHandleReusedByTheNextTaskIsLeftAlone() throws Exception {
        CorCo first = LoopTesting.onLoop(loop, () -> CorCo.start(() -> "quick"));
        long firstTask = LoopTesting.onLoop(loop, first::taskId);
        assertEquals(CorCo.State.DONE, LoopTesting.onLoop(loop, first::state));
        assertFalse(LoopTesting.onLoop(loop, () -> first.cancel(firstTask, "too late")), "a finished task");
        // The pool hands the same handle to the next task: cancelling the old task id touches nothing.
        CompletableFuture<Object> next = LoopTesting.coroutine(loop, () -> {
            CorCo.sleep(50);
            return "next ran";
        });
        LoopTesting.onLoop(loop, () -> first.cancel(firstTask, "stale"));
        assertEquals("next ran", LoopTesting.get(next));
    }
}
