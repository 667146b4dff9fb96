package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.policy.NgsildLimits;

/**
 * Temporal pagination (ETSI GS CIM 009 V1.8 § 6.3.10) over a broker whose temporal answers carry
 * at most 30 instances, as the ETSI suite's pagination test purposes assume (020_13, 020_14,
 * 021_15, 021_16: 2 attributes of 20 instances are cut, 20 instances in all are not): a 206 with
 * {@code Content-Range: date-time <start>-<end>/<lastN or *>}, every attribute cut at one instant.
 */
class TemporalPaginationTest {
    private static TestBroker broker;
    private static Ngsi api;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(b -> b.limits(NgsildLimits.defaults().withTemporalInstances(30)), s -> { });
        api = new Ngsi(broker.baseUrl());
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    /** A vehicle whose speed is observed each minute from 00:00 and fuelLevel from {@code fuelFrom}, {@code n} of each. */
    private static String vehicle(String tenant, int fuelFrom, int n) {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("""
                {"id": "%s", "type": "Vehicle"}""", id);
        ArrayNode speed = e.putArray("speed");
        ArrayNode fuel = e.putArray("fuelLevel");
        for (int i = 0; i < n; i++) {
            speed.addObject().put("type", "Property").put("value", i).put("observedAt", String.format("2020-01-01T00:%02d:00Z", i));
            fuel.addObject().put("type", "Property").put("value", i)
                    .put("observedAt", String.format("2020-01-01T%02d:%02d:00Z", (fuelFrom + i) / 60, (fuelFrom + i) % 60));
        }
        Checks.status(api.post("/temporal/entities").tenant(tenant).json(e).send(), 201);
        return id;
    }

    private static Answer retrieve(String tenant, String id, String... params) {
        Ngsi.Request r = api.get("/temporal/entities/" + id).tenant(tenant);
        for (int i = 0; i < params.length; i += 2) {
            r.query(params[i], params[i + 1]);
        }
        return r.send();
    }

    private static JsonNode partial(Answer a) {
        Checks.status(a, 206);
        return a.json();
    }

    @Test
    void forty_instances_are_cut_at_one_instant_and_the_range_starts_at_the_window_020_13_021_15() {
        String tenant = Entities.tenant();
        String id = vehicle(tenant, 0, 20);
        Answer all = retrieve(tenant, id);
        Checks.status(all, 206);
        // 30 of 40, both attributes observed at the same minutes: cut after 00:14
        assertEquals("date-time 2020-01-01T00:00:00.000Z-2020-01-01T00:14:00.000Z/*", all.header("Content-Range"), all::toString);
        assertEquals(15, all.json().path("speed").size());
        assertEquals(15, all.json().path("fuelLevel").size());
        Answer after = retrieve(tenant, id, "timerel", "after", "timeAt", "2019-01-01T01:01:00Z");
        assertEquals("date-time 2019-01-01T01:01:00.000Z-2020-01-01T00:14:00.000Z/*", after.header("Content-Range"), "starts at timeAt");
        Answer lastN = retrieve(tenant, id, "lastN", "20", "timerel", "before", "timeAt", "2021-01-01T01:01:00Z");
        Checks.status(lastN, 206);
        assertEquals("date-time 2021-01-01T01:01:00.000Z-2020-01-01T00:05:00.000Z/20", lastN.header("Content-Range"),
                "with lastN, from the window's end down to the oldest instance shown");
        Checks.status(retrieve(tenant, id, "attrs", "speed"), 200);
    }

    @Test
    void an_attribute_past_the_cut_is_shown_empty_020_14() {
        String tenant = Entities.tenant();
        String id = vehicle(tenant, 60, 40); // fuelLevel observed only after every speed instance
        JsonNode first = partial(retrieve(tenant, id, "timerel", "after", "timeAt", "2019-01-01T00:00:00Z"));
        assertEquals(30, first.path("speed").size(), first::toString);
        assertTrue(first.path("fuelLevel").isArray() && first.path("fuelLevel").isEmpty(), first::toString);
        JsonNode latest = partial(retrieve(tenant, id, "lastN", "100", "timerel", "before",
                "timeAt", "2021-01-01T00:00:00Z"));
        assertEquals(30, latest.path("fuelLevel").size(), latest::toString);
        assertTrue(latest.path("speed").isArray() && latest.path("speed").isEmpty(), latest::toString);
    }

    @Test
    void in_temporal_values_an_attribute_past_the_cut_is_shown_with_no_pairs_021_15_07() {
        // § 4.5.9 and § 6.3.10: the simplified form shows what the normalized one shows - an
        // attribute whose instances the cut left out is there, with its type and no pairs
        String tenant = Entities.tenant();
        String id = vehicle(tenant, 60, 40); // fuelLevel observed only after every speed instance
        JsonNode one = partial(retrieve(tenant, id, "timerel", "after", "timeAt", "2019-01-01T00:00:00Z",
                "options", "temporalValues"));
        assertEquals(30, one.path("speed").path("values").size(), one::toString);
        assertEquals(Json.obj("""
                {"type": "Property", "values": []}"""), one.path("fuelLevel"), one::toString);
        // a query: the entity whose instances all lie past the cut shows its attributes the same way
        String late = "urn:ngsi-ld:Vehicle:021-15-07-b";
        Checks.status(api.post("/temporal/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "speed": [{"type": "Property", "value": 1, "observedAt": "2020-09-01T12:03:00Z"}],
                 "owner": [{"type": "Relationship", "object": "urn:ngsi-ld:Person:1", "observedAt": "2020-09-01T12:03:00Z"}]}""",
                late)).send(), 201);
        JsonNode all = partial(api.get("/temporal/entities").tenant(tenant).query("type", "Vehicle")
                .query("timerel", "after").query("timeAt", "2019-01-01T00:00:00Z").query("options", "temporalValues").send());
        JsonNode b = null;
        for (JsonNode e : all) {
            if (e.path("id").asText().equals(late)) {
                b = e;
            }
        }
        assertTrue(b != null, all::toString);
        assertEquals(Json.obj("""
                {"type": "Property", "values": []}"""), b.path("speed"), all::toString);
        assertEquals(Json.obj("""
                {"type": "Relationship", "objects": []}"""), b.path("owner"), all::toString);
    }

    @Test
    void a_query_is_cut_over_all_its_entities_021_15_021_16() {
        String tenant = Entities.tenant();
        vehicle(tenant, 0, 20);
        Answer a = api.post("/temporal/entityOperations/query").tenant(tenant).json(Json.obj("""
                {"type": "Query", "entities": [{"type": "Vehicle"}],
                 "temporalQ": {"timerel": "before", "timeAt": "2021-01-01T00:00:00Z"}}""")).send();
        Checks.status(a, 206);
        assertTrue(a.header("Content-Range").startsWith("date-time "), a::toString);
    }

    @Test
    void a_query_that_reads_the_bounds_worth_first_still_says_what_later_entities_hold_past_it() {
        String tenant = Entities.tenant();
        // the first entity (by id) holds the bound's worth before 00:30; the second only after it
        String first = "urn:ngsi-ld:Vehicle:page-a";
        String second = "urn:ngsi-ld:Vehicle:page-b";
        for (String id : java.util.List.of(first, second)) {
            ObjectNode e = Json.obj("""
                    {"id": "%s", "type": "Vehicle"}""", id);
            ArrayNode speed = e.putArray("speed");
            int from = id.equals(first) ? 0 : 40;
            int n = id.equals(first) ? 30 : 5;
            for (int i = 0; i < n; i++) {
                speed.addObject().put("type", "Property").put("value", from + i)
                        .put("observedAt", String.format("2020-01-01T00:%02d:00Z", from + i));
            }
            Checks.status(api.post("/temporal/entities").tenant(tenant).json(e).send(), 201);
        }
        Answer a = api.get("/temporal/entities").tenant(tenant).query("type", "Vehicle").query("timerel", "after")
                .query("timeAt", "2020-01-01T00:00:00Z").send();
        JsonNode page = partial(a); // 35 instances in the window: a 206, though the answer holds 30
        assertEquals("date-time 2020-01-01T00:00:00.000Z-2020-01-01T00:29:00.000Z/*", a.header("Content-Range"), a::toString);
        assertEquals(30, page.path(0).path("speed").size());
        assertEquals(0, page.path(1).path("speed").size(), "the second's instances are past the cut: " + page);
    }
}
