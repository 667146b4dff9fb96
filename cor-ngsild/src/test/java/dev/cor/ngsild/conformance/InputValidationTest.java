package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Input validation (4.5, 4.6, 5.2, 5.5.4): ids are URIs, types and names are valid, values have the
 * shape of their kind, NGSI-LD Null only where a partial update or merge allows it. Every violation
 * is 400 BadRequestData whose detail names what is wrong, and nothing is created. ETSI: CreateEntity
 * 402_01, 408_01, 418_01, 451_01, 451_02, 452_01, 453_01, 455_01, 462_01, 463_01, 465_01, 471_01,
 * 4522_01, 4524_01, 521_01, 5232_01, 554_01 (most marked since V1.9.1: where V1.8 says the same
 * the case is kept).
 */
class InputValidationTest extends ConformanceTest {

    /** Creates a Vehicle with one attribute {@code probe} as application/ld+json with the user context. */
    private static Answer createWithProbe(String id, String probe) {
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"probe\": %s}", id, probe);
        return api.post("/entities").ldJson(Entities.withContext(e, model)).send();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "402_01_01 a Property without value|{\"type\": \"Property\"}",
        "402_01_02 a Relationship without object|{\"type\": \"Relationship\"}",
        "402_01_03 a Property whose value is JSON null|{\"type\": \"Property\", \"value\": null}",
        "402_01_04 a LanguageProperty without languageMap|{\"type\": \"LanguageProperty\"}",
        "a Relationship whose object is not a URI|{\"type\": \"Relationship\", \"object\": \"not a uri\"}",
        "an attribute type NGSI-LD does not define|{\"type\": \"Fancy\", \"value\": 1}",
        "471_01_02 a GeoProperty whose value is no geometry|{\"type\": \"GeoProperty\", \"value\": \"not a geometry\"}",
        "463_01_01 a GeometryCollection|{\"type\": \"GeoProperty\", \"value\": {\"type\": \"GeometryCollection\", \"geometries\": [{\"type\": \"Point\", \"coordinates\": [17.1, 48.7]}]}}",
        "a Point with one coordinate|{\"type\": \"GeoProperty\", \"value\": {\"type\": \"Point\", \"coordinates\": [1]}}",
        "a Polygon ring that is not closed|{\"type\": \"GeoProperty\", \"value\": {\"type\": \"Polygon\", \"coordinates\": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}}",
        "408_01_01 an observedAt that is no DateTime|{\"type\": \"Property\", \"value\": 3, \"observedAt\": \"yesterday\"}",
        "408_01_02 an observedAt with a UTC offset|{\"type\": \"Property\", \"value\": 3, \"observedAt\": \"2026-08-10T12:00:00+02:00\"}",
        "408_01_03 an observedAt given as a Property|{\"type\": \"Property\", \"value\": 3, \"observedAt\": {\"type\": \"Property\", \"value\": \"2026-08-10T12:00:00Z\"}}",
        "a datasetId that is not a URI|{\"type\": \"Property\", \"value\": 3, \"datasetId\": \"not a uri\"}",
        "452_01_01 a Property with object|{\"type\": \"Property\", \"value\": 1, \"object\": \"urn:ngsi-ld:Other:1\"}",
        "452_01_02 a Property with languageMap|{\"type\": \"Property\", \"value\": 1, \"languageMap\": {\"en\": \"hello\"}}",
        "452_01_03 a Property with valueList|{\"type\": \"Property\", \"value\": 1, \"valueList\": [1, 2]}",
        "452_01_04 a Property with the output-only previousValue|{\"type\": \"Property\", \"value\": 1, \"previousValue\": 0}",
        "453_01_01 a Relationship with unitCode|{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:P:1\", \"unitCode\": \"MTR\"}",
        "453_01_02 a Relationship with value|{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:P:1\", \"value\": 42}",
        "453_01_03 a Relationship with languageMap|{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:P:1\", \"languageMap\": {\"en\": \"x\"}}",
        "453_01_04 a Relationship with the output-only previousObject|{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:P:1\", \"previousObject\": \"urn:ngsi-ld:P:0\"}",
        "4522_01_03 a ListProperty with value|{\"type\": \"ListProperty\", \"valueList\": [1.2], \"value\": 3}",
        "a ListProperty whose valueList is no array|{\"type\": \"ListProperty\", \"valueList\": 3}",
        "4522_01_02 an objectList entry that is not a URI|{\"type\": \"ListRelationship\", \"objectList\": [\"not a uri\"]}",
        "4524_01_02 a JsonProperty with unitCode|{\"type\": \"JsonProperty\", \"json\": {\"a\": 1}, \"unitCode\": \"MTR\"}",
        "4524_01_03 a JsonProperty with value|{\"type\": \"JsonProperty\", \"json\": {\"a\": 1}, \"value\": 1}",
        "4524_01_04 a JsonProperty whose json is a scalar|{\"type\": \"JsonProperty\", \"json\": 5}",
        "465_01_03 a languageMap value that is a number|{\"type\": \"LanguageProperty\", \"languageMap\": {\"en\": 5}}",
        "5232_01_04 a languageMap array of mixed types|{\"type\": \"LanguageProperty\", \"languageMap\": {\"en\": [\"a\", 5]}}",
        "5232_01_05 an empty language tag|{\"type\": \"LanguageProperty\", \"languageMap\": {\"\": \"x\"}}",
        "a VocabProperty whose vocab is a number|{\"type\": \"VocabProperty\", \"vocab\": 5}",
        "521_01_01 an NGSI-LD Null Property value|{\"type\": \"Property\", \"value\": \"urn:ngsi-ld:null\"}",
        "521_01_02 an NGSI-LD Null Relationship object|{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:null\"}",
        "521_01_03 an NGSI-LD Null sub-attribute value|{\"type\": \"Property\", \"value\": 1, \"sub\": {\"type\": \"Property\", \"value\": \"urn:ngsi-ld:null\"}}",
        "554_01_02 an NGSI-LD Null inside a Property value|{\"type\": \"Property\", \"value\": {\"country\": \"urn:ngsi-ld:null\"}}",
        "554_01_02 an NGSI-LD Null deep inside a Property value|{\"type\": \"Property\", \"value\": {\"geo\": {\"country\": \"urn:ngsi-ld:null\"}}}",
        "465_01_02 the NGSI-LD Null languageMap|{\"type\": \"LanguageProperty\", \"languageMap\": {\"@none\": \"urn:ngsi-ld:null\"}}",
        "451_01_04 an @context inside an attribute|{\"type\": \"Property\", \"value\": 1, \"@context\": {\"probe\": \"https://evil.example/probe\"}}",
        "455_01_02 two default instances|[{\"type\": \"Property\", \"value\": 55}, {\"type\": \"Property\", \"value\": 11, \"datasetId\": \"@none\"}]",
        "455_01_03 one datasetId twice|[{\"type\": \"Property\", \"value\": 55, \"datasetId\": \"urn:ngsi-ld:Dataset:a\"}, {\"type\": \"Property\", \"value\": 11, \"datasetId\": \"urn:ngsi-ld:Dataset:a\"}]",
        "an attribute whose value is JSON null|null"})
    @DisplayName("5.5.4: an attribute of the wrong shape is 400 BadRequestData naming it, and nothing is created")
    void badAttribute(String what, String probe) {
        String id = Entities.id("Vehicle");
        Checks.badData(createWithProbe(id, probe), "probe");
        assertGone(id);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"thisisaninvaliduri", "urn:ngsi-ld:Vehicle:A B", "urn:ngsi-ld:null", "<urn:ngsi-ld:Vehicle:1>"})
    @DisplayName("4.5.1 TP 554_01_01: an entity id that is not a URI (or is the NGSI-LD Null) is 400 BadRequestData naming it")
    void badId(String id) {
        ObjectNode e = Json.obj("{\"type\": \"Vehicle\"}");
        e.put("id", id);
        Checks.badData(api.post("/entities").json(e).send(), id);
    }

    @ParameterizedTest(name = "U+{0}")
    @ValueSource(strings = {"202E", "200B", "FEFF", "2028", "00A0", "003C", "FDD0", "FFFE", "115F", "3164"})
    @DisplayName("4.5.1 TP 451_02_01..14: an id carrying an invisible or forbidden code point is 400 BadRequestData")
    void invisibleCodePointInId(String codePoint) {
        String id = "urn:ngsi-ld:Vehicle:A" + Character.toString(Integer.parseInt(codePoint, 16)) + "B";
        ObjectNode e = Json.obj("{\"type\": \"Vehicle\"}");
        e.put("id", id);
        Checks.problem(api.post("/entities").json(e).send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("4.5.1 TP 451_02_07: an IRI with ordinary non-ASCII letters is a valid Relationship object")
    void iriObjectAccepted() {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"isParked\": {\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:Ciudad:París\"}}", id);
        create(e);
        Json.assertSame(e, retrieve(id));
    }

    @Test
    @DisplayName("5.2.4: an entity without id is 400 BadRequestData naming id")
    void missingId() {
        Checks.badData(api.post("/entities").json("{\"type\": \"Vehicle\"}").send(), "id");
    }

    @Test
    @DisplayName("5.2.4: an entity without type is 400 BadRequestData naming type, and nothing is created")
    void missingType() {
        String id = Entities.id("Vehicle");
        Checks.badData(api.post("/entities").json("{\"id\": \"" + id + "\"}").send(), "type");
        assertGone(id);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {"a number id|{\"id\": 5, \"type\": \"Vehicle\"}|id", "a number type|{\"id\": \"urn:ngsi-ld:V:1\", \"type\": 5}|type",
        "an object type|{\"id\": \"urn:ngsi-ld:V:2\", \"type\": {\"a\": 1}}|type"})
    @DisplayName("5.2.4: an id or type that is not a string is 400 BadRequestData naming it")
    void idAndTypeAreStrings(String what, String body, String member) {
        Checks.badData(api.post("/entities").json(body).send(), member);
    }

    @ParameterizedTest(name = "type {0}")
    @ValueSource(strings = {"9Vehicle", "Big Vehicle", "Vehicle<script>", "type"})
    @DisplayName("4.6.2 TP 462_01_02, 001_02_04: an entity type that is not a valid name (or is a keyword alias) is 400 BadRequestData naming it")
    void badType(String type) {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("{\"id\": \"%s\"}", id);
        e.put("type", type);
        Checks.badData(api.post("/entities").json(e).send(), type);
        assertGone(id);
    }

    @ParameterizedTest(name = "attribute {0}")
    @ValueSource(strings = {"my attr", "9speed", "speed<x>", "sp\"eed"})
    @DisplayName("4.6.2 TP 462_01_01: an attribute name that is not a valid name is 400 BadRequestData naming it, and nothing is created")
    void badAttributeName(String name) {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\"}", id);
        e.set(name, Json.obj("{\"type\": \"Property\", \"value\": 1}"));
        Checks.badData(api.post("/entities").json(e).send(), name);
        assertGone(id);
    }

    @ParameterizedTest(name = "attribute {0}")
    @ValueSource(strings = {"datasetId", "instanceId", "observedAt"})
    @DisplayName("4.5.1 TP 451_01_01..03: a core non-reified term used as an attribute name is 400 BadRequestData naming it")
    void reservedAttributeName(String name) {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\"}", id);
        e.set(name, Json.obj("{\"type\": \"Property\", \"value\": \"2026-01-01T00:00:00Z\"}"));
        Checks.badData(api.post("/entities").ldJson(Entities.withContext(e, model)).send(), name);
        assertGone(id);
    }

    @Test
    @DisplayName("4.6.2 TP 462_01_03: names of any Unicode letters are valid and round-trip")
    void unicodeNames() {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"Škola\", \"výška_1\": {\"type\": \"Property\", \"value\": 7}}", id);
        create(e);
        Json.assertSame(e, retrieve(id));
    }

    @ParameterizedTest(name = "scope {0}")
    @ValueSource(strings = {"\"9bad\"", "\"/a//b\"", "[\"/ok\", \"9bad\"]", "\"urn:ngsi-ld:null\"", "5"})
    @DisplayName("4.18 TP 418_01_01/02/05, 554_01_01: a scope outside the grammar is 400 BadRequestData naming scope")
    void badScope(String scope) {
        String id = Entities.id("Vehicle");
        Checks.badData(api.post("/entities").json("{\"id\": \"" + id + "\", \"type\": \"Vehicle\", \"scope\": " + scope + "}").send(), "scope");
        assertGone(id);
    }

    @Test
    @DisplayName("4.7.1 TP 471_01_03: location declared a plain Property is 400 BadRequestData naming location")
    void locationIsGeoProperty() {
        String id = Entities.id("Vehicle");
        Checks.badData(api.post("/entities").json("{\"id\": \"" + id + "\", \"type\": \"Vehicle\", \"location\": {\"type\": \"Property\", \"value\": 7}}").send(),
                "location");
        assertGone(id);
    }

    @Test
    @DisplayName("5.5.7 TP 557_01_01: a user @context with scoped contexts is 400 BadRequestData")
    void scopedContextRejected() {
        String id = Entities.id("Vehicle");
        Checks.problem(api.post("/entities").ldJson(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "@context": [{"Vehicle": {"@id": "https://example.org/Vehicle", "@context": {"speed": "https://example.org/hidden-speed"}}}]}""", id))
                .send(), 400, "BadRequestData");
        Checks.problem(api.get(Ngsi.entity(id)).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("4.5.2 TP 452_01_06, 453_01_05: valueType on a Property and objectType on a Relationship are legal")
    void optionalTypeMembers() {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "isParked": {"type": "Relationship", "object": "urn:ngsi-ld:OffStreetParking:1", "objectType": "OffStreetParking"}}""", id);
        create(e);
        Json.assertSame(e, retrieve(id));
        String id2 = Entities.id("Vehicle");
        ObjectNode e2 = Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"speed\": {\"type\": \"Property\", \"value\": 1.5, \"valueType\": \"xsd:double\"}}", id2);
        Checks.created(api.post("/entities").ldJson(Entities.withContext(e2, model)).send(), id2);
        assertEquals(1.5, retrieve(id2).path("speed").path("value").asDouble());
    }
}
