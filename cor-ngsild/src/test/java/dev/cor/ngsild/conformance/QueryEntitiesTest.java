package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Query Entities (5.7.2), GET /entities/ (6.4.3.2), only as far as {@code type} (with the 4.17
 * selection language) and {@code id} go: the rest of the query language is the next issue's. Each
 * test lists entities of types no other test uses, or works in a tenant of its own, so the listing
 * holds exactly what it created. ETSI: TP/NGSI-LD/ContextInformation/Consumption/Entity/QueryEntities.
 */
class QueryEntitiesTest extends ConformanceTest {

    /** The ids of the entities of a listing, asserting each appears once. */
    private static TreeSet<String> ids(JsonNode list) {
        assertTrue(list.isArray(), () -> "a list of entities: " + list);
        TreeSet<String> ids = new TreeSet<>();
        for (JsonNode e : list) {
            assertTrue(ids.add(e.path("id").asText()), () -> "each entity once: " + list);
        }
        return ids;
    }

    /** Asserts the listing holds exactly {@code expected} (by id), each entity as expected. */
    private static void assertListing(List<ObjectNode> expected, JsonNode list) {
        Map<String, JsonNode> byId = new TreeMap<>();
        list.forEach(e -> byId.put(e.path("id").asText(), e));
        TreeSet<String> want = new TreeSet<>();
        expected.forEach(e -> want.add(e.get("id").asText()));
        assertEquals(want, ids(list));
        for (ObjectNode e : expected) {
            Json.assertSame(e, byId.get(e.get("id").asText()));
        }
    }

    private static ObjectNode plain(String type) {
        String id = Entities.id(type);
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"name\": {\"type\": \"Property\", \"value\": \"%s\"}}", id, type, id);
        createPlain(e);
        return e;
    }

    @Test
    @DisplayName("5.7.2 TP 019_01_01: id=a,b with type lists exactly those two, normalized")
    void byIdsAndType() {
        String type = Entities.uniqueName("Bldg");
        ObjectNode a = plain(type);
        ObjectNode b = plain(type);
        plain(type);
        Answer r = api.get("/entities").query("type", type).query("id", a.get("id").asText() + "," + b.get("id").asText()).send();
        assertListing(List.of(a, b), Checks.okJson(r, Json.CORE));
    }

    @Test
    @DisplayName("5.7.2 TP 019_01_02: type=A,B lists the entities of both types and no other")
    void byTypes() {
        String ta = Entities.uniqueName("Veh");
        String tb = Entities.uniqueName("Park");
        ObjectNode a = plain(ta);
        ObjectNode b = plain(tb);
        plain(Entities.uniqueName("Bldg"));
        assertListing(List.of(a, b), Checks.okJson(api.get("/entities").query("type", ta + "," + tb).send(), Json.CORE));
    }

    @ParameterizedTest(name = "type={0}")
    @CsvSource(delimiter = '|', value = {
        "B|1,3",
        "(B;T)|3",
        "B,P|1,2,3",
        "P,T|2,3",
        "(B;P),T|3"})
    @DisplayName("4.17 TP 019_08_01..05: the entity type selection language: , is or, ; is and, parentheses group")
    void typeSelectionLanguage(String selection, String expected) {
        String b = Entities.uniqueName("B");
        String p = Entities.uniqueName("P");
        String t = Entities.uniqueName("T");
        List<String> ids = new ArrayList<>();
        for (String types : List.of("[\"" + b + "\"]", "[\"" + p + "\"]", "[\"" + b + "\", \"" + t + "\"]")) {
            String id = Entities.id("Thing");
            createPlain(Json.obj("{\"id\": \"%s\", \"type\": %s}", id, types));
            ids.add(id);
        }
        String query = selection.replace("B", b).replace("P", p).replace("T", t);
        TreeSet<String> want = new TreeSet<>();
        for (String i : expected.split(",")) {
            want.add(ids.get(Integer.parseInt(i) - 1));
        }
        assertEquals(want, ids(Checks.okJson(api.get("/entities").query("type", query).send(), Json.CORE)), query);
    }

    @Test
    @DisplayName("5.7.2 TP 019_03_01: ids that are not URIs are 400 BadRequestData")
    void invalidIds() {
        Checks.problem(api.get("/entities").query("type", "Building").query("id", "invalidid1,invalidid2").send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("6.4.3.2 TP 019_03_05: id alone (no type, attrs, q or geo, not local) is 400 BadRequestData")
    void idAloneIsTooWide() {
        Checks.problem(api.get("/entities").query("id", Entities.id("Building")).send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("6.4.3.2: a query with no selector at all is 400 BadRequestData")
    void noSelector() {
        Checks.problem(api.get("/entities").send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.7.2: a type nothing has lists nothing: 200 and []")
    void emptyListing() {
        JsonNode list = Checks.okJson(api.get("/entities").query("type", Entities.uniqueName("Nothing")).send(), Json.CORE);
        assertTrue(list.isArray() && list.isEmpty(), list::toString);
    }

    @Test
    @DisplayName("5.7.2 TP 019_25: local=true lists every entity of the tenant")
    void localListsAll() {
        String tenant = Entities.tenant();
        ObjectNode a = Entities.minimal(Entities.id("Building"), "Building");
        ObjectNode b = Entities.minimal(Entities.id("Vehicle"), "Vehicle");
        Checks.created(api.post("/entities").tenant(tenant).json(a).send(), a.get("id").asText());
        Checks.created(api.post("/entities").tenant(tenant).json(b).send(), b.get("id").asText());
        assertListing(List.of(a, b), Checks.okJson(api.get("/entities").tenant(tenant).query("local", "true").send()));
    }

    @Test
    @DisplayName("5.5.7 TP 557_01_02: a type matches through the request's context: found with the creation context, not without")
    void typeMatchesThroughTheContext() {
        String tenant = Entities.tenant();
        String id = Entities.id("Vehicle");
        Checks.created(api.post("/entities").tenant(tenant).ldJson(Entities.withContext(Entities.minimal(id, "Vehicle"), model)).send(), id);
        Answer with = api.get("/entities").tenant(tenant).link(model).query("type", "Vehicle").send();
        assertEquals(new TreeSet<>(List.of(id)), ids(Checks.okJson(with, model)));
        Answer without = api.get("/entities").tenant(tenant).query("type", "Vehicle").send();
        assertTrue(ids(Checks.okJson(without, Json.CORE)).isEmpty(), without::toString);
        Answer byIri = api.get("/entities").tenant(tenant).query("type", modelIri("Vehicle")).send();
        assertEquals(new TreeSet<>(List.of(id)), ids(Checks.okJson(byIri, Json.CORE)));
    }

    @Test
    @DisplayName("6.3.6: a listing as application/ld+json carries @context in every entity")
    void ldJsonListing() {
        String type = Entities.uniqueName("Bldg");
        ObjectNode a = plain(type);
        Answer r = api.get("/entities").query("type", type).accept(Ngsi.LD_JSON).send();
        Checks.status(r, 200);
        assertEquals(Ngsi.LD_JSON, r.contentType(), r::toString);
        JsonNode list = r.json();
        assertEquals(1, list.size(), r::toString);
        Json.assertSame(Entities.withContext(a, Json.CORE), list.get(0));
    }
}
