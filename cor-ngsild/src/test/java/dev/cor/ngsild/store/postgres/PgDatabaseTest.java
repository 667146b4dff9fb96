package dev.cor.ngsild.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.cor.base.CorCoLoop;

/**
 * {@link PgDatabase} against a real PostgreSQL: a unit of work is one transaction - committed when
 * it returns, rolled back when it throws - on a loop's yielding connections inside a coroutine and
 * on the threads' blocking pool elsewhere; a statement past its deadline is cancelled by the
 * server (57014) and its connection serves the next transaction.
 */
class PgDatabaseTest {
    static PgDatabase db;

    @BeforeAll
    static void start() throws Exception {
        db = SharedPostgres.database(2, 5_000, 300); // a fresh database of the run's one cluster
        db.inTransaction(c -> {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE kept (k int)");
            }
            return null;
        });
    }

    @AfterAll
    static void stop() throws Exception {
        if (db != null) {
            db.close();
        }
    }

    static int count(int k) throws SQLException {
        return db.inTransaction(c -> {
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM kept WHERE k = " + k)) {
                rs.next();
                return rs.getInt(1);
            }
        });
    }

    static void insertThen(int k, boolean fail) throws SQLException {
        db.inTransaction(c -> {
            try (Statement st = c.createStatement()) {
                st.execute("INSERT INTO kept VALUES (" + k + ")");
            }
            if (fail) {
                throw new SQLException("the work failed after its insert", "P0001");
            }
            return null;
        });
    }

    @Test
    void onAPlainThreadWorkThatReturnsIsCommittedAndWorkThatThrowsIsRolledBack() throws Exception {
        insertThen(1, false);
        assertThrows(SQLException.class, () -> insertThen(2, true));
        assertEquals(1, count(1));
        assertEquals(0, count(2));
    }

    @Test
    void inACoroutineTheSameHoldsOnTheLoopsConnections() throws Exception {
        CorCoLoop loop = CorCoLoop.builder().name("pg-tx").build().start();
        try {
            LoopTesting.onLoop(loop, () -> {
                insertThen(3, false);
                assertThrows(SQLException.class, () -> insertThen(4, true));
                assertEquals(1, count(3));
                assertEquals(0, count(4));
                return null;
            });
            assertEquals(1, db.poolOf(loop).open(), "one connection served the loop's transactions one after the other");
        } finally {
            LoopTesting.stop(loop, () -> db.closeOn(loop));
        }
    }

    @Test
    void aStatementPastItsDeadlineIsCancelledByTheServerAndItsConnectionServesTheNext() throws Exception {
        CorCoLoop loop = CorCoLoop.builder().name("pg-deadline").build().start();
        try {
            Object[] outcome = LoopTesting.onLoop(loop, () -> {
                long t0 = System.nanoTime();
                SQLException e = assertThrows(SQLException.class, () -> db.inTransaction(c -> {
                    try (Statement st = c.createStatement()) {
                        st.execute("SELECT pg_sleep(5)");
                    }
                    return null;
                }));
                return new Object[] {e, (System.nanoTime() - t0) / 1_000_000};
            });
            SQLException e = assertInstanceOf(SQLException.class, outcome[0]);
            assertEquals("57014", e.getSQLState(), "cancelled by the server's statement_timeout: " + e);
            long ms = (long) outcome[1];
            assertTrue(ms >= 290 && ms < 3_000, "cancelled at its 300 ms deadline, not after the 5 s: " + ms + " ms");
            assertEquals(7, (int) LoopTesting.onLoop(loop, () -> db.inTransaction(c -> {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 7")) {
                    rs.next();
                    return rs.getInt(1);
                }
            })));
            assertEquals(1, db.poolOf(loop).open(), "the cancelled statement's connection was kept and served the next");
        } finally {
            LoopTesting.stop(loop, () -> db.closeOn(loop));
        }
    }
}
