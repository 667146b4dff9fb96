package dev.cor.base;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * At most one log line per interval for one kind of failure, each line saying how many like it
 * were held back since the one before: for failures that can repeat at the rate of requests or
 * of loop rounds (every request answered 500, a failing accept), where a stack trace written
 * each time would cost more than the failure and bury everything else. Any thread: the first
 * caller past the interval logs, the others count.
 */
public final class CorCoLogLimiter {
    private final System.Logger logger;
    private final long intervalNanos;
    private final AtomicLong nextNanos;
    private final AtomicLong heldSinceLast = new AtomicLong();
    private final AtomicLong heldTotal = new AtomicLong();

    /** Lines through {@code logger}, at most one per {@code intervalMs} (0: every one). */
    public CorCoLogLimiter(System.Logger logger, long intervalMs) {
        if (intervalMs < 0) {
            throw new IllegalArgumentException("interval must be >= 0: " + intervalMs);
        }
        this.logger = java.util.Objects.requireNonNull(logger, "logger");
        this.intervalNanos = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(intervalMs);
        this.nextNanos = new AtomicLong(System.nanoTime());
    }

    /**
     * Logs {@code message} with {@code failure} (may be null) if no line went out within the
     * interval, adding how many were held back meanwhile; otherwise counts this one. The message
     * is built only when it is logged.
     *
     * @return whether it was logged
     */
    public boolean log(System.Logger.Level level, Supplier<String> message, Throwable failure) {
        long now = System.nanoTime();
        long next = nextNanos.get();
        if (now - next < 0 || !nextNanos.compareAndSet(next, now + intervalNanos)) {
            heldSinceLast.incrementAndGet();
            heldTotal.incrementAndGet();
            return false;
        }
        long held = heldSinceLast.getAndSet(0);
        String text = held == 0 ? message.get() : message.get() + " (" + held + " more held back since the last report)";
        if (failure != null) {
            logger.log(level, text, failure);
        } else {
            logger.log(level, text);
        }
        return true;
    }

    /** Lines held back since this limiter was made. */
    public long heldBack() {
        return heldTotal.get();
    }
}
