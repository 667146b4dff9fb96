package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Partial Attribute Update (5.6.4), PATCH /entities/{entityId}/attrs/{attrId} (6.7.3.1), with the
 * partial update patch of 5.5.8 at attribute level: the members of the fragment replace those of
 * the instance, the others stay. ETSI:
 * TP/NGSI-LD/ContextInformation/Provision/EntityAttributes/PartialAttributeUpdate.
 */
class PartialAttributeUpdateTest extends ConformanceTest {

    private static Answer patch(String id, String attr, ObjectNode fragment) {
        return api.patch(Ngsi.attr(id, attr)).ldJson(Entities.withContext(fragment, model)).send();
    }

    @Test
    @DisplayName("5.6.4 TP 012_01_01: the members given replace those of the attribute, the others stay")
    void partialUpdate() {
        String id = createdVehicle();
        Checks.noContent(patch(id, "isParked", Json.obj("""
                {"type": "Relationship", "object": "urn:ngsi-ld:OffStreetParking:Downtown2", "observedAt": "2017-07-29T15:00:04Z"}""")));
        ObjectNode expected = Entities.vehicle(id);
        ((ObjectNode) expected.get("isParked")).put("object", "urn:ngsi-ld:OffStreetParking:Downtown2")
                .put("observedAt", "2017-07-29T15:00:04Z");
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.6.4 TP 012_01_02: with a datasetId, that instance is patched and the others stay")
    void partialUpdateOfInstance() {
        String id = createdVehicle();
        Checks.noContent(patch(id, "speed", Json.obj("{\"value\": 20, \"datasetId\": \"urn:ngsi-ld:Dataset:gps\"}")));
        ObjectNode expected = Entities.vehicle(id);
        ((ObjectNode) expected.get("speed").get(1)).put("value", 20);
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.5.8 TP 558_01_01: value and observedAt are overwritten, unitCode stays (EXAMPLE 1)")
    void subAttributesStay() {
        String id = Entities.id("Building");
        create(Json.obj("""
                {"id": "%s", "type": "Building",
                 "temperature": {"type": "Property", "value": 25, "unitCode": "CEL", "observedAt": "2022-03-14T01:59:26.535Z"}}""", id));
        Checks.noContent(api.patch(Ngsi.attr(id, "temperature")).json(Json.obj("""
                {"type": "Property", "value": 100, "observedAt": "2022-03-14T13:00:00.000Z"}""")).send());
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Building",
                 "temperature": {"type": "Property", "value": 100, "unitCode": "CEL", "observedAt": "2022-03-14T13:00:00.000Z"}}""", id),
                retrieve(id)); // read under the context it was created with: Building is the model's term
    }

    @Test
    @DisplayName("5.6.4 TP 012_02_01: no entity id in the path is 400 BadRequestData")
    void noEntityId() {
        Checks.problem(api.patch("/entities//attrs/speed").ldJson(Entities.withContext(Json.obj("{\"value\": 1}"), model)).send(), 400,
                "BadRequestData");
    }

    @Test
    @DisplayName("5.6.4 TP 012_02_02: an entity id that is not a URI is 400 BadRequestData")
    void invalidEntityId() {
        Checks.badData(patch("thisisaninvaliduri", "speed", Json.obj("{\"value\": 1}")), "thisisaninvaliduri");
    }

    @Test
    @DisplayName("5.6.4 TP 012_02_03: a fragment of another attribute type is 400 BadRequestData, nothing changes")
    void typeChange() {
        String id = createdVehicle();
        Checks.problem(patch(id, "brandName", Json.obj("{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:Brand:BMW\"}")), 400,
                "BadRequestData");
        Json.assertSame(Entities.vehicle(id), retrieve(id));
    }

    @Test
    @DisplayName("5.6.4 TP 012_02_04: an empty fragment is 400 BadRequestData")
    void emptyFragment() {
        String id = createdVehicle();
        Checks.problem(api.patch(Ngsi.attr(id, "brandName")).json("{}").link(model).send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.6.4 TP 012_03_01: an entity not known is 404 ResourceNotFound")
    void unknownEntity() {
        Checks.problem(patch(Entities.id("Vehicle"), "isParked", Json.obj("{\"object\": \"urn:ngsi-ld:X:1\"}")), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.6.4 TP 012_03_02: no datasetId when the attribute has no default instance is 404 ResourceNotFound")
    void noDefaultInstance() {
        String id = Entities.id("Vehicle");
        create(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "speed": {"type": "Property", "value": 54.5, "datasetId": "urn:ngsi-ld:Dataset:gps"}}""", id));
        Checks.problem(patch(id, "speed", Json.obj("{\"value\": 20}")), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.6.4 TP 012_03_03: a datasetId the attribute has no instance of is 404 ResourceNotFound")
    void unknownDatasetId() {
        String id = createdVehicle();
        Checks.problem(patch(id, "speed", Json.obj("{\"value\": 20, \"datasetId\": \"urn:ngsi-ld:Dataset:unknown\"}")), 404, "ResourceNotFound");
        Json.assertSame(Entities.vehicle(id), retrieve(id));
    }

    @Test
    @DisplayName("5.6.4 TP 012_03_04: an attribute the entity lacks is 404 ResourceNotFound")
    void unknownAttribute() {
        String id = createdVehicle();
        Checks.problem(patch(id, "isParked2", Json.obj("{\"object\": \"urn:ngsi-ld:X:1\"}")), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("4.5.18 TP 012_04_01: the languageMap of a LanguageProperty is replaced")
    void languageProperty() {
        String id = Entities.id("Building");
        create(Json.obj("""
                {"id": "%s", "type": "Building", "street": {"type": "LanguageProperty", "languageMap": {"fr": "Grand Place", "nl": "Grote Markt"}}}""", id));
        Checks.noContent(patch(id, "street", Json.obj("{\"type\": \"LanguageProperty\", \"languageMap\": {\"en\": \"Main Square\"}}")));
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Building", "street": {"type": "LanguageProperty", "languageMap": {"en": "Main Square"}}}""", id), retrieve(id));
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"Property,name", "Relationship,locatedAt", "GeoProperty,location", "LanguageProperty,street"})
    @DisplayName("5.6.4 TP 012_05_01..04, 012_07_01..04: an NGSI-LD Null value deletes the default instance of the attribute")
    void nullDeletesDefaultInstance(String kind, String attr) {
        // 5.6.4.1 says the operation does not delete "the whole Attribute itself"; the suite deletes
        // the targeted instance with a Null value (an instance without its value cannot remain).
        String id = Entities.id("Building");
        ObjectNode e = Json.obj("""
                {"id": "%s", "type": "Building",
                 "name": {"type": "Property", "value": "Eiffel Tower"},
                 "locatedAt": {"type": "Relationship", "object": "urn:ngsi-ld:City:Paris"},
                 "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [-8.5, 41.2]}},
                 "street": {"type": "LanguageProperty", "languageMap": {"fr": "Grand Place"}}}""", id);
        create(e);
        Checks.noContent(patch(id, attr, Entities.nullOf(kind)));
        Json.assertSame(Json.without(e, attr), retrieve(id));
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"Property,name", "Relationship,locatedAt", "GeoProperty,location", "LanguageProperty,street"})
    @DisplayName("5.6.4 TP 012_06_01..04: an NGSI-LD Null value with a datasetId deletes that instance only")
    void nullDeletesNamedInstance(String kind, String attr) {
        String id = Entities.id("Building");
        ObjectNode e = Entities.twoInstancesOfEachKind(id);
        create(e);
        Checks.noContent(patch(id, attr, Entities.nullOf(kind).put("datasetId", "urn:ngsi-ld:Dataset:01")));
        ObjectNode expected = e.deepCopy();
        expected.set(attr, e.get(attr).get(0));
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.5.8: an NGSI-LD Null sub-attribute is removed, the rest of the attribute stays")
    void nullDeletesSubAttribute() {
        String id = createdVehicle();
        Checks.noContent(patch(id, "isParked", Json.obj("{\"providedBy\": {\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:null\"}}")));
        ObjectNode expected = Entities.vehicle(id);
        ((ObjectNode) expected.get("isParked")).remove("providedBy");
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.5.8 TP 558_01_04: a datasetId cannot be deleted with NGSI-LD Null: 400 BadRequestData")
    void datasetIdNotNullable() {
        String id = Entities.id("Building");
        create(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"temperature\": {\"type\": \"Property\", \"value\": 25}}", id));
        Checks.problem(api.patch(Ngsi.attr(id, "temperature")).json(Json.obj("{\"datasetId\": \"urn:ngsi-ld:null\"}")).send(), 400,
                "BadRequestData");
    }

    @Test
    @DisplayName("5.5.4 TP 554_01_03: an NGSI-LD Null inside an object value is no partial update: 400, the value stays")
    void nullInsideValueRejected() {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "address": {"type": "Property", "value": {"street": "Straße des 17. Juni", "country": "Germany"}}}""", id);
        create(e);
        Checks.problem(patch(id, "address", Json.obj("{\"value\": {\"country\": \"urn:ngsi-ld:null\"}}")), 400, "BadRequestData");
        Json.assertSame(e, retrieve(id));
    }

    @Test
    @DisplayName("5.6.4 TP 564_01_01: scope cannot be partially updated: 400 BadRequestData, the scope stays")
    void scopeRejected() {
        String id = Entities.id("Vehicle");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"scope\": \"/Madrid\"}", id));
        Checks.problem(api.patch(Ngsi.attr(id, "scope")).json(Json.obj("{\"value\": \"/Barcelona\"}")).send(), 400, "BadRequestData");
        assertEquals("/Madrid", Checks.okJson(api.get(Ngsi.entity(id)).send()).path("scope").asText());
    }

    @Test
    @DisplayName("4.5.24 TP 012_08_01: the json of a JsonProperty is replaced")
    void jsonProperty() {
        String id = Entities.id("Building");
        create(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"tickets\": {\"type\": \"JsonProperty\", \"json\": {\"a\": 1}}}", id));
        Checks.noContent(patch(id, "tickets", Json.obj("{\"type\": \"JsonProperty\", \"json\": {\"b\": [true, null]}}")));
        Json.assertSame(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"tickets\": {\"type\": \"JsonProperty\", \"json\": {\"b\": [true, null]}}}", id),
                retrieve(id));
    }

    @Test
    @DisplayName("4.5.20 TP 012_09_01: the vocab of a VocabProperty is replaced")
    void vocabProperty() {
        String id = Entities.id("Building");
        create(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"category\": {\"type\": \"VocabProperty\", \"vocab\": \"monument\"}}", id));
        Checks.noContent(patch(id, "category", Json.obj("{\"type\": \"VocabProperty\", \"vocab\": \"sightseeing\"}")));
        Json.assertSame(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"category\": {\"type\": \"VocabProperty\", \"vocab\": \"sightseeing\"}}", id),
                retrieve(id));
    }

    @Test
    @DisplayName("6.3.4 TP 044_01_01: PATCH as application/merge-patch+json is taken as application/json")
    void mergePatchJson() {
        String id = createdVehicle();
        Checks.noContent(api.patch(Ngsi.attr(id, "brandName")).body(Ngsi.MERGE_PATCH, Json.obj("{\"value\": \"BMW\"}")).link(model).send());
        ObjectNode expected = Entities.vehicle(id);
        ((ObjectNode) expected.get("brandName")).put("value", "BMW");
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("4.17 TP 564_01_02: a type selector the entity does not match is 404; the matching one patches")
    void typeSelector() {
        String id = Entities.id("Vehicle");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": \"x\"}}", id));
        Checks.problem(api.patch(Ngsi.attr(id, "name")).query("type", "Vehicle").json(Json.obj("{\"value\": \"y\"}")).send(), 404,
                "ResourceNotFound");
        Checks.noContent(api.patch(Ngsi.attr(id, "name")).query("type", "Building").json(Json.obj("{\"value\": \"y\"}")).send());
        assertEquals("y", Checks.okJson(api.get(Ngsi.entity(id)).send()).path("name").path("value").asText());
    }

    @Test
    @DisplayName("5.6.4: the attribute name is expanded with the request's context: under another context it is another attribute (404)")
    void nameExpandsWithContext() {
        String id = createdVehicle();
        Checks.problem(api.patch(Ngsi.attr(id, "brandName")).json(Json.obj("{\"value\": \"BMW\"}")).send(), 404, "ResourceNotFound");
        Checks.noContent(api.patch(Ngsi.attr(id, "brandName")).json(Json.obj("{\"value\": \"BMW\"}")).link(model).send());
        ObjectNode expected = Entities.vehicle(id);
        ((ObjectNode) expected.get("brandName")).put("value", "BMW");
        Json.assertSame(expected, retrieve(id));
    }
}
