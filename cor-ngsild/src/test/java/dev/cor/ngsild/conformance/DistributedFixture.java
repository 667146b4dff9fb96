package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.federation.Registration.Mode;
import org.junit.jupiter.api.AfterEach;

/**
 * What the distributed operations' tests share ({@link DistributedReadTest},
 * {@link DistributedQueryTest}, {@link DistributedWriteTest}, {@link DistributedBatchTest},
 * {@link DistributedSubscriptionTest}, {@link DistributedForwardingTest}): real brokers, each
 * named by its broker id (in Via and in warnings), and stub sources, all closed after each test;
 * registrations created as a client would ({@code POST /csourceRegistrations}); fresh ids.
 */
abstract class DistributedFixture {
    static final AtomicLong SEQ = new AtomicLong();

    final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        open.clear();
    }

    record Node(TestBroker broker, Ngsi api) {
    }

    Node broker(String id) {
        return broker(id, java.time.InstantSource.system());
    }

    /** A broker on {@code clock}: its timestamps, cooldowns and notification times are the test's to move. */
    Node broker(String id, java.time.InstantSource clock) {
        TestBroker b = TestBroker.start(c -> c.brokerId(id).forwardTimeoutMs(3_000).clock(clock), s -> { });
        open.add(b);
        return new Node(b, new Ngsi(b.baseUrl()));
    }

    SourceStub stub(java.util.function.Function<SourceStub.Seen, SourceStub.Behaviour> b) {
        SourceStub s = SourceStub.start(b);
        open.add(s);
        return s;
    }

    static String fresh(String what) {
        return "urn:ngsi-ld:" + what + ":" + SEQ.incrementAndGet() + "-" + System.nanoTime();
    }

    static void create(Node n, String json) {
        Answer a = n.api().post("/entities").query("local", "true").json(Json.parse(json)).send();
        assertEquals(201, a.status(), a.toString());
    }

    /**
     * Registers {@code endpoint} on {@code on} through {@code POST /csourceRegistrations} (§ 5.9.2):
     * the entity (by id and type, or by type), the attributes (none: all), the mode, every
     * operation the modes forward; {@code management} a JSON object or {@code null}. Its id.
     */
    static String reg(Node on, Mode mode, String endpoint, String entityId, String type, Set<String> attrs,
            String management) {
        return reg(on, mode, endpoint, entityId, type, attrs, management, null);
    }

    /** As above, with the operations given ({@code null}: every one the modes forward). */
    static String reg(Node on, Mode mode, String endpoint, String entityId, String type, Set<String> attrs,
            String management, String operations) {
        String id = fresh("ContextSourceRegistration");
        StringBuilder entity = new StringBuilder("{\"type\":\"").append(type).append('"');
        if (entityId != null) {
            entity.append(",\"id\":\"").append(entityId).append('"');
        }
        entity.append('}');
        String props = attrs.isEmpty() ? "" : ",\"propertyNames\":[\"" + String.join("\",\"", attrs) + "\"]";
        String ops = operations != null ? operations : mode == Mode.AUXILIARY ? "[\"retrieveOps\"]"
                : "[\"redirectionOps\",\"queryBatch\",\"createBatch\",\"upsertBatch\",\"updateBatch\",\"deleteBatch\",\"mergeBatch\"]";
        String body = ("{\"id\":\"%s\",\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[%s]%s}],"
                + "\"mode\":\"%s\",\"operations\":%s,\"endpoint\":\"%s\"%s}").formatted(id, entity, props,
                        mode.name().toLowerCase(java.util.Locale.ROOT), ops, endpoint,
                        management == null ? "" : ",\"management\":" + management);
        Answer a = on.api().post("/csourceRegistrations").json(Json.parse(body)).send();
        assertEquals(201, a.status(), body + "\n" + a);
        return id;
    }

    static String reg(Node on, Mode mode, String endpoint, String entityId, String type, Set<String> attrs) {
        return reg(on, mode, endpoint, entityId, type, attrs, null);
    }

    /** An exclusive registration of {@code id}'s speed at {@code endpoint} with {@code csi} as its contextSourceInfo. */
    static void regWithInfo(Node on, String endpoint, String id, String csi) {
        String body = ("{\"id\":\"%s\",\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[{\"id\":\"%s\","
                + "\"type\":\"Vehicle\"}],\"propertyNames\":[\"speed\"]}],\"mode\":\"exclusive\",\"operations\":[\"redirectionOps\"],"
                + "\"endpoint\":\"%s\",\"contextSourceInfo\":%s}").formatted(fresh("ContextSourceRegistration"), id, endpoint, csi);
        Answer a = on.api().post("/csourceRegistrations").json(Json.parse(body)).send();
        assertEquals(201, a.status(), body + "\n" + a);
    }

    /** An exclusive registration of {@code id}'s {@code property}, for the batch operations, with {@code csi} (or none) as its contextSourceInfo. */
    static void batchReg(Node on, String endpoint, String id, String csi, String property) {
        String body = ("{\"id\":\"%s\",\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[{\"id\":\"%s\","
                + "\"type\":\"Vehicle\"}],\"propertyNames\":[\"%s\"]}],\"mode\":\"exclusive\",\"operations\":[\"createBatch\","
                + "\"upsertBatch\",\"deleteBatch\"],\"endpoint\":\"%s\"%s}").formatted(fresh("ContextSourceRegistration"), id, property, endpoint,
                        csi == null ? "" : ",\"contextSourceInfo\":" + csi);
        Answer r = on.api().post("/csourceRegistrations").json(Json.parse(body)).send();
        assertEquals(201, r.status(), body + "\n" + r);
    }

    /** What a retrieve with sysAttrs gives and a deleted entity's notification carries: members of the entity, not attributes. */
    static final String SYSTEM_MEMBERS = "\"createdAt\":\"2020-01-01T00:00:00Z\",\"modifiedAt\":\"2020-01-02T00:00:00Z\","
            + "\"deletedAt\":\"2020-01-03T00:00:00Z\",\"expiresAt\":\"2030-01-01T00:00:00Z\"";

    static List<String> ids(JsonNode array) {
        List<String> out = new ArrayList<>();
        for (JsonNode e : array) {
            out.add(e.path("id").asText());
        }
        assertNotNull(out);
        return out;
    }
}
