package dev.cor.rest;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCoLoop;

/** Test helper: runs code on a started loop's thread and waits for its value. */
final class LoopThread {
    private LoopThread() {
    }

    static <T> T call(CorCoLoop loop, Callable<T> call) throws Exception {
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
