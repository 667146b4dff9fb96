package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Purge Entities (5.6.21), DELETE /entities with a query (6.4.3.3). Every test in a tenant of
 * its own, since a purge reaches whatever its query selects.
 * ETSI: TP/NGSI-LD/ContextInformation/Provision/PurgeEntities.
 */
class PurgeEntitiesTest extends ConformanceTest {

    /** Creates {@code entity} in {@code tenant} with the tests' user context. */
    static void create(String tenant, JsonNode entity) {
        Checks.created(api.post("/entities").tenant(tenant).ldJson(Entities.withContext(entity.deepCopy(), model)).send(),
                entity.get("id").asText());
    }

    static Ngsi.Answer get(String tenant, String id) {
        return api.get(Ngsi.entity(id)).tenant(tenant).link(model).send();
    }

    static Ngsi.Request purge(String tenant) {
        return api.delete("/entities").tenant(tenant).link(model);
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_01_01: a purge with no parameter at all is 400 BadRequestData")
    void noParameter() {
        Checks.problem(api.delete("/entities").send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_02_01: keep and drop together are 400 BadRequestData, and nothing is deleted")
    void keepAndDrop() {
        String t = Entities.tenant();
        String id = Entities.id("Building");
        create(t, Entities.building(id));
        Checks.badData(purge(t).query("type", "Building").query("keep", "name").query("drop", "subCategory").send(), "keep");
        Checks.okJson(get(t, id));
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_03_01: a purge by type deletes every entity of that type and no other")
    void byType() {
        String t = Entities.tenant();
        String a = Entities.id("Building");
        String b = Entities.id("Building");
        String v = Entities.id("Vehicle");
        create(t, Entities.building(a));
        create(t, Entities.building(b));
        create(t, Entities.minimal(v, "Vehicle"));
        Ngsi.Answer r = purge(t).query("type", "Building").send();
        Checks.noContent(r);
        assertEquals(0, r.text().length(), r.toString());
        Checks.problem(get(t, a), 404, "ResourceNotFound");
        Checks.problem(get(t, b), 404, "ResourceNotFound");
        Checks.okJson(get(t, v));
        assertEquals(0, api.get("/entities").tenant(t).link(model).query("type", "Building").send().json().size());
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_03_02: a purge by q deletes only the entities q matches")
    void byQ() {
        String t = Entities.tenant();
        String eiffel = Entities.id("Building");
        String other = Entities.id("Building");
        create(t, Entities.building(eiffel));
        var o = Entities.building(other);
        o.putObject("name").put("type", "Property").put("value", "Big Ben");
        create(t, o);
        Checks.noContent(purge(t).query("q", "name==\"Eiffel Tower\"").send());
        Checks.problem(get(t, eiffel), 404, "ResourceNotFound");
        Checks.okJson(get(t, other));
    }

    @Test
    @DisplayName("5.6.21.3 TP 060_03_03, 060_06_05: local=true alone purges the whole tenant, and only it")
    void localAlone() {
        String t = Entities.tenant();
        String elsewhere = Entities.tenant();
        String a = Entities.id("Building");
        String b = Entities.id("Vehicle");
        String kept = Entities.id("Building");
        create(t, Entities.building(a));
        create(t, Entities.minimal(b, "Vehicle"));
        create(elsewhere, Entities.building(kept));
        Checks.noContent(purge(t).query("local", "true").send());
        Checks.problem(get(t, a), 404, "ResourceNotFound");
        Checks.problem(get(t, b), 404, "ResourceNotFound");
        Checks.okJson(get(elsewhere, kept));
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_03_04: ids with a type delete those ids of that type only")
    void idsAndType() {
        String t = Entities.tenant();
        String a = Entities.id("Building");
        String b = Entities.id("Building");
        create(t, Entities.building(a));
        create(t, Entities.building(b));
        Checks.noContent(purge(t).query("id", a).query("type", "Building").send());
        Checks.problem(get(t, a), 404, "ResourceNotFound");
        Checks.okJson(get(t, b));
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_04_01: drop deletes those attributes of the selected entities, which stay")
    void drop() {
        String t = Entities.tenant();
        String id = Entities.id("Building");
        create(t, Entities.building(id));
        Checks.noContent(purge(t).query("type", "Building").query("drop", "name,almostFull").send());
        JsonNode e = Checks.okJson(get(t, id));
        assertFalse(e.has("name") || e.has("almostFull"), e.toString());
        assertTrue(e.has("subCategory") && e.has("airQualityLevel"), e.toString());
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_05_01: keep deletes every attribute of the selected entities but those")
    void keep() {
        String t = Entities.tenant();
        String id = Entities.id("Building");
        String other = Entities.id("Building");
        create(t, Entities.building(id));
        create(t, Entities.building(other));
        Checks.noContent(purge(t).query("id", id).query("type", "Building").query("keep", "name").send());
        JsonNode e = Checks.okJson(get(t, id));
        assertTrue(e.has("name"), e.toString());
        assertFalse(e.has("subCategory") || e.has("airQualityLevel") || e.has("almostFull"), e.toString());
        assertTrue(Checks.okJson(get(t, other)).has("subCategory"), "an entity the ids do not name keeps everything");
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_06_01..04: ids, idPattern, system attributes in attrs or q alone are too wide: 400, nothing deleted")
    void tooWide() {
        String t = Entities.tenant();
        String id = Entities.id("Building");
        create(t, Entities.building(id));
        Checks.problem(purge(t).query("id", id).send(), 400, "BadRequestData");
        Checks.problem(purge(t).query("idPattern", ".*").send(), 400, "BadRequestData");
        Checks.problem(purge(t).query("attrs", "createdAt").send(), 400, "BadRequestData");
        Checks.problem(purge(t).query("q", "modifiedAt>\"2020-01-01T00:00:00Z\"").send(), 400, "BadRequestData");
        Checks.okJson(get(t, id));
    }

    @Test
    @DisplayName("5.6.21.4: an attribute in attrs bounds a purge: the entities with it are deleted")
    void byAttribute() {
        String t = Entities.tenant();
        String with = Entities.id("Building");
        String without = Entities.id("Vehicle");
        create(t, Entities.building(with));
        create(t, Entities.minimal(without, "Vehicle"));
        Checks.noContent(purge(t).query("attrs", "almostFull").send());
        Checks.problem(get(t, with), 404, "ResourceNotFound");
        Checks.okJson(get(t, without));
    }

    @Test
    @DisplayName("5.6.21.4 TP 5621_01_01/02: a linked-entity q or attrs is 400 BadRequestData, and nothing is deleted")
    void linkedEntities() {
        String t = Entities.tenant();
        String id = Entities.id("Building");
        create(t, Entities.building(id));
        Checks.problem(purge(t).query("type", "Building").query("q", "owner{name}==\"x\"").send(), 400, "BadRequestData");
        Checks.problem(purge(t).query("type", "Building").query("attrs", "owner{name}").send(), 400, "BadRequestData");
        Checks.okJson(get(t, id));
    }

    @Test
    @DisplayName("6.4.3.3: a parameter purge does not take is 400 InvalidRequest (6.3.20); the collection's Allow names DELETE")
    void parameters() {
        Checks.problem(purge(Entities.tenant()).query("type", "Building").query("limit", "5").send(), 400, "InvalidRequest");
        Ngsi.Answer r = api.put("/entities").json(Json.obj("{}")).send();
        assertEquals(405, r.status(), r.toString());
        assertTrue(r.header("Allow").contains("DELETE"), r.toString());
    }
}
