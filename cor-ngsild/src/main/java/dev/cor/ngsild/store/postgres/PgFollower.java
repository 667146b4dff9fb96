package dev.cor.ngsild.store.postgres;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Keeps one broker current with what the other brokers over the same database change: the
 * changes a broker keeps in memory as well as in the database (tenants, subscriptions,
 * registrations, Hosted contexts) are announced with {@code NOTIFY} inside the transaction that
 * makes them - so the announcement goes out when, and only when, the change commits - and every
 * broker's follower {@code LISTEN}s on one connection of its own, on a thread of its own, and
 * hands each change another broker made to the handler of its kind, which reads the row again and
 * applies it. A broker skips its own announcements (its origin, a random id per follower).
 * <p>
 * When the connection breaks, the follower reports the database unreachable ({@link #ready()}),
 * connects again every second, and once it listens again has every resync handler read its kind
 * whole - what was announced meanwhile is lost to {@code LISTEN}. It pings the database when a
 * second passes without a notification, so that a silent server is noticed too.
 * <p>
 * {@link #announce} runs on the writer's thread inside its transaction; the handlers run on the
 * follower's thread, one at a time, in the order of the commits.
 */
final class PgFollower implements AutoCloseable {
    /** What changed; its code travels in the announcement. */
    enum Kind {
        TENANT('t'), SUBSCRIPTION('s'), CSOURCE_SUBSCRIPTION('c'), REGISTRATION('r'), CONTEXT('x'),
        /** An announcement too long for NOTIFY's payload: everything is read again. */
        EVERYTHING('*');

        final char code;

        Kind(char code) {
            this.code = code;
        }

        static Kind of(char code) {
            for (Kind k : values()) {
                if (k.code == code) {
                    return k;
                }
            }
            return null;
        }
    }

    /** The channel every broker of a database listens on. */
    static final String CHANNEL = "cor_changes";
    /** NOTIFY's payload must be shorter than 8000 bytes. */
    private static final int MAX_PAYLOAD = 7_900;
    private static final char SEP = '\u0001';
    private static final System.Logger LOG = System.getLogger(PgFollower.class.getName());

    private final PgDatabase db;
    private final String origin = UUID.randomUUID().toString();
    private final Map<Kind, BiConsumer<String, String>> handlers = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<Runnable> resyncs = new CopyOnWriteArrayList<>();
    private volatile boolean ready;
    private volatile boolean resyncWanted;
    /** A change was put off to a resync: {@link #applied} stays where it is until one is done. */
    private volatile boolean behind;
    /** The keepers' version applied so far ({@link #applied()}). */
    private volatile long applied;
    private volatile java.util.function.LongSupplier versionNow = () -> 0;
    private volatile boolean closed;
    private volatile Connection listening;
    private Thread thread;

    PgFollower(PgDatabase db) {
        this.db = Objects.requireNonNull(db, "db");
    }

    /** This broker's origin, in every announcement it makes. */
    String origin() {
        return origin;
    }

    /** From now on, {@code handler} gets (tenant, id) of each change of {@code kind} another broker announces. */
    void on(Kind kind, BiConsumer<String, String> handler) {
        handlers.put(kind, handler);
    }

    /**
     * After a break of the follower's connection (changes may have been missed), {@code resync}
     * reads its kind whole; it does once at the follower's next turn too, which closes the gap
     * between the broker reading the kind at start and its handler being in place.
     */
    void onResync(Runnable resync) {
        resyncs.add(resync);
        behind = true; // what came before this handler was in place is applied once the resync is done
        resyncWanted = true;
    }

    /**
     * Announces, inside the transaction on {@code c}, that this broker changed (tenant, id) of
     * {@code kind}: the other brokers hear it when the transaction commits.
     */
    void announce(Connection c, Kind kind, String tenant, String id) throws SQLException {
        announce(c, kind, tenant, id, 0);
    }

    /**
     * {@link #announce(Connection, Kind, String, String)} of a change that took the keepers'
     * {@code version} ({@link PgKeepers}: each change of a subscription, registration or context
     * counts one, in commit order), by which every follower knows how far it has applied.
     */
    void announce(Connection c, Kind kind, String tenant, String id, long version) throws SQLException {
        String payload = origin + SEP + kind.code + SEP + tenant + SEP + id + SEP + version;
        if (payload.getBytes(StandardCharsets.UTF_8).length > MAX_PAYLOAD) {
            payload = origin + SEP + Kind.EVERYTHING.code + SEP + SEP + SEP + version;
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify('" + CHANNEL + "', ?)")) {
            ps.setString(1, payload);
            ps.executeQuery().close();
        }
    }

    /** Starts listening, on a daemon thread of its own; returns once the first {@code LISTEN} was tried. */
    synchronized void start() {
        if (thread != null) {
            return;
        }
        thread = Thread.ofPlatform().daemon().name("cor-pg-follower").start(this::follow);
    }

    /**
     * Has the follower read every kind whole at its next turn (within a second, or once it can
     * reach the database): this broker's memory may hold a change whose commit failed.
     */
    void resyncLater() {
        behind = true;
        resyncWanted = true;
    }

    /** Where a resync reads the keepers' version before it reads them (set once, before {@link #start}). */
    void versionFrom(java.util.function.LongSupplier version) {
        this.versionNow = version;
    }

    /** Whether the follower's connection to the database is up: false while it cannot be reached. */
    boolean ready() {
        return ready;
    }

    private void follow() {
        boolean first = true;
        while (!closed) {
            try (Connection c = db.open()) {
                listening = c;
                c.setAutoCommit(true);
                try (Statement st = c.createStatement()) {
                    st.execute("LISTEN " + CHANNEL);
                }
                if (!first) {
                    resyncWanted = true; // what was announced while the connection was down is read whole
                }
                first = false;
                ready = true;
                PGConnection pg = c.unwrap(PGConnection.class);
                while (!closed) {
                    if (resyncWanted) {
                        resyncWanted = false;
                        resync();
                    }
                    // a resync wanted is run soon: writes wait for it (applied() stays behind until it is done)
                    PGNotification[] got = pg.getNotifications(resyncWanted ? 20 : 1_000);
                    if ((got == null || got.length == 0) && !resyncWanted) {
                        try (Statement st = c.createStatement()) {
                            st.execute("SELECT 1"); // a server that stopped answering is noticed within the socket's timeout
                        }
                        continue;
                    }
                    for (PGNotification n : got) {
                        deliver(n.getParameter());
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (!closed) {
                    ready = false;
                    LOG.log(System.Logger.Level.WARNING, "cor-ngsild: the database cannot be reached to follow other brokers' "
                            + "changes (" + (e instanceof SQLException s ? s.getSQLState() : e.getClass().getSimpleName())
                            + "); trying again every second");
                    pause();
                }
            } finally {
                listening = null;
            }
        }
        ready = false;
    }

    private void deliver(String payload) {
        String[] f = payload.split(String.valueOf(SEP), -1);
        if (f.length != 5 || f[1].length() != 1) {
            return; // not an announcement of this protocol
        }
        long version;
        try {
            version = Long.parseLong(f[4]);
        } catch (NumberFormatException e) {
            return;
        }
        if (!f[0].equals(origin)) { // this broker's own changes are in its memory already
            Kind kind = Kind.of(f[1].charAt(0));
            try {
                if (kind == Kind.EVERYTHING) {
                    resync();
                } else if (kind != null && handlers.get(kind) instanceof BiConsumer<String, String> h) {
                    h.accept(f[2], f[3]);
                }
            } catch (RuntimeException e) {
                behind = true;
                resyncWanted = true;
                LOG.log(System.Logger.Level.WARNING, "cor-ngsild: applying another broker's change of " + kind + " failed: " + e);
            }
        }
        if (!behind && version > applied) {
            applied = version; // announcements come in commit order, which is the versions' order
        }
    }

    /**
     * The keepers' version this broker has applied every change up to: announcements come in the
     * order of their commits, which is their versions' order, so the last one applied says it - as
     * long as none was put off to a resync (then the resync says it, once done).
     */
    long applied() {
        return applied;
    }

    /**
     * Waits until this broker has applied the keepers' changes up to {@code version}, at most
     * {@code maxMs}: yielding in a coroutine, sleeping on a plain thread, a millisecond at a time
     * (the announcements it waits for were committed before the caller asked: they are on their
     * way). Returns whether it got there.
     */
    boolean awaitApplied(long version, long maxMs) {
        long deadline = System.nanoTime() + maxMs * 1_000_000L;
        while (applied < version) {
            if (System.nanoTime() > deadline || closed) {
                return false;
            }
            if (dev.cor.base.CorCo.current() != null) {
                dev.cor.base.CorCo.sleep(1);
            } else {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return true;
    }

    /** Every kind read whole; one that fails is tried again at the next turn. */
    private void resync() {
        long version;
        try {
            version = versionNow.getAsLong(); // read first: what the resync reads is at least this recent
        } catch (RuntimeException e) {
            resyncWanted = true;
            LOG.log(System.Logger.Level.WARNING, "cor-ngsild: reading what other brokers changed failed (" + e
                    + "); trying again");
            return;
        }
        behind = false;
        for (Runnable r : resyncs) {
            try {
                r.run();
            } catch (RuntimeException e) {
                resyncWanted = true;
                LOG.log(System.Logger.Level.WARNING, "cor-ngsild: reading what other brokers changed failed (" + e
                        + "); trying again");
            }
        }
        if (!resyncWanted && !behind && version > applied) {
            applied = version;
        }
    }

    private void pause() {
        try {
            Thread.sleep(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    /** Stops following: the connection is closed and the thread ends. */
    @Override
    public void close() {
        closed = true;
        Connection c = listening;
        if (c != null) {
            LoopConnectionPool.closeQuietly(c);
        }
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
