package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Create Entity (5.6.1), POST /entities/ (6.4.3.1): 201 with the entity's relative path in
 * Location and no body; 409 AlreadyExists; InvalidRequest for a body that is not a JSON object.
 * Each created entity is read back and must be exactly what was sent. The ETSI cases are
 * TP/NGSI-LD/ContextInformation/Provision/Entities/CreateEntity.
 */
class CreateEntityTest extends ConformanceTest {

    /** POSTs {@code entity} with the user context in the body and reads it back as ld+json with the same context. */
    private static void assertRoundTrip(ObjectNode entity) {
        String id = entity.get("id").asText();
        Checks.created(api.post("/entities").ldJson(Entities.withContext(entity, model)).send(), id);
        JsonNode back = Checks.okLdJson(api.get(Ngsi.entity(id)).link(model).accept(Ngsi.LD_JSON).send(), model);
        Json.assertSame(Entities.withContext(entity, model), back);
    }

    @Test
    @DisplayName("5.6.1 TP 001_01_01: a minimal entity as application/json is created (201, Location, no body) and reads back as sent")
    void minimalEntity() {
        String id = Entities.id("Building");
        ObjectNode e = Entities.minimal(id, "Building");
        Checks.created(api.post("/entities").json(e).send(), id);
        JsonNode back = Checks.okJson(api.get(Ngsi.entity(id)).send(), Json.CORE);
        Json.assertSame(e, back);
    }

    @Test
    @DisplayName("6.4.3.1: the Location of an id with a '/', '#', '?' or '%' in it is its escaped path segment, and dereferences")
    void theLocationOfAnyIdDereferences() {
        String id = Entities.id("Building") + ":a/b#c?d%e";
        Answer a = api.post("/entities").json(Entities.minimal(id, "Building")).send();
        Checks.status(a, 201);
        String location = a.header("Location");
        assertEquals(Ngsi.PREFIX + "/entities/" + id.replace("/", "%2F").replace("#", "%23").replace("?", "%3F")
                .replace("%e", "%25e"), location);
        java.net.URI u = java.net.URI.create(api.baseUrl()).resolve(location); // as a client resolves it
        assertEquals(id, Checks.okJson(api.get(u.getRawPath().substring(Ngsi.PREFIX.length())).send(), Json.CORE).path("id").asText());
    }

    @Test
    @DisplayName("5.6.1 TP 001_01_02: an entity with Properties (unitCode, observedAt) as application/ld+json reads back as sent")
    void simpleProperties() {
        assertRoundTrip(Entities.building(Entities.id("Building")));
    }

    @Test
    @DisplayName("5.6.1 TP 001_01_03: a Property with a sub-Relationship reads back as sent")
    void relationshipOfProperty() {
        ObjectNode e = Entities.building(Entities.id("Building"));
        ((ObjectNode) e.get("airQualityLevel")).set("providedBy",
                Json.obj("{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:Sensor:43a1af27\"}"));
        assertRoundTrip(e);
    }

    @Test
    @DisplayName("5.6.1 TP 001_01_04: an entity with a location GeoProperty reads back as sent")
    void locationAttribute() {
        assertRoundTrip(Json.obj("""
                {"id": "%s", "type": "Building",
                 "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [-8.5, 41.2]}}}""",
                Entities.id("Building")));
    }

    @Test
    @DisplayName("5.6.1 TP 001_01_05: a GeoProperty that is not a core term (a Polygon) reads back as sent")
    void nonCoreGeoProperty() {
        assertRoundTrip(Json.obj("""
                {"id": "%s", "type": "Building",
                 "polygonArea": {"type": "GeoProperty", "value": {"type": "Polygon",
                   "coordinates": [[[-8.5, 41.2], [-8.6, 41.2], [-8.6, 41.3], [-8.5, 41.3], [-8.5, 41.2]]]}}}""",
                Entities.id("Building")));
    }

    @Test
    @DisplayName("5.5.4 TP 001_02_01: a body that is not JSON is 400 InvalidRequest")
    void invalidJson() {
        Checks.problem(api.post("/entities").ldJson("{\"id\": \"urn:ngsi-ld:Building:x\", \"type\": ").send(), 400,
                "InvalidRequest");
    }

    @Test
    @DisplayName("5.5.4 TP 001_02_02: a JSON array instead of an entity object is 400 InvalidRequest")
    void arrayBody() {
        // The suite's "EmptyJson" payload is [] and it expects InvalidRequest; Orion-LD answers the same.
        Checks.problem(api.post("/entities").json("[]").send(), 400, "InvalidRequest");
    }

    @Test
    @DisplayName("5.6.1 TP 001_03_01: creating an id that exists is 409 AlreadyExists, and the first entity is untouched")
    void alreadyExists() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        ObjectNode again = Entities.minimal(id, "Vehicle");
        Checks.problem(api.post("/entities").ldJson(Entities.withContext(again, model)).send(), 409, "AlreadyExists");
        Json.assertSame(Entities.building(id), retrieve(id));
    }

    @Test
    @DisplayName("5.6.1 TP 001_10_01: an entity with a LanguageProperty reads back as sent")
    void languageProperty() {
        assertRoundTrip(Json.obj("""
                {"id": "%s", "type": "Building",
                 "street": {"type": "LanguageProperty", "languageMap": {"fr": "Grand Place", "nl": "Grote Markt"}}}""",
                Entities.id("Building")));
    }

    @Test
    @DisplayName("4.18 TP 001_11_01: an entity with one scope reads back as sent")
    void oneScope() {
        String id = Entities.id("Building");
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"scope\": \"/Madrid/Gardens/ParqueNorte\"}", id);
        Checks.created(api.post("/entities").json(e).send(), id);
        Json.assertSame(e, Checks.okJson(api.get(Ngsi.entity(id)).send()));
    }

    @Test
    @DisplayName("4.18 TP 001_11_02: an entity with several scopes reads back as sent")
    void manyScopes() {
        String id = Entities.id("Building");
        ObjectNode e = Json.obj("""
                {"id": "%s", "type": "Building", "scope": ["/Madrid/Gardens/ParqueNorte", "/CompanyA/OrganizationB/UnitC"]}""", id);
        Checks.created(api.post("/entities").json(e).send(), id);
        Json.assertSame(e, Checks.okJson(api.get(Ngsi.entity(id)).send()));
    }

    @Test
    @DisplayName("4.7 TP 001_12: an entity with an observationSpace GeoProperty reads back as sent")
    void observationSpace() {
        assertRoundTrip(Json.obj("""
                {"id": "%s", "type": "Building",
                 "observationSpace": {"type": "GeoProperty", "value": {"type": "Polygon",
                   "coordinates": [[[-8.5, 41.2], [-8.6, 41.2], [-8.6, 41.3], [-8.5, 41.3], [-8.5, 41.2]]]}}}""",
                Entities.id("Building")));
    }

    @Test
    @DisplayName("4.7 TP 001_13: an entity with an operationSpace GeoProperty reads back as sent")
    void operationSpace() {
        assertRoundTrip(Json.obj("""
                {"id": "%s", "type": "Building",
                 "operationSpace": {"type": "GeoProperty", "value": {"type": "LineString", "coordinates": [[-8.5, 41.2], [-8.6, 41.3]]}}}""",
                Entities.id("Building")));
    }

    @Test
    @DisplayName("4.5.24 TP 001_14_01: a JsonProperty whose json is an object (with an inner null and NGSI-LD-looking keys) reads back verbatim")
    void jsonPropertyObject() {
        assertRoundTrip(Json.obj("""
                {"id": "%s", "type": "Building",
                 "tickets": {"type": "JsonProperty", "json": {"id": "some-id", "type": "some-type", "speed": 3, "null": null}}}""",
                Entities.id("Building")));
    }

    @Test
    @DisplayName("4.5.24 TP 001_14_02: a JsonProperty whose json is an array of objects reads back verbatim")
    void jsonPropertyArray() {
        assertRoundTrip(Json.obj("""
                {"id": "%s", "type": "Building",
                 "tickets": {"type": "JsonProperty", "json": [{"id": "a-1", "other": "x"}, {"id": "a-2", "other": "y"}]}}""",
                Entities.id("Building")));
    }

    @Test
    @DisplayName("4.5.20 TP 001_15_01: a VocabProperty with one term reads back as sent")
    void vocabPropertyString() {
        assertRoundTrip(Json.obj("""
                {"id": "%s", "type": "Building", "category": {"type": "VocabProperty", "vocab": "monument"}}""",
                Entities.id("Building")));
    }

    @Test
    @DisplayName("4.5.20 TP 001_15_02: a VocabProperty with an array of terms reads back as sent")
    void vocabPropertyArray() {
        assertRoundTrip(Json.obj("""
                {"id": "%s", "type": "Building", "category": {"type": "VocabProperty", "vocab": ["monument", "sightseeing"]}}""",
                Entities.id("Building")));
    }

    @Test
    @DisplayName("4.16: an entity with two types reads back with both")
    void twoTypes() {
        assertRoundTrip(Json.obj("""
                {"id": "%s", "type": ["Building", "Vehicle"], "name": {"type": "Property", "value": "both"}}""",
                Entities.id("Building")));
    }

    @Test
    @DisplayName("4.4 TP 404_01_01: @id and @type are accepted on input; answers use id and type")
    void jsonLdKeywordsOnInput() {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("""
                {"@id": "%s", "@type": "Vehicle", "speed": {"type": "Property", "value": 42}, "@context": "%s"}""", id, model);
        Checks.created(api.post("/entities").ldJson(e).send(), id);
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Vehicle", "speed": {"type": "Property", "value": 42}}""", id), retrieve(id));
    }

    @Test
    @DisplayName("4.4 TP 404_01_02: a user context that redefines the core term Property does not change the attribute's type")
    void coreTermsStayCore() {
        // The core context is processed last (4.4), so its definition of Property wins.
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("""
                {"id": "%s", "type": "Vehicle", "speed": {"type": "Property", "value": 42},
                 "@context": [{"Property": "https://evil.example/Property"}, "%s"]}""", id, model);
        Checks.created(api.post("/entities").ldJson(e).send(), id);
        assertEquals("Property", retrieve(id).path("speed").path("type").asText());
    }

    @Test
    @DisplayName("5.5.5 TP 555_01_01: with no @context at all the core context applies; a default-vocabulary term reads back short")
    void noContextMeansCore() {
        String id = Entities.id("Vehicle");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"temperature\": {\"type\": \"Property\", \"value\": 21}}", id));
        Ngsi.Answer a = api.get(Ngsi.entity(id)).accept(Ngsi.LD_JSON).send();
        JsonNode back = Checks.okLdJson(a, Json.CORE);
        assertEquals(21, back.path("temperature").path("value").asInt(), a::toString);
        assertFalse(a.text().contains("default-context"), () -> "no expanded default-vocabulary IRI leaks: " + a);
    }

    @Test
    @DisplayName("5.5.5 TP 555_01_02: core terms resolve without a user context: location stays a GeoProperty")
    void coreTermsWithoutUserContext() {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("""
                {"id": "%s", "type": "Vehicle", "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [17.6, 48.7]}}}""", id);
        createPlain(e);
        Ngsi.Answer a = api.get(Ngsi.entity(id)).accept(Ngsi.LD_JSON).send();
        Json.assertSame(Entities.withContext(e, Json.CORE), Checks.okLdJson(a, Json.CORE));
    }

    @Test
    @DisplayName("5.5.7 TP 557_01_03: a type created under a user context reads back as its full IRI without that context")
    void unmatchedIriIsFullyQualified() {
        String id = Entities.id("Vehicle");
        create(Entities.minimal(id, "Vehicle"));
        JsonNode back = Checks.okJson(api.get(Ngsi.entity(id)).send(), Json.CORE);
        assertEquals(modelIri("Vehicle"), back.path("type").asText());
    }

    @Test
    @DisplayName("4.6.1 TP 461_01_01: UTF-8 content round-trips byte-exact")
    void utf8RoundTrip() {
        String id = Entities.id("Vehicle");
        create(Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"brandName\": {\"type\": \"Property\", \"value\": \"žltý kôň — 100 €\"}}", id));
        Ngsi.Answer a = api.get(Ngsi.entity(id)).link(model).send();
        assertEquals("žltý kôň — 100 €", Checks.okJson(a).path("brandName").path("value").asText());
        assertFalse(a.text().contains("\uFFFD"), a::toString);
    }

    @Test
    @DisplayName("4.6.4 TP 464_01_01: markup characters in a value are stored and answered verbatim, never escaped as HTML or \\u003c")
    void markupCharactersVerbatim() {
        String id = Entities.id("Vehicle");
        String value = "<script>alert('x')</script> \"q\" = ; ( )";
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\"}", id);
        e.set("note", Json.obj("{\"type\": \"Property\"}").put("value", value));
        create(e);
        Ngsi.Answer a = api.get(Ngsi.entity(id)).link(model).send();
        assertEquals(value, Checks.okJson(a).path("note").path("value").asText());
        assertFalse(a.text().contains("&lt;"), a::toString);
        assertFalse(a.text().contains("\\u003c"), a::toString);
    }

    @Test
    @DisplayName("4.6.5 TP 465_01_01: a languageMap with arrays and @none reads back unchanged")
    void languageMapWithNoneAndArrays() {
        assertRoundTrip(Json.obj("""
                {"id": "%s", "type": "Vehicle", "brandName": {"type": "LanguageProperty",
                 "languageMap": {"sk": "škola", "en": ["school", "academy"], "@none": "default"}}}""", Entities.id("Vehicle")));
    }

    @Test
    @DisplayName("5.6.1: an entity created in application/json under a Link context reads back compacted with it")
    void jsonWithLinkContext() {
        String id = Entities.id("Building");
        ObjectNode e = Entities.building(id);
        Checks.created(api.post("/entities").json(e).link(model).send(), id);
        Json.assertSame(e, retrieve(id));
    }
}
