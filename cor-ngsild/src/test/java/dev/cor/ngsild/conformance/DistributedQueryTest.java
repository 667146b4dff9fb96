package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.federation.Registration.Mode;
import org.junit.jupiter.api.Test;

/**
 * Distributed Query Entities (ETSI GS CIM 009 § 4.3.6, § 5.7.2.4) and Purge Entities
 * (§ 5.6.21.4) between real brokers and stub sources over real sockets: the union merged by id
 * and paged, both bindings of a query (§ 4.20: queryEntity, queryBatch), csf and splitEntities,
 * only what a registration names taken from its source (§ 4.3.6.1), {@code local=true}, and the
 * purge at every source that takes it. Registrations are created as a client would:
 * {@code POST /csourceRegistrations}.
 */
class DistributedQueryTest extends DistributedFixture {
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
}
