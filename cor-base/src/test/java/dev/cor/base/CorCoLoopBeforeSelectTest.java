package dev.cor.base;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Tasks queued to run before the loop next selects: once per round, after its coroutines, never lost. */
class CorCoLoopBeforeSelectTest {
    private CorCoLoop loop;

    @BeforeEach
    void attach() {
        loop = CorCoLoop.builder().name("round-loop").build().attach();
    }

    @AfterEach
    void detach() {
        loop.stop();
        while (loop.runOnce(0)) {
            // until it has ended
        }
    }

    @Test
    void tasksQueuedInARoundRunOnceAfterEveryCoroutineTheRoundWoke() {
        List<String> log = new ArrayList<>();
        List<CorCo> parked = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            int n = i;
            parked.add(CorCo.start(() -> {
                CorCo.park(10_000);
                log.add("co-" + n);
                loop.beforeNextSelect(() -> {
                    log.add("task-" + n);
                    if (n == 2) {
                        loop.beforeNextSelect(() -> log.add("queued by task-2"));
                    }
                });
                return null;
            }));
        }
        loop.execute(() -> parked.forEach(CorCo::wake));
        assertTrue(loop.runOnce(0));
        assertEquals(List.of("co-0", "co-1", "co-2", "task-0", "task-1", "task-2", "queued by task-2"), log);
        assertTrue(loop.runOnce(0));
        assertEquals(7, log.size(), "each task ran once");
    }

    @Test
    void aTaskQueuedByATaskPastTheFirstSixteenStillRunsInTheSamePass() {
        List<Integer> ran = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            int n = i;
            loop.beforeNextSelect(() -> {
                ran.add(n);
                if (n == 15) {
                    loop.beforeNextSelect(() -> ran.add(16)); // the queue grows while it is run
                }
            });
        }
        assertTrue(loop.runOnce(0));
        assertEquals(17, ran.size(), String.valueOf(ran));
        assertEquals(16, ran.get(16));
    }

    @Test
    void aTaskQueuedBetweenRoundsRunsBeforeTheLoopWaits() {
        boolean[] ran = {false};
        loop.beforeNextSelect(() -> {
            ran[0] = true;
            loop.stop(); // a select that has not started yet returns at once
        });
        long t0 = System.nanoTime();
        assertFalse(loop.runOnce(30_000));
        assertTrue(ran[0]);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < 10_000, "the task ran before the 30 s wait, not after it: " + ms + " ms");
    }

    @Test
    void aTaskThatThrowsDoesNotKeepTheOthersFromRunning() {
        List<String> log = new ArrayList<>();
        loop.beforeNextSelect(() -> log.add("first"));
        loop.beforeNextSelect(() -> {
            throw new IllegalStateException("a broken task");
        });
        loop.beforeNextSelect(() -> log.add("third"));
        assertTrue(loop.runOnce(0));
        assertEquals(List.of("first", "third"), log);
    }

    @Test
    void tasksStillQueuedWhenTheLoopStopsRun() {
        boolean[] ran = {false};
        loop.beforeNextSelect(() -> ran[0] = true);
        loop.stop();
        assertFalse(loop.runOnce(0));
        assertTrue(ran[0], "queued work is not lost at stop");
    }

    @Test
    void onlyTheLoopThreadQueues() throws Exception {
        CompletableFuture<Throwable> other = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            try {
                loop.beforeNextSelect(() -> { });
                other.complete(null);
            } catch (Throwable t) {
                other.complete(t);
            }
        }).join();
        Throwable t = other.get(5, TimeUnit.SECONDS);
        assertTrue(t instanceof IllegalStateException && t.getMessage().contains("loop thread only"), String.valueOf(t));
        assertThrows(NullPointerException.class, () -> loop.beforeNextSelect(null));
    }
}
