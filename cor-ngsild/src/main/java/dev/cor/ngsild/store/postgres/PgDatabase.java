package dev.cor.ngsild.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;

/**
 * One PostgreSQL database as the broker uses it: a unit of work in one transaction, on a
 * connection of the caller's loop ({@link LoopConnectionPool}, its waits yielding) or - on a plain
 * thread, the worker hop - of a blocking pool shared by the threads. Every connection carries two
 * deadlines: the server cancels a statement that runs past {@code statementTimeoutMs}
 * ({@code statement_timeout}, SQLState 57014), and a read that gets nothing for a second more
 * than that fails on the client ({@code socketTimeout}) - a server that stopped answering - and
 * the connection is dropped.
 * <p>
 * Any thread; the pools are created per loop on first use.
 */
final class PgDatabase implements AutoCloseable {
    /** A unit of work on a connection, inside a transaction the database commits when it returns. */
    @FunctionalInterface
    public interface Work<T> {
        T apply(Connection c) throws SQLException;
    }

    private static final org.postgresql.Driver DRIVER = new org.postgresql.Driver();

    private final String url;
    private final Properties properties;
    private final int poolPerLoop;
    private final long waitMs;
    private final ConcurrentHashMap<CorCoLoop, LoopConnectionPool> loops = new ConcurrentHashMap<>();
    private final ThreadPool threads;

    /**
     * @param url                a {@code jdbc:postgresql://host:port/db} URL (a numeric host: a name would be resolved on the loop)
     * @param user               the role
     * @param password           its password, or {@code null} (trust, peer)
     * @param poolPerLoop        connections per loop, and for the plain threads together
     * @param waitMs             how long a caller waits for a free connection
     * @param statementTimeoutMs the server's deadline for one statement
     */
    public PgDatabase(String url, String user, String password, int poolPerLoop, long waitMs, long statementTimeoutMs) {
        this.url = Objects.requireNonNull(url, "url");
        if (poolPerLoop < 1 || waitMs < 1 || statementTimeoutMs < 1) {
            throw new IllegalArgumentException("the pool, the wait and the statement timeout must be positive");
        }
        Properties p = new Properties();
        p.setProperty("user", user);
        if (password != null) {
            p.setProperty("password", password);
        }
        p.setProperty("socketFactory", YieldingSocketFactory.class.getName());
        p.setProperty("connectTimeout", Long.toString(Math.max(1, (waitMs + 999) / 1000)));
        p.setProperty("loginTimeout", "0"); // a login timeout would connect on another thread while this one blocks
        p.setProperty("socketTimeout", Long.toString((statementTimeoutMs + 999) / 1000 + 1));
        p.setProperty("options", "-c statement_timeout=" + statementTimeoutMs);
        p.setProperty("ApplicationName", "cor");
        this.properties = p;
        this.poolPerLoop = poolPerLoop;
        this.waitMs = waitMs;
        this.threads = new ThreadPool(poolPerLoop);
    }

    /** A new connection of its own (the follower's, which listens on a plain thread). */
    Connection open() throws SQLException {
        Connection c = DRIVER.connect(url, properties);
        if (c == null) {
            throw new SQLException("not a PostgreSQL URL: " + url);
        }
        return c;
    }

    /**
     * Runs {@code work} in one transaction and commits it; on an exception, rolls it back and
     * throws. Inside a coroutine on the loop's connections (every wait yields), elsewhere on the
     * threads' pool (every wait blocks).
     */
    public <T> T inTransaction(Work<T> work) throws SQLException {
        return run(work, true);
    }

    /**
     * Runs {@code work}, a read, with auto-commit on: each statement its own snapshot, no
     * {@code BEGIN} and {@code COMMIT} round trips. Where {@link #inTransaction} runs.
     */
    public <T> T read(Work<T> work) throws SQLException {
        return run(work, false);
    }

    /**
     * Runs {@code work} once, and once more on a new connection when the first one broke before
     * the commit was sent (a server restarted since the connection was opened ends it; the work
     * then changed nothing). A connection that breaks during the commit is not tried again: the
     * commit's outcome is unknown, and the caller answers 503.
     */
    private <T> T run(Work<T> work, boolean transaction) throws SQLException {
        boolean[] committing = {false};
        try {
            return runOnce(work, transaction, committing);
        } catch (SQLException e) {
            if (committing[0] || !brokenState(e)) {
                throw e;
            }
            return runOnce(work, transaction, committing);
        }
    }

    private <T> T runOnce(Work<T> work, boolean transaction, boolean[] committing) throws SQLException {
        CorCoLoop loop = CorCoLoop.current();
        boolean onLoop = loop != null && CorCo.current() != null;
        LoopConnectionPool pool = onLoop ? loops.computeIfAbsent(loop, l -> new LoopConnectionPool(l, poolPerLoop, this::open)) : null;
        Connection c = onLoop ? pool.checkout(waitMs) : threads.checkout(waitMs);
        boolean broken = false;
        try {
            c.setAutoCommit(!transaction);
            T result = work.apply(c);
            if (transaction) {
                committing[0] = true;
                c.commit();
            }
            return result;
        } catch (SQLException | RuntimeException e) {
            broken = broken(c, e);
            if (!broken && transaction) {
                try {
                    c.rollback();
                } catch (SQLException r) {
                    broken = true;
                    e.addSuppressed(r);
                }
            }
            throw e;
        } finally {
            if (onLoop) {
                pool.release(c, broken);
            } else {
                threads.release(c, broken);
            }
        }
    }

    /** Whether {@code e} left {@code c} unusable: a connection error (SQLState class 08), a closed connection, not a SQL error. */
    private static boolean broken(Connection c, Exception e) {
        try {
            if (c.isClosed()) {
                return true;
            }
        } catch (SQLException ignored) {
            return true;
        }
        // an exception of the work's own (a conflict it found) leaves the connection as it was: the rollback tells
        return e instanceof SQLException s && brokenState(s);
    }

    /**
     * Whether {@code e} says the connection is gone: class 08 (connection exception), 57P0x (the
     * server is shutting down, or ended the session), or no state (an I/O failure in the driver).
     * 57014, a statement cancelled at its deadline, leaves the connection usable.
     */
    static boolean brokenState(SQLException e) {
        String state = e.getSQLState();
        return state == null || state.startsWith("08") || state.startsWith("57P");
    }

    /**
     * Closes the plain threads' idle connections, and each loop's pool: on its loop while it runs,
     * here once it has terminated.
     */
    @Override
    public void close() {
        threads.close();
        for (var e : loops.entrySet()) {
            LoopConnectionPool p = e.getValue();
            try {
                e.getKey().execute(() -> closeOn(e.getKey()));
            } catch (java.util.concurrent.RejectedExecutionException stopped) {
                if (e.getKey().isTerminated() && loops.remove(e.getKey(), p)) {
                    p.closeAfterLoop();
                }
            }
        }
    }

    /** Closes the pool of the calling loop (on its thread), if it has one. */
    public void closeOn(CorCoLoop loop) {
        LoopConnectionPool p = loops.remove(loop);
        if (p != null) {
            p.close();
        }
    }

    /**
     * The connections open, every loop's pool and the threads' together: for a gauge, read from
     * any thread (a loop's count is its own, read here without a fence: a moment old at most).
     */
    int openConnections() {
        int n = threads.openCount();
        for (LoopConnectionPool p : loops.values()) {
            n += p.open();
        }
        return n;
    }

    /** The pool of {@code loop}, or {@code null} (for the tests and the metrics). */
    LoopConnectionPool poolOf(CorCoLoop loop) {
        return loops.get(loop);
    }

    /** The plain threads' pool: a blocking wait for a free place, then an idle connection or a new one. */
    private final class ThreadPool {
        private final Semaphore places;
        private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();
        private volatile boolean closed;

        private final int poolSize;

        ThreadPool(int max) {
            this.places = new Semaphore(max, true);
            this.poolSize = max;
        }

        Connection checkout(long timeoutMs) throws SQLException {
            try {
                if (closed || !places.tryAcquire(timeoutMs, TimeUnit.MILLISECONDS)) {
                    throw new SQLTransientConnectionException(closed ? "the connection pool is closed"
                            : "no database connection free within " + timeoutMs + " ms", "08001");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SQLTransientConnectionException("interrupted waiting for a database connection", "08001", e);
            }
            Connection c = idle.pollLast();
            if (c != null) {
                return c;
            }
            try {
                return open();
            } catch (SQLException | RuntimeException e) {
                places.release();
                throw e;
            }
        }

        /** Connections open: those checked out and the idle ones. */
        int openCount() {
            return poolSize - places.availablePermits() + idle.size();
        }

        void release(Connection c, boolean broken) {
            if (broken || closed) {
                LoopConnectionPool.closeQuietly(c);
                for (Connection stale; broken && (stale = idle.poll()) != null; ) {
                    LoopConnectionPool.closeQuietly(stale); // opened before the break too
                }
            } else {
                idle.addLast(c);
            }
            places.release();
        }

        void close() {
            closed = true;
            for (Connection c; (c = idle.poll()) != null; ) {
                LoopConnectionPool.closeQuietly(c);
            }
        }
    }
}
