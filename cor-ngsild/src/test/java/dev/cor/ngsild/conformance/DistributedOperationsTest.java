package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.ManualClock;
import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.federation.Registration.Mode;

/**
 * Distributed operations (ETSI GS CIM 009 § 4.3.6, § 5.7.1.4, § 5.7.2.4, § 6.3.17) between real
 * brokers and misbehaving sources over real sockets: what each mode forwards and how the answers
 * merge, Via and loops, {@code local=true}, failures and cooldown, the concurrent fan-out, and
 * sixteen callers through a chain of three brokers over HTTP and over {@code cor://}.
 * Registrations are created as a client would: {@code POST /csourceRegistrations}.
 */
class DistributedOperationsTest {
    private static final AtomicLong SEQ = new AtomicLong();
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        open.clear();
    }

    private record Node(TestBroker broker, Ngsi api) {
    }

    private Node broker(String id) {
        return broker(id, java.time.InstantSource.system());
    }

    /** A broker on {@code clock}: its timestamps, cooldowns and notification times are the test's to move. */
    private Node broker(String id, java.time.InstantSource clock) {
        TestBroker b = TestBroker.start(c -> c.brokerId(id).forwardTimeoutMs(3_000).clock(clock), s -> { });
        open.add(b);
        return new Node(b, new Ngsi(b.baseUrl()));
    }

    private SourceStub stub(java.util.function.Function<SourceStub.Seen, SourceStub.Behaviour> b) {
        SourceStub s = SourceStub.start(b);
        open.add(s);
        return s;
    }

    private static String fresh(String what) {
        return "urn:ngsi-ld:" + what + ":" + SEQ.incrementAndGet() + "-" + System.nanoTime();
    }

    private static void create(Node n, String json) {
        Answer a = n.api().post("/entities").query("local", "true").json(Json.parse(json)).send();
        assertEquals(201, a.status(), a.toString());
    }

    /**
     * Registers {@code endpoint} on {@code on} through {@code POST /csourceRegistrations} (§ 5.9.2):
     * the entity (by id and type, or by type), the attributes (none: all), the mode, every
     * operation the modes forward; {@code management} a JSON object or {@code null}. Its id.
     */
    private static String reg(Node on, Mode mode, String endpoint, String entityId, String type, Set<String> attrs,
            String management) {
        return reg(on, mode, endpoint, entityId, type, attrs, management, null);
    }

    /** As above, with the operations given ({@code null}: every one the modes forward). */
    private static String reg(Node on, Mode mode, String endpoint, String entityId, String type, Set<String> attrs,
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

    private static String reg(Node on, Mode mode, String endpoint, String entityId, String type, Set<String> attrs) {
        return reg(on, mode, endpoint, entityId, type, attrs, null);
    }

    // ---------------------------------------------------------------- Retrieve Entity, § 5.7.1.4

    /** D010_01_inc: an inclusive source's attributes are merged with the local ones. */
    @Test
    void retrieve_inclusive_merges_local_and_source_attributes() {
        Node a = broker("A1");
        Node b = broker("B1");
        String id = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"brand\":{\"type\":\"Property\",\"value\":\"Skoda\"}}".formatted(id));
        create(b, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":80}}".formatted(id));
        reg(a, Mode.INCLUSIVE, b.broker().origin(), id, "Vehicle", Set.of());
        Answer r = a.api().get(Ngsi.entity(id)).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals("Skoda", r.json().path("brand").path("value").asText());
        assertEquals(80, r.json().path("speed").path("value").asInt());
        assertNull(r.header("NGSILD-Warning"), r.toString());
        // keyValues applies to the merged entity as to a local one
        Answer kv = a.api().get(Ngsi.entity(id)).query("options", "keyValues").send();
        assertEquals(Json.obj("{\"id\":\"%s\",\"type\":\"Vehicle\",\"brand\":\"Skoda\",\"speed\":80}", id), kv.json());
    }

    /** § 5.7.1.4: an entity only a source has is found; one nobody has is ResourceNotFound. */
    @Test
    void retrieve_entity_held_only_by_the_source_and_404_when_nobody_has_it() {
        Node a = broker("A2");
        Node b = broker("B2");
        String id = fresh("Vehicle");
        create(b, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":5}}".formatted(id));
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, "Vehicle", Set.of());
        Answer r = a.api().get(Ngsi.entity(id)).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals(5, r.json().path("speed").path("value").asInt());
        Answer none = a.api().get(Ngsi.entity(fresh("Vehicle"))).send();
        assertEquals(404, none.status(), none.toString());
        assertNull(none.header("NGSILD-Warning"), "a 404 from a source is not abnormal (§ 6.3.17): " + none);
    }

    /** § 4.5.5.3: for the same attribute instance, the newest observedAt wins, wherever it is. */
    @Test
    void retrieve_conflict_newest_observedAt_wins() {
        Node a = broker("A3");
        Node b = broker("B3");
        String id = fresh("Vehicle");
        create(a, ("{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":1,\"observedAt\":\"2024-01-01T00:00:00Z\"},"
                + "\"fuel\":{\"type\":\"Property\",\"value\":\"local\",\"observedAt\":\"2024-06-01T00:00:00Z\"}}").formatted(id));
        create(b, ("{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":2,\"observedAt\":\"2024-03-01T00:00:00Z\"},"
                + "\"fuel\":{\"type\":\"Property\",\"value\":\"remote\",\"observedAt\":\"2024-02-01T00:00:00Z\"}}").formatted(id));
        reg(a, Mode.INCLUSIVE, b.broker().origin(), id, "Vehicle", Set.of());
        JsonNode e = a.api().get(Ngsi.entity(id)).send().json();
        assertEquals(2, e.path("speed").path("value").asInt(), "the source's is newer: " + e);
        assertEquals("local", e.path("fuel").path("value").asText(), "the local one is newer: " + e);
    }

    /**
     * § 4.5.5.3 against a hostile source: an observedAt no clock can hold (year 999 999 999) is no
     * DateTime - the source's answer is a 111, the local attribute stands - and never a 500.
     */
    @Test
    void a_source_observedAt_beyond_any_clock_is_a_111_not_a_500() {
        Node a = broker("A21");
        String id = fresh("Vehicle");
        create(a, ("{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":1,"
                + "\"observedAt\":\"2024-01-01T00:00:00Z\"}}").formatted(id));
        SourceStub s = stub(req -> new SourceStub.Answer(200, ("{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\","
                + "\"value\":2,\"observedAt\":\"+999999999-12-31T23:59:59Z\"}}").formatted(id), 0));
        reg(a, Mode.INCLUSIVE, s.endpoint(), id, "Vehicle", Set.of());
        Answer r = a.api().get(Ngsi.entity(id)).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals(1, r.json().path("speed").path("value").asInt(), r.toString());
        assertTrue(r.header("NGSILD-Warning").startsWith("111 A21 "), r.toString());
        Answer local = a.api().post("/entities").query("local", "true").json(Json.parse(("{\"id\":\"%s\",\"type\":\"Vehicle\","
                + "\"speed\":{\"type\":\"Property\",\"value\":1,\"observedAt\":\"+999999999-12-31T23:59:59Z\"}}").formatted(fresh("Vehicle"))))
                .send();
        assertEquals(400, local.status(), "nor is it a DateTime here: " + local);
    }

    /** § 4.5.5.3: without observedAt on either, the newer modifiedAt wins. */
    @Test
    void retrieve_conflict_without_observedAt_newest_modifiedAt_wins() {
        ManualClock clock = new ManualClock(1_800_000_000_000L); // both brokers': one write is newer than another by 20 ms
        Node a = broker("A19", clock);
        Node b = broker("B19", clock);
        String id = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":1}}".formatted(id));
        clock.advance(20);
        create(b, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":2}}".formatted(id));
        reg(a, Mode.INCLUSIVE, b.broker().origin(), id, "Vehicle", Set.of());
        assertEquals(2, a.api().get(Ngsi.entity(id)).send().json().path("speed").path("value").asInt(), "the source's is newer");
        clock.advance(20);
        Answer p = a.api().patch(Ngsi.entity(id) + "/attrs").query("local", "true")
                .json(Json.parse("{\"speed\":{\"type\":\"Property\",\"value\":3}}")).send();
        assertEquals(204, p.status(), p.toString());
        assertEquals(3, a.api().get(Ngsi.entity(id)).send().json().path("speed").path("value").asInt(), "now the local one is");
    }

    /** § 4.3.6.3 (D010_01_exc): an exclusive registration's attributes are never served from the local copy. */
    @Test
    void retrieve_exclusive_takes_the_registered_attribute_from_the_source_only() {
        Node a = broker("A4");
        Node b = broker("B4");
        String id = fresh("Vehicle");
        // registered first (with the entity here, the registry refuses it, § 5.9.2.4); a local=true create then puts a stale copy here
        reg(a, Mode.EXCLUSIVE, b.broker().origin(), id, "Vehicle", Set.of("speed"));
        create(a, ("{\"id\":\"%s\",\"type\":\"Vehicle\",\"brand\":{\"type\":\"Property\",\"value\":\"Skoda\"},"
                + "\"speed\":{\"type\":\"Property\",\"value\":999,\"observedAt\":\"2030-01-01T00:00:00Z\"}}").formatted(id));
        create(b, ("{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":7},"
                + "\"colour\":{\"type\":\"Property\",\"value\":\"red\"}}").formatted(id));
        JsonNode e = a.api().get(Ngsi.entity(id)).send().json();
        assertEquals(7, e.path("speed").path("value").asInt(), "the local, newer speed is not used: " + e);
        assertEquals("Skoda", e.path("brand").path("value").asText(), e.toString());
        assertFalse(e.has("colour"), "only the registered attribute is asked for: " + e);
    }

    /** § 4.3.6.2 (D010_01_aux): an auxiliary source never overrides, only fills in. */
    @Test
    void retrieve_auxiliary_only_fills_in_missing_attributes() {
        Node a = broker("A5");
        Node b = broker("B5");
        String id = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":1,\"observedAt\":\"2020-01-01T00:00:00Z\"}}"
                .formatted(id));
        create(b, ("{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":2,\"observedAt\":\"2030-01-01T00:00:00Z\"},"
                + "\"colour\":{\"type\":\"Property\",\"value\":\"red\"}}").formatted(id));
        reg(a, Mode.AUXILIARY, b.broker().origin(), id, "Vehicle", Set.of());
        JsonNode e = a.api().get(Ngsi.entity(id)).send().json();
        assertEquals(1, e.path("speed").path("value").asInt(), e.toString());
        assertEquals("red", e.path("colour").path("value").asText(), e.toString());
    }

    /** D010_03_inc: a source that only answers queries (queryEntity, queryBatch) is asked for the entity with a query by id. */
    @Test
    void retrieve_asks_a_source_that_only_answers_queries_with_a_query() {
        Node a = broker("A15");
        String id = fresh("Vehicle");
        String speed = "[{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":4}}]".formatted(id);
        String colour = "[{\"id\":\"%s\",\"type\":\"Vehicle\",\"colour\":{\"type\":\"Property\",\"value\":\"red\"}}]".formatted(id);
        SourceStub byGet = stub(req -> new SourceStub.Answer(200, speed, 0));
        SourceStub byPost = stub(req -> new SourceStub.Answer(200, colour, 0));
        reg(a, Mode.INCLUSIVE, byGet.endpoint(), id, "Vehicle", Set.of(), null, "[\"queryEntity\"]");
        reg(a, Mode.INCLUSIVE, byPost.endpoint(), id, "Vehicle", Set.of(), null, "[\"queryBatch\"]");
        Answer r = a.api().get(Ngsi.entity(id)).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals(4, r.json().path("speed").path("value").asInt(), r.toString());
        assertEquals("red", r.json().path("colour").path("value").asText(), r.toString());
        SourceStub.Seen g = byGet.seen().get(0);
        assertEquals("GET", g.method());
        assertTrue(g.target().startsWith("/ngsi-ld/v1/entities?") && g.target().contains("id=" + id), g.target());
        SourceStub.Seen p = byPost.seen().get(0);
        assertEquals("POST", p.method());
        assertTrue(p.target().startsWith("/ngsi-ld/v1/entityOperations/query"), p.target());
    }

    /** D011_05: orderBy cannot order a distributed query (400); with local=true it orders this broker's. */
    @Test
    void order_by_is_refused_for_a_distributed_query() {
        Node a = broker("A16");
        String type = "Ord" + SEQ.incrementAndGet();
        create(a, "{\"id\":\"urn:ngsi-ld:%s:1\",\"type\":\"%s\",\"n\":{\"type\":\"Property\",\"value\":1}}".formatted(type, type));
        SourceStub s = stub(req -> new SourceStub.Answer(200, "[]", 0));
        reg(a, Mode.INCLUSIVE, s.endpoint(), null, type, Set.of());
        Answer refused = a.api().get("/entities").query("type", type).query("orderBy", "n").send();
        assertEquals(400, refused.status(), refused.toString());
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/BadRequestData", refused.json().path("type").asText());
        assertEquals(200, a.api().get("/entities").query("type", type).query("orderBy", "n").query("local", "true").send().status());
    }

    /** 6317_02_02: an answer larger than the client takes is not merged, and is reported as 111. */
    @Test
    void an_oversized_answer_is_a_111_and_not_merged() {
        Node a = broker("A17");
        String type = "Big" + SEQ.incrementAndGet();
        String huge = "[{\"id\":\"urn:ngsi-ld:%s:1\",\"type\":\"%s\",\"n\":{\"type\":\"Property\",\"value\":\"%s\"}}]"
                .formatted(type, type, "x".repeat(17 * 1024 * 1024));
        SourceStub s = stub(req -> new SourceStub.Answer(200, huge, 0));
        reg(a, Mode.INCLUSIVE, s.endpoint(), null, type, Set.of());
        Answer r = a.api().get("/entities").query("type", type).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals(0, r.json().size(), r.toString());
        assertTrue(r.header("NGSILD-Warning").startsWith("111 A17 "), r.toString());
    }

    /**
     * § 4.3.6.5: the forward carries the registration's context, tenant, contextSourceInfo and
     * Via; it asks for the system attributes only when there is something to merge (§ 4.5.5.3):
     * an entity one source alone has is relayed as the source answered it.
     */
    @Test
    void the_forward_names_this_broker_in_via_and_asks_for_sysAttrs_only_to_merge() {
        Node a = broker("A6");
        String id = fresh("Vehicle");
        SourceStub s = stub(req -> new SourceStub.Answer(200,
                "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":3}}".formatted(id), 0));
        reg(a, Mode.INCLUSIVE, s.endpoint(), id, "Vehicle", Set.of());
        Answer r = a.api().get(Ngsi.entity(id)).header("Via", "1.1 upstream").send();
        assertEquals(200, r.status(), r.toString());
        SourceStub.Seen f = s.seen().get(0);
        assertTrue(f.target().startsWith("/ngsi-ld/v1/entities/" + id + "?"), f.target());
        assertFalse(f.target().contains("options=sysAttrs"), "nothing here to merge with: " + f.target());
        assertEquals(3, r.json().get("speed").get("value").asInt(), r.toString());
        assertTrue(f.target().contains("type=Vehicle"), "§ 4.3.6.1: the registered type is added: " + f.target());
        assertFalse(f.target().contains("local=true"), "no localOnly: the source may forward further: " + f.target());
        assertEquals("1.1 upstream, 1.1 A6", f.header("Via"));

        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"brand\":{\"type\":\"Property\",\"value\":\"Skoda\"}}".formatted(id));
        Answer merged = a.api().get(Ngsi.entity(id)).send();
        assertEquals(200, merged.status(), merged.toString());
        assertTrue(s.seen().get(1).target().contains("options=sysAttrs"), "a merge compares modifiedAt: " + s.seen().get(1).target());
        assertEquals("Skoda", merged.json().get("brand").get("value").asText(), merged.toString());
        assertEquals(3, merged.json().get("speed").get("value").asInt(), merged.toString());
    }

    /**
     * The relay (one source, nothing here) answers exactly what a merge would: the same entity,
     * as the source gave it, and only where nothing is asked of the representation. keyValues is
     * rendered here from the merged entity.
     */
    @Test
    void an_entity_one_source_alone_has_is_relayed_and_a_representation_is_still_rendered_here() {
        Node a = broker("A7");
        String id = fresh("Vehicle");
        SourceStub s = stub(req -> new SourceStub.Answer(200,
                "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":3}}".formatted(id), 0));
        reg(a, Mode.INCLUSIVE, s.endpoint(), id, "Vehicle", Set.of());
        Answer plain = a.api().get(Ngsi.entity(id)).send();
        assertEquals(200, plain.status(), plain.toString());
        assertEquals(Json.parse("{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":3}}".formatted(id)),
                plain.json(), plain.toString());
        Answer kv = a.api().get(Ngsi.entity(id)).query("options", "keyValues").send();
        assertEquals(200, kv.status(), kv.toString());
        assertEquals(3, kv.json().get("speed").asInt(), "keyValues rendered here: " + kv);
        assertTrue(s.seen().get(1).target().contains("options=sysAttrs"), s.seen().get(1).target());
    }

    /**
     * The relay passes on only what is the entity asked for: a lone source's answer that is not
     * JSON is a 111 (§ 6.3.17), one of another entity is refused, one with an {@code @context} of
     * its own or with something after the object is not relayed but merged and rendered here.
     */
    @Test
    void a_lone_source_answer_that_is_not_the_entity_is_not_relayed() {
        Node a = broker("A7b");
        String garbled = fresh("Vehicle");
        String other = fresh("Vehicle");
        String withContext = fresh("Vehicle");
        String trailing = fresh("Vehicle");
        String entity = "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":3}%s}";
        SourceStub s = stub(req -> {
            String t = req.target();
            if (t.contains(garbled)) {
                return new SourceStub.Answer(200, "{\"id\":\"" + garbled + "\",\"type\":\"Vehicle\",GARBAGE", 0);
            }
            if (t.contains(other)) {
                return new SourceStub.Answer(200, entity.formatted("urn:ngsi-ld:Vehicle:someone-else", ""), 0);
            }
            if (t.contains(withContext)) {
                return new SourceStub.Answer(200, entity.formatted(withContext,
                        ",\"@context\":\"https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld\""), 0);
            }
            return new SourceStub.Answer(200, entity.formatted(trailing, "") + " {\"id\":\"urn:ngsi-ld:Vehicle:x\"}", 0);
        });
        for (String id : List.of(garbled, other, withContext, trailing)) {
            reg(a, Mode.INCLUSIVE, s.endpoint(), id, "Vehicle", Set.of());
        }
        Answer g = a.api().get(Ngsi.entity(garbled)).send();
        assertEquals(404, g.status(), g.toString());
        assertTrue(g.header("NGSILD-Warning").startsWith("111 A7b "), g.toString());
        assertEquals(1, g.headerValues("NGSILD-Warning").size(), g.toString());
        Answer o = a.api().get(Ngsi.entity(other)).send();
        assertEquals(404, o.status(), o.toString());
        assertTrue(o.header("NGSILD-Warning").startsWith("111 A7b ") && o.header("NGSILD-Warning").contains("another entity"),
                o.toString());
        for (String id : List.of(withContext, trailing)) {
            Answer r = a.api().get(Ngsi.entity(id)).send();
            assertEquals(200, r.status(), r.toString());
            assertEquals(Json.parse(entity.formatted(id, "")), r.json(), "merged and rendered here: " + r);
            assertFalse(r.text().contains("@context") || r.text().contains("Vehicle:x"), r.toString());
        }
    }

    // ---------------------------------------------------------------- writes, § 5.6.x

    /** § 5.6.2.4 with an exclusive registration: the registered attribute goes to the source only, the rest stays here. */
    @Test
    void update_attributes_sends_the_exclusive_attribute_to_its_source_and_keeps_the_rest() {
        Node a = broker("W1");
        Node b = broker("WB1");
        String id = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"brand\":{\"type\":\"Property\",\"value\":\"Skoda\"}}".formatted(id));
        create(b, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":1}}".formatted(id));
        reg(a, Mode.EXCLUSIVE, b.broker().origin(), id, "Vehicle", Set.of("speed"));
        Answer r = a.api().patch(Ngsi.entity(id) + "/attrs")
                .json(Json.parse("{\"speed\":{\"type\":\"Property\",\"value\":9},\"brand\":{\"type\":\"Property\",\"value\":\"VW\"}}"))
                .send();
        assertEquals(204, r.status(), r.toString());
        JsonNode there = b.api().get(Ngsi.entity(id)).send().json();
        assertEquals(9, there.path("speed").path("value").asInt(), there.toString());
        assertFalse(there.has("brand"), "only the registered attribute is forwarded: " + there);
        JsonNode here = a.api().get(Ngsi.entity(id)).query("local", "true").send().json();
        assertEquals("VW", here.path("brand").path("value").asText(), here.toString());
        assertFalse(here.has("speed"), "an exclusive attribute is never kept here: " + here);
    }

    /** § 5.6.6.4 (IOP_EXT_ERR_01_10): a delete of an entity registered redirect is done at the source; 204. */
    @Test
    void delete_of_a_redirected_entity_is_done_at_the_source() {
        Node a = broker("W2");
        Node b = broker("WB2");
        String id = fresh("Vehicle");
        create(b, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":1}}".formatted(id));
        reg(a, Mode.REDIRECT, b.broker().origin(), id, "Vehicle", Set.of());
        Answer r = a.api().delete(Ngsi.entity(id)).send();
        assertEquals(204, r.status(), r.toString());
        assertEquals(404, b.api().get(Ngsi.entity(id)).send().status());
        Answer again = a.api().delete(Ngsi.entity(id)).send();
        assertEquals(404, again.status(), "nobody has it any more: " + again);
    }

    /** § 5.6.1.4 with an inclusive registration: the entity is created here and at the source. */
    @Test
    void create_with_an_inclusive_registration_creates_here_and_there() {
        Node a = broker("W3");
        Node b = broker("WB3");
        String type = "Made" + SEQ.incrementAndGet();
        String id = "urn:ngsi-ld:" + type + ":1";
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, type, Set.of());
        Answer r = a.api().post("/entities")
                .json(Json.parse("{\"id\":\"%s\",\"type\":\"%s\",\"n\":{\"type\":\"Property\",\"value\":1}}".formatted(id, type)))
                .send();
        assertEquals(201, r.status(), r.toString());
        assertEquals(200, a.api().get(Ngsi.entity(id)).query("local", "true").send().status());
        assertEquals(200, b.api().get(Ngsi.entity(id)).send().status());
    }

    /** D001_03_01_inc / D001_03_02_inc: a create that fails here (409) but not at the source is a 207; failing at both, two errors. */
    @Test
    void create_that_exists_here_or_there_is_a_207_with_each_failed_part() {
        Node a = broker("W9");
        String type = "Dup" + SEQ.incrementAndGet();
        String id = "urn:ngsi-ld:" + type + ":1";
        create(a, "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(id, type));
        SourceStub s = stub(req -> new SourceStub.Answer(201, null, 0));
        reg(a, Mode.INCLUSIVE, s.endpoint(), null, type, Set.of());
        String entity = "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(id, type);
        Answer r = a.api().post("/entities").json(Json.parse(entity)).send();
        assertEquals(207, r.status(), r.toString());
        assertEquals(1, r.json().path("errors").size(), r.toString());
        assertEquals(409, r.json().path("errors").get(0).path("error").path("status").asInt(), r.toString());
        assertEquals(1, s.hits(), "the source got the create");
        s.behaviour(req -> new SourceStub.Answer(409, "{}", 0));
        Answer both = a.api().post("/entities").json(Json.parse(entity)).send();
        assertEquals(207, both.status(), both.toString());
        assertEquals(2, both.json().path("errors").size(), both.toString());
        assertEquals(0, both.json().path("success").size(), both.toString());
    }

    /**
     * D001_03_03_inc: a create that the source refuses (409, it has the entity) but that succeeds
     * here is a 207 whose error is the source's - status 409, its ProblemDetails type, the
     * registration named - and the entity is created here.
     */
    @Test
    void create_that_exists_only_at_the_source_is_a_207_with_the_sources_409_D001_03_03_inc() {
        Node a = broker("W12");
        Node b = broker("W13");
        String type = "Dup" + SEQ.incrementAndGet();
        String id = "urn:ngsi-ld:" + type + ":1";
        String entity = "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(id, type);
        create(b, entity);
        String reg = reg(a, Mode.INCLUSIVE, b.broker().origin(), null, type, Set.of());
        Answer r = a.api().post("/entities").json(Json.parse(entity)).send();
        assertEquals(207, r.status(), r.toString());
        assertEquals(List.of(id), Json.texts(r.json().path("success")), r.toString());
        JsonNode error = r.json().path("errors").path(0);
        assertEquals(reg, error.path("registrationId").asText(), r.toString());
        assertEquals(409, error.path("error").path("status").asInt(), r.toString());
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/AlreadyExists", error.path("error").path("type").asText(), r.toString());
        assertEquals(200, a.api().get(Ngsi.entity(id)).query("local", "true").send().status(), "created here");
    }

    /**
     * § 5.6.2.4 with an inclusive registration (the suite's D004_01_inc): an attribute held only by
     * the source is updated there and is no "does not exist" here - 204; an attribute nobody holds
     * is still not updated (207).
     */
    @Test
    void update_attributes_of_an_attribute_only_the_inclusive_source_holds_is_204_D004_01_inc() {
        Node a = broker("W15");
        Node b = broker("WB15");
        String type = "Upd" + SEQ.incrementAndGet();
        String id = "urn:ngsi-ld:" + type + ":1";
        create(a, "{\"id\":\"%s\",\"type\":\"%s\",\"brand\":{\"type\":\"Property\",\"value\":\"a\"}}".formatted(id, type));
        create(b, "{\"id\":\"%s\",\"type\":\"%s\",\"speed\":{\"type\":\"Property\",\"value\":1}}".formatted(id, type));
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, type, Set.of());
        Answer r = a.api().patch(Ngsi.entity(id) + "/attrs").json(Json.parse(
                "{\"speed\":{\"type\":\"Property\",\"value\":7},\"brand\":{\"type\":\"Property\",\"value\":\"b\"}}")).send();
        assertEquals(204, r.status(), r.toString());
        assertEquals(7, b.api().get(Ngsi.entity(id)).send().json().path("speed").path("value").asInt());
        JsonNode here = a.api().get(Ngsi.entity(id)).query("local", "true").send().json();
        assertEquals("b", here.path("brand").path("value").asText(), here.toString());
        assertFalse(here.has("speed"), "not created here: " + here);
        Answer none = a.api().patch(Ngsi.entity(id) + "/attrs").json(Json.parse("{\"colour\":{\"type\":\"Property\",\"value\":1}}")).send();
        assertEquals(207, none.status(), none.toString());
        // the local UpdateResult names it in full (UpdateAttributesTest, TP 011_01_03 "differs")
        assertTrue(none.json().path("notUpdated").path(0).path("attributeName").asText().endsWith("colour"), none.toString());
    }

    /**
     * § 5.6.3.4, § 5.2.18/5.2.19 (the suite's D003_02_inc): an append with noOverwrite that the
     * source partly refused (its 207 UpdateResult) is a 207 here naming the attribute the source
     * kept, with the registration.
     */
    @Test
    void an_append_the_source_partly_refused_is_a_207_naming_its_attribute_D003_02_inc() {
        Node a = broker("W16");
        Node b = broker("WB16");
        String type = "App" + SEQ.incrementAndGet();
        String id = "urn:ngsi-ld:" + type + ":1";
        create(a, "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(id, type));
        create(b, "{\"id\":\"%s\",\"type\":\"%s\",\"speed\":{\"type\":\"Property\",\"value\":1}}".formatted(id, type));
        String reg = reg(a, Mode.INCLUSIVE, b.broker().origin(), null, type, Set.of());
        Answer r = a.api().post(Ngsi.entity(id) + "/attrs").query("options", "noOverwrite")
                .json(Json.parse("{\"speed\":{\"type\":\"Property\",\"value\":2}}")).send();
        assertEquals(207, r.status(), r.toString());
        JsonNode nu = r.json().path("notUpdated").path(0);
        assertEquals("speed", nu.path("attributeName").asText(), r.toString());
        assertEquals(reg, nu.path("registrationId").asText(), r.toString());
        assertEquals(1, b.api().get(Ngsi.entity(id)).send().json().path("speed").path("value").asInt(), "kept at the source");
    }

    /**
     * § 5.2.18: a source's UpdateResult that names what is no attribute of the write (an entity's
     * system member, a keyword, garbage, an attribute it was not sent) is read for what it names of
     * its part: the rest is not the client's fault - no 400, no 207 - and no text of it is echoed.
     */
    @Test
    void a_source_update_result_naming_what_is_no_attribute_does_not_fail_the_write() {
        Node a = broker("W19");
        String type = "App" + SEQ.incrementAndGet();
        String id = "urn:ngsi-ld:" + type + ":1";
        create(a, "{\"id\":\"%s\",\"type\":\"%s\",\"speed\":{\"type\":\"Property\",\"value\":1}}".formatted(id, type));
        SourceStub s = stub(req -> new SourceStub.Answer(207, "{\"updated\":[\"speed\",\"modifiedAt\",\"@id\",7],"
                + "\"notUpdated\":[{\"attributeName\":\"not a name EVIL-TEXT\",\"reason\":\"EVIL-TEXT\"},{\"attributeName\":\"createdAt\"},"
                + "{\"attributeName\":\"brand\",\"reason\":\"an attribute it was not sent\"}]}", 0));
        reg(a, Mode.INCLUSIVE, s.endpoint(), null, type, Set.of());
        Answer r = a.api().post(Ngsi.entity(id) + "/attrs").json(Json.parse("{\"speed\":{\"type\":\"Property\",\"value\":2}}")).send();
        assertEquals(204, r.status(), r.toString());
        assertEquals(1, s.hits());
        assertEquals(2, a.api().get(Ngsi.entity(id)).query("local", "true").send().json().path("speed").path("value").asInt());
    }

    /** D001_02_inc: a malformed create is refused before anything is forwarded. */
    @Test
    void a_malformed_create_is_forwarded_nowhere() {
        Node a = broker("W10");
        String type = "Bad" + SEQ.incrementAndGet();
        SourceStub s = stub(req -> new SourceStub.Answer(201, null, 0));
        reg(a, Mode.INCLUSIVE, s.endpoint(), null, type, Set.of());
        Answer r = a.api().post("/entities").json(Json.parse("{\"id\":\"not a uri\",\"type\":\"%s\"}".formatted(type))).send();
        assertEquals(400, r.status(), r.toString());
        assertEquals(0, s.hits());
    }

    /** A fragment that names nothing to write is refused (400) before anything is forwarded, on every route that takes one. */
    @Test
    void a_fragment_naming_nothing_to_write_is_forwarded_nowhere() {
        Node a = broker("W10e");
        String type = "Empty" + SEQ.incrementAndGet();
        String id = fresh(type);
        SourceStub s = stub(req -> new SourceStub.Answer(204, null, 0));
        reg(a, Mode.INCLUSIVE, s.endpoint(), null, type, Set.of());
        for (String[] route : new String[][] {{"POST", "/attrs"}, {"PATCH", "/attrs"}, {"PATCH", ""}, {"PUT", ""}}) {
            Answer r = a.api().method(route[0], Ngsi.entity(id) + route[1]).json(Json.parse("{}")).send();
            assertEquals(400, r.status(), r.toString());
        }
        assertEquals(0, s.hits());
    }

    /** D001_02_exc / 5614_01: an entity registered exclusively by a source that does not take createEntity: 409, nothing forwarded. */
    @Test
    void create_of_an_entity_held_by_a_source_that_takes_no_create_is_a_conflict() {
        Node a = broker("W11");
        String id = fresh("Vehicle");
        SourceStub s = stub(req -> new SourceStub.Answer(201, null, 0));
        reg(a, Mode.EXCLUSIVE, s.endpoint(), id, "Vehicle", Set.of("speed"), null, "[\"retrieveOps\"]");
        Answer r = a.api().post("/entities")
                .json(Json.parse("{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":1}}".formatted(id)))
                .send();
        assertEquals(409, r.status(), r.toString());
        assertEquals(0, s.hits());
        assertEquals(404, a.api().get(Ngsi.entity(id)).query("local", "true").send().status());
    }

    /** § 5.2.18/5.2.19 (IOP_EXT_ERR_01_11): a part a dead source could not take is named in a 207's notUpdated. */
    @Test
    void a_write_part_a_dead_source_cannot_take_is_a_207_naming_it() {
        Node a = broker("W4");
        String id = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"brand\":{\"type\":\"Property\",\"value\":\"Skoda\"}}".formatted(id));
        SourceStub dead = stub(req -> new SourceStub.Die());
        String r = reg(a, Mode.REDIRECT, dead.endpoint(), id, "Vehicle", Set.of("speed"));
        Answer p = a.api().patch(Ngsi.entity(id) + "/attrs")
                .json(Json.parse("{\"speed\":{\"type\":\"Property\",\"value\":9},\"brand\":{\"type\":\"Property\",\"value\":\"VW\"}}"))
                .send();
        assertEquals(207, p.status(), p.toString());
        assertEquals(Json.parse("[\"brand\"]"), p.json().path("updated"), p.toString());
        JsonNode nu = p.json().path("notUpdated").get(0);
        assertEquals("speed", nu.path("attributeName").asText(), p.toString());
        assertEquals(r, nu.path("registrationId").asText(), p.toString());
        assertEquals("VW", a.api().get(Ngsi.entity(id)).query("local", "true").send().json().path("brand").path("value").asText());
        // nothing of the write is this broker's: still a 207 naming it, not an error of the empty rest
        Answer only = a.api().patch(Ngsi.entity(id) + "/attrs")
                .json(Json.parse("{\"speed\":{\"type\":\"Property\",\"value\":10}}")).send();
        assertEquals(207, only.status(), only.toString());
        assertEquals(0, only.json().path("updated").size(), only.toString());
        assertEquals("speed", only.json().path("notUpdated").get(0).path("attributeName").asText(), only.toString());
    }

    /**
     * § 5.2.18: one UpdateResult holds both parts of a distributed write - the attribute the dead
     * source could not take (with its registration) and the one the entity here lacks - and names
     * neither as updated.
     */
    @Test
    void a_207_holds_what_the_source_and_this_broker_each_did_not_update() {
        Node a = broker("W17");
        String id = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"brand\":{\"type\":\"Property\",\"value\":\"Skoda\"}}".formatted(id));
        SourceStub dead = stub(req -> new SourceStub.Answer(500, "{}", 0));
        String r = reg(a, Mode.REDIRECT, dead.endpoint(), id, "Vehicle", Set.of("speed"));
        Answer p = a.api().patch(Ngsi.entity(id) + "/attrs").json(Json.parse("{\"speed\":{\"type\":\"Property\",\"value\":9},"
                + "\"brand\":{\"type\":\"Property\",\"value\":\"VW\"},\"colour\":{\"type\":\"Property\",\"value\":\"red\"}}")).send();
        assertEquals(207, p.status(), p.toString());
        assertEquals(Json.parse("[\"brand\"]"), p.json().path("updated"), p.toString());
        java.util.Map<String, String> notUpdated = new java.util.TreeMap<>();
        for (JsonNode n : p.json().path("notUpdated")) {
            notUpdated.put(n.path("attributeName").asText(), n.path("registrationId").asText(null));
        }
        java.util.Map<String, String> expected = new java.util.TreeMap<>();
        expected.put("colour", null);
        expected.put("speed", r);
        assertEquals(expected, notUpdated, p.toString());
    }

    /** § 4.3.6.2: an auxiliary registration takes no writes. */
    @Test
    void an_auxiliary_source_is_never_written_to() {
        Node a = broker("W5");
        String id = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":1}}".formatted(id));
        SourceStub s = stub(req -> new SourceStub.Answer(204, null, 0));
        reg(a, Mode.AUXILIARY, s.endpoint(), id, "Vehicle", Set.of());
        Answer p = a.api().patch(Ngsi.entity(id) + "/attrs")
                .json(Json.parse("{\"speed\":{\"type\":\"Property\",\"value\":2}}")).send();
        assertEquals(204, p.status(), p.toString());
        assertEquals(0, s.hits());
    }

    /** D012_01_exc: a batch create of entities registered exclusively sends one batch with their registered attributes. */
    @Test
    void batch_create_sends_one_batch_of_the_registered_parts_to_an_exclusive_source() {
        Node a = broker("W6");
        String one = fresh("Vehicle");
        String two = fresh("Vehicle");
        SourceStub s = stub(req -> new SourceStub.Answer(201, "[\"" + one + "\",\"" + two + "\"]", 0));
        for (String id : List.of(one, two)) {
            reg(a, Mode.EXCLUSIVE, s.endpoint(), id, "Vehicle", Set.of("speed"));
        }
        String entity = "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":1},"
                + "\"brand\":{\"type\":\"Property\",\"value\":\"Seat\"}}";
        Answer r = a.api().post("/entityOperations/create")
                .json(Json.parse("[" + entity.formatted(one) + "," + entity.formatted(two) + "]")).send();
        assertEquals(201, r.status(), r.toString());
        assertEquals(2, s.hits(), "one batch per registration (each names one entity): " + s.seen());
        for (SourceStub.Seen f : s.seen()) {
            assertEquals("/ngsi-ld/v1/entityOperations/create", f.target());
        }
        JsonNode here = a.api().get(Ngsi.entity(one)).query("local", "true").send().json();
        assertEquals("Seat", here.path("brand").path("value").asText(), here.toString());
        assertFalse(here.has("speed"), "the exclusive attribute is not kept here: " + here);
    }

    /** D015_01_inc: a batch delete with an inclusive registration deletes here and at the source. */
    @Test
    void batch_delete_with_an_inclusive_registration_deletes_here_and_there() {
        Node a = broker("W7");
        Node b = broker("WB7");
        String type = "Gone" + SEQ.incrementAndGet();
        String id = "urn:ngsi-ld:" + type + ":1";
        String onlyThere = "urn:ngsi-ld:" + type + ":2";
        create(a, "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(id, type));
        create(b, "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(id, type));
        create(b, "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(onlyThere, type));
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, type, Set.of());
        Answer r = a.api().post("/entityOperations/delete").json(Json.parse("[\"%s\",\"%s\"]".formatted(id, onlyThere))).send();
        assertEquals(204, r.status(), r.toString());
        assertEquals(404, a.api().get(Ngsi.entity(id)).query("local", "true").send().status());
        assertEquals(404, b.api().get(Ngsi.entity(id)).send().status());
        assertEquals(404, b.api().get(Ngsi.entity(onlyThere)).send().status());
    }

    /**
     * § 5.6.10.4, § 5.2.17: an entity a source's batch refused is an error of the 207 with the
     * error the source gave (here ResourceNotFound 404 from a real broker), not a generic one.
     */
    @Test
    void a_batch_error_a_source_answered_is_reported_as_it_gave_it_5_6_10() {
        Node a = broker("W14");
        Node b = broker("WB14");
        String type = "Gone" + SEQ.incrementAndGet();
        String there = "urn:ngsi-ld:" + type + ":1";
        String nowhere = "urn:ngsi-ld:" + type + ":404";
        create(b, "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(there, type));
        String reg = reg(a, Mode.REDIRECT, b.broker().origin(), null, type, Set.of());
        Answer r = a.api().post("/entityOperations/delete").json(Json.parse("[\"%s\",\"%s\"]".formatted(there, nowhere))).send();
        assertEquals(207, r.status(), r.toString());
        assertEquals(List.of(there), Json.texts(r.json().path("success")), r.toString());
        JsonNode error = r.json().path("errors").path(0);
        assertEquals(nowhere, error.path("entityId").asText(), r.toString());
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound", error.path("error").path("type").asText(), r.toString());
        assertEquals(404, error.path("error").path("status").asInt(), r.toString());
        assertTrue(error.path("error").path("detail").asText().contains(reg), r.toString());
    }

    /**
     * § 5.2.16/5.2.17: an entity a source's batch refused is an error of the 207 that names the
     * registration in its {@code registrationId} - as a whole-entity write's and a purge's errors do -
     * and carries the source's error type and status, never the text the source wrote.
     */
    @Test
    void a_batch_error_a_source_answered_names_its_registration_and_not_its_text() {
        Node a = broker("W18");
        String type = "Gone" + SEQ.incrementAndGet();
        String id = "urn:ngsi-ld:" + type + ":1";
        SourceStub s = stub(req -> new SourceStub.Answer(207, ("{\"success\":[],\"errors\":[{\"entityId\":\"%s\",\"error\":"
                + "{\"type\":\"https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound\",\"title\":\"x\",\"status\":404,"
                + "\"detail\":\"EVIL-TEXT from the source\"}}]}").formatted(id), 0));
        String reg = reg(a, Mode.REDIRECT, s.endpoint(), null, type, Set.of());
        Answer r = a.api().post("/entityOperations/delete").json(Json.parse("[\"%s\"]".formatted(id))).send();
        assertEquals(207, r.status(), r.toString());
        assertEquals(0, r.json().path("success").size(), r.toString());
        JsonNode error = r.json().path("errors").path(0);
        assertEquals(id, error.path("entityId").asText(), r.toString());
        assertEquals(reg, error.path("registrationId").asText(), r.toString());
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound", error.path("error").path("type").asText(), r.toString());
        assertEquals(404, error.path("error").path("status").asInt(), r.toString());
        assertFalse(r.text().contains("EVIL-TEXT"), "no text a source wrote is echoed: " + r);
    }

    /**
     * D013_01/02, D014_01/02 (§ 5.6.7.4, § 5.6.10.4, § 6.3.5): a batch in application/ld+json has no
     * request context - each entity carries its own, a delete's ids none - and goes to an exclusive
     * source as it came, in ld+json: the entities with their own {@code @context}, the ids alone.
     * (Before: 500, the forward looked for a request context that such a batch does not have.)
     */
    @Test
    void an_ld_json_batch_goes_to_an_exclusive_source_with_each_entitys_own_context_5_6_7() {
        Node a = broker("LB1");
        String id = fresh("Vehicle");
        SourceStub s = stub(req -> req.target().contains("/delete") ? new SourceStub.Answer(204, null, 0)
                : new SourceStub.Answer(201, "[\"" + id + "\"]", 0));
        batchReg(a, s.endpoint(), id, null, "speed");
        String entity = ("[{\"id\":\"%s\",\"type\":\"Vehicle\",\"velocity\":{\"type\":\"Property\",\"value\":9},"
                + "\"@context\":[{\"velocity\":\"%s\"},\"%s\"]}]").formatted(id, SPEED_IRI, CORE_V18);
        Answer created = a.api().post("/entityOperations/create").ldJson(Json.parse(entity)).send();
        assertEquals(201, created.status(), created.toString());
        SourceStub.Seen sent = s.seen().get(0);
        assertEquals("/ngsi-ld/v1/entityOperations/create", sent.target());
        assertTrue(sent.header("Content-Type").startsWith("application/ld+json"), sent.headers().toString());
        JsonNode forwarded = Json.parse(sent.body()).path(0);
        assertEquals(9, forwarded.path("velocity").path("value").asInt(), sent.body());
        assertEquals(Json.parse(entity).path(0).path("@context"), forwarded.path("@context"), "the entity's own context: " + sent.body());

        Answer deleted = a.api().post("/entityOperations/delete").ldJson(Json.parse("[\"%s\"]".formatted(id))).send();
        assertEquals(204, deleted.status(), deleted.toString());
        sent = s.seen().get(1);
        assertEquals("/ngsi-ld/v1/entityOperations/delete", sent.target());
        assertEquals(Json.parse("[\"%s\"]".formatted(id)), Json.parse(sent.body()), sent.body());
    }

    /**
     * § 4.3.6.6 with § 6.3.5: an ld+json batch to a source that asks for application/json cannot
     * name every entity's context in one Link, so each entity goes in the core context's terms
     * (an attribute outside the core by its IRI), with no Link and no {@code @context}.
     */
    @Test
    void an_ld_json_batch_to_a_source_asking_for_json_is_written_in_the_core_terms_4_3_6_6() {
        Node a = broker("LB2");
        String id = fresh("Vehicle");
        SourceStub s = stub(req -> new SourceStub.Answer(201, "[\"" + id + "\"]", 0));
        batchReg(a, s.endpoint(), id, "[{\"key\":\"contentType\",\"value\":\"application/json\"}]", VELOCITY_IRI);
        String entity = ("[{\"id\":\"%s\",\"type\":\"Vehicle\",\"velocity\":{\"type\":\"Property\",\"value\":9},"
                + "\"@context\":[{\"velocity\":\"%s\"},\"%s\"]}]").formatted(id, VELOCITY_IRI, CORE_V18);
        Answer created = a.api().post("/entityOperations/upsert").ldJson(Json.parse(entity)).send();
        assertTrue(created.status() == 201 || created.status() == 204, created.toString());
        SourceStub.Seen sent = s.seen().get(0);
        assertTrue(sent.header("Content-Type").startsWith("application/json"), sent.headers().toString());
        assertNull(sent.header("Link"), sent.headers().toString());
        JsonNode forwarded = Json.parse(sent.body()).path(0);
        assertFalse(forwarded.has("@context"), sent.body());
        assertEquals(9, forwarded.path(VELOCITY_IRI).path("value").asInt(), "velocity, in no context but the core, is its IRI: " + sent.body());
    }

    private static final String CORE_V18 = "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld";
    private static final String SPEED_IRI = "https://uri.etsi.org/ngsi-ld/default-context/speed";
    private static final String VELOCITY_IRI = "urn:example:velocity";

    /** An exclusive registration of {@code id}'s {@code property}, for the batch operations, with {@code csi} (or none) as its contextSourceInfo. */
    private static void batchReg(Node on, String endpoint, String id, String csi, String property) {
        String body = ("{\"id\":\"%s\",\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[{\"id\":\"%s\","
                + "\"type\":\"Vehicle\"}],\"propertyNames\":[\"%s\"]}],\"mode\":\"exclusive\",\"operations\":[\"createBatch\","
                + "\"upsertBatch\",\"deleteBatch\"],\"endpoint\":\"%s\"%s}").formatted(fresh("ContextSourceRegistration"), id, property, endpoint,
                        csi == null ? "" : ",\"contextSourceInfo\":" + csi);
        Answer r = on.api().post("/csourceRegistrations").json(Json.parse(body)).send();
        assertEquals(201, r.status(), body + "\n" + r);
    }

    /** § 5.6.9.4 with a dead redirect source: its entity is an error of the 207, the rest is done. */
    @Test
    void batch_update_with_a_dead_source_reports_its_entity_in_the_207() {
        Node a = broker("W8");
        String type = "Upd" + SEQ.incrementAndGet();
        String mine = "urn:ngsi-ld:" + type + ":1";
        String theirs = "urn:ngsi-ld:" + type + ":2";
        create(a, "{\"id\":\"%s\",\"type\":\"%s\",\"n\":{\"type\":\"Property\",\"value\":0}}".formatted(mine, type));
        SourceStub dead = stub(req -> new SourceStub.Answer(500, "{}", 0));
        reg(a, Mode.REDIRECT, dead.endpoint(), theirs, type, Set.of());
        Answer r = a.api().post("/entityOperations/update").json(Json.parse(("[{\"id\":\"%s\",\"type\":\"%s\",\"n\":{\"type\":\"Property\",\"value\":1}},"
                + "{\"id\":\"%s\",\"type\":\"%s\",\"n\":{\"type\":\"Property\",\"value\":1}}]").formatted(mine, type, theirs, type))).send();
        assertEquals(207, r.status(), r.toString());
        assertEquals(Json.parse("[\"" + mine + "\"]"), r.json().path("success"), r.toString());
        assertEquals(theirs, r.json().path("errors").get(0).path("entityId").asText(), r.toString());
        assertTrue(r.has("NGSILD-Warning"), r.toString());
    }

    /** 436_04, 436_05, § 4.3.6.5: contextSourceInfo as headers (urn:ngsi-ld:request from the request), the tenant, localOnly. */
    @Test
    void the_forward_carries_context_source_info_the_tenant_and_local_only() {
        Node a = broker("A18");
        String id = fresh("Vehicle");
        SourceStub s = stub(req -> new SourceStub.Answer(200,
                "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":3}}".formatted(id), 0));
        String body = ("{\"id\":\"%s\",\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[{\"type\":\"Vehicle\"}]}],"
                + "\"endpoint\":\"%s\",\"tenant\":\"over-there\",\"management\":{\"localOnly\":true},"
                + "\"contextSourceInfo\":[{\"key\":\"Authorization\",\"value\":\"Bearer abc\"},"
                + "{\"key\":\"X-User\",\"value\":\"urn:ngsi-ld:request\"}]}").formatted(fresh("ContextSourceRegistration"), s.endpoint());
        Answer created = a.api().post("/csourceRegistrations").json(Json.parse(body)).send();
        assertEquals(201, created.status(), created.toString());
        Answer r = a.api().get(Ngsi.entity(id)).header("X-User", "alice").send();
        assertEquals(200, r.status(), r.toString());
        SourceStub.Seen f = s.seen().get(0);
        assertEquals("Bearer abc", f.header("Authorization"));
        assertEquals("alice", f.header("X-User"), "urn:ngsi-ld:request takes the request's value");
        assertEquals("over-there", f.header("NGSILD-Tenant"));
        assertTrue(f.target().contains("local=true"), "localOnly: the source may not forward further: " + f.target());
    }

    // ---------------------------------------------------------------- the entity's own members are no attributes

    /** What a retrieve with sysAttrs gives and a deleted entity's notification carries: members of the entity, not attributes. */
    private static final String SYSTEM_MEMBERS = "\"createdAt\":\"2020-01-01T00:00:00Z\",\"modifiedAt\":\"2020-01-02T00:00:00Z\","
            + "\"deletedAt\":\"2020-01-03T00:00:00Z\",\"expiresAt\":\"2030-01-01T00:00:00Z\"";

    /**
     * § 5.6.1.4: a create whose body carries the entity's system members (a client writing back
     * what it read with sysAttrs) is forwarded as it is done here, where those members are
     * ignored: they are not attributes of it.
     */
    @Test
    void a_write_carrying_the_entitys_own_members_is_forwarded_and_they_are_no_attributes() {
        Node a = broker("M1");
        Node b = broker("MB1");
        String type = "Sys" + SEQ.incrementAndGet();
        String id = "urn:ngsi-ld:" + type + ":1";
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, type, Set.of());
        Answer r = a.api().post("/entities").json(Json.parse("{\"id\":\"%s\",\"type\":\"%s\",%s,\"speed\":{\"type\":\"Property\",\"value\":1}}"
                .formatted(id, type, SYSTEM_MEMBERS))).send();
        assertEquals(201, r.status(), r.toString());
        for (Node n : List.of(a, b)) {
            JsonNode e = n.api().get(Ngsi.entity(id)).query("local", "true").send().json();
            assertEquals(Json.parse("{\"id\":\"%s\",\"type\":\"%s\",\"speed\":{\"type\":\"Property\",\"value\":1}}".formatted(id, type)), e,
                    e.toString());
        }
    }

    /**
     * § 5.6.8.4: an upsert batch whose entity carries the system members goes to the source its
     * registered attribute belongs to, as one without them would.
     */
    @Test
    void a_batch_entity_carrying_its_own_members_still_goes_to_its_source() {
        Node a = broker("M2");
        Node b = broker("MB2");
        String id = fresh("Vehicle");
        reg(a, Mode.REDIRECT, b.broker().origin(), id, "Vehicle", Set.of("speed"));
        Answer r = a.api().post("/entityOperations/upsert").json(Json.parse(("[{\"id\":\"%s\",\"type\":\"Vehicle\",%s,"
                + "\"speed\":{\"type\":\"Property\",\"value\":4},\"brand\":{\"type\":\"Property\",\"value\":\"Seat\"}}]")
                .formatted(id, SYSTEM_MEMBERS))).send();
        assertEquals(201, r.status(), r.toString());
        JsonNode there = b.api().get(Ngsi.entity(id)).send().json();
        assertEquals(4, there.path("speed").path("value").asInt(), "the registered attribute is the source's: " + there);
        JsonNode here = a.api().get(Ngsi.entity(id)).query("local", "true").send().json();
        assertEquals("Seat", here.path("brand").path("value").asText(), here.toString());
        assertFalse(here.has("speed"), "a redirected attribute is not kept here: " + here);
    }

    /**
     * § 5.7.1.4, § 5.7.2.4: a source whose entities carry the entity's own members (createdAt,
     * modifiedAt, deletedAt, expiresAt) is merged as usable - no 111 - and none of them becomes an
     * attribute of the answer.
     */
    @Test
    void a_sources_entities_carrying_their_own_members_merge_without_them_as_attributes() {
        Node a = broker("M3");
        String type = "Sys" + SEQ.incrementAndGet();
        String id = "urn:ngsi-ld:" + type + ":1";
        String entity = "{\"id\":\"%s\",\"type\":\"%s\",%s,\"speed\":{\"type\":\"Property\",\"value\":2}}"
                .formatted(id, type, SYSTEM_MEMBERS);
        SourceStub s = stub(req -> new SourceStub.Answer(200, req.target().contains("/entities/") ? entity : "[" + entity + "]", 0));
        create(a, "{\"id\":\"%s\",\"type\":\"%s\",\"brand\":{\"type\":\"Property\",\"value\":\"Skoda\"}}".formatted(id, type));
        reg(a, Mode.INCLUSIVE, s.endpoint(), null, type, Set.of());
        JsonNode expected = Json.parse(("{\"id\":\"%s\",\"type\":\"%s\",\"brand\":{\"type\":\"Property\",\"value\":\"Skoda\"},"
                + "\"speed\":{\"type\":\"Property\",\"value\":2}}").formatted(id, type));
        Answer one = a.api().get(Ngsi.entity(id)).send();
        assertNull(one.header("NGSILD-Warning"), one.toString());
        assertEquals(expected, one.json(), one.toString());
        Answer all = a.api().get("/entities").query("type", type).send();
        assertNull(all.header("NGSILD-Warning"), all.toString());
        assertEquals(Json.parse("[" + expected + "]"), all.json(), all.toString());
        assertEquals(2, s.hits());
    }

    // ---------------------------------------------------------------- Query Entities, § 5.7.2.4

    /** D011_01_inc: the union by id, pagination and count over the merged result. */
    @Test
    void query_merges_by_id_and_pages_and_counts_the_union() {
        Node a = broker("A7");
        Node b = broker("B7");
        String type = "Car" + SEQ.incrementAndGet();
        String p = "urn:ngsi-ld:" + type + ":";
        for (int i : new int[] {1, 3, 5}) {
            create(a, "{\"id\":\"%s%d\",\"type\":\"%s\",\"here\":{\"type\":\"Property\",\"value\":%d}}".formatted(p, i, type, i));
        }
        for (int i : new int[] {2, 4, 5}) {
            create(b, "{\"id\":\"%s%d\",\"type\":\"%s\",\"there\":{\"type\":\"Property\",\"value\":%d}}".formatted(p, i, type, i));
        }
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, type, Set.of());
        Answer all = a.api().get("/entities").query("type", type).query("count", "true").send();
        assertEquals(200, all.status(), all.toString());
        assertEquals("5", all.header("NGSILD-Results-Count"), all.toString());
        assertEquals(5, all.json().size(), all.toString());
        JsonNode five = all.json().get(4);
        assertEquals(p + "5", five.path("id").asText());
        assertTrue(five.has("here") && five.has("there"), "entity 5 is merged: " + five);
        Answer page = a.api().get("/entities").query("type", type).query("limit", "2").query("offset", "2").send();
        assertEquals(List.of(p + "3", p + "4"), ids(page.json()), page.toString());
        assertNull(page.header("NGSILD-Warning"), page.toString());
    }

    /** § 6.3.18 / 4.3.6.4: local=true is answered from this broker alone; the source is not asked. */
    @Test
    void local_true_is_never_forwarded() {
        Node a = broker("A8");
        String type = "Local" + SEQ.incrementAndGet();
        create(a, "{\"id\":\"urn:ngsi-ld:%s:1\",\"type\":\"%s\"}".formatted(type, type));
        SourceStub s = stub(req -> new SourceStub.Answer(200, "[]", 0));
        reg(a, Mode.INCLUSIVE, s.endpoint(), null, type, Set.of());
        Answer r = a.api().get("/entities").query("type", type).query("local", "true").send();
        assertEquals(200, r.status(), r.toString());
        assertEquals(1, r.json().size());
        assertEquals(0, s.hits(), "local=true asks nobody");
        a.api().get("/entities").query("type", type).send();
        assertEquals(1, s.hits(), "without it the source is asked");
    }

    // ---------------------------------------------------------------- the fan-out

    /** Two sources that each take a second are asked at once: the answer takes about one second, not two. */
    @Test
    void cor_fanout_concurrent() {
        Node a = broker("A9");
        String id = fresh("Vehicle");
        SourceStub[] slow = twoSlowSources(id);
        reg(a, Mode.INCLUSIVE, slow[0].endpoint(), id, "Vehicle", Set.of());
        reg(a, Mode.INCLUSIVE, slow[1].endpoint(), id, "Vehicle", Set.of());
        assertBothInAboutOneSecond(a, id, "two 1 s sources");
    }

    /** The fan-out over cor:// (history § 11): two brokers, each in front of a 1 s source, asked at once over one multiplexed client. */
    @Test
    void cor_fanout_concurrent_over_cor() {
        Node a = broker("A13");
        Node b1 = broker("B13a");
        Node b2 = broker("B13b");
        String id = fresh("Vehicle");
        SourceStub[] slow = twoSlowSources(id);
        reg(b1, Mode.INCLUSIVE, slow[0].endpoint(), id, "Vehicle", Set.of());
        reg(b2, Mode.INCLUSIVE, slow[1].endpoint(), id, "Vehicle", Set.of());
        reg(a, Mode.INCLUSIVE, b1.broker().corUrl(), id, "Vehicle", Set.of());
        reg(a, Mode.INCLUSIVE, b2.broker().corUrl(), id, "Vehicle", Set.of());
        assertBothInAboutOneSecond(a, id, "two cor:// sources of 1 s each");
    }

    /** With coroutines off (the launcher's --coroutines 0) a forwarding request takes the worker hop: the forwards block it, one after the other, and the answer is the same. */
    @Test
    void with_coroutines_off_the_forwards_run_on_a_worker_and_answer_the_same() {
        TestBroker hop = TestBroker.start(c -> c.brokerId("HOP").forwardTimeoutMs(3_000), s -> s.coroutineCap(0));
        open.add(hop);
        Node a = new Node(hop, new Ngsi(hop.baseUrl()));
        Node b = broker("HOPB");
        String id = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"brand\":{\"type\":\"Property\",\"value\":\"Skoda\"}}".formatted(id));
        create(b, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":80}}".formatted(id));
        reg(a, Mode.INCLUSIVE, b.broker().corUrl(), id, "Vehicle", Set.of());
        Answer r = a.api().get(Ngsi.entity(id)).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals("Skoda", r.json().path("brand").path("value").asText(), r.toString());
        assertEquals(80, r.json().path("speed").path("value").asInt(), r.toString());
    }

    /** Two real sources that take a second each to answer: one gives the entity's speed, the other its colour. */
    private SourceStub[] twoSlowSources(String id) {
        return new SourceStub[] {
            stub(req -> new SourceStub.Answer(200,
                    "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":1}}".formatted(id), 1_000)),
            stub(req -> new SourceStub.Answer(200,
                    "{\"id\":\"%s\",\"type\":\"Vehicle\",\"colour\":{\"type\":\"Property\",\"value\":\"red\"}}".formatted(id), 1_000))};
    }

    /** Retrieves {@code id} from {@code a}: both sources' parts are there, in less than 1.8 s (asked one after the other: 2). */
    private static void assertBothInAboutOneSecond(Node a, String id, String what) {
        long t0 = System.nanoTime();
        Answer r = a.api().get(Ngsi.entity(id)).send();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(200, r.status(), r.toString());
        assertEquals(1, r.json().path("speed").path("value").asInt(), r.toString());
        assertEquals("red", r.json().path("colour").path("value").asText(), r.toString());
        assertTrue(ms < 1_800, what + " answered in " + ms + " ms: they were asked one after the other");
    }

    /** § 5.7.2 (queryBatch): POST /entityOperations/query is distributed like GET /entities. */
    @Test
    void query_post_is_distributed_too() {
        Node a = broker("A14");
        Node b = broker("B14");
        String type = "Batch" + SEQ.incrementAndGet();
        create(a, "{\"id\":\"urn:ngsi-ld:%s:1\",\"type\":\"%s\"}".formatted(type, type));
        create(b, "{\"id\":\"urn:ngsi-ld:%s:2\",\"type\":\"%s\"}".formatted(type, type));
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, type, Set.of());
        Answer r = a.api().post("/entityOperations/query")
                .json(Json.parse("{\"type\":\"Query\",\"entities\":[{\"type\":\"%s\"}]}".formatted(type))).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals(List.of("urn:ngsi-ld:" + type + ":1", "urn:ngsi-ld:" + type + ":2"), ids(r.json()), r.toString());
    }

    /** A source that answers a query with Vehicle {@code id} only to {@code method} on a target starting {@code prefix}; 404 else. */
    private SourceStub vehicleOnlyTo(String method, String prefix, String id) {
        return stub(req -> req.method().equals(method) && req.target().startsWith(prefix)
                ? new SourceStub.Answer(200, "[{\"id\":\"%s\",\"type\":\"Vehicle\"}]".formatted(id), 0)
                : new SourceStub.Answer(404, null, 0));
    }

    /**
     * § 4.20, § 5.7.2 (the suite's D011_02_red_02, D011_03_inc_02): a source that registered only
     * queryBatch is asked by {@code POST /entityOperations/query} - for a POST query and for a GET
     * one alike, Query Entities being one operation with two bindings.
     */
    @Test
    void a_source_that_takes_only_query_batch_is_asked_by_post_D011_03_inc_02() {
        Node a = broker("A20");
        String id = fresh("Vehicle");
        SourceStub s = vehicleOnlyTo("POST", "/ngsi-ld/v1/entityOperations/query", id);
        reg(a, Mode.REDIRECT, s.endpoint(), null, "Vehicle", Set.of(), null, "[\"queryBatch\"]");
        Answer post = a.api().post("/entityOperations/query")
                .json(Json.parse("{\"type\":\"Query\",\"entities\":[{\"type\":\"Vehicle\"}]}")).send();
        assertEquals(200, post.status(), post.toString());
        assertEquals(List.of(id), ids(post.json()), post.toString());
        Answer get = a.api().get("/entities").query("type", "Vehicle").send();
        assertEquals(200, get.status(), get.toString());
        assertEquals(List.of(id), ids(get.json()), get.toString());
        assertEquals(2, s.hits());
        for (SourceStub.Seen seen : s.seen()) {
            assertEquals("POST", seen.method(), seen.toString());
            assertTrue(seen.target().startsWith("/ngsi-ld/v1/entityOperations/query"), seen.target());
        }
    }

    /** § 4.20, § 5.7.2 (the suite's D011_04_inc_01): a source that registered only queryEntity is asked by GET for a POST query too. */
    @Test
    void a_source_that_takes_only_query_entity_is_asked_by_get_for_a_post_query_D011_04_inc() {
        Node a = broker("A21");
        String id = fresh("Vehicle");
        SourceStub s = vehicleOnlyTo("GET", "/ngsi-ld/v1/entities?", id);
        reg(a, Mode.INCLUSIVE, s.endpoint(), null, "Vehicle", Set.of(), null, "[\"queryEntity\"]");
        Answer post = a.api().post("/entityOperations/query")
                .json(Json.parse("{\"type\":\"Query\",\"entities\":[{\"type\":\"Vehicle\",\"id\":\"%s\"}]}".formatted(id))).send();
        assertEquals(200, post.status(), post.toString());
        assertEquals(List.of(id), ids(post.json()), post.toString());
        assertEquals(1, s.hits());
        assertEquals("GET", s.seen().get(0).method());
        assertTrue(s.seen().get(0).target().startsWith("/ngsi-ld/v1/entities?type=Vehicle&"), s.seen().get(0).target());
    }

    /**
     * § 5.7.2.4 (the suite's 5724_01): {@code csf} picks the sources a query asks by their
     * registration's Context Source Properties - a matching one is asked and its entity returned,
     * a source whose registration does not match is not contacted; the local entities stay.
     */
    @Test
    void csf_asks_only_the_sources_whose_registration_it_matches_5724_01() {
        Node a = broker("A22");
        String type = "Csf" + SEQ.incrementAndGet();
        String local = "urn:ngsi-ld:" + type + ":0";
        create(a, "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(local, type));
        String remote = "urn:ngsi-ld:" + type + ":1";
        SourceStub s = stub(req -> new SourceStub.Answer(200, "[{\"id\":\"%s\",\"type\":\"%s\"}]".formatted(remote, type), 0));
        String body = ("{\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[{\"type\":\"%s\"}]}],"
                + "\"endpoint\":\"%s\",\"sourceType\":\"sensor\"}").formatted(type, s.endpoint());
        assertEquals(201, a.api().post("/csourceRegistrations").json(Json.parse(body)).send().status());
        Answer matching = a.api().get("/entities").query("type", type).query("csf", "sourceType==\"sensor\"").send();
        assertEquals(200, matching.status(), matching.toString());
        assertEquals(List.of(local, remote), ids(matching.json()), matching.toString());
        assertEquals(1, s.hits());
        Answer other = a.api().get("/entities").query("type", type).query("csf", "sourceType==\"archive\"").send();
        assertEquals(200, other.status(), other.toString());
        assertEquals(List.of(local), ids(other.json()), other.toString());
        Answer post = a.api().post("/entityOperations/query").json(Json.parse(
                "{\"type\":\"Query\",\"entities\":[{\"type\":\"%s\"}],\"csf\":\"sourceType==\\\"archive\\\"\"}".formatted(type))).send();
        assertEquals(200, post.status(), post.toString());
        assertEquals(List.of(local), ids(post.json()), post.toString());
        assertEquals(1, s.hits(), "a source its registration does not match is not contacted");
        Answer bad = a.api().get("/entities").query("type", type).query("csf", "==x").send();
        assertEquals(400, bad.status(), bad.toString());
    }

    /**
     * § 5.7.2.4 (the suite's 5724_02): a query's q and scopeQ travel with the forward, so the source
     * filters; with {@code splitEntities=true} they "shall be removed before forwarding", and the
     * union is filtered here - the answer is the same.
     */
    @Test
    void split_entities_strips_the_filters_from_the_forward_and_filters_the_union_here_5724_02() {
        Node a = broker("A23");
        String type = "Split" + SEQ.incrementAndGet();
        String fast = "urn:ngsi-ld:" + type + ":fast";
        String slow = "urn:ngsi-ld:" + type + ":slow";
        SourceStub s = stub(req -> new SourceStub.Answer(200, ("[{\"id\":\"%s\",\"type\":\"%s\",\"scope\":\"/A\","
                + "\"speed\":{\"type\":\"Property\",\"value\":30}},{\"id\":\"%s\",\"type\":\"%s\",\"scope\":\"/A\","
                + "\"speed\":{\"type\":\"Property\",\"value\":10}}]").formatted(fast, type, slow, type), 0));
        reg(a, Mode.INCLUSIVE, s.endpoint(), null, type, Set.of());
        Answer whole = a.api().get("/entities").query("type", type).query("q", "speed>20").query("scopeQ", "/A").send();
        assertEquals(200, whole.status(), whole.toString());
        assertEquals(List.of(fast), ids(whole.json()), whole.toString());
        String forwarded = s.seen().get(0).target();
        assertTrue(forwarded.contains("q=speed") && forwarded.contains("scopeQ=") && forwarded.contains("type="), forwarded);
        Answer split = a.api().get("/entities").query("type", type).query("q", "speed>20").query("scopeQ", "/A")
                .query("splitEntities", "true").send();
        assertEquals(200, split.status(), split.toString());
        assertEquals(List.of(fast), ids(split.json()), "filtered here: " + split);
        forwarded = s.seen().get(1).target();
        assertTrue(forwarded.contains("type=") && !forwarded.contains("q=") && !forwarded.contains("scopeQ="), forwarded);
        assertEquals(400, a.api().get("/entities").query("type", type).query("splitEntities", "maybe").send().status());
    }

    /**
     * § 4.3.6.1 ("all constraints specified in the registration shall be respected"), § 5.7.2.4: a
     * query by type takes from a source only the entities its registration names - by id, or by
     * idPattern - not every entity of that type the source holds.
     */
    @Test
    void a_query_takes_from_a_source_only_the_entities_its_registration_names_4_3_6_1() {
        Node a = broker("A24");
        Node b = broker("B24");
        String type = "Named" + SEQ.incrementAndGet();
        String registered = "urn:ngsi-ld:" + type + ":reg-1";
        String patterned = "urn:ngsi-ld:" + type + ":pat-1";
        String other = "urn:ngsi-ld:" + type + ":other-1";
        for (String id : List.of(registered, patterned, other)) {
            create(b, "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(id, type));
        }
        reg(a, Mode.INCLUSIVE, b.broker().origin(), registered, type, Set.of());
        String body = ("{\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[{\"type\":\"%s\","
                + "\"idPattern\":\"urn:ngsi-ld:%s:pat-.*\"}]}],\"endpoint\":\"%s\"}").formatted(type, type, b.broker().origin());
        assertEquals(201, a.api().post("/csourceRegistrations").json(Json.parse(body)).send().status());
        Answer q = a.api().get("/entities").query("type", type).send();
        assertEquals(200, q.status(), q.toString());
        assertEquals(List.of(patterned, registered), ids(q.json()), q.toString());
        Answer counted = a.api().get("/entities").query("type", type).query("count", "true").send();
        assertEquals("2", counted.header("NGSILD-Results-Count"), counted.toString());
    }

    /**
     * § 5.2.8, § 4.3.6.1: which ids an EntityInfo's idPattern names is decided in one place, so
     * that the plan (which sources a request goes to) and the check of what a source answered
     * agree. The pattern is found in the id, anchors as written - the suite's D012..D016 register
     * {@code urn:ngsi-ld:Vehicle:*} for ids {@code urn:ngsi-ld:Vehicle:<random>} - so a query asks
     * the source and keeps what it answers within the pattern, and a retrieve by one of those ids
     * is answered from it.
     */
    @Test
    void the_plan_and_the_check_of_the_answer_agree_on_an_id_pattern_5_2_8() {
        Node a = broker("A26");
        Node b = broker("B26");
        String type = "Found" + SEQ.incrementAndGet();
        String one = "urn:ngsi-ld:" + type + ":V1";
        String two = "urn:ngsi-ld:" + type + ":V2";
        String outside = "urn:ngsi-ld:Elsewhere:" + type;
        for (String id : List.of(one, two, outside)) {
            create(b, "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(id, type));
        }
        String body = ("{\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[{\"type\":\"%s\","
                + "\"idPattern\":\"urn:ngsi-ld:%s:*\"}]}],\"endpoint\":\"%s\"}").formatted(type, type, b.broker().origin());
        assertEquals(201, a.api().post("/csourceRegistrations").json(Json.parse(body)).send().status());
        Answer q = a.api().get("/entities").query("type", type).send();
        assertEquals(200, q.status(), q.toString());
        assertEquals(List.of(one, two), ids(q.json()), "asked, and kept within the pattern: " + q);
        Answer r = a.api().get("/entities/" + two).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals(two, r.json().path("id").asText(), r.toString());
        assertEquals(404, a.api().get("/entities/" + outside).send().status(), "an id outside the pattern is not asked for");
    }

    /**
     * § 4.3.6.1: a registration whose RegistrationInfo name different attributes for different
     * entities - a query takes from the source each entity's own registered attributes only.
     */
    @Test
    void a_query_takes_from_a_source_only_the_attributes_registered_for_each_entity_4_3_6_1() {
        Node a = broker("A25");
        Node b = broker("B25");
        String type = "Attrs" + SEQ.incrementAndGet();
        String first = "urn:ngsi-ld:" + type + ":1";
        String second = "urn:ngsi-ld:" + type + ":2";
        for (String id : List.of(first, second)) {
            create(b, ("{\"id\":\"%s\",\"type\":\"%s\",\"speed\":{\"type\":\"Property\",\"value\":1},"
                    + "\"brand\":{\"type\":\"Property\",\"value\":\"b\"}}").formatted(id, type));
        }
        String body = ("{\"type\":\"ContextSourceRegistration\",\"information\":["
                + "{\"entities\":[{\"type\":\"%s\",\"id\":\"%s\"}],\"propertyNames\":[\"speed\"]},"
                + "{\"entities\":[{\"type\":\"%s\",\"id\":\"%s\"}],\"propertyNames\":[\"brand\"]}],"
                + "\"endpoint\":\"%s\"}").formatted(type, first, type, second, b.broker().origin());
        assertEquals(201, a.api().post("/csourceRegistrations").json(Json.parse(body)).send().status());
        Answer q = a.api().get("/entities").query("type", type).send();
        assertEquals(200, q.status(), q.toString());
        assertEquals(List.of(first, second), ids(q.json()), q.toString());
        JsonNode one = q.json().get(0);
        JsonNode two = q.json().get(1);
        assertTrue(one.has("speed") && !one.has("brand"), one.toString());
        assertTrue(two.has("brand") && !two.has("speed"), two.toString());
    }

    // ---------------------------------------------------------------- distributed subscriptions, § 5.8.1.4

    /** A source that takes subscriptions: 201 to a create, 204 to a delete; what it got is in {@code seen()}. */
    private SourceStub subscriptionSource() {
        return stub(req -> new SourceStub.Answer(req.method().equals("POST") ? 201 : 204, null, 0));
    }

    private static List<SourceStub.Seen> posts(SourceStub s) {
        return s.seen().stream().filter(q -> q.method().equals("POST")).toList();
    }

    /**
     * Waits up to 5 s for the notification of subscription to registrations {@code id} sent at
     * {@code atMs} (the broker's manual clock) to be answered: its {@code lastSuccess} is that time.
     */
    private static void awaitNotified(Node n, String id, long atMs) throws InterruptedException {
        long end = System.nanoTime() + 5_000_000_000L;
        JsonNode s = null;
        while (System.nanoTime() < end) {
            s = n.api().get("/csourceSubscriptions/" + id).send().json();
            String last = s.path("notification").path("lastSuccess").asText(null);
            if (last != null && java.time.Instant.parse(last).toEpochMilli() == atMs) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no notification of " + id + " sent at " + java.time.Instant.ofEpochMilli(atMs)
                + " was answered within 5 s: " + s);
    }

    /** Waits up to 5 s for {@code s} to have seen {@code n} requests of {@code method}. */
    private static List<SourceStub.Seen> await(SourceStub s, String method, int n) throws InterruptedException {
        long end = System.nanoTime() + 5_000_000_000L;
        List<SourceStub.Seen> got;
        while ((got = s.seen().stream().filter(q -> q.method().equals(method)).toList()).size() < n && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        return got;
    }

    private static String subscription(String id, String extra, String endpoint) {
        return ("{\"id\":\"%s\",\"type\":\"Subscription\",\"entities\":[{\"type\":\"Vehicle\"}]%s,"
                + "\"notification\":{\"endpoint\":{\"uri\":\"%s\"}}}").formatted(id, extra, endpoint);
    }

    /**
     * 5814_01_01 (§ 5.8.1.4, 5.8.5.4): a subscription is made at the source too - reduced to its
     * slice, its notifications addressed to this broker, never to the subscriber - with a
     * subscription to registrations beside it; deleting it deletes the copy (by its id there) and that.
     */
    @Test
    void a_subscription_is_copied_to_its_source_and_its_delete_forwarded() throws Exception {
        Node a = broker("S1");
        SourceStub src = subscriptionSource();
        reg(a, Mode.INCLUSIVE, src.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        String id = fresh("Subscription");
        Answer created = a.api().post("/subscriptions").json(Json.parse(subscription(id, ",\"q\":\"speed>50\"",
                "http://original.subscriber.example:9998/notify"))).send();
        assertEquals(201, created.status(), created.toString());
        List<SourceStub.Seen> copies = posts(src);
        assertEquals(1, copies.size(), copies.toString());
        SourceStub.Seen copy = copies.get(0);
        assertEquals("/ngsi-ld/v1/subscriptions", copy.target());
        assertTrue(copy.body().contains("remote-notify"), copy.body());
        assertFalse(copy.body().contains("original.subscriber.example"), copy.body());
        JsonNode body = Json.parse(copy.body());
        String remoteId = body.path("id").asText();
        assertTrue(remoteId.startsWith(id + ":"), "the copy has an id of its own: " + remoteId);
        assertEquals("speed>50", body.path("q").asText(), "without splitEntities the copy keeps q: " + body);
        assertEquals("Vehicle", body.path("entities").get(0).path("type").asText(), body.toString());
        assertFalse(body.has("status") || body.path("notification").has("timesSent"), "no status of ours: " + body);
        assertEquals("1.1 S1", copy.header("Via"));
        JsonNode own = a.api().get("/subscriptions/" + id).send().json();
        assertFalse(own.toString().contains(remoteId), "the copies are the broker's business: " + own);
        assertEquals("http://original.subscriber.example:9998/notify", own.path("notification").path("endpoint").path("uri").asText());

        JsonNode sources = a.api().get("/csourceSubscriptions").send().json();
        assertEquals(1, sources.size(), "§ 5.11.2: a subscription to registrations beside it: " + sources);

        Answer deleted = a.api().delete("/subscriptions/" + id).send();
        assertEquals(204, deleted.status(), deleted.toString());
        List<SourceStub.Seen> deletes = await(src, "DELETE", 1);
        assertEquals(1, deletes.size(), src.seen().toString());
        assertEquals("/ngsi-ld/v1/subscriptions/" + remoteId, deletes.get(0).target());
        assertEquals(0, a.api().get("/csourceSubscriptions").send().json().size());
    }

    /**
     * 5814_01_02 (§ 5.8.6): with splitEntities the copy carries no q; a notified fragment is
     * merged with this broker's entity, judged by the whole q, and sent on under the local id;
     * one that fails q after the merge is not sent. An id not given out is 404.
     */
    @Test
    void split_entities_fragments_are_merged_here_and_judged_by_q() throws Exception {
        Node a = broker("S2");
        SourceStub src = subscriptionSource();
        NotificationReceiver receiver = NotificationReceiver.start();
        open.add(receiver);
        reg(a, Mode.INCLUSIVE, src.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        String id = fresh("Subscription");
        Answer created = a.api().post("/subscriptions").json(Json.parse(subscription(id,
                ",\"q\":\"speed>50;brandName==%22Tesla%22\",\"splitEntities\":true", receiver.url()))).send();
        assertEquals(201, created.status(), created.toString());
        String copy = posts(src).get(0).body();
        assertFalse(copy.contains("\"q\""), copy);
        assertTrue(copy.contains("\"splitEntities\":true"), copy);
        String remoteId = Json.parse(copy).path("id").asText();

        String vehicle = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"brandName\":{\"type\":\"Property\",\"value\":\"Tesla\"}}".formatted(vehicle));
        String fragment = "{\"type\":\"Notification\",\"subscriptionId\":\"%s\",\"data\":[{\"id\":\"%s\",\"type\":\"Vehicle\","
                + "\"speed\":{\"type\":\"Property\",\"value\":%d}}]}";
        Answer in = new Ngsi(a.broker().origin() + "/ngsi-ld/ex").post("/remote-notify")
                .json(Json.parse(fragment.formatted(remoteId, vehicle, 99))).send();
        assertEquals(200, in.status(), in.toString());
        NotificationReceiver.Received got = receiver.next(5_000);
        String text = got.json().toString();
        assertTrue(text.contains(vehicle) && text.contains("Tesla") && text.contains("99"), text);
        assertEquals(id, got.json().path("subscriptionId").asText(), text);
        assertFalse(text.contains(remoteId), text);

        Answer failing = new Ngsi(a.broker().origin() + "/ngsi-ld/ex").post("/remote-notify")
                .json(Json.parse(fragment.formatted(remoteId, vehicle, 10))).send();
        assertEquals(200, failing.status(), failing.toString());
        // speed 10 fails q once merged: the next fragment, which passes, is the next notification, alone
        Answer passing = new Ngsi(a.broker().origin() + "/ngsi-ld/ex").post("/remote-notify")
                .json(Json.parse(fragment.formatted(remoteId, vehicle, 77))).send();
        assertEquals(200, passing.status(), passing.toString());
        JsonNode next = receiver.next(5_000).json().path("data");
        assertEquals(1, next.size(), next::toString);
        assertEquals(77, next.path(0).path("speed").path("value").asInt(), "speed 10 was not sent: " + next);
        Answer unknown = new Ngsi(a.broker().origin() + "/ngsi-ld/ex").post("/remote-notify")
                .json(Json.parse(fragment.formatted("urn:ngsi-ld:Subscription:never-given", vehicle, 99))).send();
        assertEquals(404, unknown.status(), unknown.toString());
    }

    /** Two real brokers: a subscription on A sees a change made on B, under A's subscription id; its update and delete reach B. */
    @Test
    void a_subscription_on_one_broker_is_notified_of_a_change_on_the_other() throws Exception {
        Node a = broker("S3A");
        Node b = broker("S3B");
        NotificationReceiver receiver = NotificationReceiver.start();
        open.add(receiver);
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        String id = fresh("Subscription");
        assertEquals(201, a.api().post("/subscriptions").json(Json.parse(subscription(id, "", receiver.url()))).send().status());
        assertEquals(1, b.api().get("/subscriptions").send().json().size(), "B holds the copy");
        String vehicle = fresh("Vehicle");
        create(b, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":80}}".formatted(vehicle));
        NotificationReceiver.Received got = receiver.next(5_000);
        assertEquals(id, got.json().path("subscriptionId").asText(), got.json().toString());
        assertEquals(vehicle, got.json().path("data").get(0).path("id").asText(), got.json().toString());
        assertEquals(80, got.json().path("data").get(0).path("speed").path("value").asInt(), got.json().toString());

        // § 5.8.2: an update reaches the copy, which keeps notifying this broker
        Answer patched = a.api().patch("/subscriptions/" + id).json(Json.parse(
                "{\"q\":\"speed>100\",\"notification\":{\"endpoint\":{\"uri\":\"http://127.0.0.1:9/elsewhere\"}}}")).send();
        assertEquals(204, patched.status(), patched.toString());
        JsonNode copy = b.api().get("/subscriptions").send().json().get(0);
        assertEquals("speed>100", copy.path("q").asText(), copy.toString());
        assertTrue(copy.path("notification").path("endpoint").path("uri").asText().endsWith("/ngsi-ld/ex/remote-notify"),
                copy.toString());

        assertEquals(204, a.api().delete("/subscriptions/" + id).send().status());
        assertEquals(0, b.api().get("/subscriptions").send().json().size(), "the copy is deleted with it");
    }

    /**
     * A source that refuses the copy leaves the subscription here as it is (201); a source
     * registered later gets its copy - one - through the subscription to registrations (§ 5.11.2).
     */
    @Test
    void a_refused_copy_keeps_the_subscription_and_a_later_source_gets_one() throws Exception {
        ManualClock clock = new ManualClock(1_800_000_000_000L); // the notifications' lastSuccess tells which one was answered
        Node a = broker("S4", clock);
        SourceStub refusing = stub(req -> new SourceStub.Answer(500, "{}", 0));
        SourceStub later = subscriptionSource();
        reg(a, Mode.INCLUSIVE, refusing.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        String id = fresh("Subscription");
        Answer created = a.api().post("/subscriptions").json(Json.parse(subscription(id, "", "http://127.0.0.1:9/n"))).send();
        assertEquals(201, created.status(), created.toString());
        // the refusing source was asked (and is asked again when registrations are notified: it has no copy yet)
        assertFalse(posts(refusing).isEmpty(), refusing.seen().toString());
        assertEquals(200, a.api().get("/subscriptions/" + id).send().status());
        // the subscription to registrations has told this broker of the refusing source: that notification is done
        awaitNotified(a, id + ":sources", clock.millis());

        clock.advance(1_000);
        reg(a, Mode.INCLUSIVE, later.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        List<SourceStub.Seen> copies = await(later, "POST", 1);
        assertEquals(1, copies.size(), "the source registered later gets the copy: " + later.seen());
        assertTrue(Json.parse(copies.get(0).body()).path("id").asText().startsWith(id + ":"), copies.get(0).body());
        // the barrier: the notification of the later registration - the one that could make a second copy - was
        // answered (each notification of a subscription is answered before the next is sent), so it came and went
        awaitNotified(a, id + ":sources", clock.millis());
        assertEquals(1, posts(later).size(), "one copy, however many notifications of registrations came: " + later.seen());
    }

    /** A source registered after the subscription, with none before it, gets its copy - and the delete. */
    @Test
    void a_subscription_made_before_any_source_is_copied_when_one_registers() throws Exception {
        Node a = broker("S6");
        SourceStub src = subscriptionSource();
        String id = fresh("Subscription");
        assertEquals(201, a.api().post("/subscriptions").json(Json.parse(subscription(id, "", "http://127.0.0.1:9/n"))).send().status());
        assertEquals(0, src.seen().size());
        reg(a, Mode.INCLUSIVE, src.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        List<SourceStub.Seen> copies = await(src, "POST", 1);
        assertEquals(1, copies.size(), src.seen().toString());
        String remoteId = Json.parse(copies.get(0).body()).path("id").asText();
        assertTrue(remoteId.startsWith(id + ":"), remoteId);
        reg(a, Mode.INCLUSIVE, fresh("x").replace("urn:ngsi-ld:x:", "http://127.0.0.1:9/"), null, "Building", Set.of(), null,
                "[\"federationOps\"]");
        assertEquals(1, posts(src).size(), "another registration makes no second copy here");
        assertEquals(204, a.api().delete("/subscriptions/" + id).send().status());
        assertEquals("/ngsi-ld/v1/subscriptions/" + remoteId, await(src, "DELETE", 1).get(0).target());
    }

    /** 16 subscriptions created at once against one source: each gets exactly one copy, the copies' ids distinct. */
    @Test
    void concurrent_subscriptions_each_get_one_copy() throws Exception {
        Node a = broker("S5");
        SourceStub src = subscriptionSource();
        reg(a, Mode.INCLUSIVE, src.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            ids.add(fresh("Subscription"));
        }
        List<Integer> statuses = java.util.Collections.synchronizedList(new ArrayList<>());
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(16)) {
            for (String id : ids) {
                pool.submit(() -> statuses.add(a.api().post("/subscriptions")
                        .json(Json.parse(subscription(id, "", "http://127.0.0.1:9/n"))).send().status()));
            }
        }
        assertEquals(java.util.Collections.nCopies(16, 201), statuses);
        List<SourceStub.Seen> copies = await(src, "POST", 16);
        assertEquals(16, copies.size());
        Set<String> remote = new java.util.HashSet<>();
        Set<String> parents = new java.util.HashSet<>();
        for (SourceStub.Seen c : copies) {
            String rid = Json.parse(c.body()).path("id").asText();
            remote.add(rid);
            parents.add(rid.substring(0, rid.lastIndexOf(':')));
        }
        assertEquals(16, remote.size(), "distinct remote ids");
        assertEquals(Set.copyOf(ids), parents, "one copy per subscription");
    }

    // ---------------------------------------------------------------- contextSourceInfo, § 4.3.6.6

    /** An exclusive registration of {@code id}'s speed at {@code endpoint} with {@code csi} as its contextSourceInfo. */
    private static void regWithInfo(Node on, String endpoint, String id, String csi) {
        String body = ("{\"id\":\"%s\",\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[{\"id\":\"%s\","
                + "\"type\":\"Vehicle\"}],\"propertyNames\":[\"speed\"]}],\"mode\":\"exclusive\",\"operations\":[\"redirectionOps\"],"
                + "\"endpoint\":\"%s\",\"contextSourceInfo\":%s}").formatted(fresh("ContextSourceRegistration"), id, endpoint, csi);
        Answer a = on.api().post("/csourceRegistrations").json(Json.parse(body)).send();
        assertEquals(201, a.status(), body + "\n" + a);
    }

    /**
     * 436_06 (§ 4.3.6.6): contentType application/ld+json sends the context inline; jsonldContext
     * sends the body recompacted with that context, linked, as application/json without an
     * {@code @context}; accept is the Accept of a forwarded read. None goes out as a header of its name.
     */
    @Test
    void context_source_info_sets_the_forwards_media_types_and_context() throws Exception {
        Node a = broker("C1");
        String ctxUrl = "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld";
        SourceStub ld = stub(req -> new SourceStub.Answer(201, null, 0));
        String ldId = fresh("Vehicle");
        regWithInfo(a, ld.endpoint(), ldId, "[{\"key\":\"contentType\",\"value\":\"application/ld+json\"}]");
        String entity = "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":5}}";
        assertEquals(201, a.api().post("/entities").json(Json.parse(entity.formatted(ldId))).send().status());
        SourceStub.Seen sent = ld.seen().get(0);
        assertTrue(sent.header("Content-Type").startsWith("application/ld+json"), sent.headers().toString());
        assertTrue(Json.parse(sent.body()).has("@context"), sent.body());
        assertNull(sent.header("Link"), "ld+json carries its context inline (6.3.5)");
        assertNull(sent.header("contentType"));

        SourceStub js = stub(req -> new SourceStub.Answer(201, null, 0));
        String jsId = fresh("Vehicle");
        regWithInfo(a, js.endpoint(), jsId, "[{\"key\":\"jsonldContext\",\"value\":\"" + ctxUrl + "\"}]");
        String withContext = "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":5},\"@context\":\"%s\"}";
        Answer created = a.api().post("/entities").ldJson(Json.parse(withContext.formatted(jsId, ctxUrl))).send();
        assertEquals(201, created.status(), created.toString());
        sent = js.seen().get(0);
        assertTrue(sent.header("Content-Type").startsWith("application/json"), sent.headers().toString());
        assertTrue(sent.header("Link").contains(ctxUrl), sent.headers().toString());
        assertFalse(Json.parse(sent.body()).has("@context"), sent.body());
        assertEquals(5, Json.parse(sent.body()).path("speed").path("value").asInt(), sent.body());

        SourceStub acc = stub(req -> new SourceStub.Answer(200, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":7}}"
                .formatted(req.target().substring("/ngsi-ld/v1/entities/".length(), req.target().indexOf('?'))), 0));
        String accId = fresh("Vehicle");
        regWithInfo(a, acc.endpoint(), accId, "[{\"key\":\"accept\",\"value\":\"application/ld+json\"}]");
        Answer read = a.api().get(Ngsi.entity(accId)).send();
        assertEquals(200, read.status(), read.toString());
        assertEquals(7, read.json().path("speed").path("value").asInt(), read.toString());
        assertEquals("application/ld+json", acc.seen().get(0).header("Accept"));

        // a format this broker cannot read back (GeoJSON) is not asked for: JSON is
        String geoId = fresh("Vehicle");
        regWithInfo(a, acc.endpoint(), geoId, "[{\"key\":\"accept\",\"value\":\"application/geo+json\"}]");
        assertEquals(200, a.api().get(Ngsi.entity(geoId)).send().status());
        assertEquals("application/json", acc.seen().get(1).header("Accept"));
    }

    // ---------------------------------------------------------------- discovery, § 5.7.5, 5.7.8

    /** GET /types and /attributes list what the sources registered for retrieveEntityTypes / retrieveAttrTypes hold too; local=true only this broker's. */
    @Test
    void types_and_attributes_include_the_sources() {
        Node a = broker("T1");
        Node b = broker("T1B");
        String here = "Here" + SEQ.incrementAndGet();
        String there = "There" + SEQ.incrementAndGet();
        create(a, "{\"id\":\"urn:ngsi-ld:%s:1\",\"type\":\"%s\",\"localAttr\":{\"type\":\"Property\",\"value\":1}}".formatted(here, here));
        create(b, "{\"id\":\"urn:ngsi-ld:%s:1\",\"type\":\"%s\",\"remoteAttr\":{\"type\":\"Property\",\"value\":1}}".formatted(there, there));
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, there, Set.of(), null, "[\"federationOps\"]");
        Answer types = a.api().get("/types").send();
        assertEquals(200, types.status(), types.toString());
        String list = types.json().path("typeList").toString();
        assertTrue(list.contains("\"" + here + "\"") && list.contains("\"" + there + "\""), list);
        String local = a.api().get("/types").query("local", "true").send().json().path("typeList").toString();
        assertTrue(local.contains(here) && !local.contains(there), local);
        String attrs = a.api().get("/attributes").send().json().path("attributeList").toString();
        assertTrue(attrs.contains("\"localAttr\"") && attrs.contains("\"remoteAttr\""), attrs);
        assertNull(types.header("NGSILD-Warning"), types.toString());
    }

    // ---------------------------------------------------------------- Purge Entities, § 5.6.21.4

    /**
     * D017_01_inc/exc/red: a purge by type goes to every registration that takes purgeEntity,
     * with the request's own query, whatever its mode, and is done here too; local=true is not
     * forwarded; a source without purgeEntity is not asked.
     */
    @Test
    void purge_is_forwarded_with_its_query_to_every_source_and_done_here() {
        Node a = broker("P1");
        String type = "Purged" + SEQ.incrementAndGet();
        String here = "urn:ngsi-ld:%s:here".formatted(type);
        create(a, "{\"id\":\"%s\",\"type\":\"%s\",\"brand\":{\"type\":\"Property\",\"value\":\"Skoda\"}}".formatted(here, type));
        SourceStub inc = stub(req -> new SourceStub.Answer(204, null, 0));
        SourceStub exc = stub(req -> new SourceStub.Answer(204, null, 0));
        SourceStub red = stub(req -> new SourceStub.Answer(204, null, 0));
        SourceStub readOnly = stub(req -> new SourceStub.Answer(204, null, 0));
        reg(a, Mode.INCLUSIVE, inc.endpoint(), null, type, Set.of());
        reg(a, Mode.EXCLUSIVE, exc.endpoint(), here, type, Set.of("speed"));
        reg(a, Mode.REDIRECT, red.endpoint(), null, type, Set.of("colour"));
        reg(a, Mode.INCLUSIVE, readOnly.endpoint(), null, type, Set.of(), null, "[\"retrieveOps\"]");

        Answer local = a.api().delete("/entities").query("type", type).query("local", "true").send();
        assertEquals(204, local.status(), local.toString());
        assertEquals(0, inc.seen().size() + exc.seen().size() + red.seen().size(), "local=true is not forwarded");
        create(a, "{\"id\":\"%s\",\"type\":\"%s\",\"brand\":{\"type\":\"Property\",\"value\":\"Skoda\"}}".formatted(here, type));

        Answer r = a.api().delete("/entities").query("type", type).send();
        assertEquals(204, r.status(), r.toString());
        for (SourceStub s : List.of(inc, exc, red)) {
            assertEquals(1, s.seen().size(), s.endpoint() + " " + s.seen());
            assertEquals("DELETE", s.seen().get(0).method());
            assertEquals("/ngsi-ld/v1/entities?type=" + type, s.seen().get(0).target(), "the request's own query");
        }
        assertEquals(0, readOnly.seen().size(), "a source that does not take purgeEntity is not asked");
        assertEquals(404, a.api().get(Ngsi.entity(here)).query("local", "true").send().status(), "purged here too");
    }

    /**
     * § 5.6.21.4: a redirect source that does not take purgeEntity leaves its part undone - 409
     * Conflict when nothing else was purged, a 207 naming it when the local part was - and is never asked.
     */
    @Test
    void purge_of_what_a_source_holds_that_does_not_take_purgeEntity_is_a_conflict() {
        Node a = broker("P6");
        String type = "Purged" + SEQ.incrementAndGet();
        SourceStub s = stub(req -> new SourceStub.Answer(204, "", 0));
        String id = "urn:ngsi-ld:" + type + ":1";
        create(a, "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(id, type));
        String reg = reg(a, Mode.REDIRECT, s.endpoint(), null, type, Set.of("speed"), null, "[\"retrieveOps\"]");
        Answer partial = a.api().delete("/entities").query("type", type).send();
        assertEquals(207, partial.status(), partial.toString());
        assertEquals(id, partial.json().path("success").path(0).asText(), partial.toString());
        assertEquals(reg, partial.json().path("errors").path(0).path("registrationId").asText(), partial.toString());
        assertEquals(409, partial.json().path("errors").path(0).path("error").path("status").asInt(), partial.toString());
        Answer none = a.api().delete("/entities").query("type", type).send();
        assertEquals(409, none.status(), none.toString());
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/Conflict", none.json().path("type").asText(), none.toString());
        assertEquals(0, s.seen().size(), "a source that does not take purgeEntity is not asked: " + s.seen());
    }

    /** § 5.6.21.4: a source that fails the purge makes it a partial success - 207 naming its registration. */
    @Test
    void a_failed_source_purge_is_a_207_naming_its_registration() {
        Node a = broker("P2");
        String type = "Purged" + SEQ.incrementAndGet();
        String here = "urn:ngsi-ld:%s:here".formatted(type);
        create(a, "{\"id\":\"%s\",\"type\":\"%s\"}".formatted(here, type));
        SourceStub bad = stub(req -> new SourceStub.Answer(500, "{}", 0));
        SourceStub nothing = stub(req -> new SourceStub.Answer(404, "{}", 0));
        String failing = reg(a, Mode.INCLUSIVE, bad.endpoint(), null, type, Set.of());
        reg(a, Mode.INCLUSIVE, nothing.endpoint(), null, type, Set.of());
        Answer r = a.api().delete("/entities").query("type", type).send();
        assertEquals(207, r.status(), r.toString());
        assertEquals(List.of(here), List.of(r.json().path("success").get(0).asText()), r.toString());
        assertEquals(1, r.json().path("errors").size(), "a source with nothing to purge (404) is no failure: " + r);
        assertEquals(failing, r.json().path("errors").get(0).path("registrationId").asText(), r.toString());
        assertEquals(404, a.api().get(Ngsi.entity(here)).query("local", "true").send().status());
    }

    // ---------------------------------------------------------------- failures, § 6.3.17 and § 5.2.34

    /** A source that hangs past its registration's timeout, dies mid-answer, answers garbage or 500: a partial answer, a warning each. */
    @Test
    void failing_sources_leave_a_partial_answer_with_a_warning_each() {
        Node a = broker("A10");
        String id = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"brand\":{\"type\":\"Property\",\"value\":\"Kept\"}}".formatted(id));
        SourceStub hang = stub(req -> new SourceStub.Hang());
        SourceStub die = stub(req -> new SourceStub.Die());
        SourceStub garbage = stub(req -> new SourceStub.Answer(200, "GARBAGE-not-json", 0));
        SourceStub error = stub(req -> new SourceStub.Answer(500, "{\"marker\":\"EVILBODY\"}", 0));
        String hangs = reg(a, Mode.INCLUSIVE, hang.endpoint(), id, "Vehicle", Set.of(), "{\"timeout\":400}");
        reg(a, Mode.INCLUSIVE, die.endpoint(), id, "Vehicle", Set.of());
        reg(a, Mode.INCLUSIVE, garbage.endpoint(), id, "Vehicle", Set.of());
        reg(a, Mode.INCLUSIVE, error.endpoint(), id, "Vehicle", Set.of());
        long t0 = System.nanoTime();
        Answer r = a.api().get(Ngsi.entity(id)).send();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(200, r.status(), r.toString());
        assertEquals("Kept", r.json().path("brand").path("value").asText(), r.toString());
        assertFalse(r.text().contains("EVILBODY") || r.text().contains("GARBAGE"), r.toString());
        List<String> warnings = r.headerValues("NGSILD-Warning");
        assertEquals(4, warnings.size(), r.toString());
        String all = String.join("\n", warnings);
        assertTrue(all.contains("199 A10 \"registration " + hangs), "the hung source times out as 199: " + all);
        assertTrue(all.matches("(?s).*299 A10 .*" + error.endpoint().replace(".", "\\.") + ".*"), "the 500 is a 299: " + all);
        assertTrue(all.matches("(?s).*111 A10 .*" + garbage.endpoint().replace(".", "\\.") + ".*"), "garbage is a 111: " + all);
        assertTrue(all.matches("(?s).*199 A10 .*" + die.endpoint().replace(".", "\\.") + ".*"), "dying mid-answer is a 199: " + all);
        assertTrue(ms < 2_500, "the hung source's 400 ms timeout bounds the answer, not the broker's 3 s: " + ms + " ms");
    }

    /**
     * A source's failure reaches the client as a warning in the broker's words: not its status
     * line, not a header it sent, not what its entity's parser found wrong - none of which may
     * carry what the client must not see (a token the source holds).
     */
    @Test
    void a_failing_sources_warning_quotes_nothing_the_source_sent() {
        Node a = broker("A12");
        String id = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"brand\":{\"type\":\"Property\",\"value\":\"Kept\"}}".formatted(id));
        String secret = "eyJhbGciOiJub25lIn0.SECRET";
        SourceStub statusLine = stub(req -> new SourceStub.Raw(secret + " 200 OK\r\n\r\n"));
        SourceStub header = stub(req -> new SourceStub.Raw("HTTP/1.1 200 OK\r\n" + secret + "\r\nContent-Length: 2\r\n\r\n{}"));
        SourceStub length = stub(req -> new SourceStub.Raw("HTTP/1.1 200 OK\r\nContent-Length: " + secret + "\r\n\r\n"));
        SourceStub entity = stub(req -> new SourceStub.Answer(200,
                "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"%s\",\"value\":1}}".formatted(id, secret), 0));
        for (SourceStub s : List.of(statusLine, header, length, entity)) {
            reg(a, Mode.INCLUSIVE, s.endpoint(), id, "Vehicle", Set.of());
        }
        Answer r = a.api().get(Ngsi.entity(id)).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals("Kept", r.json().path("brand").path("value").asText(), r.toString());
        List<String> warnings = r.headerValues("NGSILD-Warning");
        assertEquals(4, warnings.size(), r.toString());
        for (String w : warnings) {
            assertFalse(w.contains("SECRET") || w.contains("eyJ"), "the warning quotes the source: " + w);
        }
        String all = String.join("\n", warnings);
        assertTrue(all.contains("111 A12 \"registration ") && all.contains(statusLine.endpoint() + "): answered what cannot be used"), all);
        assertTrue(all.contains(entity.endpoint() + "): answered what is not an NGSI-LD entity"), all);
    }

    /** IOP_EXT_ERR_01_03/12: with no data anywhere a retrieve is 404, and a dead source's warning stays on it. */
    @Test
    void a_404_keeps_the_warning_of_a_dead_source() {
        Node a = broker("A20");
        String id = fresh("Vehicle");
        SourceStub dead = stub(req -> new SourceStub.Die());
        reg(a, Mode.REDIRECT, dead.endpoint(), id, "Vehicle", Set.of("speed"));
        Answer r = a.api().get(Ngsi.entity(id)).send();
        assertEquals(404, r.status(), r.toString());
        assertEquals(1, r.headerValues("NGSILD-Warning").size(), r.toString());
        assertTrue(r.header("NGSILD-Warning").startsWith("199 A20 "), r.toString());
        assertFalse(r.text().contains("speed"), r.toString());
    }

    /** A query with a failing source answers the local part (IOP_EXT_ERR_01_01 in spirit). */
    @Test
    void query_with_a_failing_source_answers_the_local_part() {
        Node a = broker("A11");
        String type = "Part" + SEQ.incrementAndGet();
        create(a, "{\"id\":\"urn:ngsi-ld:%s:1\",\"type\":\"%s\"}".formatted(type, type));
        SourceStub error = stub(req -> new SourceStub.Answer(500, "{\"marker\":\"EVILBODY\"}", 0));
        reg(a, Mode.INCLUSIVE, error.endpoint(), null, type, Set.of());
        Answer r = a.api().get("/entities").query("type", type).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals(1, r.json().size(), r.toString());
        assertTrue(r.header("NGSILD-Warning").startsWith("299 A11 "), r.toString());
    }

    /** § 5.2.34: after a failure the source is not asked again until its cooldown has passed. */
    @Test
    void cooldown_keeps_a_failed_source_unasked_until_it_passes() {
        ManualClock clock = new ManualClock(1_800_000_000_000L); // the cooldown passes when the test says, not when the machine lets it
        Node a = broker("A12", clock);
        String type = "Cool" + SEQ.incrementAndGet();
        create(a, "{\"id\":\"urn:ngsi-ld:%s:1\",\"type\":\"%s\"}".formatted(type, type));
        SourceStub s = stub(req -> new SourceStub.Answer(500, "{}", 0));
        String r = reg(a, Mode.INCLUSIVE, s.endpoint(), null, type, Set.of(), "{\"cooldown\":800}");
        assertEquals(200, a.api().get("/entities").query("type", type).send().status());
        assertEquals(1, s.hits());
        JsonNode status = a.api().get("/csourceRegistrations/" + r).send().json();
        assertEquals(1, status.path("timesFailed").asInt(), "the failure is reported to the registry: " + status);
        Answer second = a.api().get("/entities").query("type", type).send();
        assertEquals(200, second.status(), second.toString());
        assertEquals(1, second.json().size());
        assertTrue(second.header("NGSILD-Warning").startsWith("199 A12 "), "in cooldown: a timeout warning: " + second);
        assertEquals(1, s.hits(), "not asked in its cooldown");
        assertEquals(1, a.api().get("/csourceRegistrations/" + r).send().json().path("timesSent").asInt(),
                "a forward not sent is not counted");
        clock.advance(799);
        Answer still = a.api().get("/entities").query("type", type).send();
        assertTrue(still.header("NGSILD-Warning").startsWith("199 A12 "), "still in cooldown 1 ms before its end: " + still);
        assertEquals(1, s.hits(), "not asked in its cooldown");
        clock.advance(1);
        a.api().get("/entities").query("type", type).send();
        assertEquals(2, s.hits(), "asked again once the cooldown passed");
    }

    // ---------------------------------------------------------------- loops and chains, § 4.3.6.4

    /** D018: A → B → C → A ends: the broker that finds itself in Via answers locally. */
    @Test
    void a_cycle_of_three_brokers_ends_by_via() {
        Node a = broker("CA");
        Node b = broker("CB");
        Node c = broker("CC");
        String id = fresh("Vehicle");
        create(c, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":42}}".formatted(id));
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, "Vehicle", Set.of());
        reg(b, Mode.INCLUSIVE, c.broker().origin(), null, "Vehicle", Set.of());
        reg(c, Mode.INCLUSIVE, a.broker().origin(), null, "Vehicle", Set.of());
        long t0 = System.nanoTime();
        Answer r = a.api().get(Ngsi.entity(id)).send();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(200, r.status(), r.toString());
        assertEquals(42, r.json().path("speed").path("value").asInt(), r.toString());
        assertTrue(ms < 2_500, "no forward waited for a timeout: " + ms + " ms");
        // each broker served the retrieve exactly once more than it was asked directly: A twice (the client's, then
        // the one that came round), B and C once - the loop ended at its first return to A
        assertEquals(2, a.broker().broker().metrics().requests("retrieveEntity", 200)
                + a.broker().broker().metrics().requests("retrieveEntity", 404), "A: the client's and the looped one");
        assertEquals(1, b.broker().broker().metrics().requests("retrieveEntity", 200), "B once");
        assertEquals(1, c.broker().broker().metrics().requests("retrieveEntity", 200), "C once");
        Answer q = b.api().get("/entities").query("type", "Vehicle").send();
        assertEquals(200, q.status(), q.toString());
        assertTrue(ids(q.json()).contains(id), q.toString());
    }

    /** Creates Vehicle {@code id} on {@code a} through a registration of {@code s} in {@code mode}: the Via the source saw. */
    private static String createdThrough(Node a, Mode mode, SourceStub s, String id) {
        reg(a, mode, s.endpoint(), null, "Vehicle", Set.of());
        Answer created = a.api().post("/entities").json(Json.parse("{\"id\":\"%s\",\"type\":\"Vehicle\"}".formatted(id))).send();
        assertEquals(201, created.status(), created.toString());
        return s.seen().get(0).header("Via");
    }

    /**
     * D018_01 (§ 6.3.17): a write whose Via already names this broker, which a redirect registration
     * would forward again, is 508 LoopDetected, and nothing is forwarded; a read that came round is
     * answered here.
     */
    @Test
    void a_write_that_came_round_a_loop_to_a_redirect_registration_is_508_D018_01() {
        Node a = broker("L1");
        String id = fresh("Vehicle");
        SourceStub s = stub(req -> new SourceStub.Answer(req.method().equals("POST") ? 201 : 204, null, 0));
        String via = createdThrough(a, Mode.REDIRECT, s, id);
        assertEquals("1.1 L1", via);
        Answer looped = a.api().delete(Ngsi.entity(id)).header("Via", via).send();
        assertEquals(508, looped.status(), looped.toString());
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/LoopDetected", looped.json().path("type").asText());
        assertEquals(1, s.hits(), "nothing was forwarded again");
        Answer read = a.api().get(Ngsi.entity(id)).header("Via", via).send();
        assertEquals(404, read.status(), "a read that came round is answered here, where a redirected entity is not: " + read);
        assertEquals(1, s.hits());
        // D018_03: a forward carries the incoming Via with this broker after it
        Answer deleted = a.api().delete(Ngsi.entity(id)).header("Via", "1.1 upstream").send();
        assertEquals(204, deleted.status(), deleted.toString());
        assertEquals("1.1 upstream, 1.1 L1", s.seen().get(1).header("Via"));
    }

    /**
     * § 6.3.17, § 6.3.18 (the suite's doubt 75 on D018_01): 508 is for an exclusive or redirect
     * registration; an inclusive one that a write came round drops out of the matching, and the
     * write is done here alone - 204, nothing forwarded again.
     */
    @Test
    void a_write_that_came_round_a_loop_to_an_inclusive_registration_is_done_here_alone_6_3_17() {
        Node a = broker("L2");
        String id = fresh("Vehicle");
        SourceStub s = stub(req -> new SourceStub.Answer(req.method().equals("POST") ? 201 : 204, null, 0));
        String via = createdThrough(a, Mode.INCLUSIVE, s, id);
        assertEquals("1.1 L2", via);
        Answer looped = a.api().delete(Ngsi.entity(id)).header("Via", via).send();
        assertEquals(204, looped.status(), looped.toString());
        assertEquals(1, s.hits(), "nothing was forwarded again");
        Answer gone = a.api().get(Ngsi.entity(id)).query("local", "true").send();
        assertEquals(404, gone.status(), "deleted here: " + gone);
    }

    @Test
    void sixteen_callers_through_a_chain_of_three_brokers_over_http() throws Exception {
        chain(false);
    }

    @Test
    void sixteen_callers_through_a_chain_of_three_brokers_over_cor() throws Exception {
        chain(true);
    }

    /**
     * The seed's worst bugs showed only here (history § 8, § 11): 16 callers at once through
     * A → B → C, each entity on C only, each answer checked to be its own entity's.
     */
    private void chain(boolean cor) throws Exception {
        Node a = broker(cor ? "KA" : "HA");
        Node b = broker(cor ? "KB" : "HB");
        Node c = broker(cor ? "KC" : "HC");
        String type = "Chain" + SEQ.incrementAndGet();
        int entities = 32;
        for (int i = 0; i < entities; i++) {
            create(c, "{\"id\":\"urn:ngsi-ld:%s:%d\",\"type\":\"%s\",\"n\":{\"type\":\"Property\",\"value\":%d}}".formatted(type, i, type, i));
        }
        reg(a, Mode.INCLUSIVE, cor ? b.broker().corUrl() : b.broker().origin(), null, type, Set.of());
        reg(b, Mode.INCLUSIVE, cor ? c.broker().corUrl() : c.broker().origin(), null, type, Set.of());
        int callers = 16;
        int each = 25;
        List<java.util.concurrent.CompletableFuture<String>> done = new ArrayList<>();
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(callers)) {
            for (int t = 0; t < callers; t++) {
                int caller = t;
                done.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    Ngsi api = new Ngsi(a.broker().baseUrl());
                    for (int k = 0; k < each; k++) {
                        int n = (caller * each + k) % entities;
                        Answer r = api.get(Ngsi.entity("urn:ngsi-ld:" + type + ":" + n)).send();
                        if (r.status() != 200 || r.json().path("n").path("value").asInt(-1) != n || r.has("NGSILD-Warning")) {
                            return "caller " + caller + " asked for " + n + ": " + r;
                        }
                    }
                    return null;
                }, pool));
            }
            for (var f : done) {
                String wrong = f.get(60, java.util.concurrent.TimeUnit.SECONDS);
                assertNull(wrong, wrong);
            }
        }
        Answer q = a.api().get("/entities").query("type", type).query("count", "true").query("limit", "100").send();
        assertEquals(String.valueOf(entities), q.header("NGSILD-Results-Count"), q.toString());
    }

    private static List<String> ids(JsonNode array) {
        List<String> out = new ArrayList<>();
        for (JsonNode e : array) {
            out.add(e.path("id").asText());
        }
        assertNotNull(out);
        return out;
    }
}
