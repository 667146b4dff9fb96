package dev.cor.ngsild.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayDeque;
import java.util.Objects;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;

/**
 * The database connections of one loop, at most {@code max}, each used by one coroutine at a time
 * from {@link #checkout} to {@link #release}. Loop-confined: every call runs on the loop's own
 * thread, in one of its coroutines, so the pool needs no lock - and holds none across a yield
 * (design rule 1; a blocking hand-off such as HikariCP's would park the loop thread itself).
 * <p>
 * One connection, one coroutine, is what makes pgjdbc safe here: its per-connection locks are
 * {@code ReentrantLock}s owned by the thread, which every coroutine of the loop shares - two
 * coroutines on one connection would both walk in. A coroutine that finds no idle connection and
 * the pool full waits its turn (first come, first served: a released connection goes to the
 * oldest waiter), parked so that the loop serves everyone else, within its deadline.
 */
final class LoopConnectionPool implements AutoCloseable {
    /** Opens one connection (inside a coroutine of the loop: its waits yield). */
    @FunctionalInterface
    public interface Opener {
        Connection open() throws SQLException;
    }

    private final CorCoLoop loop;
    private final Opener opener;
    private final int max;
    private final ArrayDeque<Connection> idle = new ArrayDeque<>();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    /** Connections open or being opened, idle or in use. */
    private int open;
    private boolean closed;

    /** A coroutine waiting for a connection: handed one ({@code given}) or a free place to open one ({@code mayOpen}). */
    private static final class Waiter {
        final CorCo co;
        Connection given;
        boolean mayOpen;

        Waiter(CorCo co) {
            this.co = co;
        }
    }

    public LoopConnectionPool(CorCoLoop loop, int max, Opener opener) {
        if (max < 1) {
            throw new IllegalArgumentException("max < 1: " + max);
        }
        this.loop = Objects.requireNonNull(loop, "loop");
        this.max = max;
        this.opener = Objects.requireNonNull(opener, "opener");
    }

    /**
     * A connection for the calling coroutine alone until it gives it back with {@link #release}:
     * an idle one, a new one while fewer than {@code max} are open, or the next one given back
     * within {@code timeoutMs}.
     *
     * @throws SQLTransientConnectionException when none came within the deadline, or the pool is closed
     */
    public Connection checkout(long timeoutMs) throws SQLException {
        confined();
        long deadline = System.nanoTime() + Math.max(0, timeoutMs) * 1_000_000L;
        while (true) {
            if (closed) {
                throw new SQLTransientConnectionException("the connection pool is closed", "08003");
            }
            Connection c = idle.pollLast(); // the most recently used: its socket and the server's cache are warm
            if (c != null) {
                return c;
            }
            if (open < max) {
                return openOne();
            }
            Waiter w = new Waiter(CorCo.current());
            waiters.addLast(w);
            while (w.given == null && !w.mayOpen && !closed) {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    waiters.remove(w);
                    throw new SQLTransientConnectionException("no database connection free within " + timeoutMs
                            + " ms (" + max + " per loop, all in use)", "08001");
                }
                CorCo.park(left);
            }
            waiters.remove(w);
            if (w.given != null) {
                return w.given;
            }
            if (w.mayOpen && !closed) {
                return openOne();
            }
        }
    }

    private Connection openOne() throws SQLException {
        open++;
        try {
            return opener.open();
        } catch (SQLException | RuntimeException e) {
            open--;
            letNextOpen();
            throw e;
        }
    }

    /**
     * Gives a connection back: to the oldest waiter, else to the idle ones. {@code broken}: it
     * failed on its socket or its state is unknown (a statement cut off at its deadline) - it is
     * closed, and its place goes to the next waiter to open a new one.
     */
    public void release(Connection c, boolean broken) {
        onLoop();
        if (broken || closed) {
            closeQuietly(c);
            open--;
            letNextOpen();
            // the idle ones were opened before the break too (a restarted server ended them all): each would fail once
            for (Connection stale; (stale = idle.poll()) != null; ) {
                closeQuietly(stale);
                open--;
                letNextOpen();
            }
            return;
        }
        Waiter w = waiters.pollFirst();
        if (w != null) {
            w.given = c;
            w.co.wake();
        } else {
            idle.addLast(c);
        }
    }

    private void letNextOpen() {
        Waiter w = waiters.pollFirst();
        if (w != null) {
            w.mayOpen = true;
            w.co.wake();
        }
    }

    /** How many connections are open (idle or in use). */
    public int open() {
        return open;
    }

    /** How many are idle. */
    public int idle() {
        return idle.size();
    }

    /** Closes the idle connections and every one given back from now; waiters are told the pool is closed. */
    @Override
    public void close() {
        onLoop();
        closed = true;
        for (Connection c; (c = idle.poll()) != null; ) {
            closeQuietly(c);
            open--;
        }
        for (Waiter w; (w = waiters.poll()) != null; ) {
            w.co.wake();
        }
    }

    /**
     * Closes the idle connections of a pool whose loop has terminated (its thread is gone, so
     * nothing else can touch the pool); those a coroutine held when the loop stopped went with it.
     */
    void closeAfterLoop() {
        if (!loop.isTerminated()) {
            throw new IllegalStateException(loop.name() + " still runs: its pool is closed on its thread");
        }
        closed = true;
        for (Connection c; (c = idle.poll()) != null; ) {
            closeQuietly(c);
            open--;
        }
    }

    /** Closes {@code c}, whatever it throws: closing a broken connection fails as often as not. */
    static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            // closing a broken connection fails as often as not; nothing is left to do with it
        }
    }

    private void confined() {
        onLoop();
        if (CorCo.current() == null) {
            throw new IllegalStateException("a connection is checked out by a coroutine of " + loop.name() + ": it may wait");
        }
    }

    private void onLoop() {
        if (!loop.inLoop()) {
            throw new IllegalStateException("a loop's connection pool is used on " + loop.name() + "'s thread only");
        }
    }
}
