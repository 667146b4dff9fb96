package dev.cor.ngsild.store.postgres;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;

/** Running a test's code as a coroutine of a loop, and ending the loop after what must run on it. */
final class LoopTesting {
    private LoopTesting() {
    }

    /** Runs {@code task} as a coroutine of {@code loop} and returns its result to the test's thread. */
    static <T> T onLoop(CorCoLoop loop, Callable<T> task) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> CorCo.start(() -> {
            try {
                f.complete(task.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
            return null;
        }));
        return f.get(60, TimeUnit.SECONDS);
    }

    /** Runs {@code last} on {@code loop} (a pool's close: loop-confined), then stops the loop and waits for it. */
    static void stop(CorCoLoop loop, Runnable last) throws Exception {
        try {
            onLoop(loop, () -> {
                last.run();
                return null;
            });
        } finally {
            loop.stop();
            loop.awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
