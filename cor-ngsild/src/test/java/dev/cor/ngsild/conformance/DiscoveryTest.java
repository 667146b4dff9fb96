package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.TreeSet;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Discovery (5.7.5-5.7.10; 6.25, 6.26): types and attributes of a tenant of its own, so the
 * lists hold exactly what the test created - two Buildings and a Vehicle under the tests' user
 * context - compacted with the request's context. ETSI: TP 022_01, 023_01, 024_01, 025_01,
 * 026_01, 027_01.
 */
class DiscoveryTest extends ConformanceTest {
    private static String tenant;

    @BeforeAll
    static void entities() {
        tenant = Entities.tenant();
        for (ObjectNode e : new ObjectNode[] {Entities.building(Entities.id("Building")), Entities.building(Entities.id("Building")),
                Json.obj("""
                        {"id": "%s", "type": "Vehicle", "brandName": {"type": "Property", "value": "Mercedes"},
                         "isParked": {"type": "Relationship", "object": "urn:ngsi-ld:Park:1"},
                         "name": {"type": "Relationship", "object": "urn:ngsi-ld:Name:1"}}""", Entities.id("Vehicle"))}) {
            Checks.created(api.post("/entities").tenant(tenant).ldJson(Entities.withContext(e.deepCopy(), model)).send(),
                    e.get("id").asText());
        }
    }

    private static TreeSet<String> strings(JsonNode a) {
        TreeSet<String> out = new TreeSet<>();
        a.forEach(n -> out.add(n.asText()));
        return out;
    }

    @Test
    @DisplayName("5.7.5 TP 022_01_02: GET /types lists the types, compacted with the request's context")
    void typeList() {
        JsonNode l = Checks.okJson(api.get("/types").tenant(tenant).link(model).send(), model);
        assertEquals("EntityTypeList", l.path("type").asText());
        assertTrue(l.path("id").asText().startsWith("urn:ngsi-ld:EntityTypeList:"), l::toString);
        assertEquals(new TreeSet<>(List.of("Building", "Vehicle")), strings(l.path("typeList")));
    }

    @Test
    @DisplayName("5.7.5 TP 022_01_01: without the context the types are full IRIs")
    void typeListWithoutContext() {
        JsonNode l = Checks.okJson(api.get("/types").tenant(tenant).send(), Json.CORE);
        assertEquals(new TreeSet<>(List.of(modelIri("Building"), modelIri("Vehicle"))), strings(l.path("typeList")));
    }

    @Test
    @DisplayName("5.7.6 TP 023_01: GET /types?details=true gives each EntityType with its attribute names")
    void typeDetails() {
        JsonNode l = Checks.okJson(api.get("/types").query("details", "true").tenant(tenant).link(model).send(), model);
        assertEquals(2, l.size(), l::toString);
        for (JsonNode t : l) {
            assertEquals("EntityType", t.path("type").asText());
            assertEquals(modelIri(t.path("typeName").asText()), t.path("id").asText());
        }
        JsonNode building = l.get(0).path("typeName").asText().equals("Building") ? l.get(0) : l.get(1);
        assertEquals(new TreeSet<>(List.of("name", "subCategory", "airQualityLevel", "almostFull")),
                strings(building.path("attributeNames")));
    }

    @Test
    @DisplayName("5.7.7: GET /types/{type} gives the EntityTypeInfo: entity count and attribute details with their kinds")
    void typeInfo() {
        JsonNode t = Checks.okJson(api.get("/types/Building").tenant(tenant).link(model).send(), model);
        assertEquals("EntityTypeInfo", t.path("type").asText());
        assertEquals(modelIri("Building"), t.path("id").asText());
        assertEquals("Building", t.path("typeName").asText());
        assertEquals(2, t.path("entityCount").asInt());
        assertEquals(4, t.path("attributeDetails").size(), t::toString);
        for (JsonNode d : t.path("attributeDetails")) {
            assertEquals("Attribute", d.path("type").asText());
            assertEquals("[\"Property\"]", d.path("attributeTypes").toString());
        }
        JsonNode byIri = Checks.okJson(api.get("/types/" + Ngsi.segment(modelIri("Building"))).tenant(tenant).send(), Json.CORE);
        assertEquals(2, byIri.path("entityCount").asInt(), "the type by its full IRI");
    }

    @Test
    @DisplayName("5.7.7 TP 024_01_01: a type no entity has is 404 ResourceNotFound")
    void unknownType() {
        Checks.problem(api.get("/types/Building").tenant(tenant).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.7.8 TP 025_01: GET /attributes lists the attribute names, compacted")
    void attributeList() {
        JsonNode l = Checks.okJson(api.get("/attributes").tenant(tenant).link(model).send(), model);
        assertEquals("AttributeList", l.path("type").asText());
        assertTrue(l.path("id").asText().startsWith("urn:ngsi-ld:AttributeList:"), l::toString);
        assertEquals(new TreeSet<>(List.of("name", "subCategory", "airQualityLevel", "almostFull", "brandName",
                "isParked")), strings(l.path("attributeList")));
    }

    @Test
    @DisplayName("5.7.9 TP 026_01: GET /attributes?details=true gives each Attribute with the types that have it")
    void attributeDetails() {
        JsonNode l = Checks.okJson(api.get("/attributes").query("details", "true").tenant(tenant).link(model).send(), model);
        assertEquals(6, l.size(), l::toString);
        for (JsonNode a : l) {
            assertEquals("Attribute", a.path("type").asText());
            if (a.path("attributeName").asText().equals("name")) {
                assertEquals(new TreeSet<>(List.of("Building", "Vehicle")), strings(a.path("typeNames")));
            }
        }
    }

    @Test
    @DisplayName("5.7.10 TP 027_01: GET /attributes/{attr} gives its count, kinds and types; a name two kinds share lists both")
    void attributeInfo() {
        JsonNode a = Checks.okJson(api.get("/attributes/airQualityLevel").tenant(tenant).link(model).send(), model);
        assertEquals("Attribute", a.path("type").asText());
        assertEquals(modelIri("airQualityLevel"), a.path("id").asText());
        assertEquals(2, a.path("attributeCount").asInt());
        assertEquals("[\"Property\"]", a.path("attributeTypes").toString());
        assertEquals("[\"Building\"]", a.path("typeNames").toString());
        JsonNode name = Checks.okJson(api.get("/attributes/name").tenant(tenant).link(model).send(), model);
        assertEquals(3, name.path("attributeCount").asInt());
        assertEquals(new TreeSet<>(List.of("Property", "Relationship")), strings(name.path("attributeTypes")));
    }

    @Test
    @DisplayName("5.7.10 TP 027_02: an attribute no entity has is 404 ResourceNotFound")
    void unknownAttribute() {
        Checks.problem(api.get("/attributes/nothingHasThis").tenant(tenant).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.7.5, 6.3.6: an application/ld+json answer carries the @context in the body")
    void ldJson() {
        Answer a = api.get("/types").tenant(tenant).link(model).accept("application/ld+json").send();
        JsonNode l = Checks.okLdJson(a, model);
        assertEquals("EntityTypeList", l.path("type").asText());
    }

    @Test
    @DisplayName("5.7.5: discovery is per tenant - the default tenant's types are not this tenant's")
    void perTenant() {
        String other = Entities.tenant();
        String lamp = Entities.id("Lamp");
        Checks.created(api.post("/entities").tenant(other).json(Entities.minimal(lamp, "Lamp")).send(), lamp);
        JsonNode l = Checks.okJson(api.get("/types").tenant(other).send(), Json.CORE);
        assertEquals("[\"Lamp\"]", l.path("typeList").toString(), "the core context compacts its default-context IRIs");
    }
}
