package dev.cor.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * {@code GET /health} on a connection of its own, every {@link #PERIOD_MS}, from its own thread,
 * timed from the first byte written to the last byte read: what a load balancer sees of a broker
 * while other clients load it. An answer that is not 200, that comes later than the deadline,
 * or a connection that breaks is a {@link #lapses lapse}, kept with the time it happened.
 * {@link #worstSinceLast} gives the slowest answer of each interval between samples.
 * <p>
 * A full GC that the test itself asks for ({@link #whileQuiet}) stops every thread of the broker;
 * the probe does not run across one, so that what it measures is the broker, not the measurement.
 * Its methods may be called from any thread.
 */
final class HealthProbe implements AutoCloseable {
    static final long PERIOD_MS = 250;
    /** How long the probe waits for an answer that is already late, to say how late it was. */
    private static final int READ_TIMEOUT_MS = 60_000;

    private final int port;
    private final long deadlineMs;
    private final long startNanos;
    private final ReentrantLock quiet = new ReentrantLock();
    private final List<String> lapses = new ArrayList<>();
    private final Thread thread;
    private volatile boolean closed;
    private long worstNanos;
    private long probes;
    private Socket socket;

    private HealthProbe(int port, long deadlineMs, long startNanos) {
        this.port = port;
        this.deadlineMs = deadlineMs;
        this.startNanos = startNanos;
        this.thread = Thread.ofPlatform().daemon().name("health-probe").unstarted(this::run);
    }

    /** Probes {@code 127.0.0.1:port} until closed; an answer later than {@code deadlineMs} is a lapse. */
    static HealthProbe start(int port, long deadlineMs, long startNanos) {
        HealthProbe p = new HealthProbe(port, deadlineMs, startNanos);
        p.thread.start();
        return p;
    }

    /** Runs {@code action} with no probe in flight, and none starting until it is done. */
    <T> T whileQuiet(Supplier<T> action) {
        quiet.lock();
        try {
            return action.get();
        } finally {
            quiet.unlock();
        }
    }

    /** The slowest answer since the last call, in ms, and how many probes there were. */
    synchronized long[] worstSinceLast() {
        long[] r = {TimeUnit.NANOSECONDS.toMillis(worstNanos), probes};
        worstNanos = 0;
        probes = 0;
        return r;
    }

    /** Every lapse so far: when (seconds since the start) and what. */
    synchronized List<String> lapses() {
        return List.copyOf(lapses);
    }

    private void run() {
        while (!closed) {
            quiet.lock();
            try {
                probeOnce();
            } finally {
                quiet.unlock();
            }
            try {
                Thread.sleep(PERIOD_MS); // the probe's period, as a load balancer's
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void probeOnce() {
        long t0 = System.nanoTime();
        String failure;
        try {
            if (socket == null) {
                socket = new Socket();
                socket.setSoTimeout(READ_TIMEOUT_MS);
                socket.connect(new InetSocketAddress("127.0.0.1", port), READ_TIMEOUT_MS);
            }
            OutputStream out = socket.getOutputStream();
            out.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            int status = readAnswer(socket.getInputStream());
            failure = status == 200 ? null : "answered " + status;
        } catch (IOException e) {
            failure = e.toString();
            closeSocket();
        }
        long took = System.nanoTime() - t0;
        synchronized (this) {
            probes++;
            worstNanos = Math.max(worstNanos, took);
            long ms = TimeUnit.NANOSECONDS.toMillis(took);
            if (failure == null && ms > deadlineMs) {
                failure = "answered after " + ms + " ms";
            }
            if (failure != null && !closed) {
                lapses.add(String.format(Locale.ROOT, "at %.1f s: %s", (t0 - startNanos) / 1e9, failure));
            }
        }
    }

    /** Reads one answer (head, Content-Length body); returns its status. */
    private static int readAnswer(InputStream in) throws IOException {
        String head = HttpHead.read(in);
        if (head == null) {
            throw new IOException("the broker closed the probe's connection");
        }
        int length = HttpHead.contentLength(head);
        if (in.readNBytes(length).length != length) {
            throw new IOException("the broker closed the probe's connection in an answer");
        }
        return Integer.parseInt(HttpHead.startLineWord(head, 1));
    }

    private void closeSocket() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
            socket = null;
        }
    }

    /** Stops probing (the probe in flight ends first); {@link #lapses} keeps what it found. */
    void stop() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(70));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeSocket();
    }

    @Override
    public void close() {
        stop();
    }
}
