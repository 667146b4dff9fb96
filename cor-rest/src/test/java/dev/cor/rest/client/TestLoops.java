package dev.cor.rest.client;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTask;

/** Test helpers: loops, code on a loop's thread, code as a coroutine of a loop. */
final class TestLoops {
    private TestLoops() {
    }

    static CorCoLoop start(String name, int cap) {
        return CorCoLoop.builder().name(name).coroutineCap(cap).build().start();
    }

    /** Runs {@code call} on the loop's thread, outside any coroutine, and returns its value. */
    static <T> T onLoop(CorCoLoop loop, Callable<T> call) throws Exception {
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
    static <T> CompletableFuture<T> coroutine(CorCoLoop loop, CorCoTask task) {
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
                f.completeExceptionally(new AssertionError("the loop refused the coroutine"));
            }
        });
        return f;
    }

    /** Runs {@code task} as a coroutine of the loop and returns what it returned (or throws what it threw). */
    static <T> T inCoroutine(CorCoLoop loop, CorCoTask task) throws Exception {
        return get(TestLoops.<T>coroutine(loop, task));
    }

    static <T> T get(CompletableFuture<T> f) throws Exception {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception x) {
                throw x;
            }
            throw e;
        }
    }

    static void stop(CorCoLoop loop) throws InterruptedException {
        loop.stop();
        if (!loop.awaitTermination(10, TimeUnit.SECONDS)) {
            throw new AssertionError(loop.name() + " did not end");
        }
    }
}
