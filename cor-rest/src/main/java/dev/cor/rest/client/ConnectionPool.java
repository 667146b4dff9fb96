package dev.cor.rest.client;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;

/**
 * The keep-alive connections of one loop, or of one thread that is not a loop (a worker, a plain
 * thread), per origin. Touched by that thread only - a loop's through its coroutines, which do not
 * run at once - so it needs no lock; {@link CorRestClient#close()} reaches a loop's pool through the
 * loop's inbox.
 * <p>
 * A connection counts as open, and busy, from before its connect: two coroutines of one loop never
 * get one connection, not even while the first is still connecting. It goes back to the idle list
 * only after a complete response on a keep-alive connection.
 */
final class ConnectionPool {
    private final CorRestClient client;
    private final HashMap<Origin, ArrayDeque<Connection>> idle = new HashMap<>();
    private int open;
    private int idleCount;
    /** Set by {@link CorRestClient#close()} from another thread: the owner closes its idle connections on its next use. */
    volatile boolean closeRequested;

    ConnectionPool(CorRestClient client) {
        this.client = client;
    }

    /**
     * A connection to {@code origin}, busy from now on: the most recently idle one still usable, or
     * (with {@code fresh}, or none idle) a new one not yet connected.
     */
    Connection acquire(Origin origin, boolean fresh) {
        if (closeRequested) {
            closeIdle();
        }
        if (!fresh) {
            ArrayDeque<Connection> q = idle.get(origin);
            long now = System.nanoTime();
            while (q != null && !q.isEmpty()) {
                Connection c = q.pollLast();
                idleCount--;
                if (now - c.idleSinceNanos < client.idleTimeoutNanos && c.conduit.usableAfterIdle()) {
                    c.state = Connection.BUSY;
                    c.reused = true;
                    return c;
                }
                close(c);
            }
        }
        Connection c = new Connection(origin);
        open++;
        return c;
    }

    /** The request on {@code c} is over: keep it for the next ({@code reusable}) or close it. */
    void release(Connection c, boolean reusable) {
        if (c.state != Connection.BUSY) {
            return;
        }
        ArrayDeque<Connection> q = idle.get(c.origin);
        int size = q == null ? 0 : q.size();
        if (reusable && c.opened() && !client.isClosed() && !closeRequested && size < client.maxIdlePerOrigin) {
            if (q == null) {
                q = new ArrayDeque<>();
                idle.put(c.origin, q);
            }
            c.state = Connection.IDLE;
            c.reused = false;
            c.idleSinceNanos = System.nanoTime();
            q.addLast(c);
            idleCount++;
        } else {
            close(c);
        }
    }

    /** The request on {@code c} failed, or the connection may not be reused: close it. */
    void discard(Connection c) {
        if (c.state == Connection.BUSY) {
            close(c);
        }
    }

    private void close(Connection c) {
        c.state = Connection.CLOSED;
        c.closeChannel();
        open--;
    }

    /** Closes every idle connection. */
    void closeIdle() {
        for (Iterator<ArrayDeque<Connection>> it = idle.values().iterator(); it.hasNext();) {
            ArrayDeque<Connection> q = it.next();
            Connection c;
            while ((c = q.poll()) != null) {
                idleCount--;
                close(c);
            }
            it.remove();
        }
    }

    /** Connections of this pool: busy (connecting included) and idle. */
    int open() {
        return open;
    }

    int idle() {
        return idleCount;
    }
}
