package dev.cor.rest;

import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The worker pool: the hop. A fixed number of named platform threads ({@code <name>-N}, default
 * 32) for requests that can wait but may not, or cannot, be coroutines. Any thread submits; the
 * workers consume. On a worker, {@link CorRest#waitFd} blocks the worker - and only it.
 * <p>
 * The queue is bounded (default 64 per worker); past it a submit is refused, so a server answers
 * 503 instead of queueing without end.
 */
public final class CorRestWorkers implements AutoCloseable {
    /** Default number of worker threads. */
    public static final int DEFAULT_THREADS = 32;

    private final ThreadPoolExecutor pool;
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();

    private CorRestWorkers(String name, int count, int queue) {
        AtomicInteger n = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(count, count, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(queue), r -> {
                    Thread t = new Thread(r, name + "-" + n.getAndIncrement());
                    t.setDaemon(true);
                    threads.add(t);
                    return t;
                });
        pool.prestartAllCoreThreads();
    }

    /** {@code threads} workers named {@code cor-worker-N}, with a queue of 64 per worker. */
    public static CorRestWorkers create(int threads) {
        return create("cor-worker", threads, threads * 64);
    }

    public static CorRestWorkers create(String name, int threads, int queue) {
        if (threads < 1) {
            throw new IllegalArgumentException("workers must be >= 1: " + threads);
        }
        if (queue < 1) {
            throw new IllegalArgumentException("worker queue must be >= 1: " + queue);
        }
        return new CorRestWorkers(name, threads, queue);
    }

    /**
     * Runs {@code task} on a worker.
     *
     * @return {@code false} when the pool is full or closed: the caller answers for it (503)
     */
    public boolean submit(Runnable task) {
        try {
            pool.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** Whether {@code thread} is one of these workers. */
    public boolean isWorker(Thread thread) {
        return threads.contains(thread);
    }

    public int threads() {
        return pool.getCorePoolSize();
    }

    /** Tasks waiting for a worker now. */
    public int queued() {
        return pool.getQueue().size();
    }

    /** Stops taking work and waits up to {@code timeoutMs} for the running tasks to end. */
    public boolean shutdown(long timeoutMs) throws InterruptedException {
        pool.shutdown();
        return pool.awaitTermination(timeoutMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
