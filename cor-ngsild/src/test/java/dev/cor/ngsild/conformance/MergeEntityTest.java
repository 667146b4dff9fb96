package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Merge Entity (5.6.17), PATCH /entities/{entityId} (6.5.3.4), with the merge-patch behaviour of
 * 5.5.12: members of the fragment are merged to any depth, NGSI-LD Null removes what it names.
 * ETSI: TP/NGSI-LD/ContextInformation/Provision/Entities/MergeEntity.
 */
class MergeEntityTest extends ConformanceTest {

    private static void merge(String id, ObjectNode fragment) {
        Checks.noContent(api.patch(Ngsi.entity(id)).ldJson(Entities.withContext(fragment, model)).send());
    }

    @Test
    @DisplayName("5.6.17 TP 056_01_01: merging a fragment with only id and type changes nothing (204)")
    void mergeEmpty() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        merge(id, Entities.minimal(id, "Building"));
        Json.assertSame(Entities.building(id), retrieve(id));
    }

    @Test
    @DisplayName("5.6.17 TP 056_01_02: merged Properties replace the values of those there and add the others")
    void mergeSimpleProperties() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        merge(id, Json.obj("""
                {"name": {"type": "Property", "value": "Pisa Tower"},
                 "subCategory": {"type": "Property", "value": "sightseeing"},
                 "source": {"type": "Property", "value": "survey"}}"""));
        ObjectNode expected = Entities.building(id);
        expected.set("name", Json.obj("{\"type\": \"Property\", \"value\": \"Pisa Tower\"}"));
        expected.set("subCategory", Json.obj("{\"type\": \"Property\", \"value\": \"sightseeing\"}"));
        expected.set("source", Json.obj("{\"type\": \"Property\", \"value\": \"survey\"}"));
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.6.17 TP 056_01_03: a merged Relationship is added")
    void mergeRelationship() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        merge(id, Json.obj("{\"locatedAt\": {\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:City:Paris\"}}"));
        ObjectNode expected = Entities.building(id);
        expected.set("locatedAt", Json.obj("{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:City:Paris\"}"));
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.5.12 TP 056_01_04: merging value and observedAt of a Property leaves its unitCode (EXAMPLE 1)")
    void mergePartialProperty() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        merge(id, Json.obj("""
                {"airQualityLevel": {"type": "Property", "value": 1, "observedAt": "2024-01-01T00:00:00.000Z"}}"""));
        ObjectNode expected = Entities.building(id);
        expected.set("airQualityLevel", Json.obj("""
                {"type": "Property", "value": 1, "unitCode": "C62", "observedAt": "2024-01-01T00:00:00.000Z"}"""));
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("5.5.12 TP 554_01_04: a merged object value is merged key by key; an NGSI-LD Null removes its key (EXAMPLE 2)")
    void mergeInsideValue() {
        String id = Entities.id("Vehicle");
        create(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "address": {"type": "Property", "value": {"street": "Straße des 17. Juni", "city": "Berlin", "country": "Germany"}}}""", id));
        merge(id, Json.obj("""
                {"address": {"type": "Property", "value": {"street": "Pariser Platz", "country": "urn:ngsi-ld:null"}}}"""));
        Ngsi.Answer a = api.get(Ngsi.entity(id)).link(model).send();
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Vehicle",
                 "address": {"type": "Property", "value": {"street": "Pariser Platz", "city": "Berlin"}}}""", id), Checks.okJson(a));
        assertFalse(a.text().contains("urn:ngsi-ld:null"), a::toString);
    }

    @Test
    @DisplayName("5.6.17 TP 056_02_01: an id that is not a URI is 400 BadRequestData")
    void invalidId() {
        Checks.badData(api.patch(Ngsi.entity("invalidUri")).json(Json.obj("{\"name\": {\"type\": \"Property\", \"value\": 1}}"))
                .link(model).send(), "invalidUri");
    }

    @Test
    @DisplayName("6.3.2 TP 056_02_02 (differs): PATCH on /entities/ without an id is 405 Method Not Allowed, with Allow")
    void noId() {
        // The suite expects 400 here; /entities/ has no PATCH (6.4), see ReplaceEntityTest.noId.
        Ngsi.Answer a = api.patch("/entities/").json(Json.obj("{\"name\": {\"type\": \"Property\", \"value\": 1}}")).link(model).send();
        Checks.problemDetails(a, 405);
        assertTrue(a.header("Allow") != null && a.header("Allow").contains("POST"), a::toString);
    }

    @Test
    @DisplayName("5.6.17 TP 056_02_03: an id not known is 404 ResourceNotFound")
    void unknownId() {
        Checks.problem(api.patch(Ngsi.entity("urn:ngsi-ld:Building:Nonexistent" + Entities.uniqueName("x")))
                .json(Json.obj("{\"name\": {\"type\": \"Property\", \"value\": 1}}")).link(model).send(), 404, "ResourceNotFound");
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"Property,name", "Relationship,locatedAt", "GeoProperty,location", "LanguageProperty,street"})
    @DisplayName("5.6.17 TP 056_03_01..04: an NGSI-LD Null without datasetId deletes the default instance of a Property, Relationship, GeoProperty, LanguageProperty")
    void nullDeletesDefaultInstance(String kind, String attr) {
        String id = Entities.id("Building");
        create(Entities.twoInstancesOfEachKind(id));
        ObjectNode fragment = Json.obj("{}");
        fragment.set(attr, Entities.nullOf(kind));
        merge(id, fragment);
        ObjectNode expected = Entities.twoInstancesOfEachKind(id);
        JsonNode kept = expected.get(attr).get(1);
        expected.set(attr, kept);
        Ngsi.Answer a = api.get(Ngsi.entity(id)).link(model).send();
        Json.assertSame(expected, Checks.okJson(a));
        assertFalse(a.text().contains("urn:ngsi-ld:null"), a::toString);
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"Property,name", "Relationship,locatedAt", "GeoProperty,location", "LanguageProperty,street"})
    @DisplayName("5.6.17 TP 056_04_01..04: an NGSI-LD Null with a datasetId deletes that instance only")
    void nullDeletesNamedInstance(String kind, String attr) {
        String id = Entities.id("Building");
        create(Entities.twoInstancesOfEachKind(id));
        ObjectNode fragment = Json.obj("{}");
        fragment.set(attr, Entities.nullOf(kind).put("datasetId", "urn:ngsi-ld:Dataset:01"));
        merge(id, fragment);
        ObjectNode expected = Entities.twoInstancesOfEachKind(id);
        expected.set(attr, expected.get(attr).get(0));
        Json.assertSame(expected, retrieve(id));
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"Property,name", "Relationship,locatedAt", "GeoProperty,location", "LanguageProperty,street"})
    @DisplayName("5.6.17 TP 056_05_01..04: an NGSI-LD Null on a single-instance attribute removes the attribute")
    void nullDeletesAttribute(String kind, String attr) {
        String id = Entities.id("Building");
        ObjectNode start = Entities.twoInstancesOfEachKind(id);
        start.set(attr, start.get(attr).get(0));
        create(start);
        ObjectNode fragment = Json.obj("{}");
        fragment.set(attr, Entities.nullOf(kind));
        merge(id, fragment);
        Json.assertSame(Json.without(start, attr), retrieve(id));
    }

    @Test
    @DisplayName("5.6.17: types in the fragment are added to the entity's types")
    void typesAdded() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        merge(id, Json.obj("{\"type\": \"Vehicle\"}"));
        Json.assertSame(Json.with(Entities.building(id), "type", Json.arr("[\"Building\", \"Vehicle\"]")), retrieve(id));
    }

    @Test
    @DisplayName("6.3.4 TP 044: PATCH as application/merge-patch+json is taken as application/json")
    void mergePatchJson() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.noContent(api.patch(Ngsi.entity(id)).body(Ngsi.MERGE_PATCH, Json.obj("{\"name\": {\"type\": \"Property\", \"value\": \"Pisa\"}}"))
                .link(model).send());
        ObjectNode expected = Entities.building(id);
        expected.set("name", Json.obj("{\"type\": \"Property\", \"value\": \"Pisa\"}"));
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("6.5.3.4: format=keyValues merges simplified values and keeps each attribute's type and sub-attributes")
    void simplifiedMerge() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.noContent(api.patch(Ngsi.entity(id)).query("format", "keyValues")
                .json(Json.obj("{\"airQualityLevel\": 7, \"name\": \"Pisa\"}")).link(model).send());
        ObjectNode expected = Entities.building(id);
        expected.set("airQualityLevel", Json.obj("""
                {"type": "Property", "value": 7, "unitCode": "C62", "observedAt": "2020-09-09T16:40:00.000Z"}"""));
        expected.set("name", Json.obj("{\"type\": \"Property\", \"value\": \"Pisa\"}"));
        Json.assertSame(expected, retrieve(id));
    }

    @Test
    @DisplayName("4.17: a type selector the entity does not match is 404 and nothing changes")
    void typeSelector() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        ObjectNode f = Json.obj("{\"name\": {\"type\": \"Property\", \"value\": \"Pisa\"}}");
        Checks.problem(api.patch(Ngsi.entity(id)).query("type", "Vehicle").json(f).link(model).send(), 404, "ResourceNotFound");
        Json.assertSame(Entities.building(id), retrieve(id));
    }

    @Test
    @DisplayName("5.6.17: a merge of an invalid fragment (a Property without value) is 400 BadRequestData and changes nothing")
    void invalidFragment() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.badData(api.patch(Ngsi.entity(id)).json(Json.obj("{\"brandName\": {\"type\": \"Property\"}}")).link(model).send(),
                "brandName");
        Json.assertSame(Entities.building(id), retrieve(id));
    }
}
