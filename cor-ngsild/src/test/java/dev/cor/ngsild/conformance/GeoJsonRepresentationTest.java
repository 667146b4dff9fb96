package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * The GeoJSON representation of entities (4.5.16, 4.5.17) that Accept: application/geo+json selects
 * on Retrieve Entity and Query Entities (6.3.4, 6.3.6): a Feature (a FeatureCollection for a
 * listing), geometry from {@code location} or {@code geometryProperty}, the entity's members under
 * {@code properties}, {@code @context} in the body unless {@code Prefer: body=json}.
 * ETSI: RetrieveEntity 018_05, 4516_01, 4517_01; CommonResponses 636_01.
 */
class GeoJsonRepresentationTest extends ConformanceTest {

    private static ObjectNode located(String id) {
        return Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "speed": {"type": "Property", "value": 5},
                 "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1.0, 2.0]}},
                 "observationSpace": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [3.0, 4.0]}}}""", id);
    }

    private static Answer geo(String id, String... params) {
        Ngsi.Request r = api.get(Ngsi.entity(id)).accept(Ngsi.GEO_JSON).link(model);
        for (int i = 0; i < params.length; i += 2) {
            r.query(params[i], params[i + 1]);
        }
        return r.send();
    }

    private static JsonNode feature(Answer a) {
        Checks.status(a, 200);
        assertEquals(Ngsi.GEO_JSON, a.contentType(), a::toString);
        return a.json();
    }

    @Test
    @DisplayName("4.5.16 TP 018_05_02, 4516_01_01, 636_01_01: a Feature: id, type Feature, geometry = location, the entity under properties, @context in the body")
    void feature() {
        String id = Entities.id("Vehicle");
        create(located(id));
        JsonNode f = feature(geo(id));
        ObjectNode properties = Json.without(located(id), "id");
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Feature", "geometry": {"type": "Point", "coordinates": [1.0, 2.0]}, "@context": "%s"}""", id, model)
                .set("properties", properties), f);
    }

    @Test
    @DisplayName("4.5.16 TP 018_05_03: geometryProperty selects the GeoProperty of the geometry")
    void geometryProperty() {
        String id = Entities.id("Vehicle");
        create(located(id));
        JsonNode f = feature(geo(id, "geometryProperty", "observationSpace"));
        Json.assertSame(Json.obj("{\"type\": \"Point\", \"coordinates\": [3.0, 4.0]}"), f.get("geometry"));
    }

    @Test
    @DisplayName("4.5.16 TP 018_05_04, 4516_01_02: a geometryProperty the entity lacks, or no location, gives geometry null")
    void noGeometry() {
        String id = Entities.id("Vehicle");
        create(located(id));
        JsonNode f = feature(geo(id, "geometryProperty", "operationSpace"));
        assertTrue(f.has("geometry") && f.get("geometry").isNull(), f::toString);
        String bare = Entities.id("Vehicle");
        create(Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"speed\": {\"type\": \"Property\", \"value\": 5}}", bare));
        JsonNode g = feature(geo(bare));
        assertTrue(g.has("geometry") && g.get("geometry").isNull(), g::toString);
        JsonNode h = feature(geo(bare, "geometryProperty", "speed"));
        assertTrue(h.has("geometry") && h.get("geometry").isNull(), () -> "a Property that is no GeoProperty gives null: " + h);
    }

    @Test
    @DisplayName("4.5.16.1 TP 4516_01_01: with several location instances the default instance is the geometry")
    void defaultInstanceGeometry() {
        String id = Entities.id("Vehicle");
        create(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "location": [{"type": "GeoProperty", "value": {"type": "Point", "coordinates": [9.0, 9.0]}, "datasetId": "urn:ngsi-ld:Dataset:gps"},
                              {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1.0, 2.0]}}]}""", id));
        JsonNode f = feature(geo(id));
        Json.assertSame(Json.obj("{\"type\": \"Point\", \"coordinates\": [1.0, 2.0]}"), f.get("geometry"));
        assertFalse(f.path("properties").has("id"), f::toString);
    }

    @Test
    @DisplayName("6.3.6 TP 636_01_02: Prefer: body=json moves the @context to a Link header")
    void preferBodyJson() {
        String id = Entities.id("Vehicle");
        create(located(id));
        Answer a = api.get(Ngsi.entity(id)).accept(Ngsi.GEO_JSON).link(model).header("Prefer", "body=json").send();
        JsonNode f = feature(a);
        assertFalse(f.has("@context"), a::toString);
        assertEquals(model, Checks.contextUrl(a), a::toString);
    }

    @Test
    @DisplayName("4.5.17 TP 4517_01, 018_05_01: keyValues: simplified properties, multi-instances as a dataset map")
    void simplifiedFeature() {
        String id = Entities.id("Vehicle");
        create(Json.obj("""
                {"id": "%s", "type": "Vehicle", "speed": {"type": "Property", "value": 5},
                 "location": [{"type": "GeoProperty", "value": {"type": "Point", "coordinates": [9.0, 9.0]}, "datasetId": "urn:ngsi-ld:Dataset:gps"},
                              {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [3.0, 4.0]}}]}""", id));
        JsonNode f = feature(geo(id, "options", "keyValues"));
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Feature", "geometry": {"type": "Point", "coordinates": [3.0, 4.0]}, "@context": "%s",
                 "properties": {"type": "Vehicle", "speed": 5,
                   "location": {"dataset": {"@none": {"type": "Point", "coordinates": [3.0, 4.0]},
                                            "urn:ngsi-ld:Dataset:gps": {"type": "Point", "coordinates": [9.0, 9.0]}}}}}""", id, model), f);
    }

    @Test
    @DisplayName("4.5.16.3 TP 4516_01_03: a listing as GeoJSON is a FeatureCollection whose features carry no @context")
    void featureCollection() {
        String type = Entities.uniqueName("Veh");
        String id = Entities.id("Vehicle");
        createPlain(Json.obj("""
                {"id": "%s", "type": "%s", "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1.0, 2.0]}}}""", id, type));
        Answer a = api.get("/entities").query("type", type).accept(Ngsi.GEO_JSON).send();
        JsonNode c = feature(a);
        assertEquals("FeatureCollection", c.path("type").asText(), a::toString);
        assertEquals(1, c.path("features").size(), a::toString);
        JsonNode f = c.path("features").get(0);
        assertEquals("Feature", f.path("type").asText(), a::toString);
        assertEquals(id, f.path("id").asText(), a::toString);
        assertFalse(f.has("@context"), a::toString);
    }
}
