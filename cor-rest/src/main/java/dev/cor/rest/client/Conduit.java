package dev.cor.rest.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The byte stream of one connection over its non-blocking channel: plain ({@link PlainConduit}) or
 * TLS ({@link TlsConduit}). Its reads and writes wait only through {@link Waits}. Owned by the
 * connection, used by one request at a time.
 */
abstract class Conduit {
    final SocketChannel channel;

    Conduit(SocketChannel channel) {
        this.channel = channel;
    }

    /**
     * Reads at least one byte into {@code dst} (which has room), waiting as long as the deadline allows.
     *
     * @return the bytes read, or -1 once the peer has closed
     */
    abstract int read(ByteBuffer dst, long deadlineNanos, Waits.Phase phase) throws IOException;

    /** Writes all of {@code src}, waiting for room in the send buffer as long as the deadline allows. */
    abstract void write(ByteBuffer src, long deadlineNanos, Waits.Phase phase) throws IOException;

    /**
     * Whether an idle connection can carry another request: the peer has not closed it and sent
     * nothing unasked. Never waits.
     */
    abstract boolean usableAfterIdle();

    /**
     * Whether any byte that comes while the connection is idle makes it unusable, so that its loop
     * can watch it instead of {@link #usableAfterIdle} looking at reuse. Not for TLS: a session
     * ticket may come unasked and is fine.
     */
    abstract boolean anyIdleInputIsFatal();

    /** Closes the connection (a TLS one says close_notify first, if the send buffer takes it). */
    abstract void close();
}
