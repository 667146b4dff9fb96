package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.federation.Registration.Mode;
import org.junit.jupiter.api.Test;

/**
 * Distributed temporal reads (ETSI GS CIM 009 § 5.7.3.4, § 5.7.4.4 with § 4.3.6) between real
 * brokers and misbehaving sources over real sockets: a registration naming retrieveTemporal or
 * queryTemporal is asked, its instances merged with the local ones by attribute and time, the
 * representation made over the merge; a source that fails leaves a warning and the rest answered;
 * a registration that names only the groups of Table 4.20-2 is not asked.
 */
class DistributedTemporalTest extends DistributedFixture {

    private static void history(Node n, String id, String attr, int... values) {
        StringBuilder instances = new StringBuilder();
        for (int i = 0; i < values.length; i++) {
            instances.append(i == 0 ? "" : ",").append("{\"type\":\"Property\",\"value\":").append(values[i])
                    .append(",\"observedAt\":\"2024-01-01T0").append(values[i] % 10).append(":00:00Z\"}");
        }
        Answer a = n.api().post("/temporal/entities").json(Json.parse("{\"id\":\"%s\",\"type\":\"Vehicle\",\"%s\":[%s]}"
                .formatted(id, attr, instances))).send();
        assertTrue(a.status() == 201 || a.status() == 204, a.toString());
    }

    private static List<Integer> values(JsonNode instances) {
        List<Integer> out = new ArrayList<>();
        instances.forEach(i -> out.add(i.path("value").asInt()));
        return out;
    }

    @Test
    void a_retrieval_merges_the_sources_instances_with_the_local_ones_in_time_order() {
        Node a = broker("TA1");
        Node b = broker("TB1");
        String id = fresh("Vehicle");
        history(a, id, "speed", 1, 3);
        history(b, id, "speed", 2, 4);
        history(b, id, "fuel", 7);
        reg(a, Mode.INCLUSIVE, b.broker().origin(), id, "Vehicle", Set.of(), null, "[\"retrieveTemporal\"]");
        Answer r = a.api().get("/temporal/entities/" + id).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals(List.of(1, 2, 3, 4), values(r.json().path("speed")), r::toString);
        assertEquals(List.of(7), values(r.json().path("fuel")));
        assertNull(r.header("NGSILD-Warning"), r.toString());
        // lastN over the merge, and the aggregation made here over it
        assertEquals(List.of(3, 4), values(a.api().get("/temporal/entities/" + id).query("lastN", "2").send().json().path("speed")));
        JsonNode agg = a.api().get("/temporal/entities/" + id).query("options", "aggregatedValues")
                .query("aggrMethods", "sum,totalCount").send().json();
        assertEquals(10.0, agg.path("speed").path("sum").path(0).path(0).asDouble(), agg::toString);
        assertEquals(4, agg.path("speed").path("totalCount").path(0).path(0).asInt(), agg::toString);
    }

    @Test
    void an_evolution_only_a_source_holds_is_found_and_one_nobody_holds_is_404() {
        Node a = broker("TA2");
        Node b = broker("TB2");
        String id = fresh("Vehicle");
        history(b, id, "speed", 5);
        history(a, fresh("Vehicle"), "speed", 1); // the tenant exists here
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, "Vehicle", Set.of(), null, "[\"retrieveTemporal\",\"queryTemporal\"]");
        assertEquals(List.of(5), values(a.api().get("/temporal/entities/" + id).send().json().path("speed")));
        Answer none = a.api().get("/temporal/entities/" + fresh("Vehicle")).send();
        assertEquals(404, none.status(), none.toString());
    }

    @Test
    void a_query_pages_the_local_and_the_sources_entities_together() {
        Node a = broker("TA3");
        Node b = broker("TB3");
        String here = "urn:ngsi-ld:Vehicle:tq-a";
        String there = "urn:ngsi-ld:Vehicle:tq-b";
        history(a, here, "speed", 1);
        history(b, there, "speed", 2);
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, "Vehicle", Set.of(), null, "[\"queryTemporal\"]");
        JsonNode all = a.api().get("/temporal/entities").query("type", "Vehicle").send().json();
        assertEquals(List.of(here, there), ids(all), all::toString);
        JsonNode second = a.api().get("/temporal/entities").query("type", "Vehicle").query("limit", "1").query("offset", "1")
                .send().json();
        assertEquals(List.of(there), ids(second));
        // local=true asks nobody
        assertEquals(List.of(here), ids(a.api().get("/temporal/entities").query("type", "Vehicle").query("local", "true").send()
                .json()));
    }

    @Test
    void a_registration_of_the_operation_groups_only_is_not_asked_for_history() {
        Node a = broker("TA4");
        Node b = broker("TB4");
        String id = fresh("Vehicle");
        history(a, id, "speed", 1);
        history(b, id, "speed", 2);
        reg(a, Mode.INCLUSIVE, b.broker().origin(), id, "Vehicle", Set.of(), null, "[\"federationOps\",\"retrieveOps\"]");
        assertEquals(List.of(1), values(a.api().get("/temporal/entities/" + id).send().json().path("speed")));
    }

    @Test
    void a_source_that_fails_leaves_a_warning_and_the_local_history_is_answered() {
        Node a = broker("TA5");
        String id = fresh("Vehicle");
        history(a, id, "speed", 1);
        SourceStub dead = stub(seen -> new SourceStub.Answer(500, "{\"type\":\"x\"}", 0));
        SourceStub garbage = stub(seen -> new SourceStub.Answer(200, "[1, 2, 3]", 0));
        reg(a, Mode.INCLUSIVE, dead.endpoint(), id, "Vehicle", Set.of(), null, "[\"retrieveTemporal\"]");
        reg(a, Mode.INCLUSIVE, garbage.endpoint(), id, "Vehicle", Set.of(), null, "[\"retrieveTemporal\"]");
        Answer r = a.api().get("/temporal/entities/" + id).send();
        assertEquals(200, r.status(), r.toString());
        assertEquals(List.of(1), values(r.json().path("speed")));
        assertNotNull(r.header("NGSILD-Warning"), r.toString());
        assertFalse(r.text().contains("\"type\":\"x\""), "nothing a source sent is echoed: " + r);
        assertTrue(dead.seen().get(0).target().startsWith("/ngsi-ld/v1/temporal/entities/"), dead.seen().toString());
    }
}
