package dev.cor.ngsild.store.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.store.EntityChange;
import dev.cor.ngsild.store.EntityWrite;
import dev.cor.ngsild.store.MemoryEntityStore;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * Entities in PostgreSQL: random writes in two tenants leave the same records, byte for byte in
 * the stores' form, as the memory store given the same writes - by id, by type in id order,
 * counted, per tenant; writes of one id from 16 coroutines of one loop are applied one after the
 * other, each to the record the previous one left, and of 16 creates of one new id one creates.
 */
class PgEntityStoreTest {
    static final String TYPE_A = "https://example.org/A";
    static final String TYPE_B = "https://example.org/B";
    static final String ATTR = "https://example.org/v";

    static PgDatabase db;
    static PgEntityStore store;

    @BeforeAll
    static void start() throws Exception {
        db = SharedPostgres.database(16, 5_000, 5_000); // a fresh database of the run's one cluster
        db.inTransaction(c -> PgSchema.MIGRATIONS.migrate(c));
        store = new PgEntityStore(db);
    }

    @AfterAll
    static void stop() {
        if (db != null) {
            db.close();
        }
    }

    static Entity entity(String id, String type, int v) {
        Attribute a = new Attribute(AttributeKind.PROPERTY, JsonNodeFactory.instance.numberNode(v), null, null, null, null, null,
                Map.of(), 1_000 + v, 2_000 + v);
        return new Entity(id, List.of(type), List.of(), Map.of(ATTR, AttributeList.of(a)), 1_000, 2_000 + v);
    }

    static int value(Entity e) {
        return e.attributes().get(ATTR).instances().get(0).value().intValue();
    }

    static byte[] bytes(Entity e) {
        if (e == null) {
            return null;
        }
        ByteSink out = new ByteSink(64);
        new EntityCodec().writeEntity(out, e);
        return java.util.Arrays.copyOf(out.array(), out.position());
    }

    static List<byte[]> all(dev.cor.ngsild.store.EntityStore s, String tenant, String type) {
        List<byte[]> out = new ArrayList<>();
        s.forEach(tenant, type, e -> out.add(bytes(e)));
        return out;
    }

    @Test
    void randomWritesLeaveWhatTheMemoryStoreLeaves() {
        long seed = Long.getLong("cor.pg.seed", System.nanoTime());
        Random r = new Random(seed);
        MemoryEntityStore memory = new MemoryEntityStore();
        String[] tenants = {"a-" + seed, "b-" + seed}; // the other tests write to the default tenant
        for (int k = 0; k < 400; k++) {
            String tenant = tenants[r.nextInt(2)];
            String id = "urn:ngsi-ld:E:" + seed + ":" + r.nextInt(25);
            String type = r.nextBoolean() ? TYPE_A : TYPE_B;
            int v = r.nextInt(1000);
            int op = r.nextInt(10);
            EntityChange change = cur -> switch (op) {
                case 0, 1 -> null; // delete (or nothing, when there is none)
                case 2 -> cur; // no change
                case 3, 4 -> cur == null ? entity(id, type, v) : cur; // create if absent
                default -> entity(id, cur == null ? type : cur.types().get(0), cur == null ? v : value(cur) + v); // upsert
            };
            EntityWrite m = memory.write(tenant, id, change);
            EntityWrite p = store.write(tenant, id, change);
            String why = "seed " + seed + " (-Dcor.pg.seed), write " + k;
            assertArrayEquals(bytes(m.before()), bytes(p.before()), why + ": the record before");
            assertArrayEquals(bytes(m.after()), bytes(p.after()), why + ": the record after");
        }
        for (String tenant : tenants) {
            for (String type : new String[] {null, TYPE_A, TYPE_B}) {
                List<byte[]> m = all(memory, tenant, type);
                List<byte[]> p = all(store, tenant, type);
                assertEquals(m.size(), p.size(), "seed " + seed + ", tenant '" + tenant + "', type " + type);
                for (int k = 0; k < m.size(); k++) {
                    assertArrayEquals(m.get(k), p.get(k), "seed " + seed + ", in id order, " + k);
                }
            }
            assertEquals(memory.count(tenant), store.count(tenant));
            for (int i = 0; i < 25; i++) {
                String id = "urn:ngsi-ld:E:" + seed + ":" + i;
                assertArrayEquals(bytes(memory.get(tenant, id)), bytes(store.get(tenant, id)), id);
            }
        }
        for (String tenant : tenants) {
            assertEquals(memory.hasTenant(tenant), store.hasTenant(tenant), tenant);
            assertEquals(memory.hasTenant(tenant), store.tenants().contains(tenant), tenant);
        }
        assertTrue(store.tenants().contains("") && store.hasTenant(""), "the default tenant always exists");
        assertTrue(!store.hasTenant("never-" + seed));
    }

    @Test
    void writesOfOneIdFromSixteenCoroutinesAreAppliedOneAfterTheOther() throws Exception {
        CorCoLoop loop = CorCoLoop.builder().name("pg-writes").build().start();
        String id = "urn:ngsi-ld:Counter:" + System.nanoTime();
        String fresh = "urn:ngsi-ld:Fresh:" + System.nanoTime();
        int n = 16;
        int each = 20;
        ConcurrentLinkedQueue<Object> outcomes = new ConcurrentLinkedQueue<>();
        CountDownLatch done = new CountDownLatch(2 * n);
        try {
            store.write("", id, cur -> entity(id, TYPE_A, 0));
            loop.execute(() -> {
                for (int k = 0; k < n; k++) {
                    CorCo.start(() -> {
                        try {
                            for (int j = 0; j < each; j++) {
                                EntityWrite w = store.write("", id, cur -> entity(id, TYPE_A, value(cur) + 1));
                                outcomes.add(value(w.after()) - value(w.before()));
                            }
                        } catch (Throwable e) {
                            outcomes.add(e);
                        } finally {
                            done.countDown();
                        }
                        return null;
                    });
                    CorCo.start(() -> {
                        try {
                            EntityWrite w = store.write("", fresh, cur -> cur != null ? cur : entity(fresh, TYPE_B, 1));
                            outcomes.add(w.created() ? "created" : "found");
                        } catch (Throwable e) {
                            outcomes.add(e);
                        } finally {
                            done.countDown();
                        }
                        return null;
                    });
                }
            });
            assertTrue(done.await(60, TimeUnit.SECONDS));
            List<Object> all = List.copyOf(outcomes);
            assertEquals(n * each, all.stream().filter(o -> Integer.valueOf(1).equals(o)).count(), "each write added one to the "
                    + "record the one before it left: " + all.stream().filter(o -> !(o instanceof Integer i && i == 1)
                    && !(o instanceof String)).toList());
            assertEquals(n * each, value(store.get("", id)));
            assertEquals(1, all.stream().filter("created"::equals).count(), "one of the creates of one new id created it");
            assertEquals(n - 1, all.stream().filter("found"::equals).count());
        } finally {
            LoopTesting.stop(loop, () -> db.closeOn(loop));
        }
    }

    @Test
    void aRecordReadBackIsTheRecordWritten() {
        String id = "urn:ngsi-ld:Exact:" + System.nanoTime();
        Entity e = entity(id, TYPE_A, 41);
        store.write("exact", id, cur -> e);
        assertArrayEquals(bytes(e), bytes(store.get("exact", id)));
        assertNull(store.get("exact", id + "-none"));
        assertNull(store.get("no-such-tenant", id));
    }
}
