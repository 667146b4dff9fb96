package dev.cor.ngsild.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.BrokerHttp;
import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.conformance.NotificationReceiver;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.store.durable.DurableEntityStore;
import dev.cor.ngsild.store.postgres.PostgresCluster;
import dev.cor.ngsild.store.postgres.PostgresEntityStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A copy answers as the original: a durable store filled through a broker over HTTP - entities
 * in the default tenant and two others, a tenant whose entities were all deleted, a Hosted
 * {@code @context} (and one deleted) that a subscription's jsonldContext names, a subscription, one
 * that notified (its counters), a subscription to registrations, a registration, and the history of every write, with a tenant
 * the temporal API alone made - is copied into PostgreSQL and from there into a second data
 * directory, and into a data directory straight; a broker over each copy answers every read as
 * one over the original does, byte for byte (the history's instance ids aside: the target numbers
 * them). A target that holds anything is refused, named, and left as it was; a target that keeps
 * no history is refused a source that holds some.
 */
class StoreCopyTest {
    private static final String LAST_FAILURE = ",\"lastFailure\":\"[^\"]*\"";
    private static final String LINK = "; rel=\"http://www.w3.org/ns/json-ld#context\"";
    private static final String THING = """
            {"id": "urn:ngsi-ld:Thing:1", "type": "Thing",
             "speed": {"type": "Property", "value": 12.5, "observedAt": "2024-01-02T03:04:05.678Z", "unitCode": "KMH"},
             "name": {"type": "LanguageProperty", "languageMap": {"en": "one", "es": "uno"}},
             "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [-3.7, 40.4]}},
             "owner": {"type": "Relationship", "object": "urn:ngsi-ld:Person:1"}}
            """;

    @TempDir
    static Path tmp;
    static PostgresCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = PostgresCluster.start(tmp);
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A broker over {@code store} for the time of {@code work}; the store is closed after it. */
    private static <T> T withBroker(EntityStore store, boolean history, Function<BrokerHttp, T> work) {
        try (AutoCloseable closing = (AutoCloseable) store; TestBroker broker = TestBroker.start(
                c -> c.store(store).history(history), s -> { })) {
            return work.apply(new BrokerHttp(broker));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The answers alike, read by read: a difference names its read. */
    private static void same(List<String> expected, List<String> actual, String over) {
        assertEquals(expected.size(), actual.size(), over);
        for (int k = 0; k < expected.size(); k++) {
            assertEquals(expected.get(k), actual.get(k), over + ", read " + k);
        }
    }

    private static String ok(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    private static void status(int expected, HttpResponse<String> r) {
        assertEquals(expected, r.statusCode(), r.body());
    }

    /** Writes the fixture; returns the Hosted context's id. */
    private static String fill(BrokerHttp http, boolean history, String receiver) {
        try {
            // a subscription that notifies the writes of Thing: its counters, kept at the stop, are copied
            status(201, http.postJson("/subscriptions", "{\"id\": \"urn:ngsi-ld:Subscription:2\", \"type\": \"Subscription\","
                    + " \"entities\": [{\"type\": \"Thing\"}], \"notification\": {\"endpoint\": {\"uri\": \"" + receiver + "\"}}}"));
            status(201, http.postJson("/entities", THING));
            status(204, http.send("PATCH", "/entities/urn:ngsi-ld:Thing:1/attrs", "application/json",
                    "{\"speed\": {\"type\": \"Property\", \"value\": 14, \"observedAt\": \"2024-01-02T03:05:00Z\"}}"));
            status(201, http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:Thing:2\", \"type\": \"Thing\","
                    + " \"n\": {\"type\": \"Property\", \"value\": 2}}"));
            status(204, http.send("DELETE", "/entities/urn:ngsi-ld:Thing:2/attrs/n", null, null));
            // t1: a tenant whose one entity was deleted - it stays a tenant
            status(201, http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:Gone:1\", \"type\": \"Gone\"}", "NGSILD-Tenant", "t1"));
            status(204, http.send("DELETE", "/entities/urn:ngsi-ld:Gone:1", null, null, "NGSILD-Tenant", "t1"));
            StringBuilder batch = new StringBuilder("[");
            for (int i = 0; i < 3; i++) {
                batch.append(i == 0 ? "" : ",").append("{\"id\": \"urn:ngsi-ld:Batch:").append(i)
                        .append("\", \"type\": \"Batch\", \"n\": {\"type\": \"Property\", \"value\": ").append(i).append("}}");
            }
            status(201, http.postJson("/entityOperations/upsert", batch + "]", "NGSILD-Tenant", "t2"));
            status(204, http.send("PATCH", "/entities/urn:ngsi-ld:Batch:1/attrs", "application/json",
                    "{\"n\": {\"type\": \"Property\", \"value\": 100}}", "NGSILD-Tenant", "t2"));
            status(204, http.send("DELETE", "/entities/urn:ngsi-ld:Batch:2", null, null, "NGSILD-Tenant", "t2"));
            HttpResponse<String> added = http.postJson("/jsonldContexts", "{\"@context\": {\"velocity\": \"urn:x:speed\"}}");
            status(201, added);
            String location = added.headers().firstValue("Location").orElseThrow();
            String hostedId = location.substring(location.lastIndexOf('/') + 1);
            HttpResponse<String> second = http.postJson("/jsonldContexts", "{\"@context\": {\"other\": \"urn:x:other\"}}");
            String secondId = second.headers().firstValue("Location").orElseThrow();
            status(204, http.send("DELETE", "/jsonldContexts/" + secondId.substring(secondId.lastIndexOf('/') + 1), null, null));
            String hostedLink = "<http://localhost/ngsi-ld/v1/jsonldContexts/" + hostedId + ">" + LINK;
            status(201, http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:Car:1\", \"type\": \"Car\", \"velocity\": "
                    + "{\"type\": \"Property\", \"value\": 3}}", "Link", hostedLink));
            status(201, http.postJson("/subscriptions", "{\"id\": \"urn:ngsi-ld:Subscription:1\", \"type\": \"Subscription\","
                    + " \"entities\": [{\"type\": \"Nothing\"}], \"jsonldContext\": \"http://localhost/ngsi-ld/v1/jsonldContexts/"
                    + hostedId + "\", \"notification\": {\"endpoint\": {\"uri\": \"http://127.0.0.1:9/notify\"}}}", "Link", hostedLink));
            status(201, http.postJson("/csourceSubscriptions", "{\"id\": \"urn:ngsi-ld:Subscription:csr\", \"type\": \"Subscription\","
                    + " \"entities\": [{\"type\": \"Car\"}], \"notification\": {\"endpoint\": {\"uri\": \"http://127.0.0.1:9/csr\"}}}",
                    "NGSILD-Tenant", "t2"));
            status(201, http.postJson("/csourceRegistrations", "{\"id\": \"urn:ngsi-ld:ContextSourceRegistration:1\","
                    + " \"type\": \"ContextSourceRegistration\", \"information\": [{\"entities\": [{\"type\": \"Car\"}],"
                    + " \"propertyNames\": [\"velocity\"]}], \"endpoint\": \"http://127.0.0.1:9/source\"}", "Link", hostedLink));
            if (history) {
                // t3: history alone, made by the temporal API; its instances with and without observedAt
                status(201, http.postJson("/temporal/entities", "{\"id\": \"urn:ngsi-ld:Vehicle:1\", \"type\": \"Vehicle\","
                        + " \"speed\": [{\"type\": \"Property\", \"value\": 120, \"observedAt\": \"2020-08-01T12:03:00Z\"},"
                        + " {\"type\": \"Property\", \"value\": 80, \"observedAt\": \"2020-08-01T12:05:00Z\"}],"
                        + " \"fuel\": {\"type\": \"Property\", \"value\": 0.5}}", "NGSILD-Tenant", "t3"));
                status(204, http.postJson("/temporal/entities/urn:ngsi-ld:Vehicle:1/attrs", "{\"fuel\": {\"type\": \"Property\","
                        + " \"value\": 0.4}}", "NGSILD-Tenant", "t3"));
            }
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (BrokerHttp.json(http.get("/subscriptions/urn:ngsi-ld:Subscription:2")).path("notification").path("timesSent")
                    .asInt() < 1) {
                assertTrue(System.nanoTime() < deadline, "the writes of Thing notified within 10 s");
                Thread.sleep(10);
            }
            return hostedId;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Every read the fixture answers, a line each; the history's instance ids taken out (the copy numbers its own). */
    private static List<String> state(BrokerHttp http, String hostedId, boolean history) {
        try {
            List<String> out = new ArrayList<>();
            out.add(ok(http.get("/entities/urn:ngsi-ld:Thing:1?options=sysAttrs")));
            out.add(ok(http.get("/entities?type=Thing&options=sysAttrs")));
            out.add(ok(http.get("/entities?georel=near;maxDistance==1000&geometry=Point&coordinates=%5B-3.7,40.4%5D")));
            out.add(ok(http.get("/types?details=true")));
            out.add(ok(http.get("/entities?type=Gone", "NGSILD-Tenant", "t1")));
            out.add(ok(http.get("/entities?type=Batch&options=sysAttrs", "NGSILD-Tenant", "t2")));
            out.add(ok(http.get("/jsonldContexts/" + hostedId)));
            // how often a context was used is the process's count, kept by no store
            out.add(ok(http.get("/jsonldContexts?kind=Hosted&details=true")).replaceAll("\"requests\":\\d+", "\"requests\":N")
                    .replaceAll("http://127\\.0\\.0\\.1:\\d+", "http://host"));
            String hostedLink = "<http://localhost/ngsi-ld/v1/jsonldContexts/" + hostedId + ">" + LINK;
            out.add(ok(http.get("/entities/urn:ngsi-ld:Car:1?options=sysAttrs", "Link", hostedLink)));
            out.add(ok(http.get("/subscriptions/urn:ngsi-ld:Subscription:1?options=sysAttrs")));
            out.add(ok(http.get("/subscriptions/urn:ngsi-ld:Subscription:2?options=sysAttrs")));
            out.add(ok(http.get("/subscriptions")));
            out.add(ok(http.get("/csourceSubscriptions/urn:ngsi-ld:Subscription:csr?options=sysAttrs", "NGSILD-Tenant", "t2")));
            // a registration's forwards' status is the process's (each broker forwards the reads above to it once)
            out.add(ok(http.get("/csourceRegistrations/urn:ngsi-ld:ContextSourceRegistration:1?options=sysAttrs", "Link",
                    hostedLink)).replaceAll(LAST_FAILURE, ""));
            out.add(ok(http.get("/csourceRegistrations?type=Car")).replaceAll(LAST_FAILURE, ""));
            if (history) {
                out.add(instanceIdsOut(ok(http.get("/temporal/entities/urn:ngsi-ld:Thing:1?options=sysAttrs"))));
                out.add(instanceIdsOut(ok(http.get("/temporal/entities/urn:ngsi-ld:Thing:2?options=sysAttrs"))));
                out.add(instanceIdsOut(ok(http.get("/temporal/entities?type=Batch&options=sysAttrs", "NGSILD-Tenant", "t2"))));
                out.add(instanceIdsOut(ok(http.get("/temporal/entities/urn:ngsi-ld:Gone:1?options=sysAttrs", "NGSILD-Tenant", "t1"))));
                out.add(instanceIdsOut(ok(http.get("/temporal/entities/urn:ngsi-ld:Vehicle:1?options=sysAttrs", "NGSILD-Tenant", "t3"))));
                out.add(ok(http.get("/temporal/entities/urn:ngsi-ld:Vehicle:1?options=temporalValues", "NGSILD-Tenant", "t3")));
            }
            return out;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The answer with every instanceId taken out, after checking that they are distinct. */
    private static String instanceIdsOut(String body) throws Exception {
        JsonNode n = BrokerHttp.JSON.readTree(body);
        Set<String> ids = new HashSet<>();
        int[] count = {0};
        strip(n, ids, count);
        assertEquals(count[0], ids.size(), "each instance has an id of its own: " + body);
        return BrokerHttp.JSON.writeValueAsString(n);
    }

    private static void strip(JsonNode n, Set<String> ids, int[] count) {
        if (n instanceof ObjectNode o && o.has("instanceId")) {
            ids.add(o.remove("instanceId").asText());
            count[0]++;
        }
        n.forEach(c -> strip(c, ids, count));
    }

    private static DurableEntityStore durable(Path dir) {
        return DurableEntityStore.builder(dir).open();
    }

    private static PostgresEntityStore postgres(String uri) {
        try {
            return PostgresEntityStore.builder(uri).open();
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Fills a data directory through a broker, and stops it; returns what a broker over it then
     * answers (what the directory holds: a subscription's counters as kept at the stop), and the
     * Hosted context's id first.
     */
    private static List<String> original(Path dir, boolean history) {
        String hostedId;
        try (NotificationReceiver receiver = NotificationReceiver.start()) {
            hostedId = withBroker(durable(dir), history, http -> fill(http, history, receiver.url()));
        }
        List<String> out = new ArrayList<>();
        out.add(hostedId);
        out.addAll(answers(durable(dir), hostedId, history));
        assertTrue(out.get(12).matches(".*\"timesSent\":[1-9].*\"lastSuccess\":\"20.*"), "the counters were kept: " + out.get(12));
        return out;
    }

    private static List<String> answers(EntityStore store, String hostedId, boolean history) {
        return withBroker(store, history, http -> state(http, hostedId, history));
    }

    private static StoreCopy.Counts copy(EntityStore from, EntityStore to) {
        try (AutoCloseable f = (AutoCloseable) from; AutoCloseable t = (AutoCloseable) to) {
            return StoreCopy.copy(from, to);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aCopyIntoPostgresqlAndBackIntoADataDirectoryAnswersAsTheOriginal() throws Exception {
        String uri = cluster.createDatabase("round_trip");
        boolean history;
        try (PostgresEntityStore pg = postgres(uri)) {
            history = pg.temporal().isPresent(); // the PostgreSQL store's history comes in its own change
        }
        if (!history) {
            // until then, a source with history is refused, and the database is left empty
            Path withHistory = tmp.resolve("with-history");
            try (DurableEntityStore d = durable(withHistory)) {
                Attribute v = new Attribute(AttributeKind.PROPERTY, com.fasterxml.jackson.databind.node.JsonNodeFactory.instance
                        .numberNode(1), null, null, null, null, null, java.util.Map.of(), 1_000, 1_000);
                d.temporal().orElseThrow().record("", "urn:x:1", List.of("urn:x:T"), List.of(),
                        List.of(TemporalInstance.of("urn:x:v", v, TemporalInstance.NO_TIME)), TemporalInstance.NO_TIME);
            }
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> copy(durable(withHistory), postgres(uri)));
            assertTrue(refused.getMessage().contains("the target keeps no history"), refused.getMessage());
        }
        Path dir = tmp.resolve("original");
        List<String> before = original(dir, history);
        String hostedId = before.remove(0);

        StoreCopy.Counts in = copy(durable(dir), postgres(uri));
        assertEquals(2, in.tenants(), in.toString()); // t1, t2 (t3 holds history alone)
        assertEquals(1, in.emptyTenants(), in.toString());
        assertEquals(5, in.entities(), in.toString());
        assertEquals(1, in.contexts(), in.toString());
        assertEquals(2, in.subscriptions(), in.toString());
        assertEquals(1, in.csourceSubscriptions(), in.toString());
        assertEquals(1, in.registrations(), in.toString());

        Path back = tmp.resolve("back");
        StoreCopy.Counts out = copy(postgres(uri), durable(back));
        assertEquals(in, out);

        // a target that holds anything is refused, and left as it was
        IllegalStateException full = assertThrows(IllegalStateException.class, () -> copy(durable(dir), durable(back)));
        assertTrue(full.getMessage().contains("tenant 't1' (0 entities)") && full.getMessage().contains("2 subscription(s)")
                && full.getMessage().contains("1 hosted @context(s)"), full.getMessage());
        IllegalStateException fullDb = assertThrows(IllegalStateException.class, () -> copy(durable(back), postgres(uri)));
        assertTrue(fullDb.getMessage().contains("the target is not empty: it holds 3 entities in the default tenant,"
                + " tenant 't1' (0 entities), tenant 't2' (2 entities)"), fullDb.getMessage());

        same(before, answers(postgres(uri), hostedId, history), "over PostgreSQL");
        same(before, answers(durable(back), hostedId, history), "over the data directory copied back");
        same(before, answers(durable(dir), hostedId, history), "over the original, which the copies left as it was");
    }

    @Test
    void aCopyIntoAnotherDataDirectoryKeepsTheHistory() {
        Path dir = tmp.resolve("history");
        List<String> before = original(dir, true);
        String hostedId = before.remove(0);
        Path copyDir = tmp.resolve("history-copy");
        StoreCopy.Counts c = copy(durable(dir), durable(copyDir));
        // Thing:1, Thing:2, Car:1, Gone:1 (deleted), Batch:0-2 (Batch:2 deleted), Vehicle:1 (t3)
        assertEquals(8, c.histories(), c.toString());
        assertTrue(c.instances() >= 12, c.toString());
        same(before, answers(durable(copyDir), hostedId, true), "over the copy");
    }

    /**
     * A target over a memory store that keeps no history, and whose write number {@code failAt}
     * fails as a database that went away does (0: none fails).
     */
    private static EntityStore target(MemoryEntityStore memory, int failAt) {
        java.util.concurrent.atomic.AtomicInteger writes = new java.util.concurrent.atomic.AtomicInteger();
        return new EntityStore() {
            @Override
            public boolean blocks() {
                return false;
            }

            @Override
            public boolean hasTenant(String tenant) {
                return memory.hasTenant(tenant);
            }

            @Override
            public Set<String> tenants() {
                return memory.tenants();
            }

            @Override
            public dev.cor.ngsild.model.Entity get(String tenant, String id) {
                return memory.get(tenant, id);
            }

            @Override
            public EntityWrite write(String tenant, String id, EntityChange change, WriteObserver observer) {
                if (writes.incrementAndGet() == failAt) {
                    throw new StoreUnavailableException("the database cannot be reached (08006)");
                }
                return memory.write(tenant, id, change, observer);
            }

            @Override
            public void forEach(String tenant, String type, java.util.function.Consumer<dev.cor.ngsild.model.Entity> visitor) {
                memory.forEach(tenant, type, visitor);
            }

            @Override
            public int count(String tenant) {
                return memory.count(tenant);
            }
        };
    }

    private static MemoryEntityStore entities(int n) {
        MemoryEntityStore m = new MemoryEntityStore();
        for (int i = 0; i < n; i++) {
            dev.cor.ngsild.model.Entity e = new dev.cor.ngsild.model.Entity("urn:x:" + i, List.of("urn:x:T"), List.of(),
                    java.util.Map.of(), 1_000 + i, 2_000 + i);
            m.write(i % 2 == 0 ? "" : "odd", e.id(), current -> e);
        }
        return m;
    }

    @Test
    void aWriteThatFailsStopsTheCopyWithItsReason() {
        for (int failAt : new int[] {700, 2_000}) { // the last write fails after the last was handed over
            StoreUnavailableException failed = assertThrows(StoreUnavailableException.class,
                    () -> StoreCopy.copy(entities(2_000), target(new MemoryEntityStore(), failAt)), "write " + failAt);
            assertEquals("the database cannot be reached (08006)", failed.getMessage());
        }
        StoreCopy.Counts all = StoreCopy.copy(entities(2_000), target(new MemoryEntityStore(), 0));
        assertEquals(2_000, all.entities(), all.toString());
        assertEquals(1, all.tenants(), all.toString());
    }

    @Test
    void aTargetThatKeepsNoHistoryIsRefusedASourceThatHoldsSome() {
        MemoryEntityStore from = entities(3);
        Attribute v = new Attribute(AttributeKind.PROPERTY, com.fasterxml.jackson.databind.node.JsonNodeFactory.instance
                .numberNode(1), null, null, null, null, null, java.util.Map.of(), 1_000, 1_000);
        from.temporal().orElseThrow().record("t3", "urn:x:h", List.of("urn:x:T"), List.of(),
                List.of(TemporalInstance.of("urn:x:v", v, TemporalInstance.NO_TIME)), TemporalInstance.NO_TIME);
        MemoryEntityStore into = new MemoryEntityStore();
        StoreCopy.Refused refused = assertThrows(StoreCopy.Refused.class, () -> StoreCopy.copy(from, target(into, 0)));
        assertEquals("the target keeps no history, which the source holds; nothing was copied", refused.getMessage());
        assertEquals(Set.of(EntityStore.DEFAULT_TENANT), into.tenants(), "nothing was written");
        assertEquals(0, into.count(EntityStore.DEFAULT_TENANT), "nothing was written");
    }
}
