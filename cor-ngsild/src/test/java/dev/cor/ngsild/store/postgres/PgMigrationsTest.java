package dev.cor.ngsild.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.cor.ngsild.store.postgres.PgMigrations.Migration;

/**
 * The broker's schema migrations against a real PostgreSQL: applied once each and in order, by
 * one of eight brokers starting together; a failed migration leaves the version before it; a
 * database a newer broker migrated is refused.
 */
class PgMigrationsTest {
    @TempDir
    static Path tmp;
    static PostgresCluster cluster;
    static final AtomicInteger DATABASES = new AtomicInteger();

    @BeforeAll
    static void start() throws Exception {
        cluster = PostgresCluster.start(tmp);
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A new, empty database of the cluster; its name. */
    static String freshDatabase() throws SQLException {
        String name = "m" + DATABASES.incrementAndGet();
        try (Connection c = connect("postgres"); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name);
        }
        return name;
    }

    static Connection connect(String database) throws SQLException {
        return new org.postgresql.Driver().connect("jdbc:postgresql://127.0.0.1:" + cluster.port() + "/" + database
                + "?user=postgres&sslmode=disable&socketFactory=" + YieldingSocketFactory.class.getName(), new Properties());
    }

    static int count(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    static final Migration ONE = new Migration(1, "the table", List.of("CREATE TABLE things (k int PRIMARY KEY)",
            "CREATE TABLE ran (version int)", "INSERT INTO ran VALUES (1)"));
    static final Migration TWO = new Migration(2, "a column", List.of("ALTER TABLE things ADD COLUMN v text",
            "INSERT INTO ran VALUES (2)"));
    static final Migration THREE = new Migration(3, "an index", List.of("CREATE INDEX things_v ON things (v)",
            "INSERT INTO ran VALUES (3)"));

    @Test
    void aFreshDatabaseIsBroughtToTheLatestVersionAndAgainIsNothing() throws Exception {
        String db = freshDatabase();
        try (Connection c = connect(db)) {
            PgMigrations m = new PgMigrations(List.of(ONE, TWO));
            assertEquals(2, m.migrate(c));
            assertEquals(0, m.migrate(c), "a database at the latest version is left as it is");
            assertEquals(2, PgMigrations.version(c));
            assertEquals(2, count(c, "SELECT count(*) FROM ran"));
            assertEquals(1, count(c, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'things' AND column_name = 'v'"));
            assertEquals(1, new PgMigrations(List.of(ONE, TWO, THREE)).migrate(c), "a later broker adds only what it brings");
            assertTrue(c.getAutoCommit(), "the connection is given back as it came");
        }
    }

    @Test
    void eightBrokersStartingTogetherMigrateOnce() throws Exception {
        String db = freshDatabase();
        PgMigrations m = new PgMigrations(List.of(ONE, TWO, THREE));
        int n = 8;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> applied = new ArrayList<>();
            for (int k = 0; k < n; k++) {
                applied.add(pool.submit(() -> {
                    try (Connection c = connect(db)) {
                        go.await();
                        return m.migrate(c);
                    }
                }));
            }
            go.countDown();
            int total = 0;
            for (Future<Integer> f : applied) {
                total += f.get(60, TimeUnit.SECONDS);
            }
            assertEquals(3, total, "each migration applied by one of them");
            try (Connection c = connect(db)) {
                assertEquals(3, count(c, "SELECT count(*) FROM ran"));
                assertEquals(3, count(c, "SELECT count(DISTINCT version) FROM ran"));
                assertEquals(3, PgMigrations.version(c));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aFailedMigrationLeavesTheVersionBeforeItAndNothingOfItself() throws Exception {
        String db = freshDatabase();
        Migration broken = new Migration(2, "half of it fails", List.of("CREATE TABLE half (k int)", "ALTER TABLE nowhere ADD x int"));
        try (Connection c = connect(db)) {
            SQLException e = assertThrows(SQLException.class, () -> new PgMigrations(List.of(ONE, broken)).migrate(c));
            assertEquals("42P01", e.getSQLState(), e.toString()); // undefined_table
            assertEquals(1, PgMigrations.version(c));
            assertEquals(0, count(c, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'half'"));
            assertEquals(1, new PgMigrations(List.of(ONE, TWO)).migrate(c), "the right migration 2 is applied afterwards");
        }
    }

    @Test
    void aDatabaseMigratedByANewerBrokerIsRefused() throws Exception {
        String db = freshDatabase();
        try (Connection c = connect(db)) {
            new PgMigrations(List.of(ONE, TWO, THREE)).migrate(c);
            SQLException e = assertThrows(SQLException.class, () -> new PgMigrations(List.of(ONE, TWO)).migrate(c));
            assertEquals("55000", e.getSQLState());
            assertTrue(e.getMessage().contains("version 3") && e.getMessage().contains("up to 2"), e.getMessage());
        }
    }

    @Test
    void migrationsAreNumberedFromOneWithoutAGap() {
        assertThrows(IllegalArgumentException.class, () -> new PgMigrations(List.of(ONE, THREE)));
        assertThrows(IllegalArgumentException.class, () -> new Migration(0, "none", List.of()));
    }
}
