package dev.cor.ngsild.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import dev.cor.base.CorCoLoop;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.query.TemporalAggregation;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.store.MemoryTemporalStore;
import dev.cor.ngsild.store.TemporalEntity;
import dev.cor.ngsild.store.TemporalRetention;
import dev.cor.ngsild.store.TemporalStore;

/**
 * The history in PostgreSQL answers as the memory store does: a seeded random run of records,
 * edits and deletions over two tenants, a few entities, attributes and datasetIds, after which
 * every read - instances by random windows of each time property with lastN and limits, shows,
 * aggregations, heads one by one and in id order both ways, counts, tenants - is compared with
 * {@link MemoryTemporalStore}'s given the same calls. Ids differ between the stores; the test
 * maps each memory id to the PostgreSQL id recorded in the same place, so an answer's ids are
 * compared too, and edits address instances by the ids read back. Ids the store did not give
 * match nothing. Replay a run with {@code -Dcor.pg.seed=<seed>}.
 */
class PgTemporalStoreTest {
    static final String[] TENANTS = {"", "t2"};
    static final String[] ENTITIES = {"urn:ngsi-ld:E:1", "urn:ngsi-ld:E:2", "urn:ngsi-ld:E:3", "urn:ngsi-ld:E:10"};
    static final String[] ATTRS = {"https://example.org/a", "https://example.org/b", "https://example.org/c"};
    static final String[] DATASETS = {null, "urn:ds:1", "urn:ds:2"};
    static final String[] TYPES = {"https://example.org/T1", "https://example.org/T2", "https://example.org/T3"};
    static final long BASE = 1_700_000_000_000L;

    static PgDatabase db;

    @BeforeAll
    static void start() throws Exception {
        db = SharedPostgres.database(16);
        db.inTransaction(PgSchema.MIGRATIONS::migrate);
    }

    @AfterAll
    static void stop() {
        if (db != null) {
            db.close();
        }
    }

    /** A fresh store over a schema emptied of the history other tests left. */
    static PgTemporalStore empty() throws Exception {
        db.inTransaction(c -> {
            try (var st = c.createStatement()) {
                st.execute("TRUNCATE cor_history, cor_history_heads, cor_history_tenants");
            }
            return null;
        });
        return new PgTemporalStore(db);
    }

    static Attribute attribute(JsonNode value, String datasetId, long observedAt, long createdAt, long modifiedAt) {
        String observed = observedAt == TemporalInstance.NO_TIME ? null : Instant.ofEpochMilli(observedAt).toString();
        return new Attribute(AttributeKind.PROPERTY, value, datasetId, observed, null, null, null, Map.of(), createdAt, modifiedAt);
    }

    /** A time among few, so that instances share times (ties keep the order recorded). */
    static long time(Random r) {
        return BASE + 1_000L * r.nextInt(12);
    }

    static Attribute randomValue(Random r) {
        long created = time(r);
        JsonNode v = r.nextBoolean() ? JsonNodeFactory.instance.numberNode(r.nextInt(100))
                : JsonNodeFactory.instance.textNode("s" + r.nextInt(5));
        return attribute(v, DATASETS[r.nextInt(DATASETS.length)], r.nextInt(5) == 0 ? TemporalInstance.NO_TIME : time(r), created,
                r.nextInt(4) == 0 ? created + 1_000 : created);
    }

    static TemporalInstance randomInstance(Random r) {
        String attr = ATTRS[r.nextInt(ATTRS.length)];
        if (r.nextInt(6) == 0) {
            long at = time(r);
            Attribute gone = attribute(JsonNodeFactory.instance.textNode(Syntax.NGSI_LD_NULL), DATASETS[r.nextInt(DATASETS.length)],
                    TemporalInstance.NO_TIME, at, at);
            return TemporalInstance.of(attr, gone, at);
        }
        return TemporalInstance.of(attr, randomValue(r), TemporalInstance.NO_TIME);
    }

    static InstanceQuery randomQuery(Random r) {
        TimeProperty p = TimeProperty.values()[r.nextInt(4)];
        long from = Long.MIN_VALUE;
        long to = Long.MAX_VALUE;
        switch (r.nextInt(4)) {
            case 0 -> { }
            case 1 -> from = time(r);
            case 2 -> to = time(r);
            default -> {
                from = time(r);
                to = from + 1_000L * r.nextInt(6);
            }
        }
        String d = switch (r.nextInt(5)) {
            case 0 -> InstanceQuery.DEFAULT_DATASET;
            case 1 -> "urn:ds:1";
            case 2 -> "urn:ds:none";
            default -> null;
        };
        return new InstanceQuery(p, from, to, d, r.nextInt(3) == 0 ? 1 + r.nextInt(4) : 0);
    }

    /** Each step of a run, applied to both stores; the reads compared every few steps. */
    static final class Run {
        final long seed;
        final Random r;
        final MemoryTemporalStore memory = new MemoryTemporalStore(TemporalRetention.FOREVER);
        final PgTemporalStore pg;
        /** The PostgreSQL id of the instance the memory store recorded as the key. */
        final Map<String, String> ids = new HashMap<>();
        /** Per tenant and entity, the wall-clock span of the step that created its head and of the last that changed it. */
        final Map<String, long[]> created = new HashMap<>();
        final Map<String, long[]> modified = new HashMap<>();
        /**
         * The same for the PostgreSQL store's head, which dates a record by its instances' times and
         * its deletion (as the durable store does: a copied history keeps its dates), by the clock
         * when they give none, and an edit by the clock.
         */
        final Map<String, long[]> createdPg = new HashMap<>();
        final Map<String, long[]> modifiedPg = new HashMap<>();
        int step;

        Run(long seed, PgTemporalStore pg) {
            this.seed = seed;
            this.r = new Random(seed);
            this.pg = pg;
        }

        String why() {
            return "seed " + seed + " (-Dcor.pg.seed), step " + step;
        }

        void step() {
            step++;
            String tenant = TENANTS[r.nextInt(TENANTS.length)];
            String entity = ENTITIES[r.nextInt(ENTITIES.length)];
            String attr = ATTRS[r.nextInt(ATTRS.length)];
            String key = tenant + "|" + entity;
            long t0 = System.currentTimeMillis();
            boolean changed;
            int op = r.nextInt(20);
            if (op < 11) {
                List<String> types = memory.entity(tenant, entity) == null || r.nextInt(3) > 0
                        ? List.of(TYPES[r.nextInt(3)], TYPES[r.nextInt(3)]).stream().distinct().toList() : null;
                List<String> scopes = r.nextInt(3) == 0 ? null : r.nextBoolean() ? List.of() : List.of("/s" + r.nextInt(2));
                List<TemporalInstance> in = new ArrayList<>();
                for (int k = r.nextInt(5); k > 0; k--) {
                    in.add(randomInstance(r));
                }
                long deletedAt = r.nextInt(8) == 0 ? time(r) : TemporalInstance.NO_TIME;
                boolean fresh = memory.entity(tenant, entity) == null;
                List<TemporalInstance> m = memory.record(tenant, entity, types, scopes, in, deletedAt);
                List<TemporalInstance> p = pg.record(tenant, entity, types, scopes, in, deletedAt);
                assertEquals(m.size(), p.size(), why());
                for (int k = 0; k < m.size(); k++) {
                    assertEquals(in.get(k).withId(p.get(k).instanceId()), p.get(k), why() + ": recorded as given, with its id");
                    assertEquals(TemporalInstance.idOf(TemporalInstance.numberOf(p.get(k).instanceId())), p.get(k).instanceId());
                    ids.put(m.get(k).instanceId(), p.get(k).instanceId());
                }
                long t1 = System.currentTimeMillis();
                long dated = deletedAt;
                for (TemporalInstance i : in) {
                    dated = Math.max(dated, Math.max(i.value().createdAt(), i.value().modifiedAt()));
                }
                long[] pgSpan = dated == TemporalInstance.NO_TIME ? new long[] {t0, t1} : new long[] {dated, dated};
                if (fresh) {
                    created.put(key, new long[] {t0, t1});
                    createdPg.put(key, pgSpan);
                }
                modified.put(key, new long[] {t0, t1});
                modifiedPg.put(key, pgSpan);
                changed = false; // its spans are set
            } else if (op < 14) {
                String[] pick = pick(tenant, entity, attr);
                Attribute v = randomValue(r);
                boolean m = memory.modifyInstance(tenant, entity, attr, pick[0], v);
                assertEquals(m, pg.modifyInstance(tenant, entity, attr, pick[1], v), why() + ": modify " + pick[1]);
                changed = m;
            } else if (op < 16) {
                String[] pick = pick(tenant, entity, attr);
                boolean m = memory.deleteInstance(tenant, entity, attr, pick[0]);
                assertEquals(m, pg.deleteInstance(tenant, entity, attr, pick[1]), why() + ": delete " + pick[1]);
                changed = m;
            } else if (op < 19) {
                String d = DATASETS[r.nextInt(DATASETS.length)];
                boolean all = r.nextInt(3) == 0;
                boolean m = memory.deleteAttribute(tenant, entity, attr, d, all);
                assertEquals(m, pg.deleteAttribute(tenant, entity, attr, d, all), why() + ": delete attribute");
                changed = m;
            } else {
                boolean m = memory.deleteEntity(tenant, entity);
                assertEquals(m, pg.deleteEntity(tenant, entity), why() + ": delete entity");
                changed = false;
            }
            if (changed) {
                long[] span = {t0, System.currentTimeMillis()};
                modified.put(key, span);
                modifiedPg.put(key, span);
            }
        }

        /**
         * An instance to edit: the memory id and the PostgreSQL id of a recorded one (at times
         * of another series, or deleted), or of an id neither gave, or a PostgreSQL id garbled
         * (upper case, zero-padded, another prefix), which must match nothing.
         */
        String[] pick(String tenant, String entity, String attr) {
            List<TemporalInstance> all = new ArrayList<>(memory.instances(tenant, entity, attr, InstanceQuery.ALL, Integer.MAX_VALUE));
            if (all.isEmpty() || r.nextInt(6) == 0) {
                String any = ids.isEmpty() ? TemporalInstance.idOf(1) : ids.keySet().iterator().next();
                return new String[] {any, ids.getOrDefault(any, any)}; // maybe of another series
            }
            String m = all.get(r.nextInt(all.size())).instanceId();
            String p = ids.get(m);
            int how = r.nextInt(8);
            if (how < 4) {
                return new String[] {garbled(m, how), garbled(p, how)};
            }
            return new String[] {m, p};
        }

        /** {@code id} spelled otherwise: upper case, zero-padded, another prefix, a trailing space. */
        static String garbled(String id, int how) {
            String digits = id.substring(TemporalInstance.ID_PREFIX.length());
            return switch (how) {
                case 0 -> id.toUpperCase(java.util.Locale.ROOT);
                case 1 -> TemporalInstance.ID_PREFIX + "0" + digits;
                case 2 -> "urn:other:" + digits;
                default -> id + " ";
            };
        }

        /** Every read of both stores compared. */
        void compare() {
            for (String tenant : TENANTS) {
                assertEquals(memory.hasTenant(tenant), pg.hasTenant(tenant), why() + ": tenant '" + tenant + "'");
                assertEquals(memory.count(tenant), pg.count(tenant), why() + ": count of '" + tenant + "'");
                assertEquals(heads(memory, tenant, false, Integer.MAX_VALUE), heads(pg, tenant, false, Integer.MAX_VALUE), why());
                assertEquals(heads(memory, tenant, true, Integer.MAX_VALUE), heads(pg, tenant, true, Integer.MAX_VALUE), why());
                int stop = 1 + r.nextInt(3);
                assertEquals(heads(memory, tenant, r.nextBoolean(), stop).size(), Math.min(stop, memory.count(tenant)));
                for (String entity : List.of(ENTITIES[0], ENTITIES[1], ENTITIES[2], ENTITIES[3], "urn:ngsi-ld:E:none")) {
                    TemporalEntity m = memory.entity(tenant, entity);
                    TemporalEntity p = pg.entity(tenant, entity);
                    assertEquals(timeless(m), timeless(p), why() + ": head of " + entity);
                    if (m != null) {
                        String key = tenant + "|" + entity;
                        assertWithin(created.get(key), createdPg.get(key), m.createdAt(), p.createdAt(), "createdAt of " + key);
                        assertWithin(modified.get(key), modifiedPg.get(key), m.modifiedAt(), p.modifiedAt(), "modifiedAt of " + key);
                    }
                    for (String attr : List.of(ATTRS[0], ATTRS[1], ATTRS[2], "https://example.org/none")) {
                        for (int k = 0; k < 6; k++) {
                            InstanceQuery q = randomQuery(r);
                            int limit = r.nextBoolean() ? Integer.MAX_VALUE : r.nextInt(4);
                            String what = why() + ": " + tenant + " " + entity + " " + attr + " " + q + " limit " + limit;
                            List<TemporalInstance> mi = memory.instances(tenant, entity, attr, q, limit);
                            List<TemporalInstance> pi = pg.instances(tenant, entity, attr, q, limit);
                            assertEquals(mapped(mi), pi, what);
                            // shows reads the window, not its lastN (every caller passes 0; the default applies it)
                            InstanceQuery w = new InstanceQuery(q.property(), q.from(), q.to(), q.datasetId(), 0);
                            assertEquals(memory.shows(tenant, entity, attr, w), pg.shows(tenant, entity, attr, w), what);
                        }
                        InstanceQuery w = new InstanceQuery(TimeProperty.OBSERVED_AT, BASE, BASE + 12_000, null, 0);
                        TemporalAggregation a = TemporalAggregation.parse("totalCount,sum,max,distinctCount", "PT3S");
                        Set<String> ds = r.nextBoolean() ? null : Set.of(InstanceQuery.DEFAULT_DATASET, "urn:ds:2");
                        assertEquals(memory.aggregate(tenant, entity, attr, w, ds, a), pg.aggregate(tenant, entity, attr, w, ds, a),
                                why() + ": aggregate");
                    }
                }
            }
            assertFalse(pg.hasTenant("never"), why());
        }

        void assertWithin(long[] span, long[] pgSpan, long m, long p, String what) {
            assertNotNull(span, why() + ": " + what + " tracked");
            assertTrue(m >= span[0] && m <= span[1], why() + ": the memory store's " + what + " " + m + " in its step");
            assertTrue(p >= pgSpan[0] && p <= pgSpan[1], why() + ": " + what + " " + p + " in " + pgSpan[0] + ".." + pgSpan[1]);
        }

        List<TemporalInstance> mapped(List<TemporalInstance> in) {
            return in.stream().map(i -> i.withId(ids.get(i.instanceId()))).toList();
        }
    }

    /** A head without its times (the stores' clocks differ; the test checks those against the steps). */
    static TemporalEntity timeless(TemporalEntity e) {
        return e == null ? null : new TemporalEntity(e.id(), e.types(), e.scopes(), e.attributes(), 0, 0, e.deletedAt());
    }

    static List<TemporalEntity> heads(TemporalStore s, String tenant, boolean descending, int max) {
        List<TemporalEntity> out = new ArrayList<>();
        s.entities(tenant, descending, e -> {
            out.add(timeless(e));
            return out.size() < max;
        });
        return out;
    }

    @Test
    void randomHistoryAnswersAsTheMemoryStore() throws Exception {
        long seed = Long.getLong("cor.pg.seed", System.nanoTime());
        System.out.println("PgTemporalStoreTest seed " + seed + " (replay: -Dcor.pg.seed=" + seed + ")");
        Run run = new Run(seed, empty());
        run.compare();
        for (int k = 0; k < 300; k++) {
            run.step();
            if (k % 15 == 14) {
                run.compare();
            }
        }
        run.compare();
    }

    @Test
    void anIdReadBackAddressesItsInstanceAndNoOtherSpellingDoes() throws Exception {
        PgTemporalStore pg = empty();
        String e = "urn:ngsi-ld:E:ids";
        String a = ATTRS[0];
        List<TemporalInstance> recorded = new ArrayList<>();
        for (int k = 0; k < 20; k++) { // past 0xf: ids with two hex digits
            recorded.addAll(pg.record("", e, List.of(TYPES[0]), null,
                    List.of(TemporalInstance.of(a, attribute(JsonNodeFactory.instance.numberNode(k), null, BASE + k, BASE, BASE),
                            TemporalInstance.NO_TIME)), TemporalInstance.NO_TIME));
        }
        List<TemporalInstance> read = pg.instances("", e, a, InstanceQuery.ALL, Integer.MAX_VALUE);
        assertEquals(recorded, read, "the ids record answers are those read back");
        TemporalInstance target = read.get(17);
        String id = target.instanceId();
        String digits = id.substring(TemporalInstance.ID_PREFIX.length());
        for (String other : List.of(id.toUpperCase(java.util.Locale.ROOT), TemporalInstance.ID_PREFIX + "0" + digits,
                TemporalInstance.ID_PREFIX + "+" + digits, "urn:x:" + digits, TemporalInstance.ID_PREFIX, id + "0")) {
            assertFalse(pg.modifyInstance("", e, a, other, target.value()), other);
            assertFalse(pg.deleteInstance("", e, a, other), other);
        }
        assertFalse(pg.deleteInstance("", e, ATTRS[1], id), "an id of another attribute");
        assertFalse(pg.deleteInstance("", "urn:ngsi-ld:E:other", a, id), "an id of another entity");
        Attribute changed = attribute(JsonNodeFactory.instance.textNode("changed"), "urn:ds:1", BASE - 5, 1, BASE + 99);
        assertTrue(pg.modifyInstance("", e, a, id, changed));
        List<TemporalInstance> after = pg.instances("", e, a, InstanceQuery.ALL, Integer.MAX_VALUE);
        assertEquals(target.modifiedTo(changed), after.get(0), "modified in place: its id and createdAt kept, observedAt now first");
        assertEquals(BASE, after.get(0).value().createdAt());
        assertEquals(BASE + 99, after.get(0).value().modifiedAt());
        assertEquals(List.of(target.modifiedTo(changed)), pg.instances("", e, a, new InstanceQuery(TimeProperty.OBSERVED_AT,
                Long.MIN_VALUE, Long.MAX_VALUE, "urn:ds:1", 0), 10), "its datasetId is the new one");
        assertTrue(pg.deleteInstance("", e, a, id));
        assertFalse(pg.deleteInstance("", e, a, id), "gone");
        assertEquals(19, pg.instances("", e, a, InstanceQuery.ALL, Integer.MAX_VALUE).size());
        assertTrue(pg.instances("", e, a, InstanceQuery.ALL, Integer.MAX_VALUE).stream().noneMatch(i -> i.instanceId().equals(id)));
    }

    @Test
    void expiryDropsByAgeAndTheHeadKeepsOnlyAttributesWithInstances() throws Exception {
        empty();
        PgTemporalStore pg = new PgTemporalStore(db, new TemporalRetention(10_000, Long.MAX_VALUE), System::currentTimeMillis);
        String e = "urn:ngsi-ld:E:old";
        List<TemporalInstance> in = new ArrayList<>();
        for (int k = 0; k < 7; k++) {
            in.add(TemporalInstance.of(ATTRS[0], attribute(JsonNodeFactory.instance.numberNode(k), null, BASE, BASE + k * 1_000, 0),
                    TemporalInstance.NO_TIME));
        }
        in.add(TemporalInstance.of(ATTRS[1], attribute(JsonNodeFactory.instance.numberNode(9), null, BASE, BASE, 0),
                TemporalInstance.NO_TIME));
        pg.record("t2", e, List.of(TYPES[0]), List.of(), in, TemporalInstance.NO_TIME);
        assertEquals(0, pg.expire(BASE + 10_000), "nothing older than 10 s");
        assertEquals(4, pg.expire(BASE + 12_001), "the instances recorded at BASE (a's and b's), BASE + 1 s and BASE + 2 s");
        assertEquals(Set.of(ATTRS[0]), pg.entity("t2", e).attributes(), "b lost its only instance");
        assertEquals(List.of(3, 4, 5, 6), pg.instances("t2", e, ATTRS[0], InstanceQuery.ALL, 99).stream()
                .map(i -> i.value().value().intValue()).toList());
        assertEquals(0, pg.expire(BASE + 12_001));
        assertEquals(4, pg.expire(Long.MAX_VALUE));
        assertEquals(Set.of(), pg.entity("t2", e).attributes(), "the head stays, without attributes");
        assertEquals(1, pg.count("t2"));
        assertEquals(0, new PgTemporalStore(db).expire(Long.MAX_VALUE), "kept for ever");
        assertThrows(IllegalArgumentException.class, () -> new PgTemporalStore(db, new TemporalRetention(1_000, 1 << 20),
                System::currentTimeMillis), "a byte bound is not kept: refused");
    }

    @Test
    void aTenantStaysOneAfterItsHistoryIsDeleted() throws Exception {
        PgTemporalStore pg = empty();
        assertFalse(pg.hasTenant("gone"));
        pg.record("gone", "urn:ngsi-ld:E:x", List.of(TYPES[0]), null, List.of(), TemporalInstance.NO_TIME);
        assertTrue(pg.deleteEntity("gone", "urn:ngsi-ld:E:x"));
        assertFalse(pg.deleteEntity("gone", "urn:ngsi-ld:E:x"));
        assertNull(pg.entity("gone", "urn:ngsi-ld:E:x"));
        assertTrue(pg.hasTenant("gone"));
        assertTrue(new PgTemporalStore(db).hasTenant("gone"), "from the database, for a store that did not record it");
        assertEquals(0, pg.count("gone"));
    }

    /**
     * Over more heads than a page, in code point order both ways (ids whose order a locale would
     * change), every one visited once, a stop obeyed at once - and a visitor that reads the
     * instances of each head, in a coroutine on a loop whose pool has one connection, does not
     * wait for a second: no connection is held across the visit.
     */
    @Test
    void entitiesVisitsEveryHeadAcrossPagesWithoutHoldingAConnection() throws Exception {
        PgDatabase one = SharedPostgres.database(1);
        one.inTransaction(PgSchema.MIGRATIONS::migrate);
        PgTemporalStore pg = new PgTemporalStore(one);
        MemoryTemporalStore memory = new MemoryTemporalStore(TemporalRetention.FOREVER);
        Random r = new Random(7);
        String[] parts = {"a", "B", "_", "é", "Z", "0", "-", "ab"};
        for (int k = 0; k < 2 * PgTemporalStore.HEADS_PER_PAGE + 3; k++) {
            String id = "urn:ngsi-ld:E:" + parts[r.nextInt(parts.length)] + parts[r.nextInt(parts.length)] + k;
            List<TemporalInstance> in = List.of(TemporalInstance.of(ATTRS[0], attribute(JsonNodeFactory.instance.numberNode(k),
                    null, BASE, BASE, BASE), TemporalInstance.NO_TIME));
            memory.record("many", id, List.of(TYPES[0]), null, in, TemporalInstance.NO_TIME);
            pg.record("many", id, List.of(TYPES[0]), null, in, TemporalInstance.NO_TIME);
        }
        CorCoLoop loop = CorCoLoop.builder().name("pg-heads").build().start();
        try {
            for (boolean descending : new boolean[] {false, true}) {
                List<TemporalEntity> visited = LoopTesting.onLoop(loop, () -> {
                    List<TemporalEntity> out = new ArrayList<>();
                    pg.entities("many", descending, e -> {
                        assertEquals(1, pg.instances("many", e.id(), ATTRS[0], InstanceQuery.ALL, 9).size());
                        out.add(timeless(e));
                        return true;
                    });
                    return out;
                });
                assertEquals(heads(memory, "many", descending, Integer.MAX_VALUE), visited, "descending " + descending);
                int stop = PgTemporalStore.HEADS_PER_PAGE + 1;
                assertEquals(heads(memory, "many", descending, stop), heads(pg, "many", descending, stop));
            }
        } finally {
            LoopTesting.stop(loop, () -> one.closeOn(loop));
            one.close();
        }
    }

    /** hasTenant of a tenant recorded and of one never, asked on {@code loop} outside a coroutine. */
    static List<Boolean> onLoopNotInACoroutine(CorCoLoop loop, PgTemporalStore s) throws Exception {
        CompletableFuture<List<Boolean>> asked = new CompletableFuture<>();
        loop.execute(() -> asked.complete(List.of(s.hasTenant("earlier"), s.hasTenant("never"))));
        return asked.get(10, TimeUnit.SECONDS);
    }

    /**
     * On a loop outside a coroutine (a request before dispatch) hasTenant answers from memory: a
     * store opened after the tenant's history was recorded knows it once it read the tenants.
     */
    @Test
    void aStoreOpenedLaterKnowsTheTenantsOnItsLoop() throws Exception {
        PgTemporalStore first = empty();
        first.record("earlier", "urn:ngsi-ld:E:x", List.of(TYPES[0]), null, List.of(), TemporalInstance.NO_TIME);
        PgTemporalStore later = new PgTemporalStore(db);
        CorCoLoop loop = CorCoLoop.builder().name("pg-tenants").build().start();
        try {
            assertEquals(List.of(false, false), onLoopNotInACoroutine(loop, later),
                    "before it read the tenants: memory alone, no round trip on the loop");
            later.reloadTenants();
            assertEquals(List.of(true, false), onLoopNotInACoroutine(loop, later));
        } finally {
            LoopTesting.stop(loop, () -> db.closeOn(loop));
        }
    }
}
