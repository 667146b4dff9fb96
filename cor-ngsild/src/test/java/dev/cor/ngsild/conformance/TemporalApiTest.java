package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * The temporal API over real sockets (ETSI GS CIM 009 V1.8 § 5.6.11-5.6.16, § 5.7.3-5.7.4, § 4.11,
 * bound in § 6.18-6.22), each case naming its clause and the ETSI suite's test purpose where one
 * exists: the provision of instances, the history every write of the current state records, the
 * reads with their windows and representations, and their errors.
 */
class TemporalApiTest extends ConformanceTest {

    /** The suite's 2020-08-vehicle-temporal-representation.jsonld, with {@code id}. */
    private static JsonNode vehicle(String id) {
        return Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "speed": [{"type": "Property", "value": 120, "observedAt": "2020-08-01T12:03:00Z"},
                           {"type": "Property", "value": 80, "observedAt": "2020-08-01T12:05:00Z"},
                           {"type": "Property", "value": 100, "observedAt": "2020-08-01T12:07:00Z"}],
                 "fuelLevel": [{"type": "Property", "value": 67, "observedAt": "2020-08-01T12:03:00Z"},
                               {"type": "Property", "value": 53, "observedAt": "2020-08-01T13:05:00Z"},
                               {"type": "Property", "value": 40, "observedAt": "2020-08-01T14:07:00Z"}]}""", id);
    }

    private static Answer retrieve(String tenant, String id, String... params) {
        Ngsi.Request r = api.get("/temporal/entities/" + id);
        if (tenant != null) {
            r.tenant(tenant);
        }
        for (int i = 0; i < params.length; i += 2) {
            r.query(params[i], params[i + 1]);
        }
        return r.send();
    }

    private static Answer query(String tenant, String... params) {
        Ngsi.Request r = api.get("/temporal/entities");
        if (tenant != null) {
            r.tenant(tenant);
        }
        for (int i = 0; i < params.length; i += 2) {
            r.query(params[i], params[i + 1]);
        }
        return r.send();
    }

    private static List<String> observedAts(JsonNode instances) {
        List<String> out = new ArrayList<>();
        instances.forEach(i -> out.add(i.path("observedAt").asText()));
        return out;
    }

    private static List<Integer> values(JsonNode instances) {
        List<Integer> out = new ArrayList<>();
        instances.forEach(i -> out.add(i.path("value").asInt()));
        return out;
    }

    /** A fresh tenant holding the suite's vehicle; its id. */
    private static String vehicleIn(String tenant) {
        String id = Entities.id("Vehicle");
        Answer created = api.post("/temporal/entities").tenant(tenant).json(vehicle(id)).send();
        Checks.status(created, 201);
        assertEquals("/ngsi-ld/v1/temporal/entities/" + id, created.header("Location"), created::toString);
        return id;
    }

    // ---------------------------------------------------------------- provision

    @Test
    void creating_an_evolution_answers_201_then_adding_to_it_204_and_retrieving_shows_every_instance_in_time_order_007_01_020_01() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        JsonNode e = Checks.okJson(retrieve(tenant, id));
        assertEquals(id, e.path("id").asText());
        assertEquals("Vehicle", e.path("type").asText());
        assertEquals(List.of(120, 80, 100), values(e.path("speed")), e::toString);
        assertEquals(List.of("2020-08-01T12:03:00Z", "2020-08-01T12:05:00Z", "2020-08-01T12:07:00Z"),
                observedAts(e.path("speed")));
        Set<String> ids = new HashSet<>();
        e.path("speed").forEach(i -> ids.add(i.path("instanceId").asText()));
        e.path("fuelLevel").forEach(i -> ids.add(i.path("instanceId").asText()));
        assertEquals(6, ids.size(), "every instance has an id of its own: " + e);
        ids.forEach(i -> assertTrue(i.startsWith("urn:ngsi-ld:attribute:instance:"), i));

        // more of it: 204, and the instances are added (an evolution is a history, not a state)
        Checks.noContent(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "speed": {"type": "Property", "value": 90, "observedAt": "2020-08-01T12:04:00Z"}}""", id)).send());
        JsonNode again = Checks.okJson(retrieve(tenant, id, "attrs", "speed"));
        assertEquals(List.of(120, 90, 80, 100), values(again.path("speed")), "ordered by observedAt: " + again);
        assertFalse(again.has("fuelLevel"), "attrs shows only speed: " + again);
    }

    @Test
    void an_instance_provided_again_for_the_same_observation_replaces_it_008_01() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        String first = Checks.okJson(retrieve(tenant, id)).path("speed").path(0).path("instanceId").asText();
        Checks.noContent(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "speed": [{"type": "Property", "value": 121, "observedAt": "2020-08-01T12:03:00Z"},
                           {"type": "Property", "value": 80, "observedAt": "2020-08-01T12:05:00Z"},
                           {"type": "Property", "value": 7, "observedAt": "2020-08-01T12:03:00Z", "datasetId": "urn:ngsi-ld:d:1"}]}""",
                id)).send());
        JsonNode speed = Checks.okJson(retrieve(tenant, id)).path("speed");
        assertEquals(List.of(121, 7, 80, 100), values(speed), "replaced, not doubled; another datasetId is another: " + speed);
        assertEquals(first, speed.path(0).path("instanceId").asText(), "the replaced instance keeps its id");
    }

    @Test
    void an_upsert_may_carry_a_deleted_instance_and_unions_the_types_5611_01_01() {
        // § 4.5.7 and § 5.2.1: the temporal evolution represents a deleted attribute instance with
        // the NGSI-LD Null as its value, so Create or Update Temporal Evolution (§ 5.6.11) takes it;
        // it is recorded as a deletion at its observedAt
        String tenant = Entities.tenant();
        String id = Entities.id("Vehicle");
        Checks.status(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "speed": [{"type": "Property", "value": 1, "observedAt": "2026-01-01T00:00:00Z"}]}""", id)).send(), 201);
        Checks.noContent(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": ["Vehicle", "Truck"],
                 "speed": [{"type": "Property", "value": "urn:ngsi-ld:null", "observedAt": "2026-01-02T00:00:00Z"}]}""",
                id)).send());
        JsonNode e = Checks.okJson(retrieve(tenant, id, "timerel", "before", "timeAt", "2030-01-01T00:00:00Z"));
        assertEquals(Json.arr("""
                ["Vehicle", "Truck"]"""), e.path("type"), e::toString);
        JsonNode speed = e.path("speed");
        assertEquals(2, speed.size(), e::toString);
        assertEquals(1, speed.path(0).path("value").asInt(), e::toString);
        assertEquals("urn:ngsi-ld:null", speed.path(1).path("value").asText(), e::toString);
        assertEquals("2026-01-02T00:00:00Z", speed.path(1).path("observedAt").asText(), e::toString);
        assertTrue(speed.path(1).has("deletedAt"), e::toString);
        // the Null still stands nowhere else: not as an attribute, not inside a value
        Checks.problem(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Vehicle", "speed": "urn:ngsi-ld:null"}""", id)).send(), 400, "BadRequestData");
        Checks.problem(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "speed": [{"type": "Property", "value": {"a": "urn:ngsi-ld:null"}, "observedAt": "2026-01-03T00:00:00Z"}]}""",
                id)).send(), 400, "BadRequestData");
    }

    @Test
    void a_first_level_member_that_is_the_ngsi_ld_null_is_bad_data_and_nothing_is_stored_5611_01_02() {
        // § 5.5.4: the NGSI-LD Null stands as a first-level member only in a fragment of a partial
        // update or merge; expiresAt, a member cor reads and keeps no value of, is no exception
        String tenant = Entities.tenant();
        String id = Entities.id("Vehicle");
        Checks.problem(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Vehicle", "expiresAt": "urn:ngsi-ld:null",
                 "speed": [{"type": "Property", "value": 1, "observedAt": "2026-01-01T00:00:00Z"}]}""", id)).send(), 400,
                "BadRequestData");
        Checks.problem(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Vehicle", "expiresAt": "urn:ngsi-ld:null",
                 "speed": {"type": "Property", "value": 1}}""", id)).send(), 400, "BadRequestData");
        Checks.status(retrieve(tenant, id, "timerel", "before", "timeAt", "2030-01-01T00:00:00Z"), 404);
    }

    @Test
    void add_attributes_needs_an_evolution_and_adds_its_instances_014_01() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        Checks.noContent(api.post("/temporal/entities/" + id + "/attrs").tenant(tenant).json(Json.obj("""
                {"heading": [{"type": "Property", "value": 10, "observedAt": "2020-08-01T12:03:00Z"},
                             {"type": "Property", "value": 20, "observedAt": "2020-08-01T12:04:00Z"}]}""")).send());
        assertEquals(List.of(10, 20), values(Checks.okJson(retrieve(tenant, id)).path("heading")));
        Checks.problem(api.post("/temporal/entities/urn:ngsi-ld:Vehicle:none/attrs").tenant(tenant).json(Json.obj("""
                {"heading": {"type": "Property", "value": 1}}""")).send(), 404, "ResourceNotFound");
    }

    @Test
    void an_evolution_without_id_or_type_or_with_an_offset_time_is_bad_data_007_02_5744_01_03() {
        Checks.badData(api.post("/temporal/entities").json(Json.obj("""
                {"type": "Vehicle", "speed": {"type": "Property", "value": 1}}""")).send(), "id");
        Checks.badData(api.post("/temporal/entities").json(Json.obj("""
                {"id": "urn:ngsi-ld:Vehicle:t1", "speed": {"type": "Property", "value": 1}}""")).send(), "type");
        Checks.problem(api.post("/temporal/entities").json(Json.obj("""
                {"id": "urn:ngsi-ld:Vehicle:t2", "type": "Vehicle",
                 "speed": [{"type": "Property", "value": 50, "observedAt": "2026-03-01T02:00:00+03:00"}]}""")).send(), 400,
                "BadRequestData");
    }

    @Test
    void deleting_an_attribute_then_the_evolution_015_01_009_01() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        Checks.noContent(api.delete("/temporal/entities/" + id + "/attrs/speed").tenant(tenant).send());
        JsonNode e = Checks.okJson(retrieve(tenant, id));
        assertFalse(e.has("speed"), e::toString);
        assertEquals(3, e.path("fuelLevel").size());
        Checks.problem(api.delete("/temporal/entities/" + id + "/attrs/speed").tenant(tenant).send(), 404, "ResourceNotFound");
        Checks.noContent(api.delete("/temporal/entities/" + id).tenant(tenant).send());
        Checks.problem(retrieve(tenant, id), 404, "ResourceNotFound");
        Checks.problem(api.delete("/temporal/entities/" + id).tenant(tenant).send(), 404, "ResourceNotFound");
    }

    @Test
    void one_instance_is_modified_or_deleted_by_its_instance_id_5_6_15_5_6_16() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        JsonNode speed = Checks.okJson(retrieve(tenant, id)).path("speed");
        String second = speed.path(1).path("instanceId").asText();
        Checks.noContent(api.patch("/temporal/entities/" + id + "/attrs/speed/" + second).tenant(tenant).json(Json.obj("""
                {"type": "Property", "value": 81, "observedAt": "2020-08-01T12:05:00Z"}""")).send());
        JsonNode after = Checks.okJson(retrieve(tenant, id, "options", "sysAttrs")).path("speed");
        assertEquals(List.of(120, 81, 100), values(after));
        assertEquals(second, after.path(1).path("instanceId").asText(), "the instance keeps its id");
        assertEquals(speed.path(1).path("createdAt").isMissingNode() ? after.path(0).path("createdAt").asText()
                : speed.path(1).path("createdAt").asText(), after.path(1).path("createdAt").asText(),
                "and when it was recorded: " + after);
        assertTrue(after.path(1).path("modifiedAt").asText().compareTo(after.path(1).path("createdAt").asText()) >= 0, after::toString);
        Checks.noContent(api.delete("/temporal/entities/" + id + "/attrs/speed/" + second).tenant(tenant).send());
        assertEquals(List.of(120, 100), values(Checks.okJson(retrieve(tenant, id)).path("speed")));
        Checks.problem(api.delete("/temporal/entities/" + id + "/attrs/speed/" + second).tenant(tenant).send(), 404,
                "ResourceNotFound");
        Checks.problem(api.delete("/temporal/entities/" + id + "/attrs/speed/not%20a%20uri").tenant(tenant).send(), 400,
                "BadRequestData");
    }

    // ---------------------------------------------------------------- the history of the current state

    @Test
    void every_write_of_the_current_state_is_recorded_and_a_deletion_says_when() {
        String tenant = Entities.tenant();
        String id = Entities.id("Sensor");
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Sensor", "temperature": {"type": "Property", "value": 20}}""", id)).send(), 201);
        Checks.noContent(api.patch("/entities/" + id + "/attrs").tenant(tenant).json(Json.obj("""
                {"temperature": {"type": "Property", "value": 21}}""")).send());
        Checks.noContent(api.patch("/entities/" + id + "/attrs/temperature").tenant(tenant).json(Json.obj("""
                {"value": 22}""")).send());
        Checks.noContent(api.delete("/entities/" + id + "/attrs/temperature").tenant(tenant).send());
        JsonNode e = Checks.okJson(retrieve(tenant, id, "timeproperty", "modifiedAt", "options", "sysAttrs"));
        JsonNode t = e.path("temperature");
        assertEquals(4, t.size(), e::toString);
        assertEquals(List.of(20, 21, 22), values(t).subList(0, 3));
        assertEquals("urn:ngsi-ld:null", t.path(3).path("value").asText(), "the deletion's instance: " + t);
        assertTrue(t.path(3).has("deletedAt"), t::toString);
        assertFalse(t.path(2).has("deletedAt"), t::toString);
        Checks.noContent(api.delete("/entities/" + id).tenant(tenant).send());
        assertTrue(Checks.okJson(retrieve(tenant, id, "options", "sysAttrs")).has("deletedAt"),
                "the evolution of a deleted entity says when it was deleted");
    }

    @Test
    void sixteen_clients_writing_one_entity_leave_every_write_once_in_the_order_it_was_applied() throws Exception {
        String tenant = Entities.tenant();
        String id = Entities.id("Counter");
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Counter", "n": {"type": "Property", "value": -1}}""", id)).send(), 201);
        int clients = 16;
        int writes = 25;
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failed = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int c = 0; c < clients; c++) {
            int client = c;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    Ngsi own = new Ngsi(broker.baseUrl());
                    for (int k = 0; k < writes; k++) {
                        Checks.noContent(own.patch("/entities/" + id + "/attrs/n").tenant(tenant).json(Json.obj("""
                                {"value": %d}""", client * 1000 + k)).send());
                    }
                } catch (Throwable t) {
                    failed.add(t);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(List.of(), failed);
        JsonNode n = Checks.okJson(retrieve(tenant, id, "timeproperty", "createdAt")).path("n");
        List<Integer> history = values(n);
        assertEquals(1 + clients * writes, history.size(), "every write once");
        assertEquals(Set.copyOf(history).size(), history.size(), "no write twice");
        int[] lastOf = new int[clients];
        java.util.Arrays.fill(lastOf, -1);
        for (int v : history.subList(1, history.size())) {
            int client = v / 1000;
            assertTrue(v % 1000 > lastOf[client], "client " + client + "'s writes in their order: " + history);
            lastOf[client] = v % 1000;
        }
        int current = Checks.okJson(api.get("/entities/" + id).tenant(tenant).send()).path("n").path("value").asInt();
        assertEquals(current, history.get(history.size() - 1), "the history ends with the current state");
    }

    // ---------------------------------------------------------------- windows (§ 4.11)

    @Test
    void after_is_inclusive_before_exclusive_between_half_open_whatever_the_spelling_021_26() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        assertEquals(List.of("2020-08-01T12:05:00Z", "2020-08-01T12:07:00Z"), observedAts(Checks.okJson(retrieve(tenant, id,
                "timerel", "after", "timeAt", "2020-08-01T12:05:00.000Z", "attrs", "speed")).path("speed")));
        assertEquals(List.of("2020-08-01T12:03:00Z"), observedAts(Checks.okJson(retrieve(tenant, id,
                "timerel", "before", "timeAt", "2020-08-01T12:05:00Z", "attrs", "speed")).path("speed")));
        assertEquals(List.of("2020-08-01T12:03:00Z"), observedAts(Checks.okJson(retrieve(tenant, id,
                "timerel", "between", "timeAt", "2020-08-01T12:03:00Z", "endTimeAt", "2020-08-01T12:05:00Z", "attrs", "speed"))
                .path("speed")));
    }

    @Test
    void last_n_gives_the_latest_instances_oldest_first_020_03() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        JsonNode e = Checks.okJson(retrieve(tenant, id, "lastN", "2"));
        assertEquals(List.of(80, 100), values(e.path("speed")));
        assertEquals(List.of(53, 40), values(e.path("fuelLevel")));
    }

    @Test
    void malformed_windows_and_parameters_are_bad_data_021_26_07_to_09() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        Checks.problem(retrieve(tenant, id, "timerel", "during", "timeAt", "2020-08-01T12:05:00Z"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "timerel", "between", "timeAt", "2020-08-01T12:05:00Z"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "timerel", "after", "timeAt", "2020-08-01"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "timerel", "after"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "timeAt", "2020-08-01T12:05:00Z"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "lastN", "0"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "lastN", "-3"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "timeproperty", "seenAt"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "options", "fancy"), 400, "InvalidRequest");
        Checks.problem(retrieve(tenant, "urn:ngsi-ld:Vehicle:nobody"), 404, "ResourceNotFound");
    }

    // ---------------------------------------------------------------- representations

    @Test
    void temporal_values_pairs_each_value_with_its_time_020_08() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        JsonNode e = Checks.okJson(retrieve(tenant, id, "options", "temporalValues", "attrs", "speed"));
        assertEquals("Property", e.path("speed").path("type").asText(), e::toString);
        assertEquals(Json.arr("""
                [[120, "2020-08-01T12:03:00Z"], [80, "2020-08-01T12:05:00Z"], [100, "2020-08-01T12:07:00Z"]]"""),
                e.path("speed").path("values"));
        assertEquals(e, Checks.okJson(retrieve(tenant, id, "format", "temporalValues", "attrs", "speed")),
                "format=temporalValues is options=temporalValues");
    }

    @Test
    void aggregated_values_give_each_method_its_periods_020_11() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        JsonNode e = Checks.okJson(retrieve(tenant, id, "options", "aggregatedValues", "aggrMethods", "avg,max",
                "aggrPeriodDuration", "PT1H"));
        assertEquals(Json.obj("""
                {"type": "Property", "avg": [[100.0, "2020-08-01T12:03:00Z", "2020-08-01T13:03:00Z"]],
                 "max": [[120.0, "2020-08-01T12:03:00Z", "2020-08-01T13:03:00Z"]]}"""), e.path("speed"), e::toString);
        assertEquals(Json.arr("""
                [[67.0, "2020-08-01T12:03:00Z", "2020-08-01T13:03:00Z"], [53.0, "2020-08-01T13:03:00Z", "2020-08-01T14:03:00Z"],
                 [40.0, "2020-08-01T14:03:00Z", "2020-08-01T15:03:00Z"]]"""), e.path("fuelLevel").path("avg"));
        Checks.problem(retrieve(tenant, id, "options", "aggregatedValues"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "options", "aggregatedValues", "aggrMethods", "median"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "options", "aggregatedValues", "aggrMethods", "avg", "aggrPeriodDuration", "1 hour"),
                400, "BadRequestData");
    }

    @Test
    void pick_and_omit_shape_the_evolution_and_leaving_nothing_is_404_020_21_020_22_020_23() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        JsonNode picked = Checks.okJson(retrieve(tenant, id, "pick", "speed"));
        assertEquals(List.of("speed"), fieldNames(picked), picked::toString);
        JsonNode omitted = Checks.okJson(retrieve(tenant, id, "omit", "type,speed"));
        assertEquals(List.of("id", "fuelLevel"), fieldNames(omitted), omitted::toString);
        Checks.problem(retrieve(tenant, id, "pick", "speed", "omit", "speed"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "pick", "speed", "attrs", "fuelLevel"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, id, "pick", "unknown"), 404, "ResourceNotFound");
        Checks.problem(retrieve(tenant, id, "omit", "id,type,fuelLevel,speed"), 404, "ResourceNotFound");
    }

    private static List<String> fieldNames(JsonNode n) {
        List<String> out = new ArrayList<>();
        n.fieldNames().forEachRemaining(out::add);
        return out;
    }

    @Test
    void temporal_values_wrap_language_json_and_vocab_values_and_keep_lists_bare_020_12_020_15_020_16_459_01() {
        String tenant = Entities.tenant();
        String id = Entities.id("Vehicle");
        Checks.status(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "street": {"type": "LanguageProperty", "languageMap": {"fr": "Grand Place"}, "observedAt": "2020-08-01T12:03:00Z"},
                 "shape": {"type": "JsonProperty", "json": {"value": 120}, "observedAt": "2020-08-01T12:03:00Z"},
                 "category": {"type": "VocabProperty", "vocab": "monument", "observedAt": "2020-08-01T12:03:00Z"},
                 "route": {"type": "ListRelationship", "objectList": ["urn:ngsi-ld:Road:1", "urn:ngsi-ld:Road:2"],
                           "observedAt": "2020-08-01T12:03:00Z"},
                 "depths": {"type": "ListProperty", "valueList": [1.2, 3.4], "observedAt": "2020-08-01T12:03:00Z"}}""", id))
                .send(), 201);
        JsonNode e = Checks.okJson(retrieve(tenant, id, "options", "temporalValues"));
        assertEquals(Json.arr("""
                [[{"languageMap": {"fr": "Grand Place"}}, "2020-08-01T12:03:00Z"]]"""), e.path("street").path("languageMaps"), e::toString);
        assertEquals(Json.arr("""
                [[{"json": {"value": 120}}, "2020-08-01T12:03:00Z"]]"""), e.path("shape").path("jsons"), e::toString);
        assertEquals(Json.arr("""
                [[{"vocab": "monument"}, "2020-08-01T12:03:00Z"]]"""), e.path("category").path("vocabs"), e::toString);
        assertEquals(Json.arr("""
                [[["urn:ngsi-ld:Road:1", "urn:ngsi-ld:Road:2"], "2020-08-01T12:03:00Z"]]"""), e.path("route").path("objectLists"),
                e::toString);
        assertEquals(Json.arr("""
                [[[1.2, 3.4], "2020-08-01T12:03:00Z"]]"""), e.path("depths").path("valueLists"), e::toString);
        Checks.problem(retrieve(tenant, id, "pick", "route{name}"), 400, "BadRequestData"); // 5731_01: no linked entities here
    }

    @Test
    void a_temporal_read_runs_as_a_coroutine_of_its_loop_which_it_lets_serve_others_in_between() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        long before = broker.server().coroutineCount();
        Checks.okJson(retrieve(tenant, id));
        Checks.okJson(query(tenant, "type", "Vehicle"));
        assertEquals(before + 2, broker.server().coroutineCount(), "a long history is read in slices, yielding between them");
    }

    @Test
    void an_ld_json_answer_carries_the_context_in_its_body() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        Answer a = api.get("/temporal/entities/" + id).tenant(tenant).accept(Ngsi.LD_JSON).send();
        Checks.status(a, 200);
        assertTrue(a.json().has("@context"), a::toString);
    }

    // ---------------------------------------------------------------- queries (§ 5.7.4)

    @Test
    void a_query_selects_by_type_and_window_021_05() {
        String tenant = Entities.tenant();
        String one = vehicleIn(tenant);
        String two = vehicleIn(tenant);
        Checks.status(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "urn:ngsi-ld:Bus:1", "type": "Bus", "speed": {"type": "Property", "value": 1,
                 "observedAt": "2020-08-01T12:03:00Z"}}""")).send(), 201);
        JsonNode all = Checks.okJson(query(tenant, "type", "Vehicle", "timerel", "after", "timeAt", "2020-08-01T12:06:00Z"));
        assertEquals(2, all.size(), all::toString);
        Set<String> ids = new HashSet<>();
        all.forEach(e -> ids.add(e.path("id").asText()));
        assertEquals(Set.of(one, two), ids);
        all.forEach(e -> assertEquals(List.of(100), values(e.path("speed")), e::toString));
        assertEquals(0, Checks.okJson(query(tenant, "type", "Vehicle", "timerel", "after", "timeAt", "2021-01-01T00:00:00Z"))
                .size(), "an entity without an instance in the window is not in the answer");
    }

    @Test
    void q_holds_when_an_instance_of_the_window_satisfies_it_5744_01_01() {
        String tenant = Entities.tenant();
        Checks.status(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "urn:ngsi-ld:Vehicle:fast", "type": "Vehicle",
                 "speed": [{"type": "Property", "value": 30, "observedAt": "2026-03-01T12:00:00Z"}]}""")).send(), 201);
        Checks.status(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "urn:ngsi-ld:Vehicle:slow", "type": "Vehicle",
                 "speed": [{"type": "Property", "value": 80, "observedAt": "2026-01-05T00:00:00Z"},
                           {"type": "Property", "value": 10, "observedAt": "2026-03-01T12:00:00Z"}]}""")).send(), 201);
        JsonNode hit = Checks.okJson(query(tenant, "type", "Vehicle", "q", "speed>25", "timerel", "between",
                "timeAt", "2026-03-01T00:00:00Z", "endTimeAt", "2026-03-02T00:00:00Z"));
        assertEquals(1, hit.size(), hit::toString);
        assertEquals("urn:ngsi-ld:Vehicle:fast", hit.path(0).path("id").asText());
        assertFalse(hit.toString().contains("2026-01-05"), "only the window's instances are shown: " + hit);
    }

    @Test
    void a_query_orders_by_id_either_way_and_pages_in_that_order_021_23_02_03() {
        String tenant = Entities.tenant();
        List<String> ids = new ArrayList<>();
        for (String n : List.of("c", "a", "e", "b", "d")) {
            String id = "urn:ngsi-ld:Vehicle:" + n;
            Checks.status(api.post("/temporal/entities").tenant(tenant).json(vehicle(id)).send(), 201);
            ids.add(id);
        }
        List<String> ascending = ids.stream().sorted().toList();
        List<String> descending = ascending.reversed();
        String[] window = {"type", "Vehicle", "timerel", "after", "timeAt", "2020-01-01T00:00:00Z"};
        assertEquals(ascending, idsOf(query(tenant, with(window, "orderBy", "id"))));
        assertEquals(ascending, idsOf(query(tenant, with(window, "orderBy", "id;asc"))));
        assertEquals(descending, idsOf(query(tenant, with(window, "orderBy", "id;desc"))));
        assertEquals(descending.subList(1, 3), idsOf(query(tenant, with(window, "orderBy", "id;desc", "offset", "1", "limit", "2"))),
                "a page of a descending answer is the next ids down");
    }

    @Test
    void a_query_orders_by_id_alone_anything_else_is_bad_data_021_23_5741_01_06() {
        String[] window = {"type", "Vehicle", "timerel", "after", "timeAt", "2020-01-01T00:00:00Z"};
        for (String orderBy : List.of("name", "createdAt", "name.subProperty", "id,name", "id;sideways", "")) {
            Checks.badData(query(null, with(window, "orderBy", orderBy)), "orderBy");
        }
    }

    private static String[] with(String[] params, String... more) {
        String[] all = java.util.Arrays.copyOf(params, params.length + more.length);
        System.arraycopy(more, 0, all, params.length, more.length);
        return all;
    }

    private static List<String> idsOf(Answer a) {
        List<String> out = new ArrayList<>();
        Checks.okJson(a).forEach(e -> out.add(e.path("id").asText()));
        return out;
    }

    @Test
    void a_query_needs_a_bound_ids_alone_are_not_one_021_12_021_24() {
        Checks.problem(query(null, "timerel", "after", "timeAt", "2020-07-01T12:05:00Z"), 400, "BadRequestData");
        Checks.problem(query(null, "id", "urn:ngsi-ld:Entity:01,urn:ngsi-ld:Entity:02", "timerel", "after",
                "timeAt", "2020-07-01T12:05:00Z"), 400, "BadRequestData");
    }

    @Test
    void a_q_on_linked_entities_and_a_malformed_csf_are_bad_data_on_a_temporal_query_5741_01_03_05() {
        // § 5.7.4.4: a temporal query reads no linked entities (as pick and omit, 5731_01), so a q term
        // on one (4.9, rel{attr}) cannot be answered; csf is checked as the entities query checks it
        // (§ 4.9, 6.3.18: BadRequestData when malformed)
        String tenant = Entities.tenant();
        vehicleIn(tenant);
        Checks.problem(query(tenant, "type", "Vehicle", "timerel", "after", "timeAt", "2020-01-01T00:00:00Z",
                "q", "owner{name}==\"x\""), 400, "BadRequestData");
        Checks.problem(api.post("/temporal/entityOperations/query").tenant(tenant).json(Json.obj("""
                {"type": "Query", "entities": [{"type": "Vehicle"}], "q": "owner{name}==\\"x\\"",
                 "temporalQ": {"timerel": "after", "timeAt": "2020-01-01T00:00:00Z"}}""")).send(), 400, "BadRequestData");
        Checks.problem(query(tenant, "type", "Vehicle", "timerel", "after", "timeAt", "2020-01-01T00:00:00Z",
                "csf", "))bad(("), 400, "BadRequestData");
        Checks.okJson(query(tenant, "type", "Vehicle", "timerel", "after", "timeAt", "2020-01-01T00:00:00Z",
                "q", "speed>90"));
    }

    @Test
    void a_post_query_carries_its_window_in_temporal_q_021_13() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        JsonNode got = Checks.okJson(api.post("/temporal/entityOperations/query").tenant(tenant).json(Json.obj("""
                {"type": "Query", "entities": [{"type": "Vehicle"}], "attrs": ["fuelLevel"],
                 "temporalQ": {"timerel": "before", "timeAt": "2020-08-01T13:00:00Z"}}""")).send());
        assertEquals(1, got.size(), got::toString);
        assertEquals(id, got.path(0).path("id").asText());
        assertEquals(List.of(67), values(got.path(0).path("fuelLevel")));
        assertFalse(got.path(0).has("speed"));
    }

    // ---------------------------------------------------------------- aggregation asked by a POST query's body

    /**
     * The suite's POST query (after 2020-08-01T12:00:00Z, the vehicles), {@code temporalQ} holding
     * {@code inTemporalQ} besides its window and the Query {@code inQuery} besides its members;
     * {@code params} are the request's query parameters.
     */
    private static Answer postQuery(String tenant, String inTemporalQ, String inQuery, String... params) {
        Ngsi.Request r = api.post("/temporal/entityOperations/query").tenant(tenant);
        for (int i = 0; i < params.length; i += 2) {
            r.query(params[i], params[i + 1]);
        }
        return r.json(Json.obj("""
                {"type": "Query", "entities": [{"type": "Vehicle"}],
                 "temporalQ": {"timerel": "after", "timeAt": "2020-08-01T12:00:00Z"%s}%s}""",
                inTemporalQ.isEmpty() ? "" : ", " + inTemporalQ, inQuery.isEmpty() ? "" : ", " + inQuery)).send();
    }

    /** The GET of {@link #postQuery}'s window with {@code format=aggregatedValues} and {@code more}. */
    private static JsonNode aggregatedByGet(String tenant, String... more) {
        List<String> params = new ArrayList<>(List.of("type", "Vehicle", "timerel", "after", "timeAt", "2020-08-01T12:00:00Z",
                "format", "aggregatedValues"));
        params.addAll(List.of(more));
        return Checks.okJson(query(tenant, params.toArray(String[]::new)));
    }

    @Test
    void aggr_methods_in_a_post_querys_temporal_q_answer_as_the_get_with_format_aggregated_values_5_2_21_021_27_07_08() {
        String tenant = Entities.tenant();
        vehicleIn(tenant);
        JsonNode get = aggregatedByGet(tenant, "aggrMethods", "avg,max", "aggrPeriodDuration", "PT1H");
        assertEquals(Json.obj("""
                {"type": "Property", "avg": [[100.0, "2020-08-01T12:00:00Z", "2020-08-01T13:00:00Z"]],
                 "max": [[120.0, "2020-08-01T12:00:00Z", "2020-08-01T13:00:00Z"]]}"""), get.path(0).path("speed"), get::toString);
        // V1.9.1 Table 5.2.21-1: a comma-separated list of strings, which JSON also writes as an array
        assertEquals(get, Checks.okJson(postQuery(tenant, "\"aggrMethods\": [\"avg\", \"max\"], \"aggrPeriodDuration\": \"PT1H\"",
                "")), "as an array");
        assertEquals(get, Checks.okJson(postQuery(tenant, "\"aggrMethods\": \"avg, max\", \"aggrPeriodDuration\": \"PT1H\"",
                "")), "as a comma-separated string");
        // without a duration: one period over the whole window, as on GET
        JsonNode whole = Checks.okJson(postQuery(tenant, "\"aggrMethods\": [\"avg\"]", ""));
        assertEquals(aggregatedByGet(tenant, "aggrMethods", "avg"), whole);
        assertFalse(whole.toString().contains("instanceId"), "the aggregated representation, not the normalized: " + whole);
    }

    @Test
    void aggr_params_of_a_post_query_answer_as_the_get_with_format_aggregated_values_v1_9_1_5_2_44_5244_01_01() {
        String tenant = Entities.tenant();
        vehicleIn(tenant);
        JsonNode get = aggregatedByGet(tenant, "aggrMethods", "avg", "aggrPeriodDuration", "PT0S");
        JsonNode avg = get.path(0).path("speed").path("avg");
        assertEquals(1, avg.size(), get::toString);
        assertEquals(100.0, avg.path(0).path(0).asDouble(), "PT0S: one period over the whole window: " + get);
        assertEquals(get, Checks.okJson(postQuery(tenant, "", """
                "aggrParams": {"aggrMethods": ["avg"], "aggrPeriodDuration": "PT0S"}""")));
        // the request's own format saying the same changes nothing; another representation contradicts the body
        assertEquals(get, Checks.okJson(postQuery(tenant, "", """
                "aggrParams": {"aggrMethods": ["avg"], "aggrPeriodDuration": "PT0S"}""", "format", "aggregatedValues")));
        assertEquals(get, Checks.okJson(postQuery(tenant, "", """
                "aggrParams": {"aggrMethods": ["avg"], "aggrPeriodDuration": "PT0S"}""", "options", "aggregatedValues")));
        Checks.badData(postQuery(tenant, "", """
                "aggrParams": {"aggrMethods": ["avg"]}""", "format", "temporalValues"), "format");
        Checks.badData(postQuery(tenant, "\"aggrMethods\": \"avg\"", "", "options", "concise"), "options");
        // and aggregatedValues asked without any method is the GET's error
        Checks.badData(postQuery(tenant, "", "", "format", "aggregatedValues"), "aggrMethods");
    }

    @Test
    void an_invalid_aggregation_in_a_post_query_is_bad_data_naming_the_member_021_27_09_5244_01_02_03() {
        String tenant = Entities.tenant();
        vehicleIn(tenant);
        String[][] cases = {
            // {in temporalQ, in the Query, the member the detail names}
            {"\"aggrMethods\": [\"avg\"], \"aggrPeriodDuration\": \"bogus\"", "", "aggrPeriodDuration"}, // 021_27_09
            {"", "\"aggrParams\": {\"aggrMethods\": [\"bogus\"]}", "aggrMethods"}, // 5244_01_02
            {"", "\"aggrParams\": {\"aggrMethods\": [\"avg\"], \"aggrPeriodDuration\": \"bogus\"}", "aggrPeriodDuration"}, // 5244_01_03
            {"\"aggrMethods\": \"avg,bogus\"", "", "aggrMethods"},
            {"\"aggrMethods\": \"avg,,max\"", "", "aggrMethods"},
            {"\"aggrMethods\": [\"avg\", \"\"]", "", "aggrMethods"},
            {"\"aggrMethods\": [\"avg,max\"]", "", "aggrMethods"},
            {"\"aggrMethods\": []", "", "aggrMethods"},
            {"\"aggrMethods\": 3", "", "aggrMethods"},
            {"\"aggrMethods\": [1]", "", "aggrMethods"},
            {"\"aggrMethods\": {\"avg\": true}", "", "aggrMethods"},
            {"\"aggrMethods\": [\"avg\"], \"aggrPeriodDuration\": 3600", "", "aggrPeriodDuration"},
            {"\"aggrMethods\": [\"avg\"], \"aggrPeriodDuration\": \"-PT1H\"", "", "aggrPeriodDuration"},
            {"\"aggrMethods\": [\"avg\"], \"aggrPeriodDuration\": \"PT0.0001S\"", "", "aggrPeriodDuration"},
            // a duration alone asks for nothing, but is checked, as on GET
            {"\"aggrPeriodDuration\": \"bogus\"", "", "aggrPeriodDuration"},
            {"", "\"aggrParams\": [\"avg\"]", "aggrParams"},
            {"", "\"aggrParams\": {\"aggrPeriodDuration\": \"PT1H\"}", "aggrMethods"},
            {"", "\"aggrParams\": {\"aggrMethods\": [\"avg\"], \"aggrPeriodDuration\": null}", "aggrPeriodDuration"},
            // given twice: neither silently wins
            {"\"aggrMethods\": [\"avg\"]", "\"aggrParams\": {\"aggrMethods\": [\"max\"]}", "aggrMethods"},
            {"\"aggrPeriodDuration\": \"PT1H\"", "\"aggrParams\": {\"aggrMethods\": [\"max\"], \"aggrPeriodDuration\": \"PT1H\"}",
                "aggrPeriodDuration"},
            // no member of a Query: told where it goes rather than ignored
            {"", "\"aggrMethods\": [\"avg\"]", "aggrMethods"},
            {"", "\"aggregationParams\": {\"aggrMethods\": [\"avg\"]}", "aggregationParams"},
        };
        for (String[] c : cases) {
            JsonNode p = Checks.badData(postQuery(tenant, c[0], c[1]), c[2]);
            assertFalse(p.path("detail").asText().contains("instanceId"), p::toString);
        }
        // a long value is not sent back whole
        String longName = "x".repeat(10_000);
        JsonNode p = Checks.badData(postQuery(tenant, "\"aggrMethods\": [\"" + longName + "\"]", ""), "aggrMethods");
        assertTrue(p.path("detail").asText().length() < 400, p::toString);
        p = Checks.badData(postQuery(tenant, "", "\"aggrParams\": {\"aggrMethods\": [\"avg\"], \"aggrPeriodDuration\": \"P"
                + longName + "\"}"), "aggrPeriodDuration");
        assertTrue(p.path("detail").asText().length() < 400, p::toString);
    }

    @Test
    void an_unknown_method_or_a_malformed_duration_in_the_query_string_is_bad_data_naming_it_with_or_without_format_5_7_4() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        for (String format : List.of("aggregatedValues", "temporalValues", "")) {
            List<String> f = format.isEmpty() ? List.of() : List.of("format", format);
            List<String[]> asks = List.of(
                    new String[] {"aggrMethods", "bogus"}, new String[] {"aggrMethods", "avg,"},
                    new String[] {"aggrMethods", "avg", "aggrPeriodDuration", "bogus"},
                    new String[] {"aggrMethods", "avg", "aggrPeriodDuration", "PT-1H"});
            for (String[] ask : asks) {
                List<String> params = new ArrayList<>(f);
                params.addAll(List.of(ask));
                String named = ask[ask.length - 2];
                Checks.badData(retrieve(tenant, id, params.toArray(String[]::new)), named);
                params.addAll(List.of("type", "Vehicle"));
                Checks.badData(query(tenant, params.toArray(String[]::new)), named);
            }
        }
        // a long value is not sent back whole
        JsonNode p = Checks.badData(query(tenant, "type", "Vehicle", "format", "aggregatedValues", "aggrMethods",
                "avg," + "x".repeat(2_000)), "aggrMethods");
        assertTrue(p.path("detail").asText().length() < 400, p::toString);
    }

    @Test
    void entities_are_paged_with_limit_and_linked_021_11() {
        String tenant = Entities.tenant();
        for (int i = 0; i < 3; i++) {
            vehicleIn(tenant);
        }
        Answer first = query(tenant, "type", "Vehicle", "limit", "2", "count", "true");
        JsonNode page = Checks.okJson(first);
        assertEquals(2, page.size());
        assertEquals("3", first.header("NGSILD-Results-Count"));
        assertTrue(first.headerValues("Link").stream().anyMatch(l -> l.contains("rel=\"next\"")), first::toString);
        JsonNode rest = Checks.okJson(query(tenant, "type", "Vehicle", "limit", "2", "offset", "2"));
        assertEquals(1, rest.size());
        assertNotEquals(page.path(0).path("id"), rest.path(0).path("id"));
    }

    @Test
    void tenants_keep_separate_histories_and_an_unknown_one_is_404() {
        String a = Entities.tenant();
        String b = Entities.tenant();
        String id = vehicleIn(a);
        Checks.status(api.post("/entities").tenant(b).json(Json.obj("""
                {"id": "urn:ngsi-ld:Thing:b", "type": "Thing"}""")).send(), 201);
        Checks.problem(retrieve(b, id), 404, "ResourceNotFound");
        Checks.problem(retrieve(Entities.tenant(), id), 404, "NonexistentTenant");
    }

    @Test
    void an_empty_entity_attribute_or_instance_segment_is_bad_data_014_02_015_02_016_02_017_02() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        String instance = Checks.okJson(retrieve(tenant, id)).path("speed").path(0).path("instanceId").asText();
        Checks.problem(api.post("/temporal/entities//attrs").tenant(tenant).json(Json.obj("""
                {"heading": {"type": "Property", "value": 1}}""")).send(), 400, "BadRequestData");
        Checks.problem(api.delete("/temporal/entities//attrs/speed").tenant(tenant).send(), 400, "BadRequestData");
        Checks.problem(api.delete("/temporal/entities//attrs/speed/" + instance).tenant(tenant).send(), 400, "BadRequestData");
        Checks.problem(api.delete("/temporal/entities/" + id + "/attrs//" + instance).tenant(tenant).send(), 400,
                "BadRequestData");
        Checks.problem(api.patch("/temporal/entities//attrs/speed/" + instance).tenant(tenant).json(Json.obj("""
                {"type": "Property", "value": 1}""")).send(), 400, "BadRequestData");
        assertEquals(3, Checks.okJson(retrieve(tenant, id)).path("speed").size(), "nothing was deleted");
    }

    @Test
    void retrieving_only_attributes_the_evolution_does_not_have_is_404_020_08() {
        String tenant = Entities.tenant();
        String id = vehicleIn(tenant);
        Checks.problem(retrieve(tenant, id, "attrs", "unknownAttribute"), 404, "ResourceNotFound");
        Checks.okJson(retrieve(tenant, id, "attrs", "speed", "timerel", "after", "timeAt", "2030-01-01T00:00:00Z"));
    }
}
