package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Replace Attribute (5.6.19), PUT /entities/{entityId}/attrs/{attrId} (6.7.3.3): the instance is
 * replaced whole, createdAt stays. ETSI:
 * TP/NGSI-LD/ContextInformation/Provision/EntityAttributes/ReplaceEntityAttribute.
 */
class ReplaceAttributeTest extends ConformanceTest {

    private static Answer put(String id, String attr, ObjectNode fragment) {
        return api.put(Ngsi.attr(id, attr)).json(fragment).link(model).send();
    }

    @Test
    @DisplayName("5.6.19 TP 055_01_01: the attribute is replaced whole (204) and keeps its createdAt")
    void replace() {
        String id = createdVehicle();
        String createdAt = Checks.okJson(retrieve(id, "options", "sysAttrs")).path("isParked").path("createdAt").asText();
        ObjectNode r = Json.obj("""
                {"type": "Relationship", "object": "urn:ngsi-ld:OffStreetParking:Downtown2", "observedAt": "2017-07-29T15:00:04Z"}""");
        Checks.noContent(put(id, "isParked", r));
        JsonNode after = Checks.okJson(retrieve(id, "options", "sysAttrs"));
        Json.assertSame(Json.with(Entities.vehicle(id), "isParked", r), Json.withoutSysAttrs(after));
        assertEquals(createdAt, after.path("isParked").path("createdAt").asText(), after::toString);
    }

    @Test
    @DisplayName("5.6.19 TP 055_01_02: the replacement may be of another attribute type")
    void replaceWithAnotherType() {
        String id = createdVehicle();
        ObjectNode r = Json.obj("{\"type\": \"Property\", \"value\": \"parked at home\"}");
        Checks.noContent(put(id, "isParked", r));
        Json.assertSame(Json.with(Entities.vehicle(id), "isParked", r), retrieve(id));
    }

    @Test
    @DisplayName("5.6.19 TP 055_02_01: without datasetId the default instance is replaced, the other instances stay")
    void replaceDefaultInstance() {
        String id = createdVehicle();
        ObjectNode r = Json.obj("{\"type\": \"Property\", \"value\": 120}");
        Checks.noContent(put(id, "speed", r));
        ObjectNode expected = Entities.vehicle(id);
        ((ArrayNode) expected.get("speed")).set(0, r);
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.6.19 TP 055_02_02: with a datasetId that instance is replaced, the other instances stay")
    void replaceNamedInstance() {
        String id = createdVehicle();
        ObjectNode r = Json.obj("{\"type\": \"Property\", \"value\": 120, \"datasetId\": \"urn:ngsi-ld:Dataset:gps\"}");
        Checks.noContent(put(id, "speed", r));
        ObjectNode expected = Entities.vehicle(id);
        ((ArrayNode) expected.get("speed")).set(1, r);
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.6.19 TP 055_03_01: an entity id that is not a URI is 400 BadRequestData")
    void invalidEntityId() {
        Checks.badData(put("invalidUri", "isParked", Json.obj("{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:X:1\"}")), "invalidUri");
    }

    @Test
    @DisplayName("5.6.19 TP 055_03_02: an entity not known is 404 ResourceNotFound")
    void unknownEntity() {
        Checks.problem(put(Entities.id("Vehicle"), "isParked", Json.obj("{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:X:1\"}")), 404,
                "ResourceNotFound");
    }

    @Test
    @DisplayName("5.6.19 TP 055_03_03: an attribute name that is not valid (@invalid) is 400 BadRequestData")
    void invalidAttributeName() {
        String id = createdVehicle();
        Checks.badData(put(id, "@invalid", Json.obj("{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:X:1\"}")), "@invalid");
    }

    @Test
    @DisplayName("5.6.19 TP 055_03_04: an attribute the entity lacks is 404 ResourceNotFound")
    void unknownAttribute() {
        String id = createdVehicle();
        Checks.problem(put(id, "fuelLevel", Json.obj("{\"type\": \"Property\", \"value\": 1}")), 404, "ResourceNotFound");
        Json.assertSame(Entities.vehicle(id), retrieve(id));
    }

    @Test
    @DisplayName("5.6.19 TP 055_03_05: scope cannot be replaced as an attribute: 400 BadRequestData")
    void scopeRejected() {
        String id = Entities.id("Vehicle");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"scope\": \"/Madrid\"}", id));
        Checks.problem(api.put(Ngsi.attr(id, "scope")).json(Json.obj("{\"scope\": \"/Madrid/Centro\"}")).send(), 400, "BadRequestData");
        assertEquals("/Madrid", Checks.okJson(api.get(Ngsi.entity(id)).send()).path("scope").asText());
    }

    @Test
    @DisplayName("5.6.19: a datasetId the attribute has no instance of is 404 ResourceNotFound")
    void unknownDatasetId() {
        String id = createdVehicle();
        Checks.problem(put(id, "speed", Json.obj("{\"type\": \"Property\", \"value\": 1, \"datasetId\": \"urn:ngsi-ld:Dataset:none\"}")), 404,
                "ResourceNotFound");
        Json.assertSame(Entities.vehicle(id), retrieve(id));
    }

    @Test
    @DisplayName("5.6.19: an invalid replacement (a Relationship without object) is 400 BadRequestData, nothing changes")
    void invalidReplacement() {
        String id = createdVehicle();
        Checks.problem(put(id, "isParked", Json.obj("{\"type\": \"Relationship\"}")), 400, "BadRequestData");
        Json.assertSame(Entities.vehicle(id), retrieve(id));
    }
}
