package dev.cor.base;

import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One call of {@link CorCo#blocking(Callable, long)} run on a helper thread for a waiter: a
 * coroutine (woken through its loop's inbox) or a plain thread (unparked). The helper thread runs
 * it; the waiter may abandon it - its deadline passed, its loop stopped - and then a call not yet
 * begun never runs and a running one is interrupted.
 */
final class BlockingCall<T> implements Runnable {
    private final Callable<T> call;
    private final CorCoLoop loop;   // the waiting coroutine's loop, or null for a thread
    private final CorCo co;
    private final Thread waiter;    // the waiting plain thread, or null for a coroutine
    private T value;
    private Exception failure;
    private Error fatal;
    private Thread runner;          // guarded by this
    private volatile boolean abandoned;
    volatile boolean done;

    private BlockingCall(Callable<T> call, CorCoLoop loop, CorCo co, Thread waiter) {
        this.call = call;
        this.loop = loop;
        this.co = co;
        this.waiter = waiter;
    }

    static <T> BlockingCall<T> forCoroutine(Callable<T> call, CorCo co) {
        return new BlockingCall<>(call, co.loop, co, null);
    }

    /**
     * On a plain thread: the call on a helper thread of the shared pool, this thread waiting for
     * it until {@code timeoutMs} has passed.
     */
    static <T> T onHelper(Callable<T> call, long timeoutMs, String who) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        BlockingCall<T> b = new BlockingCall<>(call, null, null, Thread.currentThread());
        BlockingPool.shared().execute(b);
        while (!b.done) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                b.abandon();
                throw timedOut(who, timeoutMs);
            }
            LockSupport.parkNanos(b, left);
            if (Thread.interrupted()) {
                b.abandon();
                throw new InterruptedException(who + " was interrupted waiting for a blocking call");
            }
        }
        return b.result();
    }

    static CorCoTimeoutException timedOut(String who, long timeoutMs) {
        return new CorCoTimeoutException(who + ": a blocking call did not return within its " + timeoutMs
                + " ms deadline (its helper thread was interrupted)");
    }

    @Override
    public void run() {
        synchronized (this) {
            if (abandoned) {
                return;
            }
            runner = Thread.currentThread();
        }
        try {
            value = call.call();
        } catch (Exception e) {
            failure = e;
        } catch (Error e) {
            fatal = e;
        } finally {
            synchronized (this) {
                runner = null;
                Thread.interrupted(); // an abandon that came as the call ended must not reach the next call
            }
            done = true;
            if (waiter != null) {
                LockSupport.unpark(waiter);
            } else {
                try {
                    loop.execute(this::wakeCoroutine);
                } catch (RejectedExecutionException e) {
                    // the loop has ended; its coroutines were cancelled
                }
            }
        }
    }

    /** On the loop's thread: wakes the coroutine, unless it stopped waiting (it may run another task by now). */
    private void wakeCoroutine() {
        if (!abandoned) {
            loop.wakeParked(co);
        }
    }

    /** The waiter gives up: the call never begins, or its thread is interrupted. */
    synchronized void abandon() {
        abandoned = true;
        if (runner != null) {
            runner.interrupt();
        }
    }

    T result() throws Exception {
        if (fatal != null) {
            throw fatal;
        }
        if (failure != null) {
            throw failure;
        }
        return value;
    }
}
