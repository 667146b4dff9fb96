package dev.cor.rest.client;

import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;

import dev.cor.base.CorCoLoop;

/**
 * The keep-alive connections of one loop, or of one thread that is not a loop (a worker, a plain
 * thread), per origin; virtual threads share one ({@link SharedConnectionPool}, which locks).
 * Touched by that thread only - a loop's through its coroutines, which do not
 * run at once - so it needs no lock; {@link CorRestClient#close()} reaches a loop's pool through the
 * loop's inbox.
 * <p>
 * A connection counts as open, and busy, from before its connect: two coroutines of one loop never
 * get one connection, not even while the first is still connecting. It goes back to the idle list
 * only after a complete response on a keep-alive connection.
 * <p>
 * A loop's pool keeps its idle plain connections registered for OP_READ: a peer that closes one,
 * or sends what nobody asked for, has it closed as the loop sees it, and the registration stays
 * the same through the requests (the wait of a request's coroutine takes the key over and gives it
 * back) - no interest change, so no {@code epoll_ctl}, per request. Other connections, and one
 * for a request that may not be sent twice, are looked at ({@link Conduit#usableAfterIdle}) when
 * taken.
 */
class ConnectionPool {
    private final CorRestClient client;
    /** The owning loop, or {@code null} for a thread's pool. */
    private final CorCoLoop loop;
    private final HashMap<Origin, ArrayDeque<Connection>> idle = new HashMap<>();
    private int open;
    private int idleCount;
    /** Set by {@link CorRestClient#close()} from another thread: the owner closes its idle connections on its next use. */
    volatile boolean closeRequested;

    ConnectionPool(CorRestClient client, CorCoLoop loop) {
        this.client = client;
        this.loop = loop;
    }

    /**
     * A connection to {@code origin}, busy from now on: the most recently idle one still usable, or
     * (with {@code fresh}, or none idle) a new one not yet connected. {@code once}: the request may
     * not be sent twice, so even a watched connection is looked at (an idempotent one that finds
     * it closed after all is sent again on a new one).
     */
    Connection acquire(Origin origin, boolean fresh, boolean once) {
        if (closeRequested) {
            closeIdle();
        }
        if (!fresh) {
            ArrayDeque<Connection> q = idle.get(origin);
            long now = System.nanoTime();
            while (q != null && !q.isEmpty()) {
                Connection c = q.pollLast();
                idleCount--;
                if (now - c.idleSinceNanos < client.idleTimeoutNanos
                        && (c.watched && !once ? c.channel.isOpen() : c.conduit.usableAfterIdle())) {
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
            watch(c);
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

    /** A loop watches its idle plain connection; the key is already there after the first wait. */
    private void watch(Connection c) {
        if (!c.watched) {
            if (loop == null || !c.conduit.anyIdleInputIsFatal()) {
                return;
            }
            c.idleWatch = key -> idleInput(c, key);
            c.watched = true;
        }
        rearm(c);
    }

    private void rearm(Connection c) {
        try {
            SelectionKey key = loop.keyFor(c.channel);
            if (key == null) {
                loop.register(c.channel, SelectionKey.OP_READ, c.idleWatch);
            } else {
                key.attach(c.idleWatch);
                key.interestOps(SelectionKey.OP_READ); // no system call when it is so already
            }
        } catch (ClosedChannelException | CancelledKeyException e) {
            c.watched = false; // closed meanwhile: the look at reuse finds it so
        }
    }

    /** Input on a watched connection: while idle the peer closed it or spoke unasked, so it goes. */
    private void idleInput(Connection c, SelectionKey key) {
        if (c.state == Connection.IDLE) {
            ArrayDeque<Connection> q = idle.get(c.origin);
            if (q != null && q.remove(c)) {
                idleCount--;
            }
            close(c);
        } else if (key.isValid()) {
            key.interestOps(0); // busy, between its waits: the request reads it; release watches again
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
