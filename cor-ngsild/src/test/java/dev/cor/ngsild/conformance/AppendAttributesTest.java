package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Append Attributes (5.6.3), POST /entities/{entityId}/attrs/ (6.6.3.1): 204 when everything was
 * appended, 207 with an UpdateResult (names as the request's context gives them) when options=noOverwrite kept
 * some. ETSI: TP/NGSI-LD/ContextInformation/Provision/EntityAttributes/AppendEntityAttributes.
 */
class AppendAttributesTest extends ConformanceTest {

    private static Answer append(String id, ObjectNode fragment) {
        return api.post(Ngsi.entity(id) + "/attrs").ldJson(Entities.withContext(fragment, model)).send();
    }

    @Test
    @DisplayName("5.6.3 TP 010_01_01: a new attribute is appended (204)")
    void appendNew() {
        String id = createdVehicle();
        ObjectNode attr = Json.obj("{\"type\": \"Property\", \"value\": 23, \"unitCode\": \"LTR\"}");
        Checks.noContent(append(id, (ObjectNode) Json.obj("{}").set("fuelLevel", attr)));
        Json.assertSame(Json.with(Entities.vehicle(id), "fuelLevel", attr), retrieve(id));
    }

    @Test
    @DisplayName("5.6.3 TP 010_01_02: an instance with a new datasetId is appended beside the others")
    void appendNewInstance() {
        String id = createdVehicle();
        ObjectNode inst = Json.obj("""
                {"type": "Property", "value": 60, "datasetId": "urn:ngsi-ld:Dataset:radar"}""");
        Checks.noContent(append(id, (ObjectNode) Json.obj("{}").set("speed", inst)));
        ObjectNode expected = Entities.vehicle(id);
        ((ArrayNode) expected.get("speed")).add(inst);
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.6.3: without noOverwrite an existing default instance is replaced whole, keeping its createdAt")
    void appendOverwrites() {
        String id = createdVehicle();
        JsonNode before = Checks.okJson(retrieve(id, "options", "sysAttrs"));
        Checks.noContent(append(id, Json.obj("{\"brandName\": {\"type\": \"Property\", \"value\": \"BMW\", \"source\": {\"type\": \"Property\", \"value\": \"dealer\"}}}")));
        JsonNode after = Checks.okJson(retrieve(id, "options", "sysAttrs"));
        Json.assertSame(Json.with(Entities.vehicle(id), "brandName",
                Json.obj("{\"type\": \"Property\", \"value\": \"BMW\", \"source\": {\"type\": \"Property\", \"value\": \"dealer\"}}")),
                Json.withoutSysAttrs(after));
        assertEquals(before.path("brandName").path("createdAt").asText(), after.path("brandName").path("createdAt").asText(),
                "the replaced attribute keeps its createdAt (5.6.3.4)");
    }

    @Test
    @DisplayName("5.6.3 TP 010_02_01: no entity id in the path (/entities//attrs) is 400 BadRequestData")
    void noEntityId() {
        Checks.problem(api.post("/entities//attrs").ldJson(Entities.withContext(Json.obj("{\"a\": {\"type\": \"Property\", \"value\": 1}}"), model))
                .send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.6.3 TP 010_02_02: an entity id that is not a URI is 400 BadRequestData")
    void invalidEntityId() {
        Checks.badData(append("thisisaninvaliduri", Json.obj("{\"a\": {\"type\": \"Property\", \"value\": 1}}")), "thisisaninvaliduri");
    }

    @Test
    @DisplayName("5.6.3 TP 010_03_01: an entity not known is 404 ResourceNotFound")
    void unknownEntity() {
        Checks.problem(append(Entities.id("Vehicle"), Json.obj("{\"a\": {\"type\": \"Property\", \"value\": 1}}")), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.6.3 TP 010_04_01 (differs): noOverwrite keeps an existing attribute and appends the new: 207 UpdateResult naming them as the client did")
    void noOverwritePartial() {
        String id = createdVehicle();
        Answer a = api.post(Ngsi.entity(id) + "/attrs").query("options", "noOverwrite").ldJson(Entities.withContext(Json.obj("""
                {"brandName": {"type": "Property", "value": "BMW"},
                 "attribute_to_be_added": {"type": "Property", "value": 23}}"""), model)).send();
        // the suite expects full IRIs here; the names the client sent are what Orion-LD answers and clients match
        Checks.updateResult(a, List.of("attribute_to_be_added"), List.of("brandName"));
        Json.assertSame(Json.with(Entities.vehicle(id), "attribute_to_be_added", Json.obj("{\"type\": \"Property\", \"value\": 23}")),
                retrieve(id));
    }

    @Test
    @DisplayName("5.6.3 TP 010_04_02: noOverwrite with an instance of a new datasetId appends it: 204")
    void noOverwriteNewInstance() {
        String id = createdVehicle();
        ObjectNode inst = Json.obj("{\"type\": \"Property\", \"value\": 60, \"datasetId\": \"urn:ngsi-ld:Dataset:radar\"}");
        Checks.noContent(api.post(Ngsi.entity(id) + "/attrs").query("options", "noOverwrite")
                .ldJson(Entities.withContext((ObjectNode) Json.obj("{}").set("speed", inst), model)).send());
        ObjectNode expected = Entities.vehicle(id);
        ((ArrayNode) expected.get("speed")).add(inst);
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.5.4 TP 010_05_01: a fragment that is not JSON is 400 InvalidRequest")
    void invalidJson() {
        String id = createdVehicle();
        Checks.problem(api.post(Ngsi.entity(id) + "/attrs").ldJson("{\"speed\": {\"type\": \"Property\",, \"value\": 56}}").send(), 400,
                "InvalidRequest");
        Json.assertSame(Entities.vehicle(id), retrieve(id));
    }

    @Test
    @DisplayName("4.5.18 TP 010_06_01: a LanguageProperty is appended")
    void appendLanguageProperty() {
        String id = createdVehicle();
        ObjectNode attr = Json.obj("{\"type\": \"LanguageProperty\", \"languageMap\": {\"en\": \"Big red car\", \"fr\": \"Grosse voiture rouge\"}}");
        Checks.noContent(append(id, (ObjectNode) Json.obj("{}").set("street", attr)));
        Json.assertSame(Json.with(Entities.vehicle(id), "street", attr), retrieve(id));
    }

    @Test
    @DisplayName("4.18 TP 010_07_01: a scope appended with overwrite replaces the entity's scope")
    void appendScopeOverwrite() {
        String id = Entities.id("Building");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"scope\": \"/Madrid\"}", id));
        Checks.noContent(api.post(Ngsi.entity(id) + "/attrs").json(Json.obj("{\"scope\": \"/Paris\"}")).send());
        Json.assertSame(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"scope\": \"/Paris\"}", id),
                Checks.okJson(api.get(Ngsi.entity(id)).send()));
    }

    @Test
    @DisplayName("4.18 TP 010_07_02: a scope appended with noOverwrite is added to the entity's scopes")
    void appendScopeNoOverwrite() {
        String id = Entities.id("Building");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"scope\": \"/Madrid\"}", id));
        Checks.noContent(api.post(Ngsi.entity(id) + "/attrs").query("options", "noOverwrite").json(Json.obj("{\"scope\": \"/Paris\"}")).send());
        Json.assertSame(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"scope\": [\"/Madrid\", \"/Paris\"]}", id),
                Checks.okJson(api.get(Ngsi.entity(id)).send()));
    }

    @Test
    @DisplayName("4.7 TP 010_08, 010_09: observationSpace and operationSpace GeoProperties are appended as application/json")
    void appendGeoSpaces() {
        String id = Entities.id("Building");
        createPlain(Entities.minimal(id, "Building"));
        ObjectNode f = Json.obj("""
                {"observationSpace": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [2.29, 48.85]}},
                 "operationSpace": {"type": "GeoProperty", "value": {"type": "LineString", "coordinates": [[2.29, 48.85], [2.3, 48.86]]}}}""");
        Checks.noContent(api.post(Ngsi.entity(id) + "/attrs").json(f).send());
        ObjectNode expected = Entities.minimal(id, "Building");
        expected.setAll(f);
        Json.assertSame(expected, Checks.okJson(api.get(Ngsi.entity(id)).send()));
    }

    @Test
    @DisplayName("4.5.24 TP 010_10_01: a JsonProperty is appended, its json verbatim")
    void appendJsonProperty() {
        String id = createdVehicle();
        ObjectNode attr = Json.obj("{\"type\": \"JsonProperty\", \"json\": {\"speed\": 1, \"type\": \"raw\", \"list\": [1, null]}}");
        Checks.noContent(append(id, (ObjectNode) Json.obj("{}").set("tickets", attr)));
        Json.assertSame(Json.with(Entities.vehicle(id), "tickets", attr), retrieve(id));
    }

    @Test
    @DisplayName("4.5.20 TP 010_11_01: a VocabProperty is appended")
    void appendVocabProperty() {
        String id = createdVehicle();
        ObjectNode attr = Json.obj("{\"type\": \"VocabProperty\", \"vocab\": \"monument\"}");
        Checks.noContent(append(id, (ObjectNode) Json.obj("{}").set("category", attr)));
        Json.assertSame(Json.with(Entities.vehicle(id), "category", attr), retrieve(id));
    }

    @Test
    @DisplayName("5.6.3: a type in the fragment is added to the entity's types")
    void appendType() {
        String id = createdVehicle();
        Checks.noContent(append(id, Json.obj("{\"type\": \"Car\"}")));
        Json.assertSame(Json.with(Entities.vehicle(id), "type", Json.arr("[\"Vehicle\", \"Car\"]")), retrieve(id));
    }

    @Test
    @DisplayName("5.5.4: append is no partial update: an NGSI-LD Null in its fragment is 400 BadRequestData, nothing changes")
    void nullRejected() {
        String id = createdVehicle();
        Checks.badData(append(id, Json.obj("{\"brandName\": {\"type\": \"Property\", \"value\": \"urn:ngsi-ld:null\"}}")), "brandName");
        Json.assertSame(Entities.vehicle(id), retrieve(id));
    }

    @Test
    @DisplayName("5.6.3: an invalid attribute in the fragment is 400 BadRequestData naming it, and nothing is appended")
    void invalidAttribute() {
        String id = createdVehicle();
        Checks.badData(append(id, Json.obj("""
                {"fuelLevel": {"type": "Property", "value": 1}, "isBroken": {"type": "Relationship", "object": "not a uri"}}""")), "isBroken");
        Json.assertSame(Entities.vehicle(id), retrieve(id));
    }

    @Test
    @DisplayName("4.17 TP 563_01_01: a type selector the entity does not match is 404 and nothing is written; the matching one appends")
    void typeSelector() {
        String id = Entities.id("Vehicle");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": \"x\"}}", id));
        ObjectNode f = Json.obj("{\"name\": {\"type\": \"Property\", \"value\": \"y\"}}");
        Checks.problem(api.post(Ngsi.entity(id) + "/attrs").query("type", "Vehicle").json(f).send(), 404, "ResourceNotFound");
        assertEquals("x", Checks.okJson(api.get(Ngsi.entity(id)).send()).path("name").path("value").asText());
        Checks.noContent(api.post(Ngsi.entity(id) + "/attrs").query("type", "Building").json(f).send());
        assertEquals("y", Checks.okJson(api.get(Ngsi.entity(id)).send()).path("name").path("value").asText());
    }
}
