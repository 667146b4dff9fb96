package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.federation.Registration.Mode;
import org.junit.jupiter.api.Test;

/**
 * Distributed batch operations (ETSI GS CIM 009 § 5.6.7-5.6.10, each one's distributed clause)
 * between real brokers and stub sources over real sockets: one batch per registration with the
 * parts it registers, a source's refusal reported as it gave it in the 207 (§ 5.2.17), and a
 * batch in application/ld+json, whose entities each carry their own {@code @context}.
 * Registrations are created as a client would: {@code POST /csourceRegistrations}.
 */
class DistributedBatchTest extends DistributedFixture {
    // ---------------------------------------------------------------- batches, § 5.6.7-5.6.10

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

    /**
     * D013_01_red, D013_02_red (§ 5.6.8.4, § 6.15.3.1): an upsert that only redirect sources take
     * is answered as they answered it - 204 when they updated what they hold, 201 with the ids
     * when they created them. Nothing is created here, so this broker cannot call it created.
     */
    @Test
    void an_upsert_only_sources_take_answers_created_or_updated_as_they_did_5_6_8() {
        Node a = broker("UP1");
        String type = "Ups" + SEQ.incrementAndGet();
        String one = "urn:ngsi-ld:" + type + ":1";
        String two = "urn:ngsi-ld:" + type + ":2";
        SourceStub updated = stub(req -> new SourceStub.Answer(204, null, 0));
        reg(a, Mode.REDIRECT, updated.endpoint(), one, type, Set.of());
        SourceStub created = stub(req -> new SourceStub.Answer(201, "[\"" + two + "\"]", 0));
        reg(a, Mode.REDIRECT, created.endpoint(), two, type, Set.of());
        String entity = "{\"id\":\"%s\",\"type\":\"%s\",\"n\":{\"type\":\"Property\",\"value\":1}}";

        Answer r = a.api().post("/entityOperations/upsert").json(Json.parse("[" + entity.formatted(one, type) + "]")).send();
        assertEquals(204, r.status(), "the source updated it: " + r);
        assertEquals(1, updated.hits(), updated.seen().toString());

        r = a.api().post("/entityOperations/upsert").query("options", "update")
                .json(Json.parse("[" + entity.formatted(one, type) + "," + entity.formatted(two, type) + "]")).send();
        assertEquals(201, r.status(), "one of them was created at its source: " + r);
        assertEquals(Json.parse("[\"" + two + "\"]"), r.json(), "only the created one is listed: " + r);
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

    // ---------------------------------------------------------------- the entity's own members are no attributes

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
}
