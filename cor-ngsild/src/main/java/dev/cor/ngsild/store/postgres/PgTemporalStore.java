package dev.cor.ngsild.store.postgres;

import static dev.cor.ngsild.store.postgres.PgEntityStore.call;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.store.TemporalEntity;
import dev.cor.ngsild.store.TemporalRetention;
import dev.cor.ngsild.store.TemporalStore;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;
import dev.cor.ngsild.store.postgres.PgMigrations.Migration;

/**
 * The history in PostgreSQL: it owns the tables of {@link #MIGRATIONS} - per (tenant, entity) a
 * head ({@code cor_history_heads}: types, scopes, the attributes with instances, its times), every
 * instance a row of {@code cor_history} (tenant, entity, attribute, its number {@code n} from the
 * sequence {@code cor_history_n} - its id is {@link TemporalInstance#idOf}{@code (n)} -, its four
 * times as epoch milliseconds, {@link TemporalInstance#NO_TIME} where it has none, its datasetId,
 * and the attribute instance in the stores' binary form ({@link EntityCodec#writeAttribute})), and
 * the tenants that ever had history ({@code cor_history_tenants}).
 * <p>
 * <b>Plan.</b> A series (tenant, entity, attribute) is read through an index per time property,
 * each ending in {@code n}: a window is one range scan already in the answer's order (time, then
 * the order recorded - {@code n} grows with it, the writes of one entity being serialized by its
 * advisory lock); lastN is the same scan backwards, reversed here. The deletion times have a
 * partial index (only deletion instances have one). The primary key (tenant, entity, attribute, n)
 * finds an instance by id. Age retention deletes by {@code created_at} (when the broker recorded
 * the instance, as the durable store counts) through a BRIN index, which costs a write next to
 * nothing. Ids are ordered in code point order ({@code COLLATE "C"}), as the other stores visit
 * them. The price is at the write: an instance is a heap row and an entry in five B-trees, each
 * led by the series' ids (a series key of its own would make the entries shorter: not yet).
 * <p>
 * <b>Writes.</b> A {@link #record} made inside an entity write's observer joins its transaction
 * ({@link PgTransaction}): the instances commit or roll back with the current state, under the
 * entity's advisory lock the write holds. Any other write (the temporal API's own) is a
 * transaction of its own that takes the same lock first, so the history of one entity is written
 * in one order whichever way it comes. A record is one statement: the instances, the head and the
 * tenant together.
 * <p>
 * <b>Retention.</b> By age only: PostgreSQL's disk is the bound, as a durable store's is, and
 * the byte bound - an estimate of the heap for the in-process stores - is refused here rather
 * than silently not kept. An {@link #expire} deletes at most {@value #EXPIRE_PER_CALL} instances,
 * in batches, so that a long backlog is worked off over several calls without one long statement
 * (at the broker's default pace, 5 000 a second: a history recorded faster than that keeps more
 * than its age until the ingest slows).
 * <p>
 * <b>Tenants.</b> {@link #hasTenant} is asked on a request's loop before dispatch, where the
 * database cannot be waited for: it answers from the tenants read at start ({@link #reloadTenants})
 * and those this broker recorded into since; elsewhere it asks the database what memory does not
 * know. A tenant whose only history another broker recorded through the temporal API after this
 * one started is unknown to this one's loops until it restarts (no follower announces it yet).
 * <p>
 * Every thread: its waits are the database's ({@link PgDatabase}), yielding inside a coroutine.
 */
final class PgTemporalStore implements TemporalStore {
    private static final String NO_TIME = "'-9223372036854775808'::bigint";

    /** The history's part of the schema. */
    static final List<Migration> MIGRATIONS = List.of(new Migration(4, "history", List.of(
            "CREATE SEQUENCE cor_history_n",
            "CREATE TABLE cor_history_tenants (tenant text PRIMARY KEY)",
            "CREATE TABLE cor_history_heads (tenant text COLLATE \"C\" NOT NULL, id text COLLATE \"C\" NOT NULL,"
                    + " types text[] NOT NULL, scopes text[] NOT NULL, attributes text[] NOT NULL, created_at bigint NOT NULL,"
                    + " modified_at bigint NOT NULL, deleted_at bigint NOT NULL, PRIMARY KEY (tenant, id))",
            "CREATE TABLE cor_history (tenant text COLLATE \"C\" NOT NULL, entity text COLLATE \"C\" NOT NULL,"
                    + " attribute text COLLATE \"C\" NOT NULL, n bigint NOT NULL, observed_at bigint NOT NULL,"
                    + " created_at bigint NOT NULL, modified_at bigint NOT NULL, deleted_at bigint NOT NULL, dataset_id text,"
                    + " doc bytea NOT NULL, PRIMARY KEY (tenant, entity, attribute, n))",
            "CREATE INDEX cor_history_observed ON cor_history (tenant, entity, attribute, observed_at, n)",
            "CREATE INDEX cor_history_created ON cor_history (tenant, entity, attribute, created_at, n)",
            "CREATE INDEX cor_history_modified ON cor_history (tenant, entity, attribute, modified_at, n)",
            "CREATE INDEX cor_history_deleted ON cor_history (tenant, entity, attribute, deleted_at, n)"
                    + " WHERE deleted_at <> " + NO_TIME,
            // summarized as each range of pages fills, not only by a vacuum: an expiry reads the old ranges alone
            "CREATE INDEX cor_history_age ON cor_history USING brin (created_at) WITH (autosummarize = on)")));

    /** The most instances one {@link #expire} deletes. */
    static final int EXPIRE_PER_CALL = 50_000;
    private static final int EXPIRE_BATCH = 5_000;
    private static final String[] NO_NAMES = new String[0];

    private final PgDatabase db;
    private final TemporalRetention retention;
    private final LongSupplier clock;
    /** The tenants known to have history: hasTenant answers from here where it cannot wait. */
    private final Set<String> tenants = ConcurrentHashMap.newKeySet();

    /** Over {@code db}, whose schema holds {@link #MIGRATIONS}, keeping everything; call {@link #reloadTenants} once before use. */
    PgTemporalStore(PgDatabase db) {
        this(db, TemporalRetention.FOREVER, System::currentTimeMillis);
    }

    /**
     * @param retention its age; its byte bound must be {@link Long#MAX_VALUE} (see the class's "Retention")
     * @param clock     the time a head is recorded or edited at
     */
    PgTemporalStore(PgDatabase db, TemporalRetention retention, LongSupplier clock) {
        this.db = Objects.requireNonNull(db, "db");
        this.retention = Objects.requireNonNull(retention, "retention");
        this.clock = Objects.requireNonNull(clock, "clock");
        if (retention.maxBytes() != Long.MAX_VALUE) {
            throw new IllegalArgumentException("a PostgreSQL history is kept by age only (its disk is the bound): no byte bound");
        }
    }

    /**
     * Reads the tenants with history from the database - at start, before requests ask
     * {@link #hasTenant} on their loops - keeping those already known.
     */
    void reloadTenants() {
        tenants.addAll(call(() -> db.read(c -> {
            Set<String> all = new java.util.HashSet<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT tenant FROM cor_history_tenants");
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    all.add(rs.getString(1));
                }
            }
            return all;
        })));
    }

    // ---------------------------------------------------------------- writes

    @Override
    public List<TemporalInstance> record(String tenant, String entityId, List<String> types, List<String> scopes,
            List<TemporalInstance> instances, long deletedAt) {
        Connection joined = PgTransaction.take(); // first: nothing may yield before (PgTransaction)
        if (joined != null) {
            return call(() -> record(joined, tenant, entityId, types, scopes, instances, deletedAt));
        }
        List<TemporalInstance> out = call(() -> db.inTransaction(c -> {
            lock(c, tenant, entityId);
            return record(c, tenant, entityId, types, scopes, instances, deletedAt);
        }));
        tenants.add(tenant); // committed
        return out;
    }

    /** The record's one statement, on {@code c}, inside the transaction that holds the entity's lock. */
    private List<TemporalInstance> record(Connection c, String tenant, String entityId, List<String> types,
            List<String> scopes, List<TemporalInstance> instances, long deletedAt) throws SQLException {
        int size = instances.size();
        String[] attrs = new String[size];
        long[] observed = new long[size];
        long[] created = new long[size];
        long[] modified = new long[size];
        long[] deleted = new long[size];
        String[] datasets = new String[size];
        byte[][] docs = new byte[size][];
        Set<String> named = new LinkedHashSet<>();
        EntityCodec codec = new EntityCodec();
        ByteSink sink = new ByteSink(256);
        for (int k = 0; k < size; k++) {
            TemporalInstance i = instances.get(k);
            attrs[k] = i.attribute();
            observed[k] = i.observedAt();
            created[k] = i.value().createdAt();
            modified[k] = i.value().modifiedAt();
            deleted[k] = i.deletedAt();
            datasets[k] = i.value().datasetId();
            docs[k] = encode(codec, sink, i.value());
            named.add(i.attribute());
        }
        // types: the latest write's first, then every earlier one (TemporalEntity), unless they
        // begin the list already; null types or scopes leave the head's as they are
        String set = (types == null ? "" : "types = CASE WHEN h.types[1:cardinality(excluded.types)] = excluded.types"
                + " THEN h.types ELSE ARRAY(SELECT t FROM (SELECT DISTINCT ON (t) t, o FROM unnest(excluded.types || h.types)"
                + " WITH ORDINALITY AS u(t, o) ORDER BY t, o) d ORDER BY o) END, ")
                + (scopes == null ? "" : "scopes = excluded.scopes, ")
                + "attributes = ARRAY(SELECT DISTINCT a FROM unnest(h.attributes || excluded.attributes) AS a),"
                + " modified_at = excluded.modified_at, deleted_at = excluded.deleted_at";
        String sql = "WITH t AS (INSERT INTO cor_history_tenants VALUES (?) ON CONFLICT DO NOTHING),"
                + " i AS (INSERT INTO cor_history (tenant, entity, attribute, n, observed_at, created_at, modified_at,"
                + " deleted_at, dataset_id, doc) SELECT ?, ?, u.a, nextval('cor_history_n'), u.o, u.c, u.m, u.d, u.ds, u.doc"
                + " FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::bytea[])"
                + " AS u(a, o, c, m, d, ds, doc) RETURNING n),"
                + " h AS (INSERT INTO cor_history_heads AS h (tenant, id, types, scopes, attributes, created_at, modified_at,"
                + " deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO UPDATE SET " + set + ")"
                + " SELECT n FROM i ORDER BY n"; // numbered in the order given: the unnest's order
        long now = recordedAt(instances, deletedAt);
        List<TemporalInstance> out = new ArrayList<>(size);
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int p = 1;
            ps.setString(p++, tenant);
            ps.setString(p++, tenant);
            ps.setString(p++, entityId);
            ps.setArray(p++, c.createArrayOf("text", attrs));
            ps.setObject(p++, observed); // a long[]: the driver sends it as int8[]
            ps.setObject(p++, created);
            ps.setObject(p++, modified);
            ps.setObject(p++, deleted);
            ps.setArray(p++, c.createArrayOf("text", datasets));
            ps.setArray(p++, c.createArrayOf("bytea", docs));
            ps.setString(p++, tenant);
            ps.setString(p++, entityId);
            ps.setArray(p++, c.createArrayOf("text", types == null ? NO_NAMES : types.toArray(NO_NAMES)));
            ps.setArray(p++, c.createArrayOf("text", scopes == null ? NO_NAMES : scopes.toArray(NO_NAMES)));
            ps.setArray(p++, c.createArrayOf("text", named.toArray(NO_NAMES)));
            ps.setLong(p++, now);
            ps.setLong(p++, now);
            ps.setLong(p, deletedAt);
            try (ResultSet rs = ps.executeQuery()) {
                for (int k = 0; rs.next(); k++) {
                    out.add(instances.get(k).withId(TemporalInstance.idOf(rs.getLong(1))));
                }
            }
        }
        if (out.size() != size) {
            throw new SQLException("recorded " + out.size() + " instances of " + size, "XX000");
        }
        return out;
    }

    /**
     * When a record happened, for its head: the latest of its instances' times and its deletion
     * (a write's instances carry the write's time; a copied history its own), else the clock -
     * as the durable store dates its heads.
     */
    private long recordedAt(List<TemporalInstance> instances, long deletedAt) {
        long t = deletedAt;
        for (TemporalInstance i : instances) {
            t = Math.max(t, Math.max(i.value().createdAt(), i.value().modifiedAt()));
        }
        return t == TemporalInstance.NO_TIME ? clock.getAsLong() : t;
    }

    /** Every tenant with history, read from the database (a copy lists them; not asked on a loop). */
    @Override
    public Set<String> tenants() {
        return call(() -> db.read(c -> {
            Set<String> all = new java.util.TreeSet<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT tenant FROM cor_history_tenants"); ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    all.add(rs.getString(1));
                }
            }
            return Set.copyOf(all);
        }));
    }

    /** Takes the entity's advisory lock for the transaction: the same key as {@link PgEntityStore#write}. */
    private static void lock(Connection c, String tenant, String entityId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(? || chr(1) || ?, 0))")) {
            ps.setString(1, tenant);
            ps.setString(2, entityId);
            ps.executeQuery().close();
        }
    }

    @Override
    public boolean deleteEntity(String tenant, String entityId) {
        return call(() -> db.inTransaction(c -> {
            lock(c, tenant, entityId);
            update(c, "DELETE FROM cor_history WHERE tenant = ? AND entity = ?", tenant, entityId);
            return update(c, "DELETE FROM cor_history_heads WHERE tenant = ? AND id = ?", tenant, entityId) == 1;
        }));
    }

    @Override
    public boolean deleteAttribute(String tenant, String entityId, String attribute, String datasetId, boolean all) {
        return call(() -> db.inTransaction(c -> {
            lock(c, tenant, entityId);
            int deleted = all ? update(c, "DELETE FROM cor_history WHERE tenant = ? AND entity = ? AND attribute = ?", tenant,
                    entityId, attribute)
                    : update(c, "DELETE FROM cor_history WHERE tenant = ? AND entity = ? AND attribute = ?"
                            + " AND dataset_id IS NOT DISTINCT FROM ?::text", tenant, entityId, attribute, datasetId);
            return deleted > 0 && edited(c, tenant, entityId, attribute);
        }));
    }

    @Override
    public boolean modifyInstance(String tenant, String entityId, String attribute, String instanceId, Attribute value) {
        long n = TemporalInstance.numberOf(instanceId);
        if (n < 0) {
            return false; // not an id this store gives: no instance has it
        }
        return call(() -> db.inTransaction(c -> {
            lock(c, tenant, entityId);
            TemporalInstance was;
            try (PreparedStatement ps = c.prepareStatement("SELECT observed_at, deleted_at, doc FROM cor_history"
                    + " WHERE tenant = ? AND entity = ? AND attribute = ? AND n = ?")) {
                ps.setString(1, tenant);
                ps.setString(2, entityId);
                ps.setString(3, attribute);
                ps.setLong(4, n);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return false;
                    }
                    was = new TemporalInstance(attribute, decode(new EntityCodec(), rs.getBytes(3)), instanceId, rs.getLong(1),
                            rs.getLong(2));
                }
            }
            TemporalInstance now = was.modifiedTo(value);
            update(c, "UPDATE cor_history SET observed_at = ?, modified_at = ?, dataset_id = ?::text, doc = ?"
                    + " WHERE tenant = ? AND entity = ? AND attribute = ? AND n = ?", now.observedAt(), now.value().modifiedAt(),
                    now.value().datasetId(), encode(new EntityCodec(), new ByteSink(256), now.value()), tenant, entityId, attribute, n);
            return edited(c, tenant, entityId, attribute);
        }));
    }

    @Override
    public boolean deleteInstance(String tenant, String entityId, String attribute, String instanceId) {
        long n = TemporalInstance.numberOf(instanceId);
        if (n < 0) {
            return false;
        }
        return call(() -> db.inTransaction(c -> {
            lock(c, tenant, entityId);
            return update(c, "DELETE FROM cor_history WHERE tenant = ? AND entity = ? AND attribute = ? AND n = ?", tenant,
                    entityId, attribute, n) > 0 && edited(c, tenant, entityId, attribute);
        }));
    }

    /**
     * After an edit of one attribute's instances, under the entity's lock: the head's modifiedAt
     * is now, and the attribute leaves its list when no instance of it is left. Answers true: the
     * edit was made.
     */
    private boolean edited(Connection c, String tenant, String entityId, String attribute) throws SQLException {
        update(c, "UPDATE cor_history_heads SET modified_at = ?, attributes = CASE WHEN EXISTS (SELECT 1 FROM cor_history"
                + " WHERE tenant = ? AND entity = ? AND attribute = ?) THEN attributes ELSE array_remove(attributes, ?::text) END"
                + " WHERE tenant = ? AND id = ?", clock.getAsLong(), tenant, entityId, attribute, attribute, tenant, entityId);
        return true;
    }

    /** Runs {@code sql} on {@code c} with {@code params} (text, bigint, bytea; a null typed in the SQL): the rows it changed. */
    private static int update(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int k = 0; k < params.length; k++) {
                ps.setObject(k + 1, params[k]);
            }
            return ps.executeUpdate();
        }
    }

    // ---------------------------------------------------------------- reads

    private static final String HEAD = "SELECT id, types, scopes, attributes, created_at, modified_at, deleted_at"
            + " FROM cor_history_heads";

    @Override
    public TemporalEntity entity(String tenant, String entityId) {
        return call(() -> db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement(HEAD + " WHERE tenant = ? AND id = ?")) {
                ps.setString(1, tenant);
                ps.setString(2, entityId);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? head(rs) : null;
                }
            }
        }));
    }

    /** How many heads {@link #entities} reads at a time. */
    static final int HEADS_PER_PAGE = 256;

    /**
     * A page of {@value #HEADS_PER_PAGE} heads at a time, each after the last one visited (the
     * primary key's order), no connection held while the visitor runs: a temporal query's visitor
     * reads the instances of each head, which takes a connection of its own - one held across
     * the visit would take two per query, and a loop's pool could run out with each query
     * holding one and waiting for another. Each page is one snapshot; a write between two pages
     * is seen by the later one, as the other stores' visits see writes.
     */
    @Override
    public void entities(String tenant, boolean descending, Predicate<TemporalEntity> visitor) {
        String order = " ORDER BY id" + (descending ? " DESC" : "") + " LIMIT " + HEADS_PER_PAGE;
        String first = HEAD + " WHERE tenant = ?" + order;
        String next = HEAD + " WHERE tenant = ? AND id " + (descending ? "<" : ">") + " ?" + order;
        String after = null;
        while (true) {
            String from = after;
            List<TemporalEntity> page = call(() -> db.read(c -> {
                try (PreparedStatement ps = c.prepareStatement(from == null ? first : next)) {
                    ps.setString(1, tenant);
                    if (from != null) {
                        ps.setString(2, from);
                    }
                    List<TemporalEntity> out = new ArrayList<>(HEADS_PER_PAGE);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            out.add(head(rs));
                        }
                    }
                    return out;
                }
            }));
            for (TemporalEntity e : page) {
                if (!visitor.test(e)) {
                    return;
                }
            }
            if (page.size() < HEADS_PER_PAGE) {
                return;
            }
            after = page.get(page.size() - 1).id();
        }
    }

    private static TemporalEntity head(ResultSet rs) throws SQLException {
        return new TemporalEntity(rs.getString(1), names(rs.getArray(2)), names(rs.getArray(3)), Set.of(names(rs.getArray(4))
                .toArray(NO_NAMES)), rs.getLong(5), rs.getLong(6), rs.getLong(7));
    }

    private static List<String> names(Array a) throws SQLException {
        return List.of((String[]) a.getArray());
    }

    /** The time column of {@code p}. */
    private static String column(TimeProperty p) {
        return switch (p) {
            case OBSERVED_AT -> "observed_at";
            case CREATED_AT -> "created_at";
            case MODIFIED_AT -> "modified_at";
            case DELETED_AT -> "deleted_at";
        };
    }

    /** The conditions of {@code q}'s window and dataset after those of the series, its parameters from 4. */
    private static String window(InstanceQuery q) {
        String t = column(q.property());
        return (q.unbounded() ? "" : " AND " + t + " >= ? AND " + t + " < ? AND " + t + " <> " + NO_TIME)
                + (q.datasetId() == null ? "" : q.datasetId().equals(InstanceQuery.DEFAULT_DATASET) ? " AND dataset_id IS NULL"
                        : " AND dataset_id = ?");
    }

    /** Sets the series (tenant, entity, attribute) and {@code q}'s window parameters; the next index. */
    private static int bind(PreparedStatement ps, String tenant, String entityId, String attribute, InstanceQuery q)
            throws SQLException {
        int p = 1;
        ps.setString(p++, tenant);
        ps.setString(p++, entityId);
        ps.setString(p++, attribute);
        if (!q.unbounded()) {
            ps.setLong(p++, q.from());
            ps.setLong(p++, q.to());
        }
        if (q.datasetId() != null && !q.datasetId().equals(InstanceQuery.DEFAULT_DATASET)) {
            ps.setString(p++, q.datasetId());
        }
        return p;
    }

    @Override
    public List<TemporalInstance> instances(String tenant, String entityId, String attribute, InstanceQuery query, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        int keep = query.lastN() > 0 ? Math.min(query.lastN(), limit) : limit;
        boolean last = query.lastN() > 0;
        String t = column(query.property());
        String order = last ? t + " DESC, n DESC" : t + ", n";
        return call(() -> db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT n, observed_at, deleted_at, doc FROM cor_history"
                    + " WHERE tenant = ? AND entity = ? AND attribute = ?" + window(query) + " ORDER BY " + order + " LIMIT ?")) {
                ps.setLong(bind(ps, tenant, entityId, attribute, query), keep);
                List<TemporalInstance> out = new ArrayList<>();
                EntityCodec codec = new EntityCodec();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(new TemporalInstance(attribute, decode(codec, rs.getBytes(4)), TemporalInstance.idOf(rs.getLong(1)),
                                rs.getLong(2), rs.getLong(3)));
                    }
                }
                if (last) {
                    Collections.reverse(out); // the latest were read first: answered oldest first
                }
                return out;
            }
        }));
    }

    /** One EXISTS: an instance of the window that records no deletion. */
    @Override
    public boolean shows(String tenant, String entityId, String attribute, InstanceQuery window) {
        return call(() -> db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM cor_history"
                    + " WHERE tenant = ? AND entity = ? AND attribute = ?" + window(window) + " AND deleted_at = " + NO_TIME + ")")) {
                bind(ps, tenant, entityId, attribute, window);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getBoolean(1);
                }
            }
        }));
    }

    /**
     * From memory where the caller cannot wait (a request asks on its loop before dispatch: a
     * tenant this broker recorded into, or found here before); elsewhere the database answers
     * what memory does not know - a tenant whose history another transaction committed.
     */
    @Override
    public boolean hasTenant(String tenant) {
        if (tenants.contains(tenant)) {
            return true;
        }
        if (CorCoLoop.current() != null && CorCo.current() == null) {
            return false; // on a loop outside a coroutine: a round trip would block the loop
        }
        boolean has = call(() -> db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM cor_history_tenants WHERE tenant = ?)")) {
                ps.setString(1, tenant);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getBoolean(1);
                }
            }
        }));
        if (has) {
            tenants.add(tenant); // a tenant stays one
        }
        return has;
    }

    @Override
    public int count(String tenant) {
        return call(() -> db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM cor_history_heads WHERE tenant = ?")) {
                ps.setString(1, tenant);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getInt(1);
                }
            }
        }));
    }

    @Override
    public boolean readsWait() {
        return true;
    }

    // ---------------------------------------------------------------- retention

    /**
     * Deletes the instances recorded (createdAt) before {@code nowMs} minus the age kept, at most
     * {@value #EXPIRE_PER_CALL}, {@value #EXPIRE_BATCH} a statement; then, per entity that lost
     * some, under its lock, the attributes left without instances leave its head (its times stay).
     */
    @Override
    public long expire(long nowMs) {
        if (retention.maxAgeMs() == Long.MAX_VALUE || nowMs - retention.maxAgeMs() > nowMs) {
            return 0;
        }
        long cutoff = nowMs - retention.maxAgeMs();
        long dropped = 0;
        while (dropped < EXPIRE_PER_CALL) {
            Set<List<String>> touched = new LinkedHashSet<>();
            int n = call(() -> db.inTransaction(c -> {
                int k = 0;
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM cor_history WHERE ctid = ANY (ARRAY("
                        + "SELECT ctid FROM cor_history WHERE created_at < ? LIMIT ?)) RETURNING tenant, entity")) {
                    ps.setLong(1, cutoff);
                    ps.setInt(2, EXPIRE_BATCH);
                    try (ResultSet rs = ps.executeQuery()) {
                        for (; rs.next(); k++) {
                            touched.add(List.of(rs.getString(1), rs.getString(2)));
                        }
                    }
                }
                return k;
            }));
            for (List<String> e : touched) {
                call(() -> db.inTransaction(c -> {
                    lock(c, e.get(0), e.get(1));
                    return update(c, "UPDATE cor_history_heads SET attributes = ARRAY(SELECT a FROM unnest(attributes) AS a"
                            + " WHERE EXISTS (SELECT 1 FROM cor_history WHERE tenant = ? AND entity = ? AND attribute = a))"
                            + " WHERE tenant = ? AND id = ?", e.get(0), e.get(1), e.get(0), e.get(1));
                }));
            }
            dropped += n;
            if (n < EXPIRE_BATCH) {
                break;
            }
        }
        return dropped;
    }

    // ---------------------------------------------------------------- the instance document

    private static byte[] encode(EntityCodec codec, ByteSink sink, Attribute a) {
        sink.clear();
        codec.writeAttribute(sink, a);
        return java.util.Arrays.copyOf(sink.array(), sink.position());
    }

    private static Attribute decode(EntityCodec codec, byte[] doc) throws SQLException {
        try {
            return codec.readAttribute(new ByteSource(doc, 0, doc.length));
        } catch (ByteSource.Malformed e) {
            throw new SQLException("an instance in the database does not read back: " + e.getMessage(), "XX001", e);
        }
    }
}
