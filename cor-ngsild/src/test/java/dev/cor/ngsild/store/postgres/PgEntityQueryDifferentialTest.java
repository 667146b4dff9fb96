package dev.cor.ngsild.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.locationtech.jts.geom.Envelope;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.GeoQuery;
import dev.cor.ngsild.query.ValueKey;
import dev.cor.ngsild.query.ValueLookup;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.EntityStore.Index;
import dev.cor.ngsild.store.MemoryEntityStore;
import dev.cor.ngsild.store.TemporalRetention;
import dev.cor.ngsild.store.ValueIndexSettings;

/**
 * The query push-down answers as the memory store does: random entities - numbers, texts,
 * booleans, date-times, arrays, several instances with datasetIds, a LanguageProperty, a
 * Relationship, GeoProperty points and polygons - created, changed and deleted in two tenants
 * through both stores, then every index scanned (ids in order, whole and stopped early), sized,
 * its keys listed; random value lookups (ranges between keys the entities hold or do not, of one
 * kind or across kinds) give the same ids - the memory index is exact, holding the same keys
 * ({@link ValueKey#forEach}) in the same order, so the sets are equal, not merely a superset -
 * and the same {@code null} past the same bound; random boxes give exactly the entities whose
 * GeoProperty's bounding box touches the box, among them every entity whose geometry does. The
 * seed is printed; {@code -Dcor.pg.seed} replays it.
 */
class PgEntityQueryDifferentialTest {
    static final String NS = "https://example.org/";
    static final String[] TYPES = {NS + "A", NS + "B", NS + "C"};
    static final String NUM = NS + "n", TEXT = NS + "s", BOOL = NS + "b", TIME = NS + "t", ARRAY = NS + "arr", MULTI = NS + "multi",
            LANG = NS + "lang", REL = NS + "rel", LOC = NS + "loc", LONG = NS + "long";
    static final List<String> ATTRIBUTES = List.of(NUM, TEXT, BOOL, TIME, ARRAY, MULTI, LANG, REL, LOC, LONG);
    static final JsonNodeFactory J = JsonNodeFactory.instance;

    static PgDatabase db;
    static PgEntityStore store;

    @BeforeAll
    static void start() throws Exception {
        db = SharedPostgres.database(4, 5_000, 10_000); // a fresh database of the run's one cluster
        db.inTransaction(c -> PgSchema.MIGRATIONS.migrate(c));
        store = new PgEntityStore(db);
    }

    @AfterAll
    static void stop() {
        if (db != null) {
            db.close();
        }
    }

    @Test
    void randomQueriesAnswerAsTheMemoryStore() {
        long seed = Long.getLong("cor.pg.seed", System.nanoTime());
        System.out.println("PgEntityQueryDifferentialTest seed " + seed + " (-Dcor.pg.seed=" + seed + " replays it)");
        Random r = new Random(seed);
        // every attribute declared: the memory store keeps a ready value index of each, from the start
        MemoryEntityStore memory = new MemoryEntityStore(new TemporalRetention(Long.MAX_VALUE, 1 << 20),
                new ValueIndexSettings(Set.copyOf(ATTRIBUTES), 0, Long.MAX_VALUE));
        String[] tenants = {"qa-" + seed, "qb-" + seed};
        for (int k = 0; k < 600; k++) {
            String tenant = tenants[r.nextInt(2)];
            String id = "urn:ngsi-ld:E:" + (char) ('a' + r.nextInt(3)) + r.nextInt(40) + (r.nextInt(10) == 0 ? "\u00e9" : "");
            int op = r.nextInt(10);
            Entity next = entity(r, id);
            String pick = ATTRIBUTES.get(r.nextInt(ATTRIBUTES.size()));
            dev.cor.ngsild.store.EntityChange change = cur -> switch (op) {
                case 0 -> null;
                case 1, 2, 3 -> cur == null ? next : changeOne(cur, next, op, pick);
                default -> next;
            };
            memory.write(tenant, id, change);
            store.write(tenant, id, change);
        }
        String why = "seed " + seed + " (-Dcor.pg.seed)";
        List<ValueKey> pool = new ArrayList<>();
        for (String tenant : tenants) {
            memory.forEach(tenant, null, e -> e.attributes().values().forEach(l -> ValueKey.forEach(l, pool::add)));
        }
        for (int i = 0; i < 30; i++) { // keys no entity holds
            entity(r, "urn:probe").attributes().values().forEach(l -> ValueKey.forEach(l, pool::add));
        }
        pool.sort(null);
        // what the comparisons went through, so that a run that compared only empty answers fails
        // lookups with ids, lookups past their bound, boxes with ids, boxes touched but not intersected, long texts' supersets
        int[] seen = new int[5];
        for (String tenant : tenants) {
            for (Index index : Index.values()) {
                List<String> keys = switch (index) {
                    case ALL -> java.util.Collections.singletonList(null);
                    case TYPE -> List.of(TYPES[0], TYPES[1], TYPES[2], NS + "none");
                    case ATTRIBUTE -> concat(ATTRIBUTES, NS + "none");
                };
                for (String key : keys) {
                    String where = why + ", tenant " + tenant + ", " + index + " " + key;
                    List<String> m = ids(memory, tenant, index, key, Integer.MAX_VALUE);
                    assertEquals(m, ids(store, tenant, index, key, Integer.MAX_VALUE), where);
                    assertEquals(memory.size(tenant, index, key), store.size(tenant, index, key), where + ": size");
                    int stop = 1 + r.nextInt(20);
                    assertEquals(ids(memory, tenant, index, key, stop), ids(store, tenant, index, key, stop), where + ", stopped after " + stop);
                }
                assertEquals(memory.keys(tenant, index), store.keys(tenant, index), why + ", keys of " + index);
            }
            for (int i = 0; i < 300; i++) {
                String attribute = ATTRIBUTES.get(r.nextInt(ATTRIBUTES.size()));
                List<ValueLookup.Range> ranges = new ArrayList<>();
                for (int n = 1 + r.nextInt(2); n > 0; n--) {
                    ValueKey a = pool.get(r.nextInt(pool.size()));
                    ValueKey b = r.nextInt(4) == 0 ? a : pool.get(Math.min(pool.size() - 1, pool.indexOf(a) + r.nextInt(40)));
                    ranges.add(r.nextInt(20) == 0 ? new ValueLookup.Range(b, a) : new ValueLookup.Range(a, b)); // some empty
                }
                ValueLookup lookup = new ValueLookup(attribute, ranges);
                int max = r.nextInt(4) == 0 ? 1 + r.nextInt(5) : 10_000;
                List<String> expected = memory.idsWithValues(tenant, lookup, max);
                List<String> got = store.idsWithValues(tenant, lookup, max);
                if (attribute.equals(LONG)) {
                    // texts past PgEntityColumns.KEY_BYTES are kept as their prefix: a superset, in id order
                    // (more entries than the memory index's: past the bound first, never within it where the memory's is not)
                    assertTrue(got == null || expected != null && got.containsAll(expected) && got.equals(List.copyOf(new TreeSet<>(got))),
                            why + ", tenant " + tenant + ", " + lookup + " max " + max + ": " + got + " against " + expected);
                    seen[4] += got != null && expected != null && got.size() > expected.size() ? 1 : 0;
                    continue;
                }
                assertEquals(expected, got, why + ", tenant " + tenant + ", " + lookup + " max " + max);
                seen[expected == null ? 1 : 0] += expected == null || !expected.isEmpty() ? 1 : 0;
            }
            for (int i = 0; i < 100; i++) {
                double lon = r.nextDouble() * 20 - 10;
                double lat = r.nextDouble() * 20 - 10;
                double w = r.nextInt(5) == 0 ? 0 : r.nextDouble() * 6;
                double h = r.nextInt(5) == 0 ? 0 : r.nextDouble() * 6;
                String where = why + ", tenant " + tenant + ", box " + lon + " " + lat + " " + (lon + w) + " " + (lat + h);
                Collection<String> got = store.idsInBox(tenant, LOC, lon, lat, lon + w, lat + h);
                assertEquals(new TreeSet<>(got).size(), got.size(), where + ": each id once");
                Envelope box = new Envelope(lon, lon + w, lat, lat + h);
                Geometry shape = new GeometryFactory().toGeometry(box);
                Set<String> touching = new TreeSet<>();
                Set<String> intersecting = new TreeSet<>();
                memory.forEach(tenant, null, e -> {
                    AttributeList l = e.attributes().get(LOC);
                    for (Attribute a : l == null ? List.<Attribute>of() : l.instances()) {
                        Geometry g = a.kind() == AttributeKind.GEO_PROPERTY ? GeoQuery.target(a.value()) : null;
                        if (g != null && g.getEnvelopeInternal().intersects(box)) {
                            touching.add(e.id());
                        }
                        if (g != null && g.intersects(shape)) {
                            intersecting.add(e.id());
                        }
                    }
                });
                assertEquals(touching, new TreeSet<>(got), where + ": the entities whose box touches it");
                assertTrue(touching.containsAll(intersecting), where);
                seen[2] += got.isEmpty() ? 0 : 1;
                seen[3] += touching.size() > intersecting.size() ? 1 : 0;
                assertTrue(store.sizeInBox(tenant, LOC, lon, lat, lon + w, lat + h) >= got.size(), where + ": sizeInBox");
            }
        }
        for (int i = 0; i < seen.length; i++) {
            assertTrue(seen[i] > 0, why + ": the comparisons never met case " + i + " of " + java.util.Arrays.toString(seen));
        }
    }

    static List<String> concat(List<String> a, String b) {
        List<String> out = new ArrayList<>(a);
        out.add(b);
        return out;
    }

    /** The ids a scan visits until it has visited {@code stop}. */
    static List<String> ids(EntityStore s, String tenant, Index index, String key, int stop) {
        List<String> out = new ArrayList<>();
        s.scan(tenant, index, key, e -> {
            out.add(e.id());
            return out.size() < stop;
        });
        return out;
    }

    /** {@code cur} with its attribute {@code name} taken out (op 1) or that of {@code next} put in (a partial update). */
    static Entity changeOne(Entity cur, Entity next, int op, String name) {
        Map<String, AttributeList> attrs = new HashMap<>(cur.attributes());
        if (op == 1 || next.attributes().get(name) == null) {
            attrs.remove(name);
        } else {
            attrs.put(name, next.attributes().get(name));
        }
        return new Entity(cur.id(), cur.types(), List.of(), attrs, cur.createdAt(), cur.modifiedAt() + 1);
    }

    static Entity entity(Random r, String id) {
        Map<String, AttributeList> attrs = new HashMap<>();
        if (r.nextInt(4) > 0) {
            attrs.put(NUM, one(AttributeKind.PROPERTY, number(r)));
        }
        if (r.nextInt(4) > 0) {
            attrs.put(TEXT, one(AttributeKind.PROPERTY, J.textNode(text(r))));
        }
        if (r.nextInt(3) == 0) { // past the B-tree's key bytes, sharing their prefix, one past a B-tree entry's bound
            String head = "x".repeat(PgEntityColumns.KEY_BYTES - 3);
            attrs.put(LONG, one(AttributeKind.PROPERTY, J.textNode(r.nextInt(10) == 0 ? "y".repeat(5_000) : head + text(r) + text(r))));
        }
        if (r.nextInt(3) == 0) {
            attrs.put(BOOL, one(AttributeKind.PROPERTY, J.booleanNode(r.nextBoolean())));
        }
        if (r.nextInt(3) == 0) {
            attrs.put(TIME, one(AttributeKind.PROPERTY, J.textNode(time(r))));
        }
        if (r.nextInt(3) == 0) {
            ArrayNode a = J.arrayNode();
            for (int n = r.nextInt(5); n > 0; n--) {
                a.add(scalar(r));
            }
            attrs.put(ARRAY, one(AttributeKind.PROPERTY, a));
        }
        if (r.nextInt(3) == 0) {
            List<Attribute> instances = new ArrayList<>();
            if (r.nextBoolean()) {
                instances.add(instance(AttributeKind.PROPERTY, scalar(r), null));
            }
            for (int n = 1 + r.nextInt(3); n > 0; n--) {
                instances.add(instance(AttributeKind.PROPERTY, scalar(r), "urn:ds:" + n));
            }
            attrs.put(MULTI, AttributeList.of(instances));
        }
        if (r.nextInt(4) == 0) {
            ObjectNode map = J.objectNode();
            map.put("en", text(r));
            if (r.nextBoolean()) {
                map.put("fr", text(r));
            }
            attrs.put(LANG, one(AttributeKind.LANGUAGE_PROPERTY, map));
        }
        if (r.nextInt(4) == 0) {
            attrs.put(REL, one(AttributeKind.RELATIONSHIP, J.textNode("urn:ngsi-ld:E:a" + r.nextInt(40))));
        }
        if (r.nextInt(3) > 0) {
            List<Attribute> instances = new ArrayList<>();
            instances.add(instance(AttributeKind.GEO_PROPERTY, geometry(r), null));
            if (r.nextInt(4) == 0) {
                instances.add(instance(AttributeKind.GEO_PROPERTY, geometry(r), "urn:ds:geo"));
            }
            if (r.nextInt(10) == 0) { // a Property of that name: no geometry of it is indexed
                instances.add(instance(AttributeKind.PROPERTY, geometry(r), "urn:ds:not-geo"));
            }
            attrs.put(LOC, AttributeList.of(instances));
        }
        List<String> types = r.nextInt(5) == 0 ? List.of(TYPES[r.nextInt(3)], TYPES[(r.nextInt(2) + 1) % 3])
                : List.of(TYPES[r.nextInt(3)]);
        return new Entity(id, types.stream().distinct().toList(), List.of(), attrs, 1_000, 2_000);
    }

    static AttributeList one(AttributeKind kind, JsonNode value) {
        return AttributeList.of(instance(kind, value, null));
    }

    static Attribute instance(AttributeKind kind, JsonNode value, String datasetId) {
        return new Attribute(kind, value, datasetId, null, null, null, null, Map.of(), 1_000, 2_000);
    }

    static JsonNode number(Random r) {
        return switch (r.nextInt(4)) {
            case 0 -> J.numberNode(r.nextInt(21) - 10);
            case 1 -> J.numberNode(r.nextDouble() * 100 - 50);
            case 2 -> J.numberNode(r.nextInt(3) == 0 ? -0.0 : 0.0);
            default -> J.numberNode((long) r.nextInt(5) * 1_000_000_000_000L);
        };
    }

    static String text(Random r) {
        String[] words = {"", "a", "ab", "b", "B", "\u00e9t\u00e9", "z\u0000z", "\uD83D\uDE00", "\uFFFD", "2024"};
        return words[r.nextInt(words.length)] + (r.nextBoolean() ? words[r.nextInt(words.length)] : "");
    }

    static String time(Random r) {
        return "2024-0" + (1 + r.nextInt(3)) + "-1" + r.nextInt(10) + "T0" + r.nextInt(10) + ":00:00" + (r.nextBoolean() ? ".5" : "") + "Z";
    }

    static JsonNode scalar(Random r) {
        return switch (r.nextInt(4)) {
            case 0 -> number(r);
            case 1 -> J.textNode(text(r));
            case 2 -> J.booleanNode(r.nextBoolean());
            default -> J.textNode(time(r));
        };
    }

    static JsonNode geometry(Random r) {
        ObjectNode g = J.objectNode();
        double x = r.nextDouble() * 20 - 10;
        double y = r.nextDouble() * 20 - 10;
        if (r.nextBoolean()) {
            g.put("type", "Point");
            g.set("coordinates", J.arrayNode().add(x).add(y));
        } else {
            double w = r.nextDouble() * 3;
            double h = r.nextDouble() * 3;
            g.put("type", "Polygon");
            ArrayNode ring = J.arrayNode();
            double[][] corners = {{x, y}, {x + w, y}, {x + w / 2, y + h}, {x, y}}; // a triangle: its box is not it
            for (double[] c : corners) {
                ring.add(J.arrayNode().add(c[0]).add(c[1]));
            }
            g.set("coordinates", J.arrayNode().add(ring));
        }
        return g;
    }
}
