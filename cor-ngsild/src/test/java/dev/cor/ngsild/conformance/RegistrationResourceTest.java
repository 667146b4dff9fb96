package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * The context source registration resource (ETSI GS CIM 009 § 5.9 register/update/delete,
 * § 5.10.1 retrieve; data types § 5.2.9, § 5.2.10, § 5.2.8, § 5.2.34; modes § 4.3.6; operation
 * names § 4.20). ETSI TPs 033 (register), 035 (delete), 036 (retrieve), 436_03 and 5922_01 (mode
 * rules).
 */
class RegistrationResourceTest extends ConformanceTest {

    static String registrationId() {
        return Entities.id("ContextSourceRegistration");
    }

    /** A registration of Vehicles' speed and brandName at a source, under the tests' model context. */
    static ObjectNode vehicles(String id) {
        return Json.obj("""
                {"id": "%s", "type": "ContextSourceRegistration",
                 "information": [{"entities": [{"type": "Vehicle"}], "propertyNames": ["speed", "brandName"]}],
                 "endpoint": "http://127.0.0.1:9/source",
                 "@context": "%s"}""", id, model);
    }

    static Answer register(ObjectNode reg) {
        return api.post("/csourceRegistrations").ldJson(reg).send();
    }

    static String path(String id) {
        return "/csourceRegistrations/" + id;
    }

    /** A fresh tenant: the mode rules look at every registration of a tenant, so each such test has its own. */
    static String freshTenant() {
        return "reg" + Integer.toHexString(registrationId().hashCode());
    }

    static Answer registerIn(String tenant, ObjectNode reg) {
        return api.post("/csourceRegistrations").ldJson(reg).tenant(tenant).send();
    }

    static void registered(ObjectNode reg) {
        Answer a = register(reg);
        Checks.status(a, 201);
    }

    @Test
    void register_answers_201_with_its_location_and_retrieve_gives_it_back_compacted_033_01_036_04() {
        String id = registrationId();
        Answer a = register(vehicles(id));
        Checks.status(a, 201);
        assertEquals("/ngsi-ld/v1/csourceRegistrations/" + id, a.header("Location"));
        assertEquals(0, a.body().length);
        JsonNode r = Checks.okJson(api.get(path(id)).link(model).send());
        assertEquals(id, r.path("id").asText());
        assertEquals("ContextSourceRegistration", r.path("type").asText());
        assertEquals("Vehicle", r.path("information").path(0).path("entities").path(0).path("type").asText());
        assertEquals(List.of("speed", "brandName"), Json.texts(r.path("information").path(0).path("propertyNames")));
        assertEquals("http://127.0.0.1:9/source", r.path("endpoint").asText());
        assertFalse(r.has("createdAt"), "createdAt only with options=sysAttrs");
    }

    @Test
    void retrieve_without_the_context_gives_the_expanded_names_036_03() {
        String id = registrationId();
        registered(vehicles(id));
        JsonNode r = Checks.okJson(api.get(path(id)).send());
        assertEquals(modelIri("Vehicle"), r.path("information").path(0).path("entities").path(0).path("type").asText());
        assertEquals(modelIri("speed"), r.path("information").path(0).path("propertyNames").path(0).asText());
    }

    @Test
    void retrieve_in_ld_json_carries_the_context_in_the_body() {
        String id = registrationId();
        registered(vehicles(id));
        JsonNode r = Checks.okLdJson(api.get(path(id)).link(model).accept(Ngsi.LD_JSON).send(), model);
        assertEquals("Vehicle", r.path("information").path(0).path("entities").path(0).path("type").asText());
    }

    @Test
    void options_sysAttrs_adds_createdAt_and_modifiedAt_5_10_1() {
        String id = registrationId();
        registered(vehicles(id));
        JsonNode r = Checks.okJson(api.get(path(id)).query("options", "sysAttrs").link(model).send());
        assertTrue(Json.DATE_TIME.matcher(r.path("createdAt").asText()).matches(), r.toString());
        assertTrue(Json.DATE_TIME.matcher(r.path("modifiedAt").asText()).matches(), r.toString());
    }

    @Test
    void a_registration_without_id_gets_one_033_11() {
        ObjectNode reg = vehicles("x");
        reg.remove("id");
        Answer a = register(reg);
        Checks.status(a, 201);
        String location = a.header("Location");
        assertTrue(location.startsWith("/ngsi-ld/v1/csourceRegistrations/urn:ngsi-ld:ContextSourceRegistration:"), location);
        Checks.okJson(api.get(location.substring("/ngsi-ld/v1".length())).send());
    }

    @Test
    void a_duplicate_id_is_409_already_exists_033_03() {
        String id = registrationId();
        registered(vehicles(id));
        Checks.problem(register(vehicles(id)), 409, "AlreadyExists");
    }

    @Test
    void the_context_comes_from_the_link_header_in_application_json_033_04() {
        String id = registrationId();
        ObjectNode reg = Json.without(vehicles(id), "@context");
        Checks.status(api.post("/csourceRegistrations").json(reg).link(model).send(), 201);
        JsonNode r = Checks.okJson(api.get(path(id)).send());
        assertEquals(modelIri("Vehicle"), r.path("information").path(0).path("entities").path(0).path("type").asText());
    }

    @Test
    void application_json_with_a_context_in_the_body_is_400_033_06() {
        Checks.problem(api.post("/csourceRegistrations").json(vehicles(registrationId())).send(), 400, "BadRequestData");
    }

    @Test
    void ld_json_without_a_context_is_400_033_08() {
        Checks.problem(register(Json.without(vehicles(registrationId()), "@context")), 400, "BadRequestData");
    }

    @Test
    void ld_json_with_a_link_header_too_is_400_033_09() {
        Checks.problem(api.post("/csourceRegistrations").ldJson(vehicles(registrationId())).link(model).send(), 400,
                "BadRequestData");
    }

    /** Each case breaks one rule of § 5.2.9 / § 5.2.10 / § 5.2.8 / § 5.2.34 / § 4.20; each is BadRequestData (033_02, 033_10). */
    @ParameterizedTest
    @ValueSource(strings = {
        "{\"type\": \"Registration\"}",
        "{\"type\": null}",
        "{\"id\": \"not a uri\"}",
        "{\"information\": null}",
        "{\"information\": []}",
        "{\"information\": {}}",
        "{\"information\": [{}]}",
        "{\"information\": [{\"entities\": []}]}",
        "{\"information\": [{\"entities\": [{\"id\": \"urn:x:1\"}]}]}",
        "{\"information\": [{\"entities\": [{\"type\": \"Vehicle\", \"idPattern\": \"(\"}]}]}",
        "{\"information\": [{\"entities\": [{\"type\": \"Vehicle\", \"id\": \"no uri\"}]}]}",
        "{\"information\": [{\"entities\": [{\"type\": \"Vehicle\", \"color\": \"red\"}]}]}",
        "{\"information\": [{\"propertyNames\": \"speed\"}]}",
        "{\"information\": [{\"propertyNames\": [3]}]}",
        "{\"information\": [{\"colors\": [\"red\"]}]}",
        "{\"endpoint\": null}",
        "{\"endpoint\": 3}",
        "{\"endpoint\": \"not a uri\"}",
        "{\"endpoint\": \"ftp://example.org/x\"}",
        "{\"mode\": \"sometimes\"}",
        "{\"operations\": [\"retrieveEverything\"]}",
        "{\"operations\": []}",
        "{\"operations\": \"retrieveOps\"}",
        "{\"expiresAt\": \"2001-01-01T00:00:00Z\"}",
        "{\"expiresAt\": \"+123456-01-01T10:00Z\"}",
        "{\"expiresAt\": \"+999999999-12-31T23:59:59Z\"}",
        "{\"expiresAt\": \"2099-01-01T00:00:00+01:00\"}",
        "{\"expiresAt\": \"tomorrow\"}",
        "{\"management\": {\"timeout\": 0}}",
        "{\"management\": {\"cooldown\": -5}}",
        "{\"management\": {\"localOnly\": \"yes\"}}",
        "{\"management\": {\"retries\": 3}}",
        "{\"management\": \"fast\"}",
        "{\"contextSourceInfo\": [{\"key\": \"a b\", \"value\": \"x\"}]}",
        "{\"contextSourceInfo\": {\"key\": \"k\", \"value\": \"x\"}}",
        "{\"tenant\": \"\"}",
        "{\"scope\": \"no-slash\"}",
        "{\"location\": {\"type\": \"Point\", \"coordinates\": \"here\"}}",
        "{\"datasetId\": [\"not a uri\"]}",
        "{\"observationInterval\": {\"endAt\": \"2021-01-01T00:00:00Z\"}}",
        "{\"managementInterval\": {\"startAt\": \"yesterday\"}}"
    })
    void an_invalid_member_is_400_bad_request_data_033_02_033_10(String change) {
        ObjectNode reg = vehicles(registrationId());
        Json.obj(change).properties().forEach(m -> reg.set(m.getKey(), m.getValue()));
        Checks.problem(register(reg), 400, "BadRequestData");
    }

    @Test
    void id_takes_precedence_over_id_pattern_5_2_8() {
        String id = registrationId();
        ObjectNode reg = vehicles(id);
        reg.set("information", Json.arr("[{\"entities\": [{\"type\": \"Vehicle\", \"id\": \"urn:ngsi-ld:Vehicle:a\","
                + " \"idPattern\": \".*\"}]}]"));
        Checks.status(register(reg), 201);
    }

    @Test
    void mode_and_operations_are_kept_and_a_group_is_given_back_as_written_033_01_02() {
        String id = registrationId();
        ObjectNode reg = vehicles(id);
        reg.put("mode", "redirect");
        reg.set("operations", Json.arr("[\"queryEntity\", \"updateOps\"]"));
        reg.set("management", Json.obj("{\"timeout\": 1500, \"cooldown\": 10000, \"localOnly\": true}"));
        reg.put("tenant", "elsewhere");
        Checks.status(register(reg), 201);
        JsonNode r = Checks.okJson(api.get(path(id)).link(model).send());
        assertEquals("redirect", r.path("mode").asText());
        assertEquals(List.of("queryEntity", "updateOps"), Json.texts(r.path("operations")));
        assertEquals(1500, r.path("management").path("timeout").asInt());
        assertEquals("elsewhere", r.path("tenant").asText());
    }

    @Test
    void a_context_source_property_is_kept_and_compacted_back() {
        String id = registrationId();
        ObjectNode reg = vehicles(id);
        reg.put("brandName", "anything");
        Checks.status(register(reg), 201);
        assertEquals("anything", Checks.okJson(api.get(path(id)).link(model).send()).path("brandName").asText());
        assertEquals("anything", Checks.okJson(api.get(path(id)).send()).path(modelIri("brandName")).asText());
    }

    // ---------------------------------------------------------------- the modes' rules

    @Test
    void an_exclusive_registration_without_attributes_is_400_436_03_01() {
        ObjectNode reg = vehicles(registrationId());
        reg.put("mode", "exclusive");
        reg.set("information", Json.arr("[{\"entities\": [{\"type\": \"Vehicle\", \"id\": \"%s\"}]}]", Entities.id("Vehicle")));
        Checks.problem(register(reg), 400, "BadRequestData");
    }

    @Test
    void an_exclusive_registration_by_type_alone_or_by_pattern_is_400_436_03_02_03() {
        ObjectNode byType = vehicles(registrationId());
        byType.put("mode", "exclusive");
        Checks.problem(register(byType), 400, "BadRequestData");
        ObjectNode byPattern = vehicles(registrationId());
        byPattern.put("mode", "exclusive");
        byPattern.set("information", Json.arr("[{\"entities\": [{\"type\": \"Vehicle\", \"idPattern\": \".*\"}],"
                + " \"propertyNames\": [\"speed\"]}]"));
        Checks.problem(register(byPattern), 400, "BadRequestData");
    }

    @Test
    void an_auxiliary_registration_with_a_write_operation_is_400_5922_01_01() {
        ObjectNode reg = vehicles(registrationId());
        reg.put("mode", "auxiliary");
        reg.set("operations", Json.arr("[\"updateEntity\"]"));
        Checks.problem(register(reg), 400, "BadRequestData");
        reg.set("operations", Json.arr("[\"retrieveOps\"]"));
        Checks.status(register(reg), 201);
    }

    @Test
    void a_redirect_registration_over_an_entity_held_here_is_409_conflict_5922_01_02() {
        String tenant = freshTenant();
        String type = "Lorry";
        String entity = Entities.id(type);
        Checks.status(api.post("/entities").json(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"load\": {\"type\":"
                + " \"Property\", \"value\": 3}}", entity, type)).tenant(tenant).send(), 201);
        ObjectNode reg = Json.obj("""
                {"id": "%s", "type": "ContextSourceRegistration", "mode": "redirect",
                 "information": [{"entities": [{"type": "%s"}]}], "endpoint": "http://127.0.0.1:9/source"}""",
                registrationId(), type);
        Checks.problem(api.post("/csourceRegistrations").json(reg).tenant(tenant).send(), 409, "Conflict");
        // of another type, no entity here: no conflict
        reg.set("information", Json.arr("[{\"entities\": [{\"type\": \"Van\"}]}]"));
        Checks.status(api.post("/csourceRegistrations").json(reg).tenant(tenant).send(), 201);
    }

    @Test
    void an_exclusive_registration_over_an_attribute_held_here_is_409_conflict_5922_01_03() {
        String tenant = freshTenant();
        String vehicle = Entities.id("Vehicle");
        Checks.status(api.post("/entities").ldJson(Entities.withContext(Entities.vehicle(vehicle), model)).tenant(tenant)
                .send(), 201);
        ObjectNode reg = vehicles(registrationId());
        reg.put("mode", "exclusive");
        reg.set("information", Json.arr("[{\"entities\": [{\"type\": \"Vehicle\", \"id\": \"%s\"}],"
                + " \"propertyNames\": [\"speed\"]}]", vehicle));
        Checks.problem(registerIn(tenant, reg), 409, "Conflict");
        // an attribute the entity does not have is no conflict
        reg.set("information", Json.arr("[{\"entities\": [{\"type\": \"Vehicle\", \"id\": \"%s\"}],"
                + " \"propertyNames\": [\"fuelLevel\"]}]", vehicle));
        Checks.status(registerIn(tenant, reg), 201);
    }

    @Test
    void a_second_exclusive_registration_of_the_same_attribute_is_409_conflict_4_3_6_3() {
        String vehicle = Entities.id("Vehicle");
        ObjectNode first = vehicles(registrationId());
        first.put("mode", "exclusive");
        first.set("information", Json.arr("[{\"entities\": [{\"type\": \"Vehicle\", \"id\": \"%s\"}],"
                + " \"propertyNames\": [\"speed\", \"brandName\"]}]", vehicle));
        String tenant = freshTenant();
        Checks.status(registerIn(tenant, first), 201);
        ObjectNode second = first.deepCopy();
        second.put("id", registrationId());
        second.set("information", Json.arr("[{\"entities\": [{\"type\": \"Vehicle\", \"id\": \"%s\"}],"
                + " \"propertyNames\": [\"speed\"]}]", vehicle));
        Checks.problem(registerIn(tenant, second), 409, "Conflict");
        // a redirect one over the exclusive one's attributes too
        ObjectNode redirect = vehicles(registrationId());
        redirect.put("mode", "redirect");
        Checks.problem(registerIn(tenant, redirect), 409, "Conflict");
        // an inclusive one never conflicts, nor an exclusive one for another attribute
        Checks.status(registerIn(tenant, vehicles(registrationId())), 201);
        second.set("information", Json.arr("[{\"entities\": [{\"type\": \"Vehicle\", \"id\": \"%s\"}],"
                + " \"propertyNames\": [\"fuelLevel\"]}]", vehicle));
        Checks.status(registerIn(tenant, second), 201);
    }

    // ---------------------------------------------------------------- retrieve and delete

    @Test
    void retrieving_an_unknown_registration_is_404_036_02() {
        Checks.problem(api.get(path(registrationId())).send(), 404, "ResourceNotFound");
    }

    @ParameterizedTest
    @ValueSource(strings = {"invalidURI", "urn"})
    void retrieving_by_an_id_that_is_no_uri_is_400_036_01(String id) {
        Checks.problem(api.get(path(id)).send(), 400, "BadRequestData");
    }

    @Test
    void delete_answers_204_and_the_registration_is_gone_035_01() {
        String id = registrationId();
        registered(vehicles(id));
        Checks.noContent(api.delete(path(id)).send());
        Checks.problem(api.get(path(id)).send(), 404, "ResourceNotFound");
    }

    @Test
    void deleting_an_unknown_registration_is_404_035_03() {
        Checks.problem(api.delete(path(registrationId())).send(), 404, "ResourceNotFound");
    }

    @Test
    void deleting_by_an_id_that_is_no_uri_is_400_035_02() {
        Checks.problem(api.delete(path("invalidURI")).send(), 400, "BadRequestData");
    }

    @Test
    void registrations_are_per_tenant_4_14() {
        String id = registrationId();
        String tenant = "t" + Math.abs(id.hashCode());
        Checks.status(api.post("/csourceRegistrations").ldJson(vehicles(id)).tenant(tenant).send(), 201);
        Checks.okJson(api.get(path(id)).tenant(tenant).send());
        Checks.problem(api.get(path(id)).send(), 404, "ResourceNotFound");
    }

    @Test
    void a_method_the_resource_does_not_take_is_405_034_06() {
        Answer a = api.put("/csourceRegistrations/" + registrationId()).json(Json.obj("{}")).send();
        assertEquals(405, a.status());
    }

    // ---------------------------------------------------------------- update (§ 5.9.3)

    @Test
    void update_merges_the_fragments_members_and_keeps_the_others_034_01() {
        String id = registrationId();
        registered(vehicles(id));
        ObjectNode fragment = Json.obj("""
                {"endpoint": "http://127.0.0.1:9/elsewhere", "registrationName": "fleet",
                 "information": [{"entities": [{"type": "Vehicle"}], "propertyNames": ["fuelLevel"]}],
                 "@context": "%s"}""", model);
        Checks.noContent(api.patch(path(id)).ldJson(fragment).send());
        JsonNode r = Checks.okJson(api.get(path(id)).link(model).query("options", "sysAttrs").send());
        assertEquals("http://127.0.0.1:9/elsewhere", r.path("endpoint").asText());
        assertEquals("fleet", r.path("registrationName").asText());
        assertEquals(List.of("fuelLevel"), Json.texts(r.path("information").path(0).path("propertyNames")));
        assertTrue(r.path("modifiedAt").asText().compareTo(r.path("createdAt").asText()) >= 0, r.toString());
    }

    @Test
    void update_with_a_null_member_removes_it_and_a_mandatory_one_is_400_034_02_03() {
        String id = registrationId();
        ObjectNode reg = vehicles(id);
        reg.put("registrationName", "fleet");
        registered(reg);
        Checks.noContent(api.patch(path(id)).json(Json.obj("{\"registrationName\": null}")).send());
        assertFalse(Checks.okJson(api.get(path(id)).send()).has("registrationName"));
        Checks.problem(api.patch(path(id)).json(Json.obj("{\"information\": null}")).send(), 400, "BadRequestData");
        Checks.problem(api.patch(path(id)).json(Json.obj("{\"endpoint\": null}")).send(), 400, "BadRequestData");
        // the failed updates changed nothing
        assertEquals("http://127.0.0.1:9/source", Checks.okJson(api.get(path(id)).send()).path("endpoint").asText());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{}",
        "{\"type\": \"Subscription\"}",
        "{\"id\": \"urn:ngsi-ld:ContextSourceRegistration:other\"}",
        "{\"mode\": \"sometimes\"}",
        "{\"expiresAt\": \"2001-01-01T00:00:00Z\"}",
        "{\"operations\": [\"nothing\"]}"
    })
    void an_invalid_fragment_is_400_034_02_034_04(String fragment) {
        String id = registrationId();
        registered(vehicles(id));
        Checks.problem(api.patch(path(id)).json(Json.obj(fragment)).send(), 400, "BadRequestData");
    }

    @Test
    void updating_an_unknown_registration_is_404_034_03() {
        Checks.problem(api.patch(path(registrationId())).json(Json.obj("{\"registrationName\": \"x\"}")).send(), 404,
                "ResourceNotFound");
    }

    @Test
    void updating_by_an_id_that_is_no_uri_is_400_034_02_01() {
        Checks.problem(api.patch(path("invalidURI")).json(Json.obj("{\"registrationName\": \"x\"}")).send(), 400,
                "BadRequestData");
    }

    @Test
    void updating_to_exclusive_over_an_attribute_held_here_is_409_and_changes_nothing_5_9_3_4() {
        String tenant = freshTenant();
        String vehicle = Entities.id("Vehicle");
        Checks.status(api.post("/entities").ldJson(Entities.withContext(Entities.vehicle(vehicle), model)).tenant(tenant)
                .send(), 201);
        String id = registrationId();
        ObjectNode reg = vehicles(id);
        reg.set("information", Json.arr("[{\"entities\": [{\"type\": \"Vehicle\", \"id\": \"%s\"}],"
                + " \"propertyNames\": [\"speed\"]}]", vehicle));
        Checks.status(registerIn(tenant, reg), 201);
        Checks.problem(api.patch(path(id)).json(Json.obj("{\"mode\": \"exclusive\"}")).tenant(tenant).send(), 409,
                "Conflict");
        assertFalse(Checks.okJson(api.get(path(id)).tenant(tenant).send()).has("mode"));
    }
}
