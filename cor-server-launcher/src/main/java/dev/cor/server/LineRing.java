package dev.cor.server;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A bounded ring of bytes from one producer thread to one consumer thread, holding whole lines:
 * the producer ({@link #offer}) never waits - a line that does not fit is dropped and counted -
 * and the consumer ({@link #drainTo}) writes what is there to a stream, which may block it as long
 * as it likes. No lock, no allocation on either side.
 */
final class LineRing {
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle DROPPED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(LineRing.class, "head", long.class);
            TAIL = l.findVarHandle(LineRing.class, "tail", long.class);
            DROPPED = l.findVarHandle(LineRing.class, "dropped", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final byte[] buffer;
    private final int mask;
    /** Bytes ever offered and kept: the producer's, published with release. */
    private long tail;
    /** Bytes ever written out: the consumer's, published with release. */
    private long head;
    /** Lines dropped because they did not fit: the producer's, published with release. */
    private long dropped;
    /** The producer's last look at {@link #head}: it reads the consumer's field only when the ring seems full. */
    private long headSeen;

    /** @param capacity bytes held, a power of two */
    LineRing(int capacity) {
        if (capacity < 16 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("capacity must be a power of two >= 16: " + capacity);
        }
        this.buffer = new byte[capacity];
        this.mask = capacity - 1;
    }

    /** Producer: keeps {@code line[0, length)} whole, or drops it (counted) when it does not fit. */
    boolean offer(byte[] line, int length) {
        long t = tail;
        if (t + length - headSeen > buffer.length) {
            headSeen = (long) HEAD.getAcquire(this);
            if (t + length - headSeen > buffer.length) {
                DROPPED.setRelease(this, dropped + 1);
                return false;
            }
        }
        int at = (int) t & mask;
        int first = Math.min(length, buffer.length - at);
        System.arraycopy(line, 0, buffer, at, first);
        if (first < length) {
            System.arraycopy(line, first, buffer, 0, length - first);
        }
        TAIL.setRelease(this, t + length);
        return true;
    }

    /**
     * Consumer: writes every byte offered so far to {@code out} (whole lines: the producer
     * publishes nothing less) and frees their room - also when the write failed, so that a broken
     * output drops lines rather than holding them. Returns the bytes taken.
     */
    int drainTo(OutputStream out) throws IOException {
        long h = head;
        long t = (long) TAIL.getAcquire(this);
        if (t == h) {
            return 0;
        }
        int n = (int) (t - h);
        int at = (int) h & mask;
        int first = Math.min(n, buffer.length - at);
        try {
            out.write(buffer, at, first);
            if (first < n) {
                out.write(buffer, 0, n - first);
            }
        } finally {
            HEAD.setRelease(this, t);
        }
        return n;
    }

    /** Lines dropped so far; any thread. */
    long dropped() {
        return (long) DROPPED.getAcquire(this);
    }
}
