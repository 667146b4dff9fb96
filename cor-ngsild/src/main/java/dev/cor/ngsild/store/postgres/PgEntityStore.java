package dev.cor.ngsild.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Predicate;

import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.ValueLookup;
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
 * Entities in PostgreSQL (issue: PostgreSQL - the entities and their queries so far: not yet the
 * keepers, the history, nor a launcher flag). A record is kept whole in the stores' binary form
 * ({@link EntityCodec}: read back exactly as written) beside the columns a lookup needs - tenant,
 * id, types, and the query columns and tables of {@link PgEntityColumns}, which a write keeps
 * current in its transaction and {@link #scan}, {@link #size}, {@link #keys},
 * {@link #idsWithValues}, {@link #idsInBox} read through their indexes; one table for every tenant, the tenant a column (tenants come and go
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
    /** The history, recorded in each write's transaction, or {@code null}: none kept. */
    private final PgTemporalStore temporal;

    /** Over {@code db}, whose schema {@link #MIGRATIONS} brought up to date, alone on it (no other broker follows its tenants). */
    public PgEntityStore(PgDatabase db) {
        this(db, null, null);
    }

    /**
     * Over {@code db}, announcing the tenants it makes through {@code follower} ({@code null}:
     * none) and learning those of other brokers from it; call {@link #reloadTenants} once before use.
     */
    PgEntityStore(PgDatabase db, PgFollower follower) {
        this(db, follower, null);
    }

    /**
     * As {@link #PgEntityStore(PgDatabase, PgFollower)}, keeping history in {@code temporal}
     * ({@code null}: none), over the same database: each write's instances in its transaction.
     */
    PgEntityStore(PgDatabase db, PgFollower follower, PgTemporalStore temporal) {
        this.db = db;
        this.follower = follower;
        this.temporal = temporal;
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

    /**
     * How long a write waits for this broker to apply the subscriptions other brokers committed
     * before it (their announcements are on their way: a millisecond or so); past it - the
     * follower's connection is down, the broker is not ready - the write goes on with what it has.
     */
    static final long FENCE_MS = 2_000;
    private static final System.Logger LOG = System.getLogger(PgEntityStore.class.getName());
    private final java.util.concurrent.atomic.AtomicLong fenceMissedAt = new java.util.concurrent.atomic.AtomicLong();

    private void fenceMissed() {
        long now = System.currentTimeMillis();
        long last = fenceMissedAt.get();
        if (now - last > 60_000 && fenceMissedAt.compareAndSet(last, now)) {
            LOG.log(System.Logger.Level.WARNING, "cor-ngsild: a write went on without the subscriptions other brokers made in the "
                    + "last " + FENCE_MS + " ms (this broker cannot follow them now): it may not notify them (logged once a minute)");
        }
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
    public java.util.Optional<dev.cor.ngsild.store.TemporalStore> temporal() {
        return java.util.Optional.ofNullable(temporal);
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
            if (follower == null) {
                try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(? || chr(1) || ?, 0))")) {
                    lock.setString(1, tenant);
                    lock.setString(2, id);
                    lock.executeQuery().close();
                }
            } else {
                // the same round trip reads how many changes of subscriptions the brokers committed: the write
                // is matched against every one committed before it, whichever broker made it
                long kept;
                try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(? || chr(1) || ?, 0)),"
                        + " (SELECT v FROM cor_kept_version)")) {
                    lock.setString(1, tenant);
                    lock.setString(2, id);
                    try (ResultSet rs = lock.executeQuery()) {
                        rs.next();
                        kept = rs.getLong(2);
                    }
                }
                if (kept > follower.applied() && !follower.awaitApplied(kept, FENCE_MS)) {
                    fenceMissed();
                }
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
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO cor_entities (tenant, id, types, attrs, doc) VALUES (?, ?, ?, ?, ?)"
                        + " ON CONFLICT (tenant, id) DO UPDATE SET types = excluded.types, attrs = excluded.attrs, doc = excluded.doc")) {
                    ps.setString(1, tenant);
                    ps.setString(2, id);
                    ps.setArray(3, c.createArrayOf("text", after.types().toArray()));
                    ps.setArray(4, c.createArrayOf("text", PgEntityColumns.attrs(after)));
                    ps.setBytes(5, encode(after));
                    ps.executeUpdate();
                }
            }
            PgEntityColumns.update(c, tenant, id, before, after);
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
    /**
     * Counted in the database - except on a loop outside a coroutine, which cannot wait: a gauge
     * read inline by {@code /metrics}. There the count last read is answered (0 before the first),
     * and a count is read again on a thread of its own, for the next scrape.
     */
    public int count(String tenant) {
        if (dev.cor.base.CorCoLoop.current() != null && dev.cor.base.CorCo.current() == null) {
            if (recounting.add(tenant)) {
                COUNTER.execute(() -> {
                    try {
                        count(tenant);
                    } catch (RuntimeException e) {
                        // the database cannot be reached: the last count stays, the next scrape tries again
                    } finally {
                        recounting.remove(tenant);
                    }
                });
            }
            return counted.getOrDefault(tenant, 0);
        }
        int n = call(() -> db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM cor_entities WHERE tenant = ?")) {
                ps.setString(1, tenant);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getInt(1);
                }
            }
        }));
        counted.put(tenant, n);
        return n;
    }

    /** The counts last read, for a loop that asks ({@link #count}); the tenants being counted again. */
    private final java.util.Map<String, Integer> counted = new ConcurrentHashMap<>();
    private final Set<String> recounting = ConcurrentHashMap.newKeySet();
    /** Where a count a loop asked for is read: one daemon thread for every store of the process, idle ones end. */
    private static final java.util.concurrent.Executor COUNTER = new java.util.concurrent.ThreadPoolExecutor(0, 1, 30,
            java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(),
            r -> Thread.ofPlatform().daemon().name("cor-pg-count").unstarted(r));

    /**
     * Walks the index in keyset pages ({@link PgEntityColumns#scanPage}) of 16 rows, then twice as
     * many each time up to 1024: a visitor that stops after a few has had at most 16 rows read,
     * a whole walk takes a round trip per 1024.
     */
    @Override
    public void scan(String tenant, Index index, String key, Predicate<Entity> visitor) {
        String sql = PgEntityColumns.scanPage(index);
        String after = "";
        for (int page = 16; ; page = Math.min(page * 2, 1024)) {
            String from = after;
            int limit = page;
            List<Entity> rows = call(() -> db.read(c -> {
                try (PreparedStatement ps = c.prepareStatement(sql)) {
                    int p = 1;
                    ps.setString(p++, tenant);
                    ps.setString(p++, from);
                    if (index != Index.ALL) {
                        ps.setString(p++, key);
                    }
                    ps.setInt(p, limit);
                    List<Entity> out = new ArrayList<>(limit);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            out.add(decode(rs.getBytes(2)));
                        }
                    }
                    return out;
                }
            }));
            for (Entity e : rows) {
                if (!visitor.test(e)) {
                    return;
                }
            }
            if (rows.size() < limit) {
                return;
            }
            after = rows.get(rows.size() - 1).id();
        }
    }

    /** Counted up to {@value #EXACT} ({@link #boundedCount}). */
    @Override
    public int size(String tenant, Index index, String key) {
        return call(() -> db.read(c -> boundedCount(c, "SELECT 1 FROM cor_entities WHERE tenant = ?" + PgEntityColumns.predicate(index),
                index == Index.ALL ? new Object[] {tenant} : new Object[] {tenant, key})));
    }

    /** Below this many, a size is counted exactly; above, the planner's estimate is taken. */
    static final int EXACT = 10_000;

    /**
     * How many rows {@code select} gives: counted, reading at most {@value #EXACT} of them; when
     * there are that many, the planner's estimate of them (its statistics, no row read), at least
     * {@value #EXACT} - a size only ranks plans, and past that the planner's ranks them as well
     * as a count would, at no cost that grows with the tenant.
     */
    private static int boundedCount(Connection c, String select, Object... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM (" + select + " LIMIT " + EXACT + ") s")) {
            bind(ps, params);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                int n = rs.getInt(1);
                if (n < EXACT) {
                    return n;
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("EXPLAIN (FORMAT JSON) " + select)) {
            bind(ps, params);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                java.util.regex.Matcher m = PLAN_ROWS.matcher(rs.getString(1));
                double rows = m.find() ? Double.parseDouble(m.group(1)) : EXACT;
                return (int) Math.max(EXACT, Math.min(rows, Integer.MAX_VALUE));
            }
        }
    }

    /** The top node's row estimate in a plan as JSON (the first "Plan Rows" is the top node's). */
    private static final java.util.regex.Pattern PLAN_ROWS = java.util.regex.Pattern.compile("\"Plan Rows\": ([0-9.eE+]+)");

    private static void bind(PreparedStatement ps, Object... params) throws SQLException {
        for (int i = 0; i < params.length; i++) {
            if (params[i] instanceof Double d) {
                ps.setDouble(i + 1, d);
            } else {
                ps.setString(i + 1, (String) params[i]);
            }
        }
    }

    /** Every entity's types or attribute names, made distinct by the database ({@link PgEntityColumns#keys}). */
    @Override
    public Set<String> keys(String tenant, Index index) {
        if (index == Index.ALL) {
            return Set.of();
        }
        return call(() -> db.read(c -> {
            Set<String> out = new java.util.HashSet<>();
            try (PreparedStatement ps = c.prepareStatement(PgEntityColumns.keys(index))) {
                ps.setString(1, tenant);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(rs.getString(1));
                    }
                }
            }
            return out;
        }));
    }

    /**
     * From {@code cor_entity_values} ({@link PgEntityColumns#valuesIn}), which holds every
     * attribute of every tenant: never {@code null} but for more than {@code max} entries.
     */
    @Override
    public List<String> idsWithValues(String tenant, ValueLookup lookup, int max) {
        List<ValueLookup.Range> ranges = PgEntityColumns.ranges(lookup);
        if (ranges.isEmpty()) {
            return List.of();
        }
        return call(() -> db.read(c -> {
            List<String> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(PgEntityColumns.valuesIn(ranges.size()))) {
                int p = 1;
                for (ValueLookup.Range r : ranges) {
                    ps.setString(p++, tenant);
                    ps.setString(p++, lookup.attribute());
                    ps.setBytes(p++, PgEntityColumns.low(r.low()));
                    ps.setBytes(p++, r.high().bytes());
                }
                ps.setLong(p, max + 1L);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        if (out.size() >= max) {
                            return null;
                        }
                        out.add(rs.getString(1));
                    }
                }
            }
            // an id with several keys in the ranges (array items, instances) once, in Java's id order, as the memory
            // store gives them and the caller merges them (the ids' collation "C" agrees but past U+FFFF)
            return List.copyOf(new java.util.TreeSet<>(out));
        }));
    }

    /** From {@code cor_entity_boxes}' GiST index ({@link PgEntityColumns#BOXES}). */
    @Override
    public Collection<String> idsInBox(String tenant, String geoproperty, double minLon, double minLat, double maxLon,
            double maxLat) {
        return call(() -> db.read(c -> {
            List<String> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(PgEntityColumns.BOXES)) {
                bind(ps, tenant, geoproperty, minLon, minLat, maxLon, maxLat);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(rs.getString(1));
                    }
                }
            }
            return out;
        }));
    }

    /** The boxes that touch it, counted up to {@value #EXACT} ({@link #boundedCount}): an entity with several counts each. */
    @Override
    public int sizeInBox(String tenant, String geoproperty, double minLon, double minLat, double maxLon, double maxLat) {
        return call(() -> db.read(c -> boundedCount(c, PgEntityColumns.BOX_ROWS, tenant, geoproperty, minLon, minLat, maxLon,
                maxLat)));
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

    /** How many units of work {@link #call} turned into {@link StoreUnavailableException}, every store of the process. */
    static final java.util.concurrent.atomic.LongAdder UNAVAILABLE = new java.util.concurrent.atomic.LongAdder();

    /** A unit of work whose SQL errors {@link #call} translates. */
    interface Call<T> {
        T run() throws SQLException;
    }

    /**
     * {@code call}'s result; a database that cannot be reached or a connection that broke is
     * {@link StoreUnavailableException} (the broker answers 503), any other SQL error an
     * {@link IllegalStateException}. The one rule of the package's stores.
     */
    static <T> T call(Call<T> call) {
        try {
            return call.run();
        } catch (SQLException e) {
            String state = e.getSQLState();
            if (state == null || state.startsWith("08") || state.startsWith("57")) {
                UNAVAILABLE.increment();
                throw new StoreUnavailableException("the database cannot be reached (" + state + ")", e);
            }
            throw new IllegalStateException("the database refused a statement (" + state + ")", e);
        }
    }
}
