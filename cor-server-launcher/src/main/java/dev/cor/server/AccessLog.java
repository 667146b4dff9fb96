package dev.cor.server;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.cor.http.CorHttpAccessLog;
import dev.cor.rest.CorRest;

/**
 * {@code --accessLog FILE|-}: one line per answer the HTTP server wrote ({@link AccessLine}), to
 * a file (appended) or to stdout. A loop formats its line into its own buffer and puts it in its
 * own {@link LineRing} ({@value #RING_BYTES} bytes); one thread, {@code cor-access-log}, writes the
 * rings out. A loop never waits for the output: when its ring is full (the output is slower than
 * the requests - a stdout nobody reads, a full disk) the line is dropped and counted
 * ({@link #dropped()}: {@code cor_access_log_dropped_total} in {@code /metrics}, and a warning at
 * most every {@value #DROP_WARNING_SECONDS} s).
 * <p>
 * {@link #answered} runs on the loops (one ring each, by the loop's index); {@link #start} and
 * {@link #close} on the thread that starts and stops the server.
 */
final class AccessLog implements CorHttpAccessLog, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(AccessLog.class.getName());
    /** Bytes each loop's ring holds: some thousands of lines, the writer's slack for a slow output. */
    static final int RING_BYTES = 256 * 1024;
    static final long DROP_WARNING_SECONDS = 10;
    /** How long the writer sleeps when every ring was empty: it doubles up to the longest. */
    private static final long IDLE_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long IDLE_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** How long {@link #close} waits for the last lines to be written. */
    private static final long CLOSE_WAIT_MS = 2_000;

    private final String target;
    private final OutputStream out;
    private final boolean ownsOut;
    private final LineRing[] rings;
    private final AccessLine[] lines;
    private final Thread writer;
    private volatile boolean closing;
    private long droppedReported;
    private long lastWarningNanos;

    /**
     * @param target {@code -} for stdout, else a file, created or appended to
     * @param loops  the HTTP server's loops
     * @param json   JSON lines rather than text
     * @throws IllegalArgumentException when the file cannot be opened
     */
    AccessLog(String target, int loops, boolean json) {
        this.target = target;
        if (target.equals("-")) {
            // its own stream on descriptor 1, not System.out: a writer blocked on a full stdout
            // must not hold the PrintStream's lock that the main thread prints under
            this.out = new FileOutputStream(FileDescriptor.out);
            this.ownsOut = false;
        } else {
            try {
                this.out = new FileOutputStream(target, true);
            } catch (IOException e) {
                throw new IllegalArgumentException("--accessLog " + target + ": cannot open it for appending: " + e.getMessage(), e);
            }
            this.ownsOut = true;
        }
        this.rings = new LineRing[loops];
        this.lines = new AccessLine[loops];
        for (int i = 0; i < loops; i++) {
            rings[i] = new LineRing(RING_BYTES);
            lines[i] = new AccessLine(json);
        }
        this.writer = new Thread(this::writeOut, "cor-access-log");
        writer.setDaemon(true); // a stdout nobody reads must not keep the JVM from exiting
    }

    AccessLog start() {
        writer.start();
        return this;
    }

    @Override
    public void answered(int loop, CorRest exchange, long bodyBytes, long nanos) {
        AccessLine line = lines[loop];
        int n = line.format(exchange, bodyBytes, nanos, System.currentTimeMillis());
        rings[loop].offer(line.bytes(), n);
    }

    /** Lines dropped so far because the output did not keep up; any thread. */
    long dropped() {
        long n = 0;
        for (LineRing r : rings) {
            n += r.dropped();
        }
        return n;
    }

    private void writeOut() {
        long idle = IDLE_MIN_NANOS;
        while (true) {
            boolean last = closing; // read before the rings: whatever came before close() is written
            long n = 0;
            for (LineRing r : rings) {
                n += drain(r);
            }
            warnOfDrops();
            if (n > 0) {
                idle = IDLE_MIN_NANOS;
            } else if (last) {
                return;
            } else {
                LockSupport.parkNanos(this, idle);
                idle = Math.min(idle * 2, IDLE_MAX_NANOS);
            }
        }
    }

    private int drain(LineRing r) {
        try {
            return r.drainTo(out);
        } catch (IOException e) {
            warn("cannot write to " + (target.equals("-") ? "stdout" : target) + " (" + e.getMessage() + "): its lines are lost");
            return 0;
        }
    }

    private void warnOfDrops() {
        long d = dropped();
        if (d > droppedReported && warn("dropped " + (d - droppedReported)
                + " line(s): its output is slower than the requests (cor_access_log_dropped_total counts them)")) {
            droppedReported = d;
        }
    }

    /** Logs {@code what} unless a warning went out in the last {@value #DROP_WARNING_SECONDS} s; whether it did. */
    private boolean warn(String what) {
        long now = System.nanoTime();
        if (lastWarningNanos != 0 && now - lastWarningNanos < TimeUnit.SECONDS.toNanos(DROP_WARNING_SECONDS)) {
            return false;
        }
        lastWarningNanos = now;
        LOG.log(System.Logger.Level.WARNING, "cor-server: the access log " + what);
        return true;
    }

    /**
     * Writes what the rings still hold (after the server stopped: no line comes any more), for at
     * most {@value #CLOSE_WAIT_MS} ms - an output that does not take it is given up on.
     */
    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(writer);
        try {
            writer.join(CLOSE_WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownsOut && !writer.isAlive()) {
            try {
                out.close();
            } catch (IOException e) {
                // nothing more to write to it
            }
        }
    }
}
