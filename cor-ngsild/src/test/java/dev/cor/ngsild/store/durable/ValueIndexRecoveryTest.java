package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.ngsild.query.MatchBudget;
import dev.cor.ngsild.query.QueryExpression;
import dev.cor.ngsild.query.ValueLookup;
import dev.cor.ngsild.store.ValueIndexSettings;
import dev.cor.rest.CorRestJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Value indexes after a restart of the durable store (doc/broker.md, "Value indexes"): they are
 * not written to disk but rebuilt from the entities the store recovers - a declared one as the
 * journal or the snapshot is read, an automatic one when a query asks for it again - and give
 * exactly the ids they gave before: after a crash (the journal replayed) and after a clean
 * close (the snapshot read). Each answer also holds every entity a plain filter matches.
 */
class ValueIndexRecoveryTest {
    private static final int ENTITIES = 1_500;
    private static final String[] WORDS = {"red", "green", "blue", "rouge"};
    private static final List<String> QS = List.of("p==7", "p>15", "p==3..5", "s==\"red\"", "s~=\"^gr\"", "t>=2020-05-01T00:00:00Z",
            "t==\"2020-03-01T00:00:00.000Z\"", "b==true", "p==1|p==2");

    private final LdContext ctx = LdContexts.builder().build().core();
    private final EntityParser parser = new EntityParser(ctx, NgsildLimits.defaults());

    @Test
    void theIndexesAfterRecoveryGiveExactlyTheIdsTheyGaveBefore(@TempDir Path dir) throws Exception {
        long seed = Long.getLong("cor.query.seed", System.nanoTime());
        // p, s and t declared; b gets its index once a query asks (past 100 holders)
        ValueIndexSettings settings = new ValueIndexSettings(
                Set.of(parser.attributeName("p"), parser.attributeName("s"), parser.attributeName("t")), 100, Long.MAX_VALUE);
        Random r = new Random(seed);
        DurableEntityStore store = DurableEntityStore.builder(dir).fsync(FsyncPolicy.off()).valueIndexes(settings).open();
        writeSome(store, r, ENTITIES * 2);
        List<List<String>> before = answers(store, seed);
        store.crash();

        DurableEntityStore replayed = DurableEntityStore.builder(dir).fsync(FsyncPolicy.off()).valueIndexes(settings).open();
        assertEquals(before, answers(replayed, seed), "seed " + seed + ": after the journal's replay");
        writeSome(replayed, r, 200);
        before = answers(replayed, seed);
        replayed.close();

        DurableEntityStore reread = DurableEntityStore.builder(dir).fsync(FsyncPolicy.off()).valueIndexes(settings).open();
        try {
            assertEquals(before, answers(reread, seed), "seed " + seed + ": after the snapshot's read");
        } finally {
            reread.close();
        }
    }

    private void writeSome(DurableEntityStore store, Random r, int writes) {
        for (int i = 0; i < writes; i++) {
            String id = "urn:ngsi-ld:R:" + r.nextInt(ENTITIES);
            if (r.nextInt(10) == 0) {
                store.write("", id, current -> null);
                continue;
            }
            ObjectNode json = CorRestJson.mapper().createObjectNode().put("id", id).put("type", "R");
            if (r.nextInt(4) != 0) {
                json.putObject("p").put("type", "Property").put("value", r.nextInt(20));
            }
            if (r.nextBoolean()) {
                json.putObject("s").put("type", "Property").put("value", WORDS[r.nextInt(WORDS.length)]);
            }
            if (r.nextBoolean()) {
                json.putObject("b").put("type", "Property").put("value", r.nextBoolean());
            }
            if (r.nextBoolean()) {
                json.putObject("t").put("type", "Property").put("value", "2020-0" + (1 + r.nextInt(9)) + "-01T00:00:00Z");
            }
            Entity e = EntityEditor.create(parser.entity(json, true, EntityParser.Mode.WHOLE), i);
            store.write("", id, current -> e);
        }
    }

    /** Each q's ids from its index (waiting for an automatic one), each checked to hold the plain filter's matches. */
    private List<List<String>> answers(DurableEntityStore store, long seed) throws InterruptedException {
        List<Entity> all = new ArrayList<>();
        store.forEach("", null, all::add);
        List<List<String>> out = new ArrayList<>();
        for (String text : QS) {
            QueryExpression q = QueryExpression.parse(text, ctx);
            ValueLookup lookup = q.valueLookups().get(0);
            long deadline = System.nanoTime() + 30_000_000_000L;
            List<String> ids;
            while ((ids = store.idsWithValues("", lookup, Integer.MAX_VALUE)) == null) {
                assertTrue(System.nanoTime() < deadline, "no index answers " + text);
                Thread.sleep(10);
            }
            assertNotNull(ids);
            TreeSet<String> matches = new TreeSet<>();
            for (Entity e : all) {
                if (q.test(e, MatchBudget.request())) {
                    matches.add(e.id());
                }
            }
            assertTrue(ids.containsAll(matches), "seed " + seed + ": " + text + " misses " + diff(matches, new TreeSet<>(ids)));
            assertTrue(!matches.isEmpty(), text + " matches something, or the comparison proves little");
            out.add(ids);
        }
        return out;
    }

    private static Set<String> diff(Set<String> a, Set<String> b) {
        Set<String> d = new TreeSet<>(a);
        d.removeAll(b);
        return d;
    }
}
