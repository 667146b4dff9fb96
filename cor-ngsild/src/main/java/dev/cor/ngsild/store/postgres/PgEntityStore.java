package dev.cor.ngsild.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.store.EntityChange;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.EntityWrite;
import dev.cor.ngsild.store.StoreUnavailableException;
import dev.cor.ngsild.store.WriteObserver;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;
import dev.cor.ngsild.store.postgres.PgMigrations.Migration;

/**
 * Entities in PostgreSQL (issue: PostgreSQL - the entities so far: not yet the keepers, the
 * history, the query push-down, nor a launcher flag). A record is kept whole in the stores'
 * binary form ({@link EntityCodec}: read back exactly as written) beside the columns a lookup
 * needs - tenant, id, types; one table for every tenant, the tenant a column (tenants come and go
 * with writes, which DDL per tenant would turn into catalog changes inside a write; one set of
 * statements and indexes serves them all).
 * <p>
 * A write is one transaction: a transaction-level advisory lock on the id (so that two creates of
 * one new id are ordered too, which a row lock cannot do for a row not yet there), the current
 * record read, the change applied, the row written, the observer called - all before the commit,
 * so writes of one id are applied and observed one after the other. Every wait is the database's,
 * through {@link PgDatabase}: inside a coroutine it yields. Any thread.
 */
final class PgEntityStore implements EntityStore {
    /** The entities' part of the schema. */
    public static final List<Migration> MIGRATIONS = List.of(new Migration(1, "entities", List.of(
            "CREATE TABLE cor_tenants (tenant text PRIMARY KEY)",
            // ids in code point order (COLLATE "C"), as the other stores visit them, whatever the database's locale
            "CREATE TABLE cor_entities (tenant text COLLATE \"C\" NOT NULL, id text COLLATE \"C\" NOT NULL,"
                    + " types text[] NOT NULL, doc bytea NOT NULL, PRIMARY KEY (tenant, id))",
            "CREATE INDEX cor_entities_types ON cor_entities USING gin (types)")));

    private final PgDatabase db;

    /** Over {@code db}, whose schema {@link #MIGRATIONS} brought up to date. */
    public PgEntityStore(PgDatabase db) {
        this.db = db;
    }

    /** Its waits yield inside a coroutine: requests may run as coroutines. */
    @Override
    public boolean blocks() {
        return false;
    }

    @Override
    public boolean hasTenant(String tenant) {
        if (DEFAULT_TENANT.equals(tenant)) {
            return true;
        }
        return call(() -> db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM cor_tenants WHERE tenant = ?")) {
                ps.setString(1, tenant);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        }));
    }

    @Override
    public Set<String> tenants() {
        return call(() -> db.read(c -> {
            Set<String> all = new LinkedHashSet<>();
            all.add(DEFAULT_TENANT);
            try (PreparedStatement ps = c.prepareStatement("SELECT tenant FROM cor_tenants ORDER BY tenant");
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    all.add(rs.getString(1));
                }
            }
            return Set.copyOf(all);
        }));
    }

    @Override
    public Entity get(String tenant, String id) {
        return call(() -> db.read(c -> current(c, tenant, id)));
    }

    private static Entity current(Connection c, String tenant, String id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT doc FROM cor_entities WHERE tenant = ? AND id = ?")) {
            ps.setString(1, tenant);
            ps.setString(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? decode(rs.getBytes(1)) : null;
            }
        }
    }

    @Override
    public EntityWrite write(String tenant, String id, EntityChange change, WriteObserver observer) {
        return call(() -> db.inTransaction(c -> {
            try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(? || chr(1) || ?, 0))")) {
                lock.setString(1, tenant);
                lock.setString(2, id);
                lock.executeQuery().close();
            }
            Entity before = current(c, tenant, id);
            Entity after = change.apply(before);
            if (after == before) {
                return new EntityWrite(before, after);
            }
            if (!DEFAULT_TENANT.equals(tenant)) {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO cor_tenants VALUES (?) ON CONFLICT DO NOTHING")) {
                    ps.setString(1, tenant);
                    ps.executeUpdate();
                }
            }
            if (after == null) {
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM cor_entities WHERE tenant = ? AND id = ?")) {
                    ps.setString(1, tenant);
                    ps.setString(2, id);
                    ps.executeUpdate();
                }
            } else {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO cor_entities (tenant, id, types, doc) VALUES (?, ?, ?, ?)"
                        + " ON CONFLICT (tenant, id) DO UPDATE SET types = excluded.types, doc = excluded.doc")) {
                    ps.setString(1, tenant);
                    ps.setString(2, id);
                    ps.setArray(3, c.createArrayOf("text", after.types().toArray()));
                    ps.setBytes(4, encode(after));
                    ps.executeUpdate();
                }
            }
            observer.applied(before, after);
            return new EntityWrite(before, after);
        }));
    }

    @Override
    public void forEach(String tenant, String type, Consumer<Entity> visitor) {
        call(() -> db.inTransaction(c -> { // a cursor needs a transaction: the rows come 256 at a time
            String sql = "SELECT doc FROM cor_entities WHERE tenant = ?" + (type == null ? "" : " AND types @> ARRAY[?::text]")
                    + " ORDER BY id";
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setFetchSize(256);
                ps.setString(1, tenant);
                if (type != null) {
                    ps.setString(2, type);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        visitor.accept(decode(rs.getBytes(1)));
                    }
                }
            }
            return null;
        }));
    }

    @Override
    public int count(String tenant) {
        return call(() -> db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM cor_entities WHERE tenant = ?")) {
                ps.setString(1, tenant);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getInt(1);
                }
            }
        }));
    }

    private static byte[] encode(Entity e) {
        ByteSink out = new ByteSink(256);
        new EntityCodec().writeEntity(out, e);
        return java.util.Arrays.copyOf(out.array(), out.position());
    }

    private static Entity decode(byte[] doc) throws SQLException {
        try {
            return new EntityCodec().readEntity(new ByteSource(doc, 0, doc.length));
        } catch (ByteSource.Malformed e) {
            throw new SQLException("an entity record in the database does not read back: " + e.getMessage(), "XX001", e);
        }
    }

    private interface Call<T> {
        T run() throws SQLException;
    }

    /**
     * {@code call}'s result; a database that cannot be reached or a connection that broke is
     * {@link StoreUnavailableException} (the broker answers 503), any other SQL error an
     * {@link IllegalStateException}.
     */
    private static <T> T call(Call<T> call) {
        try {
            return call.run();
        } catch (SQLException e) {
            String state = e.getSQLState();
            if (state == null || state.startsWith("08") || state.startsWith("57")) {
                throw new StoreUnavailableException("the database cannot be reached (" + state + ")", e);
            }
            throw new IllegalStateException("the database refused a statement (" + state + ")", e);
        }
    }
}
