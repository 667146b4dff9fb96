package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * The information model (4.5, 4.6, 4.8, 5.2): every attribute kind round-trips normalized,
 * sub-attributes nest, values are never expanded, vocab values are, multi-attributes are told apart by
 * datasetId, and createdAt/modifiedAt are kept by the broker and shown with options=sysAttrs.
 */
class InformationModelTest extends ConformanceTest {

    /** Creates {@code attrs} on a fresh Vehicle with the user context and asserts it reads back as sent. */
    private static void roundTrip(String attrs) {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", " + attrs.substring(1), id);
        create(e);
        Json.assertSame(e, retrieve(id));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"\"text\"", "42", "-3.25", "true", "false", "0", "1e3", "\"\"",
        "{\"street\": \"Main\", \"nested\": {\"list\": [1, \"two\", {\"x\": true}]}}", "[1, 2, 3]", "[{\"a\": 1}, {\"b\": 2}]"})
    @DisplayName("4.5.2: a Property value of any JSON type reads back as sent (a one-element array as its element: OneElementArrayOracleTest)")
    void propertyValues(String value) {
        roundTrip("{\"brandName\": {\"type\": \"Property\", \"value\": " + value + "}}");
    }

    @Test
    @DisplayName("4.5.2: an object value whose keys are terms (type, id, speed) round-trips under the same context")
    void valueKeysRoundTrip() {
        // Whether keys inside a Property value are expanded is left open (JSON-LD would expand them,
        // Orion-LD keeps them opaque; JsonProperty exists for opaque JSON): under the creating
        // context both readings give the document back.
        roundTrip("{\"brandName\": {\"type\": \"Property\", \"value\": {\"speed\": 3, \"type\": \"Vehicle\", \"id\": \"x\"}}}");
    }

    @Test
    @DisplayName("4.5.2: a string value that looks like a term or an IRI stays that string")
    void stringValuesNotCompacted() {
        roundTrip("{\"brandName\": {\"type\": \"Property\", \"value\": \"Vehicle\"}, \"source\": {\"type\": \"Property\", \"value\": \"https://cor.test/model#speed\"}}");
    }

    @Test
    @DisplayName("4.5.3: a Relationship with observedAt, objectType and a sub-Property reads back as sent")
    void relationship() {
        roundTrip("""
                {"isParked": {"type": "Relationship", "object": "urn:ngsi-ld:OffStreetParking:Downtown1", "objectType": "OffStreetParking",
                  "observedAt": "2017-07-29T12:00:04Z", "source": {"type": "Property", "value": "camera"}}}""");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
        "{\"type\": \"Point\", \"coordinates\": [-3.7, 40.4]}",
        "{\"type\": \"MultiPoint\", \"coordinates\": [[-3.7, 40.4], [2.3, 48.8]]}",
        "{\"type\": \"LineString\", \"coordinates\": [[-3.7, 40.4], [2.3, 48.8]]}",
        "{\"type\": \"MultiLineString\", \"coordinates\": [[[-3.7, 40.4], [2.3, 48.8]], [[0, 0], [1, 1]]]}",
        "{\"type\": \"Polygon\", \"coordinates\": [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[1, 1], [2, 1], [2, 2], [1, 1]]]}",
        "{\"type\": \"MultiPolygon\", \"coordinates\": [[[[0, 0], [1, 0], [1, 1], [0, 0]]], [[[5, 5], [6, 5], [6, 6], [5, 5]]]]}"})
    @DisplayName("4.7 + 4.6.3: a GeoProperty of every GeoJSON geometry but GeometryCollection reads back as sent")
    void geometries(String geometry) {
        roundTrip("{\"location\": {\"type\": \"GeoProperty\", \"value\": " + geometry + "}}");
    }

    @Test
    @DisplayName("4.5.18: a LanguageProperty reads back as sent")
    void languageProperty() {
        roundTrip("{\"street\": {\"type\": \"LanguageProperty\", \"languageMap\": {\"fr\": \"Grand Place\", \"nl\": \"Grote Markt\", \"en\": [\"a\", \"b\"]}}}");
    }

    @Test
    @DisplayName("4.5.21: a ListProperty keeps its order and its values verbatim")
    void listProperty() {
        roundTrip("{\"tyreTreadDepths\": {\"type\": \"ListProperty\", \"valueList\": [3.2, 1.2, 2.2, {\"k\": \"v\"}, \"s\"], \"unitCode\": \"MMT\"}}");
    }

    @Test
    @DisplayName("4.5.22: a ListRelationship keeps the order of its objects")
    void listRelationship() {
        roundTrip("""
                {"route": {"type": "ListRelationship", "objectList": [{"object": "urn:ngsi-ld:Road:3"}, {"object": "urn:ngsi-ld:Road:1"}, {"object": "urn:ngsi-ld:Road:2"}]}}""");
    }

    @Test
    @DisplayName("4.5.22 TP 4522_01_01: objectList entries given as bare URIs are answered normalized as {object: URI}")
    void listRelationshipBareUris() {
        String id = Entities.id("Vehicle");
        create(Json.obj("""
                {"id": "%s", "type": "Vehicle", "route": {"type": "ListRelationship", "objectList": ["urn:ngsi-ld:Road:1", {"object": "urn:ngsi-ld:Road:2"}]}}""", id));
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "route": {"type": "ListRelationship", "objectList": [{"object": "urn:ngsi-ld:Road:1"}, {"object": "urn:ngsi-ld:Road:2"}]}}""", id),
                retrieve(id));
    }

    @Test
    @DisplayName("4.5.20: a VocabProperty's values are terms: stored as IRIs, compacted with the request's context")
    void vocabCompaction() {
        String id = Entities.id("Vehicle");
        create(Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"category\": {\"type\": \"VocabProperty\", \"vocab\": [\"monument\", \"sightseeing\"]}}", id));
        JsonNode plain = Checks.okJson(api.get(Ngsi.entity(id)).send(), Json.CORE);
        Json.assertSame(Json.obj("{\"type\": \"VocabProperty\", \"vocab\": [\"https://cor.test/vocab#monument\", \"https://cor.test/vocab#sightseeing\"]}"),
                plain.get(modelIri("category")));
        JsonNode withModel = retrieve(id);
        Json.assertSame(Json.obj("{\"type\": \"VocabProperty\", \"vocab\": [\"monument\", \"sightseeing\"]}"), withModel.get("category"));
    }

    @Test
    @DisplayName("4.5.24: a JsonProperty's json is kept verbatim, terms and nulls included, under any context")
    void jsonProperty() {
        String id = Entities.id("Vehicle");
        ObjectNode json = Json.obj("{\"speed\": 3, \"brandName\": \"x\", \"type\": \"raw\", \"@context\": \"not mine\", \"n\": null}");
        create(Json.with(Entities.minimal(id, "Vehicle"), "tickets", Json.obj("{\"type\": \"JsonProperty\"}").set("json", json)));
        JsonNode plain = Checks.okJson(api.get(Ngsi.entity(id)).send());
        Json.assertSame(json, plain.path("tickets").path("json"));
        Json.assertSame(json, retrieve(id).path("tickets").path("json"));
    }

    @Test
    @DisplayName("4.5.2: sub-Properties and sub-Relationships nest to any depth")
    void nestedSubAttributes() {
        roundTrip("""
                {"speed": {"type": "Property", "value": 55, "unitCode": "KMH", "observedAt": "2024-05-01T10:00:00Z",
                  "source": {"type": "Property", "value": "radar",
                    "providedBy": {"type": "Relationship", "object": "urn:ngsi-ld:Device:radar1",
                      "name": {"type": "Property", "value": "front radar"}}},
                  "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1, 2]}}}}""");
    }

    @Test
    @DisplayName("4.5.5: instances of one attribute are told apart by datasetId; the default instance has none")
    void multiAttribute() {
        roundTrip("""
                {"speed": [{"type": "Property", "value": 55},
                           {"type": "Property", "value": 54.5, "datasetId": "urn:ngsi-ld:Dataset:gps"},
                           {"type": "Property", "value": 56, "datasetId": "urn:ngsi-ld:Dataset:radar"}],
                 "isParked": [{"type": "Relationship", "object": "urn:ngsi-ld:P:1", "datasetId": "urn:ngsi-ld:Dataset:a"},
                              {"type": "Relationship", "object": "urn:ngsi-ld:P:2", "datasetId": "urn:ngsi-ld:Dataset:b"}]}""");
    }

    @Test
    @DisplayName("4.5.5.1 TP 455_01_01: datasetId @none names the default instance, which is answered without datasetId")
    void noneDatasetIdIsDefault() {
        String id = Entities.id("Vehicle");
        create(Json.obj("""
                {"id": "%s", "type": "Vehicle", "speed": [{"type": "Property", "value": 55, "datasetId": "@none"},
                  {"type": "Property", "value": 11, "datasetId": "urn:ngsi-ld:Dataset:gps"}]}""", id));
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Vehicle", "speed": [{"type": "Property", "value": 55},
                  {"type": "Property", "value": 11, "datasetId": "urn:ngsi-ld:Dataset:gps"}]}""", id), retrieve(id));
    }

    @Test
    @DisplayName("4.8 + 6.3.11: without options=sysAttrs no createdAt or modifiedAt appears anywhere")
    void noSysAttrsByDefault() {
        String id = Entities.id("Vehicle");
        create(Entities.vehicle(id));
        Answer a = api.get(Ngsi.entity(id)).link(model).send();
        Checks.okJson(a);
        assertFalse(a.text().contains("createdAt") || a.text().contains("modifiedAt"), a::toString);
    }

    @Test
    @DisplayName("4.8 + 6.3.11: options=sysAttrs shows createdAt and modifiedAt on the entity and on every attribute instance")
    void sysAttrs() {
        String id = Entities.id("Vehicle");
        create(Entities.vehicle(id));
        JsonNode e = Checks.okJson(retrieve(id, "options", "sysAttrs"), model);
        Json.assertSame(Entities.vehicle(id), Json.withoutSysAttrs(e));
        Json.assertDateTime(e.get("createdAt"), "entity createdAt");
        Json.assertDateTime(e.get("modifiedAt"), "entity modifiedAt");
        for (JsonNode attr : new JsonNode[] {e.get("brandName"), e.get("isParked"), e.get("speed").get(0), e.get("speed").get(1)}) {
            Json.assertDateTime(attr.get("createdAt"), "createdAt of " + attr);
            Json.assertDateTime(attr.get("modifiedAt"), "modifiedAt of " + attr);
            assertFalse(Instant.parse(attr.get("modifiedAt").asText()).isBefore(Instant.parse(attr.get("createdAt").asText())), attr::toString);
        }
    }

    @Test
    @DisplayName("4.8: an update moves modifiedAt of the entity and the attribute, never createdAt")
    void modifiedAtMoves() {
        String id = Entities.id("Vehicle");
        create(Entities.vehicle(id));
        JsonNode before = Checks.okJson(retrieve(id, "options", "sysAttrs"));
        Checks.noContent(api.patch(Ngsi.attr(id, "brandName")).json(Json.obj("{\"value\": \"BMW\"}")).link(model).send());
        JsonNode after = Checks.okJson(retrieve(id, "options", "sysAttrs"));
        assertEquals(before.get("createdAt").asText(), after.get("createdAt").asText());
        assertEquals(before.path("brandName").path("createdAt").asText(), after.path("brandName").path("createdAt").asText());
        assertFalse(Instant.parse(after.get("modifiedAt").asText()).isBefore(Instant.parse(before.get("modifiedAt").asText())), after::toString);
        assertFalse(Instant.parse(after.path("brandName").path("modifiedAt").asText())
                .isBefore(Instant.parse(before.path("brandName").path("modifiedAt").asText())), after::toString);
        assertEquals(before.path("isParked").path("modifiedAt").asText(), after.path("isParked").path("modifiedAt").asText(),
                "an attribute the update did not touch keeps its modifiedAt");
    }

    @Test
    @DisplayName("4.8: createdAt and modifiedAt sent by a client are not taken: the broker keeps its own")
    void sysAttrsAreTheBrokers() {
        String id = Entities.id("Vehicle");
        createPlain(Json.obj("""
                {"id": "%s", "type": "Vehicle", "createdAt": "2000-01-01T00:00:00Z",
                 "speed": {"type": "Property", "value": 1, "modifiedAt": "2000-01-01T00:00:00Z"}}""", id));
        JsonNode e = Checks.okJson(api.get(Ngsi.entity(id)).query("options", "sysAttrs").send());
        assertTrue(Instant.parse(e.get("createdAt").asText()).isAfter(Instant.parse("2020-01-01T00:00:00Z")), e::toString);
        assertTrue(Instant.parse(e.path("speed").path("modifiedAt").asText()).isAfter(Instant.parse("2020-01-01T00:00:00Z")), e::toString);
    }
}
