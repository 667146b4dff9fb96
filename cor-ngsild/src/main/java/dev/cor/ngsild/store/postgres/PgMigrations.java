package dev.cor.ngsild.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Objects;

/**
 * The database's schema, made and moved forward by the broker: an ordered list of migrations,
 * each applied once, in its own transaction, recorded in {@code cor_schema_version}. Several
 * brokers starting at once on one database migrate it once: each takes the same transaction-level
 * advisory lock ({@value #LOCK_KEY}) before it reads the version, so the others wait and then find
 * the work done. A database migrated by a newer broker (a version this one does not know) is
 * refused - an older broker must not write a schema it does not understand. A migration that fails
 * leaves the database at the version before it. Immutable; any thread.
 */
final class PgMigrations {
    /** The advisory lock every broker takes to migrate: "cor" and 1, as one bigint. */
    static final long LOCK_KEY = 0x636f72_00000001L;

    /** One step: the statements that take the schema from {@code version - 1} to {@code version}. */
    public record Migration(int version, String description, List<String> statements) {
        public Migration {
            if (version < 1) {
                throw new IllegalArgumentException("a migration's version starts at 1: " + version);
            }
            statements = List.copyOf(statements);
        }
    }

    private final List<Migration> migrations;

    /** {@code migrations} numbered 1, 2, 3... in order, none missing. */
    public PgMigrations(List<Migration> migrations) {
        for (int k = 0; k < migrations.size(); k++) {
            if (migrations.get(k).version() != k + 1) {
                throw new IllegalArgumentException("migration " + (k + 1) + " is numbered " + migrations.get(k).version());
            }
        }
        this.migrations = List.copyOf(migrations);
    }

    /** The version these migrations bring a database to. */
    public int latest() {
        return migrations.size();
    }

    /**
     * Brings the database to {@link #latest()}: the migrations it lacks, each in a transaction of
     * its own under the advisory lock. {@code c} is used with auto-commit off and given back so.
     *
     * @return how many migrations were applied (0: it was current, perhaps by another broker's hand)
     * @throws SQLException a failed migration (the database stays at the version before it), or a
     *                      database at a version newer than {@link #latest()}
     */
    public int migrate(Connection c) throws SQLException {
        Objects.requireNonNull(c, "c");
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        int applied = 0;
        try {
            while (true) {
                try (Statement st = c.createStatement()) {
                    st.execute("SELECT pg_advisory_xact_lock(" + LOCK_KEY + ")");
                    st.execute("CREATE TABLE IF NOT EXISTS cor_schema_version (version int PRIMARY KEY, description text NOT NULL,"
                            + " applied_at timestamptz NOT NULL DEFAULT now())");
                }
                int at = version(c);
                if (at > latest()) {
                    c.rollback();
                    throw new SQLException("the database's schema is at version " + at + ", made by a newer broker; this one "
                            + "knows versions up to " + latest(), "55000");
                }
                if (at == latest()) {
                    c.commit();
                    return applied;
                }
                Migration m = migrations.get(at);
                try (Statement st = c.createStatement()) {
                    for (String sql : m.statements()) {
                        st.execute(sql);
                    }
                }
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO cor_schema_version (version, description) VALUES (?, ?)")) {
                    ps.setInt(1, m.version());
                    ps.setString(2, m.description());
                    ps.executeUpdate();
                }
                c.commit(); // one migration, one transaction: the lock is let go and taken again for the next
                applied++;
            }
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException r) {
                e.addSuppressed(r);
            }
            throw e;
        } finally {
            c.setAutoCommit(auto);
        }
    }

    /** The version the database is at (0: none applied), read under the lock. */
    static int version(Connection c) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT coalesce(max(version), 0) FROM cor_schema_version")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
