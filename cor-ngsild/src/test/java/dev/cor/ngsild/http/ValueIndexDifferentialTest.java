package dev.cor.ngsild.http;

import static dev.cor.ngsild.http.QueryDifferentialTest.pick;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.ngsild.query.QueryExpression;
import dev.cor.ngsild.store.MemoryEntityStore;
import dev.cor.ngsild.store.TemporalRetention;
import dev.cor.ngsild.store.ValueIndexSettings;
import dev.cor.rest.CorRestJson;
import org.junit.jupiter.api.Test;

/**
 * Differential test of the value indexes (doc/broker.md, "Value indexes"): seeded random
 * entities - numbers, texts, booleans, date-times spelt several ways, typed values, language
 * maps, arrays, relationships, several instances by datasetId - are rewritten and deleted by
 * concurrent writers while readers query; then random q over indexed and unindexed attributes,
 * alone, joined and or-ed, answer exactly what a plain filter over every entity answers, and
 * the indexes gave the candidates of most of them. While the writers run, no entity they do
 * not touch may be missing from an answer it matches. The seed is printed on failure;
 * {@code -Dcor.query.seed=N} replays one.
 */
class ValueIndexDifferentialTest {
    private static final String TENANT = "";
    private static final int ENTITIES = 2_000;
    /** Ids below this are written once, before the writers start, and never again. */
    private static final int STABLE = 500;
    private static final String[] WORDS = {"red", "green", "geen", "blue", "urn:x:1", "2020-01-01T00:00:00Z", "rouge"};
    private static final String[] TIMES = {"2020-03-01T00:00:00Z", "2020-03-01T00:00:00.000Z", "2020-03-01T01:00:00+01:00",
        "2020-05-01T12:00:00Z", "2020-07-01T00:00:00.5Z", "2020-05", "not a date"};

    @Test
    void indexedQueriesAgreeWithAPlainFilterWhileWritersRewriteAndDelete() throws Exception {
        long seed = Long.getLong("cor.query.seed", System.nanoTime());
        try {
            run(seed);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed " + seed + " (replay with -Dcor.query.seed=" + seed + "): " + e.getMessage(), e);
        }
    }

    private static void run(long seed) throws Exception {
        Random r = new Random(seed);
        LdContext ctx = LdContexts.builder().build().core();
        EntityParser parser = new EntityParser(ctx, NgsildLimits.defaults());
        Set<String> indexed = new HashSet<>();
        for (String a : List.of("p", "s", "b", "rel", "arr", "t", "lp", "ty", "multi")) {
            indexed.add(parser.attributeName(a));
        }
        MemoryEntityStore store = new MemoryEntityStore(new TemporalRetention(Long.MAX_VALUE, 1 << 20),
                new ValueIndexSettings(indexed, 0, Long.MAX_VALUE));
        for (int i = 0; i < ENTITIES; i++) {
            write(store, parser, new Random(seed * 31 + i), i, i);
        }
        for (int phase = 0; phase < 3; phase++) {
            concurrently(store, parser, ctx, seed * 7 + phase);
            check(store, ctx, r, 700);
        }
    }

    /** Four writers rewrite and delete the ids from {@link #STABLE} on while two readers query. */
    private static void concurrently(MemoryEntityStore store, EntityParser parser, LdContext ctx, long seed) throws Exception {
        List<Entity> stable = new ArrayList<>();
        store.forEach(TENANT, null, e -> {
            if (number(e.id()) < STABLE) {
                stable.add(e);
            }
        });
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicInteger reads = new AtomicInteger();
        CountDownLatch writersDone = new CountDownLatch(4);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            long s = seed * 13 + w;
            threads.add(Thread.ofPlatform().start(() -> {
                Random r = new Random(s);
                EntityParser own = new EntityParser(ctx, NgsildLimits.defaults());
                for (int i = 0; i < 1_500; i++) {
                    int n = STABLE + r.nextInt(ENTITIES - STABLE);
                    if (r.nextInt(8) == 0) {
                        store.write(TENANT, id(n), current -> null);
                    } else {
                        write(store, own, r, n, i);
                    }
                }
                writersDone.countDown();
            }));
        }
        for (int q = 0; q < 2; q++) {
            long s = seed * 17 + q;
            threads.add(Thread.ofPlatform().start(() -> {
                Random r = new Random(s);
                while (writing.get() && failures.isEmpty()) {
                    String text = randomQ(r);
                    EntityQuery query = new EntityQuery(List.of(), List.of(), QueryExpression.parse(text, ctx), null, null);
                    Set<String> got = new HashSet<>();
                    for (Entity e : query.run(store, TENANT, 0, Integer.MAX_VALUE, true).entities()) {
                        got.add(e.id());
                    }
                    for (Entity e : stable) {
                        if (query.test(e) && !got.contains(e.id())) {
                            failures.add(text + ": " + e.id() + " matches, nobody wrote it, and the answer lacks it");
                        }
                    }
                    reads.incrementAndGet();
                }
            }));
        }
        writersDone.await();
        writing.set(false);
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(failures.isEmpty(), failures.toString());
        assertTrue(reads.get() > 10, "queries ran while the writers wrote: " + reads.get());
    }

    /** Random queries, each against the plain filter over every entity. */
    private static void check(MemoryEntityStore store, LdContext ctx, Random r, int cases) {
        List<Entity> all = new ArrayList<>();
        store.forEach(TENANT, null, all::add);
        int fromIndex = 0;
        int nonEmpty = 0;
        for (int c = 0; c < cases; c++) {
            String text = r.nextInt(6) == 0 ? QueryDifferentialTest.randomQ(r, 0) : randomQ(r);
            EntityQuery query = new EntityQuery(List.of(), List.of(), QueryExpression.parse(text, ctx), null, null);
            int offset = r.nextInt(4) == 0 ? r.nextInt(30) : 0;
            int limit = 1 + r.nextInt(r.nextBoolean() ? 20 : 2_000);
            boolean count = r.nextBoolean();
            EntityQuery.Page page = query.run(store, TENANT, offset, limit, count);
            List<String> expected = new ArrayList<>();
            for (Entity e : all) {
                if (query.test(e)) {
                    expected.add(e.id());
                }
            }
            String what = "case " + c + " q=" + text + " offset=" + offset + " limit=" + limit;
            assertEquals(expected.subList(Math.min(offset, expected.size()), Math.min(offset + limit, expected.size())),
                    page.entities().stream().map(Entity::id).toList(), what);
            if (count) {
                assertEquals(expected.size(), page.count(), what + " count");
            }
            assertEquals(expected.size() > offset + limit, page.more(), what + " a next page");
            if (query.indexed() != null) {
                fromIndex++;
            }
            if (!expected.isEmpty()) {
                nonEmpty++;
            }
        }
        // a comparison that never took an index, or never matched, would prove nothing
        assertTrue(fromIndex > cases / 5, "queries answered from a value index: " + fromIndex + " of " + cases);
        assertTrue(nonEmpty > cases / 3, "queries with matches: " + nonEmpty + " of " + cases);
    }

    private static void write(MemoryEntityStore store, EntityParser parser, Random r, int n, long time) {
        ObjectNode json = QueryDifferentialTest.randomEntity(r, id(n));
        json.remove("rel"); // its objects here are urn:x:N: a q on them is answered from the index
        if (r.nextInt(3) == 0) {
            json.putObject("rel").put("type", "Relationship").put("object", "urn:x:" + r.nextInt(6));
        }
        if (json.has("s") && r.nextBoolean()) {
            json.putObject("s").put("type", "Property").put("value", pick(r, WORDS));
        }
        if (r.nextBoolean()) {
            json.putObject("t").put("type", "Property").put("value", pick(r, TIMES));
        }
        if (r.nextInt(3) == 0) {
            ObjectNode map = json.putObject("lp").put("type", "LanguageProperty").putObject("languageMap");
            map.put("en", pick(r, WORDS));
            map.put("fr", pick(r, WORDS));
        }
        if (r.nextInt(3) == 0) {
            json.putObject("ty").put("type", "Property").putObject("value").put("@type", "DateTime")
                    .put("@value", "2021-0" + (1 + r.nextInt(5)) + "-01T00:00:00Z");
        }
        if (r.nextInt(3) == 0) {
            var multi = json.putArray("multi");
            multi.addObject().put("type", "Property").put("value", r.nextInt(10));
            multi.addObject().put("type", "Property").put("value", r.nextInt(10)).put("datasetId", "urn:d:" + r.nextInt(3));
        }
        Entity e = EntityEditor.create(parser.entity(json, true, EntityParser.Mode.WHOLE), time);
        store.write(TENANT, id(n), current -> e);
    }

    /** A q the value indexes can answer, or can answer in part. */
    private static String randomQ(Random r) {
        String one = term(r);
        return switch (r.nextInt(6)) {
            case 0 -> one + ";" + term(r);
            case 1 -> one + "|" + term(r);
            case 2 -> one + ";" + QueryDifferentialTest.randomQ(r, 2);
            default -> one;
        };
    }

    private static String term(Random r) {
        return switch (r.nextInt(16)) {
            case 0 -> "p" + pick(r, new String[] {"==", ">", ">=", "<", "<="}) + r.nextInt(20);
            case 1 -> "p==" + r.nextInt(10) + ".." + (r.nextInt(10) + 5);
            case 2 -> "p==" + r.nextInt(20) + "," + r.nextInt(20) + "," + r.nextInt(20);
            case 3 -> "s" + pick(r, new String[] {"==", ">", "<="}) + "\"" + pick(r, WORDS) + "\"";
            case 4 -> "s~=\"" + pick(r, new String[] {"^re", "^urn:x", "^gr?een", "^r.*", "^bl+", "^2020-01"}) + "\"";
            case 5 -> "b==" + r.nextBoolean();
            case 6 -> "rel==urn:x:" + r.nextInt(6) + (r.nextBoolean() ? ",urn:x:" + r.nextInt(6) : "");
            case 7 -> "arr==" + r.nextInt(5) + (r.nextBoolean() ? ".." + (r.nextInt(5) + 1) : "");
            case 8 -> "t" + pick(r, new String[] {"==", ">=", "<", ">"}) + pick(r, new String[] {"2020-03-01T00:00:00Z",
                "2020-05-01T12:00:00.000Z", "2020-07-01T00:00:00.500Z"});
            case 9 -> "t" + pick(r, new String[] {"==", ">=", "<"}) + "\"" + pick(r, TIMES) + "\"";
            case 10 -> "lp==\"" + pick(r, WORDS) + "\"";
            case 11 -> "lp~=\"^r\"";
            case 12 -> "ty" + pick(r, new String[] {"==", ">", "<="}) + "2021-0" + (1 + r.nextInt(5)) + "-01T00:00:00Z";
            case 13 -> "multi" + pick(r, new String[] {"==", ">", "<"}) + r.nextInt(10);
            case 14 -> "t==2020-03-01T00:00:00Z..2020-06-01T00:00:00Z";
            default -> "s!=\"" + pick(r, WORDS) + "\"";
        };
    }

    private static String id(int n) {
        return "urn:ngsi-ld:T:" + String.format("%05d", n);
    }

    private static int number(String id) {
        return Integer.parseInt(id.substring(id.lastIndexOf(':') + 1));
    }
}
