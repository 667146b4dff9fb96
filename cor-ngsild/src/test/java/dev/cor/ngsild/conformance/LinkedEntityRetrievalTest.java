package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Linked entity retrieval (ETSI GS CIM 009 V1.8 § 4.5.23; § 5.7.1, § 5.7.2): {@code join=inline}
 * and {@code join=flat}, {@code joinLevel}, {@code containedBy}, in the normalized and simplified
 * representations, for Retrieve Entity and Query Entities. The suite's 018_10-018_13 and
 * 019_13-019_16 (expectations data/entities/expectations/linked-entity-retrieval).
 */
class LinkedEntityRetrievalTest extends ConformanceTest {

    /** In a fresh tenant: a Building located at a City, which is in a Country; returns the three ids. */
    private static List<String> buildingCityCountry(String tenant, String suffix) {
        String building = "urn:ngsi-ld:Building:" + suffix;
        String city = "urn:ngsi-ld:City:" + suffix;
        String country = "urn:ngsi-ld:Country:" + suffix;
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Building", "locatedAt": {"type": "Relationship", "object": "%s"}}""", building, city))
                .send(), 201);
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "City", "name": {"type": "Property", "value": "Paris"},
                 "isInCountry": {"type": "Relationship", "object": "%s"}}""", city, country)).send(), 201);
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Country", "name": {"type": "Property", "value": "France"}}""", country)).send(), 201);
        return List.of(building, city, country);
    }

    private static Answer retrieve(String tenant, String id, String... params) {
        Ngsi.Request r = api.get("/entities/" + id).tenant(tenant);
        for (int i = 0; i < params.length; i += 2) {
            r.query(params[i], params[i + 1]);
        }
        return r.send();
    }

    @Test
    void inline_puts_the_linked_entity_in_the_relationship_018_10_01() {
        String tenant = Entities.tenant();
        List<String> ids = buildingCityCountry(tenant, "inline");
        JsonNode b = Checks.okJson(retrieve(tenant, ids.get(0), "join", "inline"));
        JsonNode rel = b.path("locatedAt");
        assertEquals("Relationship", rel.path("type").asText());
        assertEquals(ids.get(1), rel.path("object").asText());
        assertEquals(ids.get(1), rel.path("entity").path("id").asText());
        assertEquals("City", rel.path("entity").path("type").asText());
        assertEquals("Paris", rel.path("entity").path("name").path("value").asText());
        // joinLevel 1 (the default): the City's own relationship is not followed
        assertFalse(rel.path("entity").path("isInCountry").has("entity"), b::toString);
        assertFalse(rel.path("entity").has("@context"), b::toString);
    }

    @Test
    void flat_answers_the_entity_then_the_ones_it_links_018_10_02() {
        String tenant = Entities.tenant();
        List<String> ids = buildingCityCountry(tenant, "flat");
        JsonNode all = Checks.okJson(retrieve(tenant, ids.get(0), "join", "flat"));
        assertEquals(2, all.size(), all::toString);
        assertEquals(ids.get(0), all.path(0).path("id").asText());
        assertFalse(all.path(0).path("locatedAt").has("entity"), all::toString);
        assertEquals(ids.get(1), all.path(1).path("id").asText());
    }

    @Test
    void simplified_inline_makes_the_linked_entity_the_relationships_value_018_10_03_and_flat_keeps_the_id_018_10_04() {
        String tenant = Entities.tenant();
        List<String> ids = buildingCityCountry(tenant, "kv");
        JsonNode inline = Checks.okJson(retrieve(tenant, ids.get(0), "join", "inline", "options", "keyValues"));
        assertEquals(ids.get(1), inline.path("locatedAt").path("id").asText(), inline::toString);
        assertEquals("Paris", inline.path("locatedAt").path("name").asText(), inline::toString);
        JsonNode flat = Checks.okJson(retrieve(tenant, ids.get(0), "join", "flat", "options", "keyValues"));
        assertEquals(ids.get(1), flat.path(0).path("locatedAt").asText(), flat::toString);
        assertEquals("Paris", flat.path(1).path("name").asText(), flat::toString);
    }

    @Test
    void join_level_two_follows_two_hops_inline_and_flat_019_16() {
        String tenant = Entities.tenant();
        List<String> ids = buildingCityCountry(tenant, "two");
        JsonNode inline = Checks.okJson(retrieve(tenant, ids.get(0), "join", "inline", "joinLevel", "2"));
        assertEquals(ids.get(2), inline.path("locatedAt").path("entity").path("isInCountry").path("entity").path("id").asText(),
                inline::toString);
        JsonNode flat = Checks.okJson(retrieve(tenant, ids.get(0), "join", "flat", "joinLevel", "2"));
        List<String> flatIds = new ArrayList<>();
        flat.forEach(e -> flatIds.add(e.path("id").asText()));
        assertEquals(ids, flatIds);
    }

    @Test
    void a_cycle_ends_and_contained_by_is_not_followed() {
        String tenant = Entities.tenant();
        String a = "urn:ngsi-ld:Thing:cycleA";
        String b = "urn:ngsi-ld:Thing:cycleB";
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Thing", "next": {"type": "Relationship", "object": "%s"}}""", a, b)).send(), 201);
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Thing", "next": {"type": "Relationship", "object": "%s"}}""", b, a)).send(), 201);
        JsonNode deep = Checks.okJson(retrieve(tenant, a, "join", "inline", "joinLevel", "5"));
        assertEquals(b, deep.path("next").path("entity").path("id").asText());
        assertFalse(deep.path("next").path("entity").path("next").has("entity"), "A is in the chain already: " + deep);
        JsonNode flat = Checks.okJson(retrieve(tenant, a, "join", "flat", "joinLevel", "5"));
        assertEquals(2, flat.size(), flat::toString);
        JsonNode held = Checks.okJson(retrieve(tenant, a, "join", "inline", "containedBy", b));
        assertFalse(held.path("next").has("entity"), "the asker holds B already: " + held);
    }

    @Test
    void a_missing_linked_entity_is_left_out_018_14() {
        String tenant = Entities.tenant();
        String a = "urn:ngsi-ld:Thing:dangling";
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Thing", "next": {"type": "Relationship", "object": "urn:ngsi-ld:Thing:nobody"}}""", a))
                .send(), 201);
        JsonNode inline = Checks.okJson(retrieve(tenant, a, "join", "inline"));
        assertFalse(inline.path("next").has("entity"), inline::toString);
        // flat with nothing linked: the entity alone, as a retrieval gives it (the suite's 018_14_02)
        JsonNode flat = Checks.okJson(retrieve(tenant, a, "join", "flat"));
        assertTrue(flat.isObject(), flat::toString);
        assertEquals(a, flat.path("id").asText());
    }

    @Test
    void query_entities_joins_every_entity_of_the_page_019_13() {
        String tenant = Entities.tenant();
        List<String> one = buildingCityCountry(tenant, "q1");
        List<String> two = buildingCityCountry(tenant, "q2");
        JsonNode inline = Checks.okJson(api.get("/entities").tenant(tenant).query("type", "Building").query("join", "inline").send());
        assertEquals(2, inline.size(), inline::toString);
        for (JsonNode b : inline) {
            String city = b.path("locatedAt").path("object").asText();
            assertEquals(city, b.path("locatedAt").path("entity").path("id").asText(), b::toString);
        }
        JsonNode flat = Checks.okJson(api.get("/entities").tenant(tenant).query("type", "Building").query("join", "flat").send());
        List<String> flatIds = new ArrayList<>();
        flat.forEach(e -> flatIds.add(e.path("id").asText()));
        assertTrue(flatIds.containsAll(List.of(one.get(0), one.get(1), two.get(0), two.get(1))), flatIds::toString);
        assertEquals(4, flatIds.size(), flatIds::toString);
    }

    @Test
    void an_ld_json_flat_answer_gives_each_entity_its_context_and_inline_only_the_outer_one() {
        String tenant = Entities.tenant();
        List<String> ids = buildingCityCountry(tenant, "ld");
        Answer flat = api.get("/entities/" + ids.get(0)).tenant(tenant).query("join", "flat").accept("application/ld+json").send();
        Checks.status(flat, 200);
        flat.json().forEach(e -> assertTrue(e.has("@context"), flat::toString));
        Answer inline = api.get("/entities/" + ids.get(0)).tenant(tenant).query("join", "inline").accept("application/ld+json").send();
        Checks.status(inline, 200);
        assertTrue(inline.json().has("@context"));
        assertFalse(inline.json().path("locatedAt").path("entity").has("@context"));
    }

    @Test
    void a_wrong_join_or_join_level_is_400_even_for_an_entity_nobody_created() {
        String tenant = Entities.tenant();
        buildingCityCountry(tenant, "bad");
        Checks.problem(retrieve(tenant, "urn:ngsi-ld:Building:nobody", "join", "sideways"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, "urn:ngsi-ld:Building:bad", "join", "inline", "joinLevel", "0"), 400, "BadRequestData");
        Checks.problem(retrieve(tenant, "urn:ngsi-ld:Building:bad", "join", "inline", "containedBy", "not a uri"), 400,
                "BadRequestData");
        // @none asks no join
        JsonNode none = Checks.okJson(retrieve(tenant, "urn:ngsi-ld:Building:bad", "join", "@none"));
        assertFalse(none.path("locatedAt").has("entity"));
    }

    /** § 4.21 with § 4.5.23: braces shape the linked entities; only a relationship shown is followed (019_20). */
    @Test
    void pick_with_braces_shapes_the_linked_entities_and_a_relationship_not_picked_is_not_followed_019_20() {
        String tenant = Entities.tenant();
        List<String> ids = buildingCityCountry(tenant, "pick");
        JsonNode inline = Checks.okJson(retrieve(tenant, ids.get(0), "join", "inline", "pick", "id,locatedAt{id,name}"));
        assertFalse(inline.has("type"), inline::toString);
        JsonNode city = inline.path("locatedAt").path("entity");
        assertEquals(ids.get(1), city.path("id").asText(), inline::toString);
        assertEquals("Paris", city.path("name").path("value").asText(), inline::toString);
        assertFalse(city.has("type") || city.has("isInCountry"), inline::toString);
        JsonNode flat = Checks.okJson(retrieve(tenant, ids.get(0), "join", "flat", "pick", "id,locatedAt{id,name}"));
        assertEquals(2, flat.size(), flat::toString);
        assertFalse(flat.path(1).has("type"), flat::toString);
        // locatedAt not picked: nothing to follow (019_20_02)
        JsonNode none = Checks.okJson(api.get("/entities").tenant(tenant).query("type", "Building").query("join", "flat")
                .query("pick", "id").send());
        assertEquals(1, none.size(), none::toString);
        // two levels of braces (019_22_03)
        JsonNode deep = Checks.okJson(retrieve(tenant, ids.get(0), "join", "inline", "joinLevel", "2",
                "pick", "id,locatedAt{id,isInCountry{id}}"));
        JsonNode country = deep.path("locatedAt").path("entity").path("isInCountry").path("entity");
        assertEquals(ids.get(2), country.path("id").asText(), deep::toString);
        assertFalse(country.has("name") || country.has("type"), deep::toString);
    }

    @Test
    void omit_with_braces_leaves_members_out_of_the_linked_entities_019_21() {
        String tenant = Entities.tenant();
        List<String> ids = buildingCityCountry(tenant, "omit");
        JsonNode inline = Checks.okJson(retrieve(tenant, ids.get(0), "join", "inline", "omit", "locatedAt{name}"));
        assertEquals("Building", inline.path("type").asText(), inline::toString);
        JsonNode city = inline.path("locatedAt").path("entity");
        assertEquals("City", city.path("type").asText(), inline::toString);
        assertFalse(city.has("name"), inline::toString);
        assertTrue(city.has("isInCountry"), inline::toString);
    }

    /** § 4.21's grammar: each malformed projection is a 400 (019_18_04-019_18_09). */
    @Test
    void a_malformed_projection_is_400_019_18() {
        String tenant = Entities.tenant();
        List<String> ids = buildingCityCountry(tenant, "malformed");
        for (String bad : List.of("id,locatedAt{id", "locatedAt{{id}}", "id,,name", "{id}", "locatedAt{id}}", "locatedAt{}",
                "id;name", "locatedAt{id}name")) {
            Checks.problem(retrieve(tenant, ids.get(0), "join", "inline", "pick", bad), 400, "BadRequestData");
        }
    }

    /** Table 5.2.23-1: a POST query's join and joinLevel act as the GET parameters. */
    @Test
    void a_post_query_joins_as_its_body_asks() {
        String tenant = Entities.tenant();
        List<String> ids = buildingCityCountry(tenant, "post");
        JsonNode inline = Checks.okJson(api.post("/entityOperations/query").tenant(tenant).json(Json.obj("""
                {"type": "Query", "entities": [{"type": "Building"}], "join": "inline", "joinLevel": 2}""")).send());
        assertEquals(ids.get(2), inline.path(0).path("locatedAt").path("entity").path("isInCountry").path("entity")
                .path("id").asText(), inline::toString);
        Checks.problem(api.post("/entityOperations/query").tenant(tenant).json(Json.obj("""
                {"type": "Query", "entities": [{"type": "Building"}], "join": "sideways"}""")).send(), 400, "BadRequestData");
    }
}
