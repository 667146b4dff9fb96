package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.federation.Registration.Mode;
import org.junit.jupiter.api.Test;

/**
 * Distributed writes of one entity (ETSI GS CIM 009 § 5.6.1-5.6.6, 5.6.17-5.6.19, each one's
 * distributed clause) between real brokers and misbehaving sources over real sockets: what each
 * mode forwards and what stays here (§ 4.3.6.2, § 4.3.6.3), and the answers - 201/204, the only
 * part's own error, or a 207 naming each part a source did not take (§ 5.2.18, § 5.2.19).
 * Registrations are created as a client would: {@code POST /csourceRegistrations}.
 */
class DistributedWriteTest extends DistributedFixture {
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
     * § 5.6.3.4, § 5.2.18 (the suite's D003_02_red): a redirect source that answers an append with
     * 207 and no UpdateResult did not take all of it and does not say what it took - its part is
     * named in the 207 here, with the registration, not reported as appended.
     */
    @Test
    void an_append_a_source_answers_207_without_an_update_result_is_a_207_D003_02_red() {
        Node a = broker("W19");
        String id = fresh("Vehicle");
        SourceStub s = stub(req -> new SourceStub.Answer(207, null, 0));
        String reg = reg(a, Mode.REDIRECT, s.endpoint(), id, "Vehicle", Set.of());
        Answer r = a.api().post(Ngsi.entity(id) + "/attrs").query("options", "noOverwrite")
                .json(Json.parse("{\"speed\":{\"type\":\"Property\",\"value\":2}}")).send();
        assertEquals(207, r.status(), r.toString());
        JsonNode nu = r.json().path("notUpdated").path(0);
        assertEquals("speed", nu.path("attributeName").asText(), r.toString());
        assertEquals(reg, nu.path("registrationId").asText(), r.toString());
        assertEquals(1, s.hits(), s.seen().toString());
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

    /**
     * § 5.6.6.4 (the suite's D002_02_exc): a delete of an entity an exclusive registration holds
     * part of at a source that does not take deleteEntity - that part cannot be deleted, a
     * Conflict naming the registration; the entity here is deleted: a 207. With nothing here, the
     * whole delete failed: 409. The source is never asked.
     */
    @Test
    void delete_of_an_entity_held_by_a_source_that_takes_no_delete_is_a_conflict_part_D002_02_exc() {
        Node a = broker("W18");
        String id = fresh("Vehicle");
        SourceStub s = stub(req -> new SourceStub.Answer(204, null, 0));
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"brand\":{\"type\":\"Property\",\"value\":\"Seat\"}}".formatted(id));
        String reg = reg(a, Mode.EXCLUSIVE, s.endpoint(), id, "Vehicle", Set.of("speed"), null, "[\"queryEntity\"]");
        Answer r = a.api().delete(Ngsi.entity(id)).send();
        assertEquals(207, r.status(), r.toString());
        assertEquals(Json.parse("[\"" + id + "\"]"), r.json().path("success"), r.toString());
        JsonNode error = r.json().path("errors").path(0);
        assertEquals(reg, error.path("registrationId").asText(), r.toString());
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/Conflict", error.path("error").path("type").asText(), r.toString());
        assertEquals(1, r.json().path("errors").size(), r.toString());
        assertEquals(404, a.api().get(Ngsi.entity(id)).query("local", "true").send().status(), "deleted here");

        Answer again = a.api().delete(Ngsi.entity(id)).send();
        assertEquals(409, again.status(), "nothing here, the source's part cannot be done: " + again);
        assertEquals(0, s.hits(), "a source that does not take deleteEntity is never asked: " + s.seen());
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

    // ---------------------------------------------------------------- the entity's own members are no attributes

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
}
