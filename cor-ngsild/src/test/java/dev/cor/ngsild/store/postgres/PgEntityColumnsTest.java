package dev.cor.ngsild.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The query columns' migration: over a database whose entities were written before it - which
 * hold none of the rows the push-down reads - it fails with a message that says so, and the
 * database stays at the version before it; over an empty one it applies.
 */
class PgEntityColumnsTest {
    @TempDir
    static Path tmp;
    static PostgresCluster cluster;
    static PgDatabase admin;

    @BeforeAll
    static void start() throws Exception {
        cluster = PostgresCluster.start(tmp);
        admin = database("postgres");
    }

    @AfterAll
    static void stop() {
        if (admin != null) {
            admin.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    static PgDatabase database(String name) {
        return new PgDatabase("jdbc:postgresql://127.0.0.1:" + cluster.port() + "/" + name + "?sslmode=disable", "postgres", null, 1,
                5_000, 10_000);
    }

    static PgDatabase fresh(String name) throws SQLException {
        admin.read(c -> {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE DATABASE " + name);
            }
            return null;
        });
        return database(name);
    }

    /** The migrations before the query columns'. */
    static PgMigrations before() {
        List<PgMigrations.Migration> all = new java.util.ArrayList<>();
        all.add(PgEntityStore.MIGRATIONS.get(0));
        for (int v = 2; v < PgEntityColumns.MIGRATION.version(); v++) {
            all.add(new PgMigrations.Migration(v, "before the query columns", List.of()));
        }
        return new PgMigrations(all);
    }

    @Test
    void entitiesFromBeforeTheQueryColumnsAreRefused() throws Exception {
        PgDatabase db = fresh("written_before");
        try {
            int at = db.inTransaction(c -> {
                before().migrate(c);
                try (Statement st = c.createStatement()) {
                    st.execute("INSERT INTO cor_entities (tenant, id, types, doc) VALUES ('', 'urn:ngsi-ld:E:1', '{}', '\\x00')");
                }
                return PgMigrations.version(c);
            });
            SQLException e = assertThrows(SQLException.class, () -> db.inTransaction(c -> PgSchema.MIGRATIONS.migrate(c)));
            assertTrue(e.getMessage().contains("written before the query columns"), e.getMessage());
            assertEquals(at, (int) db.read(PgMigrations::version), "the database stays at the version before");
        } finally {
            db.close();
        }
    }

    @Test
    void anEmptyDatabaseTakesThem() throws Exception {
        PgDatabase db = fresh("empty_before");
        try {
            db.inTransaction(c -> before().migrate(c));
            // the query columns' and whatever came after them
            assertEquals(PgSchema.MIGRATIONS.latest() - PgEntityColumns.MIGRATION.version() + 1,
                    (int) db.inTransaction(c -> PgSchema.MIGRATIONS.migrate(c)));
            assertEquals(PgSchema.MIGRATIONS.latest(), (int) db.read(PgMigrations::version));
        } finally {
            db.close();
        }
    }
}
