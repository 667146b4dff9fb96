package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Entity representations (4.5.1 normalized, 4.5.2.3/4.5.3.3 concise, 4.5.4 simplified a.k.a.
 * keyValues), chosen with {@code format} or the deprecated {@code options} (6.3.7, format wins), on
 * output; concise on input (a bare value is a Property, {@code object} makes a Relationship, ...).
 * ETSI: RetrieveEntity 018_04, 018_15, 018_16, 454_01; CreateEntity 452_02.
 */
class RepresentationTest extends ConformanceTest {

    /** One attribute of every kind, normalized. */
    private static ObjectNode everyKind(String id) {
        return Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "speed": [{"type": "Property", "value": 55},
                           {"type": "Property", "value": 11, "datasetId": "urn:ngsi-ld:Dataset:gps"}],
                 "brandName": {"type": "LanguageProperty", "languageMap": {"en": "hi"}},
                 "street": {"type": "JsonProperty", "json": {"a": 1}},
                 "category": {"type": "VocabProperty", "vocab": "monument"},
                 "tyreTreadDepths": {"type": "ListProperty", "valueList": [1.2, 3.4]},
                 "isParked": {"type": "Relationship", "object": "urn:ngsi-ld:OffStreetParking:1"},
                 "route": {"type": "ListRelationship", "objectList": [{"object": "urn:ngsi-ld:Road:1"}, {"object": "urn:ngsi-ld:Road:2"}]},
                 "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1.0, 2.0]}},
                 "name": {"type": "Property", "value": "n", "unitCode": "C62", "observedAt": "2024-01-01T00:00:00Z"},
                 "source": {"type": "Property", "value": {"k": "v"}}}""", id);
    }

    private static ObjectNode keyValuesOf(String id) {
        return Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "speed": {"dataset": {"@none": 55, "urn:ngsi-ld:Dataset:gps": 11}},
                 "brandName": {"languageMap": {"en": "hi"}},
                 "street": {"json": {"a": 1}},
                 "category": {"vocab": "monument"},
                 "tyreTreadDepths": [1.2, 3.4],
                 "isParked": "urn:ngsi-ld:OffStreetParking:1",
                 "route": ["urn:ngsi-ld:Road:1", "urn:ngsi-ld:Road:2"],
                 "location": {"type": "Point", "coordinates": [1.0, 2.0]},
                 "name": "n",
                 "source": {"k": "v"}}""", id);
    }

    @Test
    @DisplayName("4.5.4 TP 454_01, 018_04_01: keyValues per kind: bare value/object/valueList/objectList; wrapped languageMap, json, vocab; a dataset map for instances")
    void keyValuesPerKind() {
        String id = Entities.id("Vehicle");
        create(everyKind(id));
        Json.assertSame(keyValuesOf(id), Checks.okJson(retrieve(id, "options", "keyValues"), model));
    }

    @ParameterizedTest(name = "format={0} options={1}")
    @CsvSource(delimiter = '|', value = {
        "keyValues|", "simplified|", "|keyValues", "|simplified", "keyValues|normalized"})
    @DisplayName("6.3.7 TP 018_15_01/02/04/05/07: format or options keyValues (or simplified) give the simplified form; format wins over options")
    void simplifiedSelected(String format, String options) {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Ngsi.Request r = api.get(Ngsi.entity(id)).link(model);
        if (format != null) {
            r.query("format", format);
        }
        if (options != null) {
            r.query("options", options);
        }
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Building", "name": "Eiffel Tower", "subCategory": "tourism", "airQualityLevel": 4, "almostFull": false}""", id),
                Checks.okJson(r.send(), model));
    }

    @ParameterizedTest(name = "format={0} options={1}")
    @CsvSource(delimiter = '|', value = {"normalized|", "|normalized", "normalized|keyValues"})
    @DisplayName("6.3.7 TP 018_15_03/06: format or options normalized give the normalized form")
    void normalizedSelected(String format, String options) {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Ngsi.Request r = api.get(Ngsi.entity(id)).link(model);
        if (format != null) {
            r.query("format", format);
        }
        if (options != null) {
            r.query("options", options);
        }
        Json.assertSame(Entities.building(id), Checks.okJson(r.send(), model));
    }

    @ParameterizedTest(name = "format={0} options={1}")
    @CsvSource(delimiter = '|', value = {"invalidFormat|", "|invalidOptions", "|keyValues,invalid", "keyValues|invalid"})
    @DisplayName("6.3.7 TP 018_16_01..04: a format or options value that is not defined is 400 InvalidRequest")
    void invalidRepresentation(String format, String options) {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Ngsi.Request r = api.get(Ngsi.entity(id)).link(model);
        if (format != null) {
            r.query("format", format);
        }
        if (options != null) {
            r.query("options", options);
        }
        Checks.problem(r.send(), 400, "InvalidRequest");
    }

    @ParameterizedTest(name = "format={0} options={1}")
    @CsvSource(delimiter = '|', value = {"invalidFormat|", "|invalidOptions", "|keyValues,invalid", "keyValues|invalid"})
    @DisplayName("6.3.7 TP 018_16_01..04: the parameters are checked before the entity is looked for - 400, not 404, for an id nobody created")
    void invalidRepresentationOfAnEntityThatDoesNotExist(String format, String options) {
        Ngsi.Request r = api.get(Ngsi.entity(Entities.id("Building"))).link(model);
        if (format != null) {
            r.query("format", format);
        }
        if (options != null) {
            r.query("options", options);
        }
        Checks.problem(r.send(), 400, "InvalidRequest");
    }

    @Test
    @DisplayName("4.5.2.3, 4.5.3.3: concise drops type where it can be inferred; a bare value when a Property has nothing else")
    void concise() {
        // Two forms are left open and only checked loosely: a GeoProperty alone (a bare geometry or
        // {value}) and the default instance inside an array (55 or {value: 55}).
        String id = Entities.id("Vehicle");
        create(everyKind(id));
        JsonNode c = Checks.okJson(retrieve(id, "format", "concise"), model);
        JsonNode speed = c.path("speed");
        assertEquals(2, speed.size(), c::toString);
        int named = speed.get(0).has("datasetId") ? 0 : 1;
        Json.assertSame(Json.obj("{\"value\": 11, \"datasetId\": \"urn:ngsi-ld:Dataset:gps\"}"), speed.get(named));
        JsonNode def = speed.get(1 - named);
        assertTrue(Json.matches(Json.parse("55"), def) || Json.matches(Json.obj("{\"value\": 55}"), def), c::toString);
        JsonNode location = c.path("location");
        assertTrue(Json.matches(Json.obj("{\"type\": \"Point\", \"coordinates\": [1.0, 2.0]}"), location)
                || Json.matches(Json.obj("{\"value\": {\"type\": \"Point\", \"coordinates\": [1.0, 2.0]}}"), location), c::toString);
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "brandName": {"languageMap": {"en": "hi"}},
                 "street": {"json": {"a": 1}},
                 "category": {"vocab": "monument"},
                 "tyreTreadDepths": {"valueList": [1.2, 3.4]},
                 "isParked": {"object": "urn:ngsi-ld:OffStreetParking:1"},
                 "route": {"objectList": [{"object": "urn:ngsi-ld:Road:1"}, {"object": "urn:ngsi-ld:Road:2"}]},
                 "name": {"value": "n", "unitCode": "C62", "observedAt": "2024-01-01T00:00:00Z"},
                 "source": {"value": {"k": "v"}}}""", id), Json.without(c, "location", "speed"));
    }

    @Test
    @DisplayName("4.5.2.3 TP 452_02: concise input: a bare value, a geometry, {value, observedAt} and {object} become Property, GeoProperty, Property, Relationship")
    void conciseInput() {
        String id = Entities.id("Vehicle");
        create(Json.obj("""
                {"id": "%s", "type": "Vehicle", "speed": 55,
                 "location": {"type": "Point", "coordinates": [8.0, 49.0]},
                 "area": {"value": {"type": "Point", "coordinates": [1.0, 2.0]}},
                 "brandName": {"value": "Volvo", "observedAt": "2026-01-01T00:00:00Z"},
                 "isParked": {"object": "urn:ngsi-ld:OffStreetParking:1"},
                 "street": {"languageMap": {"en": "Main Street"}},
                 "category": {"vocab": "monument"},
                 "tickets": {"json": {"a": 1}},
                 "tyreTreadDepths": {"valueList": [1, 2]},
                 "route": {"objectList": [{"object": "urn:ngsi-ld:Road:1"}]}}""", id));
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "speed": {"type": "Property", "value": 55},
                 "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [8.0, 49.0]}},
                 "area": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1.0, 2.0]}},
                 "brandName": {"type": "Property", "value": "Volvo", "observedAt": "2026-01-01T00:00:00Z"},
                 "isParked": {"type": "Relationship", "object": "urn:ngsi-ld:OffStreetParking:1"},
                 "street": {"type": "LanguageProperty", "languageMap": {"en": "Main Street"}},
                 "category": {"type": "VocabProperty", "vocab": "monument"},
                 "tickets": {"type": "JsonProperty", "json": {"a": 1}},
                 "tyreTreadDepths": {"type": "ListProperty", "valueList": [1, 2]},
                 "route": {"type": "ListRelationship", "objectList": [{"object": "urn:ngsi-ld:Road:1"}]}}""", id), retrieve(id));
    }

    @Test
    @DisplayName("4.5.24 TP 4524_01_01: a concise JsonProperty ({json}) keeps its json verbatim and grows no value or unitCode")
    void conciseJsonProperty() {
        String id = Entities.id("Vehicle");
        create(Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"tickets\": {\"json\": {\"speed\": 3, \"brandName\": \"x\", \"type\": \"raw\"}}}", id));
        Json.assertSame(Json.obj("{\"type\": \"JsonProperty\", \"json\": {\"speed\": 3, \"brandName\": \"x\", \"type\": \"raw\"}}"),
                retrieve(id).get("tickets"));
    }

    @Test
    @DisplayName("4.5.4: keyValues compacts with the request's context like normalized does")
    void keyValuesWithoutContext() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "%s", "%s": "Eiffel Tower", "%s": "tourism", "%s": 4, "%s": false}""", id, modelIri("Building"),
                modelIri("name"), modelIri("subCategory"), modelIri("airQualityLevel"), modelIri("almostFull")),
                Checks.okJson(api.get(Ngsi.entity(id)).query("options", "keyValues").send(), Json.CORE));
    }

    @Test
    @DisplayName("6.3.7: options=sysAttrs together with keyValues still answers the simplified form")
    void sysAttrsWithKeyValues() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        JsonNode e = Checks.okJson(retrieve(id, "options", "keyValues,sysAttrs"), model);
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Building", "name": "Eiffel Tower", "subCategory": "tourism", "airQualityLevel": 4, "almostFull": false}""", id),
                Json.withoutSysAttrs(e));
    }
}
