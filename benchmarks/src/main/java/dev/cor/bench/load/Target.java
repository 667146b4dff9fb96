package dev.cor.bench.load;

import java.io.IOException;

/**
 * What the load generator drives: one protocol's connections to one server, and the one request
 * a run repeats. The generator ({@link LoadRun}) decides when each caller sends; a target decides
 * how a request travels - HTTP/1.1 lets callers that share a connection take turns on it, a
 * multiplexing protocol may send them all at once. Every method but {@link #wakeup()} is called
 * from the generator's one loop thread, and outcomes are told to the {@link TargetListener} from
 * inside {@link #poll}, on that thread. A new protocol ({@code cor://}) implements this and is
 * named in {@link Targets}.
 */
public interface Target extends AutoCloseable {
    /**
     * Starts opening {@code sockets} connections for {@code callers} callers; caller {@code c}
     * always uses socket {@code c % sockets}. Does not wait for them.
     */
    void open(int sockets, int callers, TargetListener listener) throws IOException;

    /** Connections open and usable now. */
    int connected();

    /** Connections still being opened (neither usable nor failed yet). */
    int connecting();

    /**
     * Sends one request of {@code caller} on {@code socket} as soon as the protocol allows. Exactly
     * one outcome follows for it, through the listener, answered or failed (a deadline included).
     * A caller sends again only after its outcome.
     */
    void send(int socket, int caller);

    /**
     * Does the I/O that is ready, waiting at most {@code maxWaitNanos} for some (0: do not wait),
     * and tells the listener every outcome; may return early.
     */
    void poll(long maxWaitNanos) throws IOException;

    /** Makes a {@link #poll} in progress return soon; any thread. */
    void wakeup();

    /** Connections that were lost and opened again so far (for the report). */
    long reconnects();

    /** Closes every connection; the outcomes of requests still in flight are not told. */
    @Override
    void close();
}
