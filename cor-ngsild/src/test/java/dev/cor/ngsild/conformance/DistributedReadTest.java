package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.ManualClock;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.federation.Registration.Mode;
import org.junit.jupiter.api.Test;

/**
 * Distributed Retrieve Entity (ETSI GS CIM 009 § 4.3.6, § 5.7.1.4) and discovery (§ 5.7.5,
 * § 5.7.8) between real brokers and misbehaving sources over real sockets: how each mode's
 * answers merge with the local entity (§ 4.3.6.2, § 4.3.6.3, § 4.5.5.3), the relay of an entity
 * one source alone has, and what a source's answer must be to be used. Registrations are created
 * as a client would: {@code POST /csourceRegistrations}.
 */
class DistributedReadTest extends DistributedFixture {
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

    // ---------------------------------------------------------------- the entity's own members are no attributes

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
}
