package dev.cor.base;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The shared helper threads on which {@link CorCo#blocking} runs calls that block: daemon
 * threads named {@code cor-blocking-N}, at most 64, idle ones gone after 30 s. Any thread
 * submits; the pool's own threads consume.
 */
final class BlockingPool {
    private static final int MAX_THREADS = 64;

    private BlockingPool() {
    }

    static Executor shared() {
        return Holder.POOL;
    }

    private static final class Holder {
        static final ThreadPoolExecutor POOL = create();

        private static ThreadPoolExecutor create() {
            AtomicInteger n = new AtomicInteger();
            ThreadPoolExecutor pool = new ThreadPoolExecutor(MAX_THREADS, MAX_THREADS, 30, TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(), r -> {
                        Thread t = new Thread(r, "cor-blocking-" + n.getAndIncrement());
                        t.setDaemon(true);
                        return t;
                    });
            pool.allowCoreThreadTimeOut(true);
            return pool;
        }
    }
}
