package dev.cor.ngsild.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.store.WriteHistory;
import dev.cor.ngsild.store.WriteObserver;

/**
 * The history's writes in their transactions: the instances of an entity write commit with it
 * and roll back with it; 16 coroutines of one loop writing one entity leave its history in the
 * order of its writes, one instance each; a write of the history's own (the temporal API's) and
 * every edit wait for the entity's advisory lock, as a write of the current state does.
 */
class PgTemporalWritesTest {
    static final String ATTR = PgEntityStoreTest.ATTR;
    static PgDatabase db;
    static PgTemporalStore history;
    static PgEntityStore store;

    @BeforeAll
    static void start() throws Exception {
        db = SharedPostgres.database(16);
        db.inTransaction(PgSchema.MIGRATIONS::migrate);
        history = new PgTemporalStore(db);
        store = new PgEntityStore(db, null, history);
    }

    @AfterAll
    static void stop() {
        if (db != null) {
            db.close();
        }
    }

    static List<Integer> values(String tenant, String id, TimeProperty order) {
        return history.instances(tenant, id, ATTR, new InstanceQuery(order, Long.MIN_VALUE, Long.MAX_VALUE, null, 0),
                Integer.MAX_VALUE).stream().map(i -> i.value().value().intValue()).toList();
    }

    @Test
    void aCommittedWriteLeavesExactlyItsInstances() {
        String id = "urn:ngsi-ld:C:" + System.nanoTime();
        store.write("w", id, cur -> PgEntityStoreTest.entity(id, PgEntityStoreTest.TYPE_A, 1), new WriteHistory(history, "w"));
        store.write("w", id, cur -> PgEntityStoreTest.entity(id, PgEntityStoreTest.TYPE_A, 2), new WriteHistory(history, "w"));
        assertEquals(List.of(1, 2), values("w", id, TimeProperty.CREATED_AT));
        assertEquals(List.of(PgEntityStoreTest.TYPE_A), history.entity("w", id).types());
        assertTrue(history.hasTenant("w"));
    }

    @Test
    void aWriteThatFailsAfterItsHistoryWasRecordedLeavesNoInstance() {
        String id = "urn:ngsi-ld:R:" + System.nanoTime();
        store.write("r", id, cur -> PgEntityStoreTest.entity(id, PgEntityStoreTest.TYPE_A, 1), new WriteHistory(history, "r"));
        WriteObserver recordsThenFails = (before, after) -> {
            new WriteHistory(history, "r").applied(before, after);
            throw new IllegalStateException("the write fails after its history was recorded");
        };
        assertThrows(IllegalStateException.class, () -> store.write("r", id,
                cur -> PgEntityStoreTest.entity(id, PgEntityStoreTest.TYPE_B, 7), recordsThenFails));
        assertEquals(List.of(1), values("r", id, TimeProperty.OBSERVED_AT), "the failed write's instance rolled back");
        assertEquals(List.of(PgEntityStoreTest.TYPE_A), history.entity("r", id).types(), "and its head's change");
        assertEquals(1, PgEntityStoreTest.value(store.get("r", id)), "with the current state");
        String fresh = "urn:ngsi-ld:R:new:" + System.nanoTime();
        assertThrows(IllegalStateException.class, () -> store.write("r-new", fresh,
                cur -> PgEntityStoreTest.entity(fresh, PgEntityStoreTest.TYPE_A, 3), recordsThenFails));
        assertNull(history.entity("r-new", fresh));
        assertFalse(history.hasTenant("r-new"), "a tenant whose only history rolled back is none");
        // nothing of the failed write's transaction is left offered: a write of the history's own commits
        history.record("r", id, null, null, List.of(TemporalInstance.of(ATTR, PgTemporalStoreTest.attribute(
                JsonNodeFactory.instance.numberNode(5), null, 5, 5, 5), TemporalInstance.NO_TIME)), TemporalInstance.NO_TIME);
        assertEquals(List.of(1, 5), values("r", id, TimeProperty.MODIFIED_AT).stream().sorted().toList());
    }

    @Test
    void writesOfOneEntityFromSixteenCoroutinesLeaveTheirInstancesInTheirOrder() throws Exception {
        CorCoLoop loop = CorCoLoop.builder().name("pg-history-writes").build().start();
        String id = "urn:ngsi-ld:Counter:" + System.nanoTime();
        int n = 16;
        int each = 15;
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch done = new CountDownLatch(n);
        try {
            store.write("", id, cur -> PgEntityStoreTest.entity(id, PgEntityStoreTest.TYPE_A, 0), new WriteHistory(history, ""));
            loop.execute(() -> {
                for (int k = 0; k < n; k++) {
                    CorCo.start(() -> {
                        try {
                            for (int j = 0; j < each; j++) {
                                store.write("", id, cur -> PgEntityStoreTest.entity(id, PgEntityStoreTest.TYPE_A,
                                        PgEntityStoreTest.value(cur) + 1), new WriteHistory(history, ""));
                            }
                        } catch (Throwable e) {
                            failures.add(e);
                        } finally {
                            done.countDown();
                        }
                        return null;
                    });
                }
            });
            assertTrue(done.await(60, TimeUnit.SECONDS), "the writes ended");
            assertEquals(List.of(), List.copyOf(failures));
            List<Integer> expected = new ArrayList<>();
            for (int v = 0; v <= n * each; v++) {
                expected.add(v);
            }
            assertEquals(expected, values("", id, TimeProperty.CREATED_AT), "one instance per write, in createdAt order");
            List<TemporalInstance> all = history.instances("", id, ATTR, InstanceQuery.ALL, Integer.MAX_VALUE);
            List<Integer> byNumber = all.stream().sorted(java.util.Comparator.comparingLong(
                    i -> TemporalInstance.numberOf(i.instanceId()))).map(i -> i.value().value().intValue()).toList();
            assertEquals(expected, byNumber, "and in the order of their ids");
        } finally {
            LoopTesting.stop(loop, () -> db.closeOn(loop));
        }
    }

    /**
     * While another transaction holds the entity's advisory lock, each write of the history's
     * own waits for it (seen waiting in pg_stat_activity), and ends once it is released.
     */
    @Test
    void theHistorysOwnWritesWaitForTheEntitysLock() throws Exception {
        String id = "urn:ngsi-ld:L:" + System.nanoTime();
        history.record("l", id, List.of(PgEntityStoreTest.TYPE_A), null, List.of(TemporalInstance.of(ATTR,
                PgTemporalStoreTest.attribute(JsonNodeFactory.instance.numberNode(1), null, 1, 1, 1), TemporalInstance.NO_TIME)),
                TemporalInstance.NO_TIME);
        String any = history.instances("l", id, ATTR, InstanceQuery.ALL, 1).get(0).instanceId();
        List<Supplier<Object>> writes = List.of(
                () -> history.record("l", id, null, null, List.of(), TemporalInstance.NO_TIME),
                () -> history.modifyInstance("l", id, ATTR, any, PgTemporalStoreTest.attribute(
                        JsonNodeFactory.instance.numberNode(2), null, 1, 1, 2)),
                () -> history.deleteInstance("l", id, ATTR, any),
                () -> history.deleteAttribute("l", id, ATTR, null, true),
                () -> history.deleteEntity("l", id));
        ExecutorService other = Executors.newSingleThreadExecutor();
        try (Connection holder = db.open(); Connection watcher = db.open()) {
            for (Supplier<Object> w : writes) {
                holder.setAutoCommit(false);
                try (PreparedStatement ps = holder.prepareStatement(
                        "SELECT pg_advisory_xact_lock(hashtextextended(? || chr(1) || ?, 0))")) {
                    ps.setString(1, "l");
                    ps.setString(2, id);
                    ps.executeQuery().close();
                }
                CompletableFuture<Object> f = CompletableFuture.supplyAsync(w, other);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!waitingOnAdvisoryLock(watcher)) {
                    assertFalse(f.isDone(), "a write of the history went past the entity's lock: " + f.getNow(null));
                    assertTrue(System.nanoTime() < deadline, "no write seen waiting for the entity's lock within 10 s");
                    Thread.onSpinWait();
                }
                assertFalse(f.isDone());
                holder.rollback();
                f.get(10, TimeUnit.SECONDS);
            }
        } finally {
            other.shutdownNow();
        }
        assertNull(history.entity("l", id));
    }

    private static boolean waitingOnAdvisoryLock(Connection c) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                + " WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1) > 0;
        }
    }
}
