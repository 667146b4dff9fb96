package dev.cor.base.testing;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTask;
import dev.cor.base.LoopAccess;

/**
 * Test support for every module's tests (cor-base's test-jar): start a loop, run code on its
 * thread or as one of its coroutines and wait for the outcome, stop it. Any test thread.
 */
public final class LoopTesting {
    private LoopTesting() {
    }

    public static CorCoLoop start(String name, int cap) {
        return CorCoLoop.builder().name(name).coroutineCap(cap).build().start();
    }

    /** Runs {@code call} on the loop's thread, outside any coroutine, and returns its value (or throws what it threw). */
    public static <T> T onLoop(CorCoLoop loop, Callable<T> call) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> {
            try {
                f.complete(call.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return get(f);
    }

    /** Starts {@code task} as a coroutine of the loop; the future has what it returned or threw. */
    @SuppressWarnings("unchecked")
    public static <T> CompletableFuture<T> coroutine(CorCoLoop loop, CorCoTask task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> {
            CorCo co = CorCo.start(task, c -> {
                if (c.error() != null) {
                    f.completeExceptionally(c.error());
                } else {
                    f.complete((T) c.result());
                }
            });
            if (co == null) {
                f.completeExceptionally(new AssertionError("loop " + loop.name() + " refused the coroutine"));
            }
        });
        return f;
    }

    /** Runs {@code task} as a coroutine of the loop and returns what it returned (or throws what it threw). */
    public static <T> T inCoroutine(CorCoLoop loop, CorCoTask task) throws Exception {
        return get(LoopTesting.<T>coroutine(loop, task));
    }

    /** Waits up to 30 s for {@code f}; a failure is thrown as itself. */
    public static <T> T get(CompletableFuture<T> f) throws Exception {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception x) {
                throw x;
            }
            if (e.getCause() instanceof Error x) {
                throw x;
            }
            throw e;
        }
    }

    /**
     * Rebuilds the loop's selector now, as the epoll-spin remedy does (every registration moves
     * to a new selector, the old keys are cancelled), and returns once it has: for tests of code
     * that must not hold on to a key. Any test thread.
     */
    public static void rebuildSelector(CorCoLoop loop) throws Exception {
        onLoop(loop, () -> {
            LoopAccess.rebuildSelector(loop);
            return null;
        });
    }

    /** Stops the loop and waits (up to 10 s) until it has ended. */
    public static void stop(CorCoLoop loop) throws InterruptedException {
        loop.stop();
        if (!loop.awaitTermination(10, TimeUnit.SECONDS)) {
            throw new AssertionError(loop.name() + " did not end");
        }
    }
}
