package dev.cor.rest.client;

import java.nio.channels.SocketChannel;

/**
 * One client connection of a {@link ConnectionPool}: its channel, its byte stream and the bytes
 * read and not yet parsed. Busy (one request's, from before its connect to its release) or idle.
 * Touched only by its pool's thread.
 */
final class Connection {
    static final int BUSY = 0;
    static final int IDLE = 1;
    static final int CLOSED = 2;

    final Origin origin;
    int state = BUSY;
    /** Taken from the idle list: a failure before any byte may just be a stale keep-alive. */
    boolean reused;
    long idleSinceNanos;
    /** Its loop watches it while idle (OP_READ, {@link #idleWatch}): the peer's close is seen as it comes. */
    boolean watched;
    dev.cor.base.CorCoLoopHandler idleWatch;

    SocketChannel channel;
    Conduit conduit;

    // Read bytes not yet parsed: buf[start, end).
    byte[] buf = new byte[4096];
    int start;
    int end;
    /** Response bytes received by the request in progress. */
    long received;

    Connection(Origin origin) {
        this.origin = origin;
    }

    boolean opened() {
        return conduit != null;
    }

    void closeChannel() {
        if (conduit != null) {
            conduit.close();
        } else if (channel != null) {
            try {
                channel.close();
            } catch (java.io.IOException e) {
                // closing: nothing more to do
            }
        }
    }

    @Override
    public String toString() {
        return "connection to " + origin + (state == BUSY ? " (busy)" : state == IDLE ? " (idle)" : " (closed)");
    }
}
