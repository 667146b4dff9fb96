package dev.cor.bench.load;

import java.nio.channels.Selector;
import java.util.concurrent.locks.LockSupport;

/**
 * Wakes a {@link Selector} at a moment finer than {@link Selector#select(long)}'s millisecond: a
 * helper thread parks until then and calls {@link Selector#wakeup()}. It does no I/O - the loop
 * thread still owns every socket - it only lets the loop block in {@code select} until either
 * an answer arrives (seen at once) or the next open-loop request falls due (within tens of
 * microseconds), instead of polling. {@link #wakeAt} from the loop thread; closed with its target.
 */
final class SelectorAlarm implements AutoCloseable {
    private static final long NONE = Long.MIN_VALUE;

    private final Selector selector;
    private final Thread thread;
    private volatile long at = NONE;
    private volatile boolean closed;

    SelectorAlarm(Selector selector) {
        this.selector = selector;
        this.thread = Thread.ofPlatform().name("corRequest-alarm").daemon().start(this::run);
    }

    /** Wakes the selector at {@code nanoTime} (or soon after), unless set again before then. */
    void wakeAt(long nanoTime) {
        long previous = at;
        if (previous == nanoTime) {
            return;
        }
        at = nanoTime;
        if (previous == NONE || nanoTime - previous < 0) {
            LockSupport.unpark(thread); // it sleeps toward a later moment, or not at all
        }
    }

    private void run() {
        while (!closed) {
            long when = at;
            if (when == NONE) {
                LockSupport.park(this);
                continue;
            }
            long left = when - System.nanoTime();
            if (left > 0) {
                LockSupport.parkNanos(this, left);
                continue;
            }
            if (at == when) {
                at = NONE;
                selector.wakeup();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
    }
}
