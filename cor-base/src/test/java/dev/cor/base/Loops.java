package dev.cor.base;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** Test helpers: run code on a started loop's thread and wait for it. */
final class Loops {
    private Loops() {
    }

    static CorCoLoop started(CorCoLoop.Builder b) {
        return b.build().start();
    }

    /** Runs {@code call} on the loop's thread (not in a coroutine) and returns its value. */
    static <T> T onLoop(CorCoLoop loop, Callable<T> call) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> {
            try {
                f.complete(call.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return f.get(30, TimeUnit.SECONDS);
    }

    static void stop(CorCoLoop loop) throws InterruptedException {
        loop.stop();
        if (!loop.awaitTermination(10, TimeUnit.SECONDS)) {
            throw new AssertionError(loop.name() + " did not end");
        }
    }
}
