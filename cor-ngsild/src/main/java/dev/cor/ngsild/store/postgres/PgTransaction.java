package dev.cor.ngsild.store.postgres;

import java.sql.Connection;

/**
 * The transaction of the entity write whose observer is running, for the history to join: a write
 * of the current state and the instances it records commit together, or neither does.
 * {@link PgEntityStore#write} offers its connection just before it calls the observer; the history
 * ({@link PgTemporalStore#record}) takes it at its first line, before anything of its own could
 * yield. Between the offer and the take nothing yields, so no other coroutine of the loop - which
 * shares the thread, and so this slot - can see it; the writer withdraws it after the observer
 * returns, in case nothing took it. One slot per thread.
 */
final class PgTransaction {
    private static final ThreadLocal<Connection> OFFERED = new ThreadLocal<>();

    private PgTransaction() {
    }

    /** Offers the running write's connection to whatever its observer records. */
    static void offer(Connection c) {
        OFFERED.set(c);
    }

    /** The connection offered and not yet taken, or {@code null}: the caller opens its own transaction. */
    static Connection take() {
        Connection c = OFFERED.get();
        if (c != null) {
            OFFERED.remove();
        }
        return c;
    }

    /** Withdraws an offer nothing took. */
    static void withdraw() {
        OFFERED.remove();
    }
}
