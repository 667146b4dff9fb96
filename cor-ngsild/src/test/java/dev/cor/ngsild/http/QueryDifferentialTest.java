package dev.cor.ngsild.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.ngsild.query.BoundedPattern;
import dev.cor.ngsild.query.GeoQuery;
import dev.cor.ngsild.query.QueryExpression;
import dev.cor.ngsild.query.ScopeQuery;
import dev.cor.ngsild.store.MemoryEntityStore;
import dev.cor.rest.CorRestJson;
import org.junit.jupiter.api.Test;

/**
 * Differential test of the query planner: on seeded random entities (random types, attributes,
 * values, metadata, scopes and geometries, written, rewritten and deleted so the indexes move)
 * and thousands of random queries (type selections, ids, idPattern, attrs, q, geo, scopeQ,
 * limit/offset/count and whether a next page exists), {@link EntityQuery#run} - which starts from an index and stops early -
 * gives exactly the page and count of a plain filter over every entity in id order. The seed is
 * printed on failure; {@code -Dcor.query.seed=N} replays one.
 */
class QueryDifferentialTest {
    private static final String TENANT = "";
    private static final String[] TYPES = {"A", "B", "C", "D"};
    private static final String[] WORDS = {"red", "green", "blue", "urn:x:1", "2020-01-01T00:00:00Z"};

    @Test
    void indexedQueriesAgreeWithAPlainFilter() {
        long seed = Long.getLong("cor.query.seed", System.nanoTime());
        try {
            run(seed, 400, 4000);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed " + seed + " (replay with -Dcor.query.seed=" + seed + "): " + e.getMessage(), e);
        }
    }

    private static void run(long seed, int entities, int cases) {
        Random r = new Random(seed);
        LdContext ctx = LdContexts.builder().build().core();
        EntityParser parser = new EntityParser(ctx, NgsildLimits.defaults());
        MemoryEntityStore store = new MemoryEntityStore();
        // writes, rewrites and deletes, so that every index has entries moved and removed
        for (int i = 0; i < entities * 2; i++) {
            String id = "urn:ngsi-ld:T:" + r.nextInt(entities);
            if (r.nextInt(10) == 0) {
                store.write(TENANT, id, current -> null);
                continue;
            }
            Entity e = EntityEditor.create(parser.entity(randomEntity(r, id), true, EntityParser.Mode.WHOLE), i);
            store.write(TENANT, id, current -> e);
        }
        List<Entity> all = new ArrayList<>();
        store.forEach(TENANT, null, all::add);
        assertTrue(all.size() > entities / 2, "the data set holds entities: " + all.size());
        int nonEmpty = 0;
        for (int c = 0; c < cases; c++) {
            EntityQuery q = randomQuery(r, parser, ctx);
            int offset = r.nextInt(4) == 0 ? r.nextInt(30) : 0;
            int limit = r.nextInt(5) == 0 ? 0 : 1 + r.nextInt(r.nextBoolean() ? 5 : 500);
            boolean count = limit == 0 || r.nextBoolean();
            EntityQuery.Page page = q.run(store, TENANT, offset, limit, count);
            // the plain filter after the run: it resolves linked entities through the same store
            List<String> expected = new ArrayList<>();
            for (Entity e : all) {
                if (q.test(e)) {
                    expected.add(e.id());
                }
            }
            List<String> got = page.entities().stream().map(Entity::id).toList();
            List<String> want = expected.subList(Math.min(offset, expected.size()), Math.min(offset + limit, expected.size()));
            String what = "case " + c + " " + q + " offset=" + offset + " limit=" + limit;
            assertEquals(want, got, what);
            if (count) {
                assertEquals(expected.size(), page.count(), what + " count");
            }
            assertEquals(expected.size() > offset + limit, page.more(), what + " a next page");
            if (!expected.isEmpty()) {
                nonEmpty++;
            }
        }
        // a generator whose queries never match would prove nothing
        assertTrue(nonEmpty > cases / 5, "queries with matches: " + nonEmpty + " of " + cases);
    }

    /**
     * The operators' semantics against an oracle written here and nowhere else (plain comparisons
     * over the JSON written, {@link java.util.regex.Pattern} for patterns, JTS's own predicates for
     * geometry): what the planner and the evaluator agree on wrongly shows here. One term or one
     * geo-query per case; some geometries are a degree wide, more cells than the spatial index
     * places one by one.
     */
    @Test
    void operatorsAgreeWithAnIndependentOracle() {
        long seed = Long.getLong("cor.query.seed", System.nanoTime());
        try {
            runOracle(seed, 300, 3000);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed " + seed + " (replay with -Dcor.query.seed=" + seed + "): " + e.getMessage(), e);
        }
    }

    private static void runOracle(long seed, int entities, int cases) {
        Random r = new Random(seed);
        LdContext ctx = LdContexts.builder().build().core();
        EntityParser parser = new EntityParser(ctx, NgsildLimits.defaults());
        MemoryEntityStore store = new MemoryEntityStore();
        java.util.TreeMap<String, ObjectNode> written = new java.util.TreeMap<>();
        for (int i = 0; i < entities; i++) {
            String id = "urn:ngsi-ld:T:" + String.format("%04d", i);
            ObjectNode json = randomEntity(r, id);
            if (r.nextInt(10) == 0) {
                double x = r.nextDouble();
                double y = r.nextDouble();
                ObjectNode g = ((ObjectNode) json.putObject("location").put("type", "GeoProperty")).putObject("value");
                g.put("type", "Polygon");
                var ring = g.putArray("coordinates").addArray();
                ring.addArray().add(x).add(y);
                ring.addArray().add(x + 1).add(y);
                ring.addArray().add(x + 1).add(y + 1);
                ring.addArray().add(x).add(y + 1);
                ring.addArray().add(x).add(y);
            }
            Entity e = EntityEditor.create(parser.entity(json.deepCopy(), true, EntityParser.Mode.WHOLE), i);
            store.write(TENANT, id, current -> e);
            written.put(id, json);
        }
        java.util.Map<String, Integer> seen = new java.util.TreeMap<>();
        for (int c = 0; c < cases; c++) {
            List<EntityQuery.Selector> all = List.of(new EntityQuery.Selector(null, null, TypeSelection.parse("A,B,C,D", parser::typeName)));
            java.util.function.Predicate<ObjectNode> oracle;
            EntityQuery q;
            String what;
            if (r.nextBoolean()) {
                OracleTerm t = randomTerm(r);
                what = t.q();
                oracle = t.holds();
                q = new EntityQuery(all, List.of(), QueryExpression.parse(t.q(), ctx), null, null);
            } else {
                double x = r.nextDouble();
                double y = r.nextDouble();
                double d = 0.01 + r.nextDouble() * 0.3;
                String georel = pick(r, new String[] {"within", "intersects", "disjoint", "overlaps", "contains"});
                String coordinates;
                org.locationtech.jts.geom.Geometry reference;
                if (georel.equals("contains") || r.nextInt(4) == 0) {
                    coordinates = "[" + x + "," + y + "]";
                    reference = JTS.createPoint(new org.locationtech.jts.geom.Coordinate(x, y));
                    q = new EntityQuery(all, List.of(), null, GeoQuery.parse(georel, "Point", coordinates, null, ctx), null);
                } else {
                    coordinates = "[[[" + x + "," + y + "],[" + (x + d) + "," + y + "],[" + (x + d) + "," + (y + d) + "],[" + x + ","
                            + (y + d) + "],[" + x + "," + y + "]]]";
                    reference = box(x, y, x + d, y + d);
                    q = new EntityQuery(all, List.of(), null, GeoQuery.parse(georel, "Polygon", coordinates, null, ctx), null);
                }
                what = "georel=" + georel + " " + coordinates;
                oracle = json -> {
                    org.locationtech.jts.geom.Geometry target = geometry(json.path("location").path("value"));
                    if (target == null) {
                        return false;
                    }
                    return switch (georel) {
                        case "within" -> target.within(reference);
                        case "intersects" -> target.intersects(reference);
                        case "disjoint" -> target.disjoint(reference);
                        case "overlaps" -> target.overlaps(reference);
                        default -> target.contains(reference);
                    };
                };
            }
            List<String> expected = new ArrayList<>();
            written.forEach((id, json) -> {
                if (oracle.test(json)) {
                    expected.add(id);
                }
            });
            EntityQuery.Page page = q.run(store, TENANT, 0, 1000, true);
            assertEquals(expected, page.entities().stream().map(Entity::id).toList(), "case " + c + " " + what);
            String op = what.startsWith("georel=") ? what.split(" ")[0] : what.replaceAll("[^=!<>~]", "");
            if (!expected.isEmpty() && expected.size() < written.size()) {
                seen.merge(op, 1, Integer::sum);
            }
        }
        // every operator met a case that separates the entities, or the comparison proved little
        for (String op : List.of("==", "!=", ">", ">=", "<", "<=", "~=", "!~=", "georel=within", "georel=intersects",
                "georel=disjoint", "georel=overlaps", "georel=contains")) {
            assertTrue(seen.getOrDefault(op, 0) > 0, "a discriminating case for " + op + ": " + seen);
        }
    }

    private static final org.locationtech.jts.geom.GeometryFactory JTS = new org.locationtech.jts.geom.GeometryFactory();

    private static org.locationtech.jts.geom.Geometry box(double x0, double y0, double x1, double y1) {
        return JTS.createPolygon(new org.locationtech.jts.geom.Coordinate[] {new org.locationtech.jts.geom.Coordinate(x0, y0),
            new org.locationtech.jts.geom.Coordinate(x1, y0), new org.locationtech.jts.geom.Coordinate(x1, y1),
            new org.locationtech.jts.geom.Coordinate(x0, y1), new org.locationtech.jts.geom.Coordinate(x0, y0)});
    }

    /** The generator's three geometry types, read straight from the JSON written. */
    private static org.locationtech.jts.geom.Geometry geometry(com.fasterxml.jackson.databind.JsonNode g) {
        var c = g.path("coordinates");
        return switch (g.path("type").asText()) {
            case "Point" -> JTS.createPoint(new org.locationtech.jts.geom.Coordinate(c.get(0).asDouble(), c.get(1).asDouble()));
            case "LineString" -> JTS.createLineString(new org.locationtech.jts.geom.Coordinate[] {
                new org.locationtech.jts.geom.Coordinate(c.get(0).get(0).asDouble(), c.get(0).get(1).asDouble()),
                new org.locationtech.jts.geom.Coordinate(c.get(1).get(0).asDouble(), c.get(1).get(1).asDouble())});
            case "Polygon" -> box(c.get(0).get(0).get(0).asDouble(), c.get(0).get(0).get(1).asDouble(),
                    c.get(0).get(2).get(0).asDouble(), c.get(0).get(2).get(1).asDouble());
            default -> null;
        };
    }

    /** One q term and what it means, said the plain way: a term on a missing target is false (4.9). */
    private record OracleTerm(String q, java.util.function.Predicate<ObjectNode> holds) {}

    private static OracleTerm randomTerm(Random r) {
        String op = pick(r, new String[] {"==", "!=", ">", ">=", "<", "<=", "~=", "!~="});
        if (op.endsWith("~=")) {
            String regex = pick(r, new String[] {"^r", "e", "n$", "urn", "1", "^1$"});
            String attr = pick(r, new String[] {"s", "p", "b"});
            java.util.regex.Pattern p = java.util.regex.Pattern.compile(regex);
            return new OracleTerm(attr + op + "\"" + regex + "\"", json -> {
                var v = json.path(attr).path("value");
                if (!v.isTextual()) {
                    return false;
                }
                return p.matcher(v.textValue()).find() == op.equals("~=");
            });
        }
        if (r.nextBoolean() && (op.equals("==") || op.equals("!="))) {
            String word = pick(r, WORDS);
            return new OracleTerm("s" + op + "\"" + word + "\"", json -> {
                var v = json.path("s").path("value");
                return v.isTextual() && v.textValue().equals(word) == op.equals("==");
            });
        }
        if (r.nextInt(3) == 0 && (op.equals("==") || op.equals("!="))) {
            int k = r.nextInt(5);
            return new OracleTerm("arr" + op + k, json -> {
                var v = json.path("arr").path("value");
                if (!v.isArray()) {
                    return false;
                }
                boolean any = false;
                for (var item : v) {
                    any |= item.asInt() == k;
                }
                return any == op.equals("==");
            });
        }
        int n = r.nextInt(20);
        return new OracleTerm("p" + op + n, json -> {
            var v = json.path("p").path("value");
            if (!v.isInt()) {
                return false;
            }
            int x = v.intValue();
            return switch (op) {
                case "==" -> x == n;
                case "!=" -> x != n;
                case ">" -> x > n;
                case ">=" -> x >= n;
                case "<" -> x < n;
                default -> x <= n;
            };
        });
    }

    static ObjectNode randomEntity(Random r, String id) {
        ObjectNode e = CorRestJson.mapper().createObjectNode();
        e.put("id", id);
        if (r.nextInt(3) == 0) {
            e.putArray("type").add(pick(r, TYPES)).add(pick(r, TYPES));
        } else {
            e.put("type", pick(r, TYPES));
        }
        if (r.nextBoolean()) {
            ObjectNode p = e.putObject("p");
            p.put("type", "Property");
            p.put("value", r.nextInt(20));
            if (r.nextBoolean()) {
                p.put("observedAt", "2020-0" + (1 + r.nextInt(9)) + "-01T00:00:00Z");
            }
            if (r.nextBoolean()) {
                p.put("unitCode", r.nextBoolean() ? "CEL" : "KMH");
            }
        }
        if (r.nextBoolean()) {
            ObjectNode s = e.putObject("s");
            s.put("type", "Property");
            s.put("value", pick(r, WORDS));
        }
        if (r.nextBoolean()) {
            ObjectNode b = e.putObject("b");
            b.put("type", "Property");
            b.put("value", r.nextBoolean());
        }
        if (r.nextInt(3) == 0) {
            ObjectNode rel = e.putObject("rel");
            rel.put("type", "Relationship");
            rel.put("object", r.nextBoolean() ? "urn:x:" + r.nextInt(4) : "urn:ngsi-ld:T:" + r.nextInt(400));
        }
        if (r.nextInt(3) == 0) {
            ObjectNode a = e.putObject("arr");
            a.put("type", "Property");
            a.putArray("value").add(r.nextInt(5)).add(r.nextInt(5));
        }
        if (r.nextInt(3) == 0) {
            ObjectNode c = e.putObject("addr");
            c.put("type", "Property");
            c.putObject("value").put("city", pick(r, WORDS)).put("no", r.nextInt(9));
        }
        if (r.nextInt(4) != 0) {
            ObjectNode loc = e.putObject("location");
            loc.put("type", "GeoProperty");
            loc.set("value", randomGeometry(r));
        }
        if (r.nextInt(4) == 0) {
            e.put("scope", "/" + pick(r, new String[] {"a", "b"}) + (r.nextBoolean() ? "/c" : ""));
        }
        return e;
    }

    private static ObjectNode randomGeometry(Random r) {
        double x = r.nextDouble();
        double y = r.nextDouble();
        double d = 0.001 + r.nextDouble() * 0.05;
        ObjectNode g = CorRestJson.mapper().createObjectNode();
        switch (r.nextInt(4)) {
            case 0, 1 -> {
                g.put("type", "Point");
                g.putArray("coordinates").add(x).add(y);
            }
            case 2 -> {
                g.put("type", "LineString");
                var c = g.putArray("coordinates");
                c.addArray().add(x).add(y);
                c.addArray().add(x + d).add(y + d);
            }
            default -> {
                g.put("type", "Polygon");
                var ring = g.putArray("coordinates").addArray();
                ring.addArray().add(x).add(y);
                ring.addArray().add(x + d).add(y);
                ring.addArray().add(x + d).add(y + d);
                ring.addArray().add(x).add(y + d);
                ring.addArray().add(x).add(y);
            }
        }
        return g;
    }

    private static EntityQuery randomQuery(Random r, EntityParser parser, LdContext ctx) {
        List<EntityQuery.Selector> selectors = new ArrayList<>();
        int n = r.nextInt(3);
        for (int i = 0; i < n; i++) {
            Set<String> ids = r.nextInt(4) == 0 ? new java.util.HashSet<>(List.of("urn:ngsi-ld:T:" + r.nextInt(400), "urn:ngsi-ld:T:" + r.nextInt(400))) : null;
            BoundedPattern pattern = r.nextInt(5) == 0 ? BoundedPattern.compile(".*:" + r.nextInt(10) + ".*", "idPattern") : null;
            String types = r.nextBoolean() ? pick(r, TYPES)
                    : pick(r, TYPES) + pick(r, new String[] {",", ";", "|"}) + pick(r, TYPES);
            selectors.add(new EntityQuery.Selector(ids, pattern, TypeSelection.parse(types, parser::typeName)));
        }
        List<String> attrs = new ArrayList<>();
        if (r.nextInt(4) == 0) {
            attrs.add(parser.attributeName(pick(r, new String[] {"p", "s", "rel", "location", "arr"})));
        }
        QueryExpression q = r.nextBoolean() ? QueryExpression.parse(randomQ(r, 0), ctx) : null;
        GeoQuery geo = r.nextInt(3) == 0 ? randomGeo(r, ctx) : null;
        ScopeQuery scope = r.nextInt(8) == 0 ? ScopeQuery.parse(pick(r, new String[] {"/a", "/a/#", "/+/c", "/b,/a/c"})) : null;
        return new EntityQuery(selectors, attrs, q, geo, scope);
    }

    /** A random valid q expression over the generated attributes. */
    static String randomQ(Random r, int depth) {
        int k = depth > 2 ? 0 : r.nextInt(6);
        if (k == 4) {
            return randomQ(r, depth + 1) + pick(r, new String[] {";", "|"}) + randomQ(r, depth + 1);
        }
        if (k == 5) {
            return "(" + randomQ(r, depth + 1) + ")";
        }
        return switch (r.nextInt(11)) {
            case 0 -> "p" + pick(r, new String[] {"==", "!=", ">", ">=", "<", "<="}) + r.nextInt(20);
            case 1 -> "p==" + r.nextInt(10) + ".." + (10 + r.nextInt(10));
            case 2 -> "s" + pick(r, new String[] {"==", "!="}) + "\"" + pick(r, WORDS) + "\"";
            case 3 -> "s~=\"" + pick(r, new String[] {"^r", "e", "n$", "urn"}) + "\"";
            case 4 -> "b==" + r.nextBoolean();
            case 5 -> "rel==urn:x:" + r.nextInt(4) + (r.nextBoolean() ? ",urn:x:" + r.nextInt(4) : "");
            case 6 -> "arr==" + r.nextInt(5);
            case 7 -> "addr[city]==\"" + pick(r, WORDS) + "\"";
            case 8 -> "p.observedAt>=2020-0" + (1 + r.nextInt(9)) + "-01T00:00:00Z";
            case 9 -> pick(r, new String[] {"p", "s", "rel", "!rel", "location", "addr[no]", "rel{p}>=10", "rel{A:s}==\"red\"",
                "rel{rel{b}}==true"});
            default -> "p.unitCode==\"" + (r.nextBoolean() ? "CEL" : "KMH") + "\"";
        };
    }

    private static GeoQuery randomGeo(Random r, LdContext ctx) {
        double x = r.nextDouble();
        double y = r.nextDouble();
        double d = 0.05 + r.nextDouble() * 0.3;
        String box = "[[[" + x + "," + y + "],[" + (x + d) + "," + y + "],[" + (x + d) + "," + (y + d) + "],[" + x + ","
                + (y + d) + "],[" + x + "," + y + "]]]";
        return switch (r.nextInt(6)) {
            case 0 -> GeoQuery.parse("near;maxDistance==" + (1000 + r.nextInt(40000)), "Point", "[" + x + "," + y + "]", null, ctx);
            case 1 -> GeoQuery.parse("near;minDistance==" + (1000 + r.nextInt(80000)), "Point", "[" + x + "," + y + "]", null, ctx);
            case 2 -> GeoQuery.parse("within", "Polygon", box, null, ctx);
            case 3 -> GeoQuery.parse("intersects", "Polygon", box, null, ctx);
            case 4 -> GeoQuery.parse("disjoint", "Polygon", box, null, ctx);
            default -> GeoQuery.parse("overlaps", "Polygon", box, null, ctx);
        };
    }

    static String pick(Random r, String[] from) {
        return from[r.nextInt(from.length)];
    }
}
