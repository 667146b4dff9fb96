package dev.cor.ngsild.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
    /** The tenants besides the default one: answered from memory, on the loop, before a request is dispatched. */
    private final Set<String> tenants = ConcurrentHashMap.newKeySet();

    private final PgFollower follower;

    /** Over {@code db}, whose schema {@link #MIGRATIONS} brought up to date, alone on it (no other broker follows its tenants). */
    public PgEntityStore(PgDatabase db) {
        this(db, null);
    }

    /**
     * Over {@code db}, announcing the tenants it makes through {@code follower} ({@code null}:
     * none) and learning those of other brokers from it; call {@link #reloadTenants} once before use.
     */
    PgEntityStore(PgDatabase db, PgFollower follower) {
        this.db = db;
        this.follower = follower;
        if (follower != null) {
            follower.on(PgFollower.Kind.TENANT, (tenant, id) -> tenantMade(tenant));
            follower.onResync(this::reloadTenants);
        }
    }

    /**
     * Reads the tenants from the database again - at start, and after the follower missed
     * notifications (its connection broke) - keeping those already known.
     */
    void reloadTenants() {
        tenants.addAll(call(() -> db.read(c -> {
            Set<String> all = new LinkedHashSet<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT tenant FROM cor_tenants"); ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    all.add(rs.getString(1));
                }
            }
            return all;
        })));
    }

    /** Another broker made {@code tenant} (its notification): it exists here from now on. */
    void tenantMade(String tenant) {
        tenants.add(tenant);
    }

    /** Its waits yield inside a coroutine: requests may run as coroutines. */
    @Override
    public boolean blocks() {
        return false;
    }

    /** Every read is a round trip to the database: every request that touches the store runs as a coroutine. */
    @Override
    public boolean readsWait() {
        return true;
    }

    /** A write's answer waits for its commit. */
    @Override
    public boolean writesWait() {
        return true;
    }

    /**
     * From memory (a request asks before it is dispatched, on its loop, where the database cannot
     * be waited for): the tenants this broker wrote or read at start, and those other brokers
     * announced ({@link #tenantMade}) - a tenant another broker made a moment ago may be unknown
     * here for the time its notification takes.
     */
    @Override
    public boolean hasTenant(String tenant) {
        return DEFAULT_TENANT.equals(tenant) || tenants.contains(tenant);
    }

    /** From memory, else from the database (a tenant another broker made, its notification not here yet). */
    @Override
    public boolean hasTenantNow(String tenant) {
        if (hasTenant(tenant)) {
            return true;
        }
        boolean there = call(() -> db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM cor_tenants WHERE tenant = ?")) {
                ps.setString(1, tenant);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        }));
        if (there) {
            tenants.add(tenant);
        }
        return there;
    }

    @Override
    public Set<String> tenants() {
        Set<String> all = new java.util.TreeSet<>(tenants);
        all.add(DEFAULT_TENANT);
        return Set.copyOf(all);
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
        EntityWrite w = call(() -> db.inTransaction(c -> {
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
            if (!DEFAULT_TENANT.equals(tenant) && !tenants.contains(tenant)) {
                insertTenant(c, tenant);
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
            PgTransaction.offer(c); // the history records in this transaction
            try {
                observer.applied(before, after);
            } finally {
                PgTransaction.withdraw();
            }
            return new EntityWrite(before, after);
        }));
        if (w.after() != w.before() && !DEFAULT_TENANT.equals(tenant)) {
            tenants.add(tenant); // committed: the tenant exists
        }
        return w;
    }

    /** The tenant's row, in the write's transaction, announced to the other brokers when it is new. */
    private void insertTenant(Connection c, String tenant) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO cor_tenants VALUES (?) ON CONFLICT DO NOTHING")) {
            ps.setString(1, tenant);
            if (ps.executeUpdate() == 1 && follower != null) {
                follower.announce(c, PgFollower.Kind.TENANT, tenant, "");
            }
        }
    }

    /** A write that changes nothing makes no tenant here: the row alone, in a transaction of its own. */
    @Override
    public void createTenant(String tenant) {
        if (hasTenant(tenant)) {
            return;
        }
        call(() -> db.inTransaction(c -> {
            insertTenant(c, tenant);
            return null;
        }));
        tenants.add(tenant); // committed: the tenant exists
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

    /** A unit of work whose SQL errors {@link #call} translates. */
    interface Call<T> {
        T run() throws SQLException;
    }

    /**
     * {@code call}'s result; a database that cannot be reached or a connection that broke is
     * {@link StoreUnavailableException} (the broker answers 503), any other SQL error an
     * {@link IllegalStateException}.
     */
    static <T> T call(Call<T> call) {
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
