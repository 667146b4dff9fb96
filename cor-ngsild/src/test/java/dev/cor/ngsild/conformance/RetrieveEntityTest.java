package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Retrieve Entity (5.7.1), GET /entities/{entityId} (6.5.3.1): the entity compacted with the
 * request's context, attrs/pick/omit projections (4.21), the language filter (4.15), the entity type
 * selector (4.17) and the errors the clause names. Representations (keyValues, concise, sysAttrs) are
 * {@link RepresentationTest}'s. ETSI: TP/NGSI-LD/ContextInformation/Consumption/Entity/RetrieveEntity.
 */
class RetrieveEntityTest extends ConformanceTest {

    @Test
    @DisplayName("5.7.1 TP 018_01_01: an entity by id as application/ld+json, no Link: full IRIs and the core @context")
    void byIdWithoutContext() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        JsonNode back = Checks.okLdJson(api.get(Ngsi.entity(id)).accept(Ngsi.LD_JSON).send(), Json.CORE);
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "%s",
                 "%s": {"type": "Property", "value": "Eiffel Tower"},
                 "%s": {"type": "Property", "value": "tourism"},
                 "%s": {"type": "Property", "value": 4, "unitCode": "C62", "observedAt": "2020-09-09T16:40:00.000Z"},
                 "%s": {"type": "Property", "value": false},
                 "@context": "%s"}""", id, modelIri("Building"), modelIri("name"), modelIri("subCategory"),
                modelIri("airQualityLevel"), modelIri("almostFull"), Json.CORE), back);
    }

    @Test
    @DisplayName("5.7.1 TP 018_01_02: attrs=airQualityLevel,subCategory returns only those attributes")
    void someAttributes() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        JsonNode back = Checks.okJson(retrieve(id, "attrs", "airQualityLevel,subCategory"), model);
        Json.assertSame(Json.without(Entities.building(id), "name", "almostFull"), back);
    }

    @Test
    @DisplayName("5.7.1 TP 018_02_01: an id that is not a URI is 400 BadRequestData")
    void invalidId() {
        Checks.badData(api.get(Ngsi.entity("thisisaninvaliduri")).accept(Ngsi.LD_JSON).send(), "thisisaninvaliduri");
    }

    @Test
    @DisplayName("5.7.1 TP 018_03_01: an id not known is 404 ResourceNotFound")
    void unknownId() {
        Checks.problem(api.get(Ngsi.entity(Entities.id("Building"))).accept(Ngsi.LD_JSON).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.7.1 TP 018_03_02: attrs naming only attributes the entity lacks is 404 ResourceNotFound")
    void unknownAttribute() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.problem(retrieve(id, "attrs", "notKnown"), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("6.3.5 TP 018_06_01: GET without a Link compacts with the core context (terms of the user context come back as IRIs)")
    void withoutLinkTheCoreContext() {
        String id = Entities.id("Building");
        Checks.created(api.post("/entities").json(Entities.building(id)).link(model).send(), id);
        JsonNode back = Checks.okJson(api.get(Ngsi.entity(id)).accept(Ngsi.JSON).send(), Json.CORE);
        assertEquals(modelIri("Building"), back.path("type").asText());
        assertTrue(back.has(modelIri("almostFull")), back::toString);
    }

    @Test
    @DisplayName("6.3.5 TP 018_06_02: GET with the creation Link compacts back to the short names")
    void withTheCreationLink() {
        String id = Entities.id("Building");
        Checks.created(api.post("/entities").json(Entities.building(id)).link(model).send(), id);
        Json.assertSame(Entities.building(id), Checks.okJson(api.get(Ngsi.entity(id)).accept(Ngsi.JSON).link(model).send(), model));
    }

    private static String street() {
        String id = Entities.id("Building");
        create(Json.obj("""
                {"id": "%s", "type": "Building",
                 "street": {"type": "LanguageProperty", "languageMap": {"fr": "Grand Place", "nl": "Grote Markt"}}}""", id));
        return id;
    }

    @ParameterizedTest(name = "lang={0}")
    @ValueSource(strings = {"fr", "fr-CH,fr", "fr-CH,fr;q=0.9,en;q=0.8,*;q=0.5"})
    @DisplayName("4.15 TP 018_07_01/02/04: lang picks the matching language: a Property with value and lang")
    void languageFilter(String lang) {
        String id = street();
        JsonNode back = Checks.okJson(retrieve(id, "lang", lang), model);
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Building", "street": {"type": "Property", "value": "Grand Place", "lang": "fr"}}""", id), back);
    }

    @Test
    @DisplayName("4.15 TP 018_07_03: lang=* picks any language of the map, and says which in lang")
    void languageFilterAny() {
        // "Any supported language" is the implementation's choice; the suite expects the first key.
        String id = street();
        JsonNode s = Checks.okJson(retrieve(id, "lang", "*"), model).path("street");
        assertEquals(Set.of("type", "value", "lang"), Json.names(s), s::toString);
        assertEquals("Property", s.path("type").asText());
        String expected = switch (s.path("lang").asText()) {
            case "fr" -> "Grand Place";
            case "nl" -> "Grote Markt";
            default -> throw new AssertionError("lang is not a key of the map: " + s);
        };
        assertEquals(expected, s.path("value").asText());
    }

    @Test
    @DisplayName("4.15 TP 018_07_05: lang=fr with keyValues gives the string alone")
    void languageFilterKeyValues() {
        String id = street();
        Answer a = api.get(Ngsi.entity(id)).link(model).query("lang", "fr").query("options", "keyValues").send();
        Json.assertSame(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"street\": \"Grand Place\"}", id), Checks.okJson(a, model));
    }

    @ParameterizedTest(name = "lang={0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "fr;q=0.2,nl;q=0.9|nl|Grote Markt",
        "FR|fr|Grand Place",
        "nl-BE|nl|Grote Markt"})
    @DisplayName("4.15 TP 415_01_01/02/03: q-values outrank order, tags compare case-insensitively, nl-BE falls back to nl")
    void languageFilterMatching(String lang, String expectedLang, String expectedValue) {
        String id = street();
        JsonNode s = Checks.okJson(retrieve(id, "lang", lang), model).path("street");
        assertEquals(expectedLang, s.path("lang").asText(), s::toString);
        assertEquals(expectedValue, s.path("value").asText(), s::toString);
        assertFalse(s.has("languageMap"), s::toString);
    }

    @Test
    @DisplayName("4.15 TP 415_01_04: en matches an en-US key")
    void languageFilterShorterRange() {
        String id = Entities.id("Building");
        create(Json.obj("""
                {"id": "%s", "type": "Building",
                 "street": {"type": "LanguageProperty", "languageMap": {"de": "Marktplatz", "en-US": "Main Square"}}}""", id));
        JsonNode s = Checks.okJson(retrieve(id, "lang", "en"), model).path("street");
        assertEquals("en-US", s.path("lang").asText(), s::toString);
        assertEquals("Main Square", s.path("value").asText(), s::toString);
    }

    @Test
    @DisplayName("4.15 TP 415_01_05: with no matching language some language is chosen and named in lang")
    void languageFilterNoMatch() {
        String id = street();
        JsonNode s = Checks.okJson(retrieve(id, "lang", "pt"), model).path("street");
        assertEquals("Property", s.path("type").asText(), s::toString);
        assertTrue(List.of("fr", "nl").contains(s.path("lang").asText()), s::toString);
    }

    @ParameterizedTest(name = "pick={0} omit={1}")
    @CsvSource(delimiter = '|', value = {
        "name||name",
        "|name|id,type,subCategory,airQualityLevel,almostFull",
        "id||id",
        "|id|type,name,subCategory,airQualityLevel,almostFull",
        "id,name||id,name",
        "|type,name|id,subCategory,airQualityLevel,almostFull"})
    @DisplayName("4.21 TP 018_17_01..06: pick keeps and omit drops the named members, core members included")
    void pickAndOmit(String pick, String omit, String kept) {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Ngsi.Request r = api.get(Ngsi.entity(id)).link(model);
        if (pick != null) {
            r.query("pick", pick);
        }
        if (omit != null) {
            r.query("omit", omit);
        }
        ObjectNode expected = Entities.building(id);
        expected.retain(List.of(kept.split(",")));
        Json.assertSame(expected, Checks.okJson(r.send(), model));
    }

    @ParameterizedTest(name = "pick={0} omit={1} attrs={2}")
    @CsvSource(delimiter = '|', value = {
        "name|name|",
        "name||category",
        "|name|category",
        "id;name||",
        "id,locatedAt{name||",
        "id,locatedAt{{name}||",
        "id,,name||",
        "id,locatedAt{,name}||",
        "id,locatedAt{}||"})
    @DisplayName("4.21 TP 018_18_01..09: contradicting or malformed pick/omit/attrs is 400 BadRequestData")
    void badProjection(String pick, String omit, String attrs) {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Ngsi.Request r = api.get(Ngsi.entity(id)).link(model);
        if (pick != null) {
            r.query("pick", pick);
        }
        if (omit != null) {
            r.query("omit", omit);
        }
        if (attrs != null) {
            r.query("attrs", attrs);
        }
        Checks.problem(r.send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("4.21 TP 421_01_02: an empty member in pick (name||x) is 400 BadRequestData")
    void emptyProjectionMember() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.problem(retrieve(id, "pick", "name||airQualityLevel"), 400, "BadRequestData");
    }

    @Test
    @DisplayName("4.21 TP 018_19_01: a pick that matches no member is 404 ResourceNotFound")
    void pickMatchesNothing() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.problem(retrieve(id, "pick", "unknown"), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("4.21 TP 018_19_02: an omit of every member is 404 ResourceNotFound")
    void omitEverything() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.problem(retrieve(id, "omit", "id,type,name,subCategory,airQualityLevel,almostFull"), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("4.17 TP 5711_01_01: a type selector the entity does not match is 404; the matching one answers the entity")
    void typeSelector() {
        // V1.9.1 lists type on GET /entities/{id}; it is the 4.17 selector the other operations take too.
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.problem(retrieve(id, "type", "Vehicle"), 404, "ResourceNotFound");
        Json.assertSame(Entities.building(id), Checks.okJson(retrieve(id, "type", "Building"), model));
    }

    @Test
    @DisplayName("5.7.1 TP 5711_01_02: geometryProperty without Accept application/geo+json is 400 BadRequestData")
    void geometryPropertyNeedsGeoJson() {
        String id = Entities.id("Building");
        create(Json.obj("""
                {"id": "%s", "type": "Building", "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1, 2]}}}""", id));
        Checks.problem(api.get(Ngsi.entity(id)).accept(Ngsi.LD_JSON).query("geometryProperty", "location").send(), 400, "BadRequestData");
        Checks.status(api.get(Ngsi.entity(id)).accept(Ngsi.GEO_JSON).query("geometryProperty", "location").send(), 200);
    }

    @Test
    @DisplayName("5.7.1 TP 5711_01_03: a pick with a Linked Entity projection (owner{name}) but no join is 400 BadRequestData")
    void linkedProjectionWithoutJoin() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.problem(api.get(Ngsi.entity(id)).accept(Ngsi.LD_JSON).query("pick", "owner{name}").send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.7.1: a Relationship object and a multi-attribute read back as created")
    void multiAttributeAndRelationship() {
        String id = Entities.id("Vehicle");
        create(Entities.vehicle(id));
        Json.assertSame(Entities.vehicle(id), retrieve(id));
    }

    @Test
    @DisplayName("5.7.1: an entity deleted is no longer retrieved (404)")
    void deletedIsGone() {
        String id = Entities.id("Vehicle");
        create(Entities.vehicle(id));
        Checks.noContent(api.delete(Ngsi.entity(id)).send());
        assertGone(id);
    }
}
