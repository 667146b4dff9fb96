package dev.cor.ngsild.store.durable;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * What lets a snapshot read the live store without stopping it: every write passes through the
 * gate ({@link #enter}, its journal append and its change, {@link #exit}), counted in one of two
 * epochs. A snapshot reads the last sequence number appended, switches the epoch and waits for
 * the writes of the old one to leave ({@link #barrier}): from then on every record up to that
 * number is applied in memory, so the snapshot holds at least everything up to it (and perhaps
 * some later records, which replaying after it applies again to the same effect). Writers never
 * wait here; only the snapshot thread does, for the few writes that were inside their critical
 * section. Any thread enters; one snapshot thread at a time calls the barrier.
 */
final class WriteGate {
    /** The two counters sit 128 bytes apart: writers of the two epochs do not share a cache line. */
    private static final int STRIDE = 16;

    private final AtomicLongArray inside = new AtomicLongArray(2 * STRIDE);
    private volatile int epoch;

    /** A write begins: returns its epoch, for {@link #exit}. */
    int enter() {
        while (true) {
            int e = epoch;
            inside.incrementAndGet(e * STRIDE);
            // A writer that read the epoch before a switch and counts itself after the barrier
            // looked would be waited for by no snapshot (the next barrier waits for the other
            // epoch): seeing the epoch unchanged after counting, it is in the one a barrier checks.
            if (epoch == e) {
                return e;
            }
            inside.decrementAndGet(e * STRIDE);
        }
    }

    void exit(int e) {
        inside.decrementAndGet(e * STRIDE);
    }

    /**
     * Reads {@code lastAppended}, then waits until every write that could have appended up to it
     * has applied its change; returns the value read.
     *
     * @throws IllegalStateException when the writes do not leave within {@code timeoutMs}
     */
    long barrier(LongSupplier lastAppended, long timeoutMs) {
        // A write that took a number up to `seq` entered before this read, in the old epoch; one
        // that enters the old epoch after the switch takes a number after `seq`.
        long seq = lastAppended.getAsLong();
        int old = epoch;
        epoch = old ^ 1;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        int spins = 0;
        while (inside.get(old * STRIDE) != 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("writes did not leave their critical sections within " + timeoutMs + " ms");
            }
            if (++spins < 100) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(10_000);
            }
        }
        return seq;
    }
}
