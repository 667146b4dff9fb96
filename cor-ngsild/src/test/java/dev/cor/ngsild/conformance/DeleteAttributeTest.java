package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Delete Attribute (5.6.5), DELETE /entities/{entityId}/attrs/{attrId} (6.7.3.2), with
 * {@code datasetId} and {@code deleteAll}. The attribute name is expanded with the Link context.
 * ETSI: TP/NGSI-LD/ContextInformation/Provision/EntityAttributes/DeleteEntityAttribute.
 */
class DeleteAttributeTest extends ConformanceTest {

    private static Answer delete(String id, String attr, String datasetId, String deleteAll) {
        Ngsi.Request r = api.delete(Ngsi.attr(id, attr)).link(model);
        if (datasetId != null) {
            r.query("datasetId", datasetId);
        }
        if (deleteAll != null) {
            r.query("deleteAll", deleteAll);
        }
        return r.send();
    }

    @Test
    @DisplayName("5.6.5 TP 013_01_01: without datasetId the default instance is deleted, the others stay")
    void deleteDefaultInstance() {
        String id = createdVehicle();
        Checks.noContent(delete(id, "speed", null, "false"));
        ObjectNode expected = Entities.vehicle(id);
        expected.set("speed", expected.get("speed").get(1));
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.6.5 TP 013_01_02: with a datasetId that instance is deleted, the others stay")
    void deleteNamedInstance() {
        String id = createdVehicle();
        Checks.noContent(delete(id, "speed", "urn:ngsi-ld:Dataset:gps", "false"));
        ObjectNode expected = Entities.vehicle(id);
        expected.set("speed", expected.get("speed").get(0));
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.6.5 TP 013_01_03: deleteAll=true deletes every instance")
    void deleteAll() {
        String id = createdVehicle();
        Checks.noContent(delete(id, "speed", null, "true"));
        Json.assertSame(Json.without(Entities.vehicle(id), "speed"), retrieve(id));
    }

    @Test
    @DisplayName("5.6.5: a single-instance attribute is deleted whole")
    void deleteAttribute() {
        String id = createdVehicle();
        Checks.noContent(delete(id, "isParked", null, null));
        Json.assertSame(Json.without(Entities.vehicle(id), "isParked"), retrieve(id));
    }

    @Test
    @DisplayName("5.6.5 TP 013_02_01: no entity id in the path is 400 BadRequestData")
    void noEntityId() {
        Checks.problem(api.delete("/entities//attrs/speed").send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.6.5 TP 013_02_02: an entity id that is not a URI is 400 BadRequestData")
    void invalidEntityId() {
        Checks.badData(delete("thisIsAnInvalidURI", "speed", null, "false"), "thisIsAnInvalidURI");
    }

    @Test
    @DisplayName("6.3.2 TP 013_02_03: DELETE on /entities/{id}/attrs/ without an attribute name is 405 (the resource has no DELETE)")
    void noAttributeName() {
        String id = createdVehicle();
        Answer a = api.delete(Ngsi.entity(id) + "/attrs/").send();
        Checks.problemDetails(a, 405);
        assertFalse(a.header("Allow") == null || a.header("Allow").contains("DELETE"), a::toString);
    }

    @Test
    @DisplayName("5.6.5 TP 013_03_01: an entity not known is 404 ResourceNotFound")
    void unknownEntity() {
        Checks.problem(delete(Entities.id("Vehicle"), "speed", "urn:ngsi-ld:Dataset:gps", "false"), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.6.5 TP 013_03_02: an attribute the entity lacks is 404 ResourceNotFound")
    void unknownAttribute() {
        String id = createdVehicle();
        Checks.problem(delete(id, "notFound", null, "false"), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.6.5 TP 013_03_03: a datasetId the attribute has no instance of is 404 ResourceNotFound, nothing is deleted")
    void unknownDatasetId() {
        String id = createdVehicle();
        Checks.problem(delete(id, "speed", "urn:ngsi-ld:Dataset:notFound", "false"), 404, "ResourceNotFound");
        Json.assertSame(Entities.vehicle(id), retrieve(id));
    }

    @Test
    @DisplayName("5.6.5: no default instance and no datasetId is 404 ResourceNotFound")
    void noDefaultInstance() {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("""
                {"id": "%s", "type": "Vehicle", "speed": {"type": "Property", "value": 1, "datasetId": "urn:ngsi-ld:Dataset:gps"}}""", id);
        create(e);
        Checks.problem(delete(id, "speed", null, null), 404, "ResourceNotFound");
        Json.assertSame(e, retrieve(id));
    }

    @Test
    @DisplayName("4.18 TP 013_04: scope is deleted as an attribute")
    void deleteScope() {
        String id = Entities.id("Vehicle");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"scope\": [\"/Madrid\", \"/Spain\"]}", id));
        Checks.noContent(api.delete(Ngsi.attr(id, "scope")).send());
        Json.assertSame(Entities.minimal(id, "Vehicle"), Checks.okJson(api.get(Ngsi.entity(id)).send()));
    }

    @Test
    @DisplayName("4.7 TP 013_05, 013_06: observationSpace and operationSpace are deleted")
    void deleteGeoSpaces() {
        String id = Entities.id("Building");
        createPlain(Json.obj("""
                {"id": "%s", "type": "Building",
                 "observationSpace": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [2.29, 48.85]}},
                 "operationSpace": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [2.3, 48.86]}}}""", id));
        Checks.noContent(api.delete(Ngsi.attr(id, "observationSpace")).send());
        Checks.noContent(api.delete(Ngsi.attr(id, "operationSpace")).send());
        Json.assertSame(Entities.minimal(id, "Building"), Checks.okJson(api.get(Ngsi.entity(id)).send()));
    }

    @Test
    @DisplayName("4.5.20 TP 013_07_01: a VocabProperty is deleted")
    void deleteVocabProperty() {
        String id = Entities.id("Building");
        create(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"category\": {\"type\": \"VocabProperty\", \"vocab\": \"monument\"}}", id));
        Checks.noContent(delete(id, "category", null, null));
        Json.assertSame(Entities.minimal(id, "Building"), retrieve(id));
    }

    @Test
    @DisplayName("6.3.5: the attribute name is expanded with the Link context: without it, another attribute (404); by full IRI, found")
    void nameExpandsWithContext() {
        String id = createdVehicle();
        Checks.problem(api.delete(Ngsi.attr(id, "brandName")).send(), 404, "ResourceNotFound");
        Checks.noContent(api.delete(Ngsi.attr(id, Ngsi.segment(modelIri("brandName")))).send());
        Json.assertSame(Json.without(Entities.vehicle(id), "brandName"), retrieve(id));
    }

    @Test
    @DisplayName("4.17 TP 565_01_01: a type selector the entity does not match is 404 and the attribute stays")
    void typeSelector() {
        String id = Entities.id("Vehicle");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": \"x\"}}", id));
        Checks.problem(api.delete(Ngsi.attr(id, "name")).query("type", "Vehicle").send(), 404, "ResourceNotFound");
        JsonNode e = Checks.okJson(api.get(Ngsi.entity(id)).send());
        assertEquals("x", e.path("name").path("value").asText());
        Checks.noContent(api.delete(Ngsi.attr(id, "name")).query("type", "Building").send());
        assertFalse(Checks.okJson(api.get(Ngsi.entity(id)).send()).has("name"));
    }

    @Test
    @DisplayName("5.6.5: a datasetId parameter that is not a URI is 400 BadRequestData")
    void invalidDatasetId() {
        String id = createdVehicle();
        Checks.problem(delete(id, "speed", "not a uri", null), 400, "BadRequestData");
        Json.assertSame(Entities.vehicle(id), retrieve(id));
    }
}
