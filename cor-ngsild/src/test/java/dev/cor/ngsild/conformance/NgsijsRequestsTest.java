package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Request;

/**
 * The NGSI-LD requests of FIWARE's ngsijs 1.4.1 ({@code NGSI.Connection.LD}), built as it builds
 * them - its Content-Type, its {@code Accept: application/ld+json, application/json}, the context
 * in a Link header - are served: it appends attributes ({@code POST /entities/{id}/attrs}) and
 * updates subscriptions as {@code application/merge-patch+json}, which the broker reads as
 * {@code application/json} on every PATCH (§ 6.3.4) and on Append Attributes; everywhere else a
 * merge patch is still a bare 415 (TP 048_01_03).
 */
class NgsijsRequestsTest extends ConformanceTest {
    private static final String ACCEPT = "application/ld+json, application/json";

    /** A request as ngsijs's makeJSONRequest2 sends it: its Accept, the @context option as a Link. */
    private static Request ngsijs(String method, String path, String contentType, Object body) {
        return api.method(method, path).accept(ACCEPT).link(model).body(contentType, body);
    }

    @Test
    void every_ngsi_ld_write_ngsijs_1_4_1_sends_is_served() {
        String id = Entities.id("Vehicle");
        // createEntity: application/json, its @context in the Link
        Checks.created(ngsijs("POST", "/entities", Ngsi.JSON, Entities.minimal(id, "Vehicle")).send(), id);
        // appendEntityAttributes: POST .../attrs as application/merge-patch+json
        ObjectNode speed = Json.obj("{\"type\": \"Property\", \"value\": 42}");
        Checks.noContent(ngsijs("POST", Ngsi.entity(id) + "/attrs", Ngsi.MERGE_PATCH, Json.obj("{}").set("speed", speed)).send());
        // updateEntityAttributes and updateEntityAttribute: application/json
        Checks.noContent(ngsijs("PATCH", Ngsi.entity(id) + "/attrs", Ngsi.JSON,
                Json.obj("{\"speed\": {\"type\": \"Property\", \"value\": 43}}")).send());
        Checks.noContent(ngsijs("PATCH", Ngsi.attr(id, "speed"), Ngsi.JSON, Json.obj("{\"value\": 44}")).send());
        assertEquals(44, retrieve(id).path("speed").path("value").asInt());

        // createSubscription: application/json; updateSubscription: PATCH as application/merge-patch+json
        String sub = SubscriptionResourceTest.subscriptionId();
        ObjectNode s = SubscriptionResourceTest.vehicles(sub);
        s.remove("@context");
        Checks.status(ngsijs("POST", "/subscriptions", Ngsi.JSON, s).send(), 201);
        Checks.noContent(ngsijs("PATCH", "/subscriptions/" + sub, Ngsi.MERGE_PATCH, Json.obj("{\"isActive\": false}")).send());
        JsonNode got = Checks.okJson(api.get("/subscriptions/" + sub).link(model).send());
        assertEquals("paused", got.path("status").asText(), got::toString);
    }

    @Test
    void a_merge_patch_append_reads_as_json_and_its_null_is_refused_not_taken_as_a_removal() {
        String id = createdVehicle();
        JsonNode before = retrieve(id);
        Checks.problem(ngsijs("POST", Ngsi.entity(id) + "/attrs", Ngsi.MERGE_PATCH, "{\"brandName\": null}").send(),
                400, "BadRequestData");
        Json.assertSame(before, retrieve(id));
        // and where a merge patch contradicts the operation it stays a bare 415: create, replace, batch
        String other = Entities.id("Vehicle");
        Checks.bare(ngsijs("POST", "/entities", Ngsi.MERGE_PATCH, Entities.minimal(other, "Vehicle")).send(), 415);
        Checks.bare(ngsijs("PUT", Ngsi.entity(id), Ngsi.MERGE_PATCH, Entities.minimal(id, "Vehicle")).send(), 415);
        Checks.bare(ngsijs("PUT", Ngsi.attr(id, "brandName"), Ngsi.MERGE_PATCH, Json.obj("{\"type\": \"Property\", \"value\": 1}"))
                .send(), 415);
        Checks.bare(ngsijs("POST", "/entityOperations/upsert", Ngsi.MERGE_PATCH, Json.arr("[]").add(Entities.minimal(other, "Vehicle")))
                .send(), 415);
        Json.assertSame(before, retrieve(id));
    }
}
