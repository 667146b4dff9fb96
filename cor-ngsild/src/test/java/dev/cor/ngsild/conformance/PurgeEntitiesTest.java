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
 * Purge Entities (5.6.21), DELETE /entities with query parameters (6.4.3.3).
 * ETSI: TP/NGSI-LD/ContextInformation/Provision/PurgeEntities. Each test works in a tenant of its
 * own: a purge selects across a tenant, and the broker is shared by the class.
 */
class PurgeEntitiesTest extends ConformanceTest {

    /** A Building of type {@code type} in {@code tenant}, created with the tests' user context. */
    private static String building(String tenant, String type, String name) {
        String id = Entities.id("Building");
        ObjectNode e = Entities.building(id);
        e.put("type", type);
        ((ObjectNode) e.get("name")).put("value", name);
        Checks.created(api.post("/entities").tenant(tenant).ldJson(Entities.withContext(e, model)).send(), id);
        return id;
    }

    private static Ngsi.Request purge(String tenant) {
        return api.delete("/entities").tenant(tenant).link(model);
    }

    private static Answer get(String tenant, String id) {
        return api.get(Ngsi.entity(id)).tenant(tenant).link(model).send();
    }

    private static void present(String tenant, String id) {
        Checks.okJson(get(tenant, id), model);
    }

    private static void gone(String tenant, String id) {
        Checks.problem(get(tenant, id), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_01_01: a purge without any parameter is 400 BadRequestData (too wide)")
    void noParameter() {
        String t = Entities.tenant();
        String id = building(t, "Building", "Eiffel Tower");
        Checks.problem(purge(t).send(), 400, "BadRequestData");
        present(t, id);
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_02_01: keep and drop together are 400 BadRequestData; nothing is purged")
    void keepAndDrop() {
        String t = Entities.tenant();
        String id = building(t, "Building", "Eiffel Tower");
        Checks.problem(purge(t).query("type", "Building").query("keep", "name").query("drop", "subCategory").send(), 400,
                "BadRequestData");
        JsonNode e = Checks.okJson(get(t, id), model);
        assertTrue(e.has("name") && e.has("subCategory"), e::toString);
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_03_01: type purges every entity of that type (204, no body); another type stays")
    void byType() {
        String t = Entities.tenant();
        String a = building(t, "Building", "Eiffel Tower");
        String b = building(t, "Building", "Louvre");
        String other = building(t, "OffStreetParking", "Downtown");
        Checks.noContent(purge(t).query("type", "Building").send());
        gone(t, a);
        gone(t, b);
        present(t, other);
        assertEquals(0, Checks.okJson(api.get("/entities").tenant(t).link(model).query("type", "Building").send(), model)
                .size());
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_03_02: q purges the entities it matches and no other")
    void byQ() {
        String t = Entities.tenant();
        String eiffel = building(t, "Building", "Eiffel Tower");
        String louvre = building(t, "Building", "Louvre");
        Checks.noContent(purge(t).query("q", "name==\"Eiffel Tower\"").send());
        gone(t, eiffel);
        present(t, louvre);
    }

    @Test
    @DisplayName("5.6.21.4 e) TP 060_03_03, 060_06_05: local=true alone purges the whole tenant, and only that tenant")
    void localAlone() {
        String t = Entities.tenant();
        String other = Entities.tenant();
        String a = building(t, "Building", "Eiffel Tower");
        String b = building(t, "OffStreetParking", "Downtown");
        String kept = building(other, "Building", "Eiffel Tower");
        Checks.noContent(purge(t).query("local", "true").send());
        gone(t, a);
        gone(t, b);
        present(other, kept);
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_03_04: id and type purge only that entity")
    void byIdAndType() {
        String t = Entities.tenant();
        String a = building(t, "Building", "Eiffel Tower");
        String b = building(t, "Building", "Eiffel Tower");
        Checks.noContent(purge(t).query("id", a).query("type", "Building").send());
        gone(t, a);
        present(t, b);
    }

    @Test
    @DisplayName("5.6.21.4: idPattern and type purge only the ids the pattern matches")
    void byIdPatternAndType() {
        String t = Entities.tenant();
        String a = building(t, "Building", "Eiffel Tower");
        String b = building(t, "Building", "Louvre");
        String pattern = java.util.regex.Pattern.quote(a.substring(a.length() - 12));
        Checks.noContent(purge(t).query("idPattern", ".*" + pattern).query("type", "Building").send());
        gone(t, a);
        present(t, b);
    }

    @Test
    @DisplayName("5.6.21.4 b): attrs purges the entities that have one of those attributes")
    void byAttrs() {
        String t = Entities.tenant();
        String with = building(t, "Building", "Eiffel Tower");
        String without = Entities.id("Building");
        Checks.created(api.post("/entities").tenant(t).ldJson(Entities.withContext(Json.obj("""
                {"id": "%s", "type": "Building", "name": {"type": "Property", "value": "Louvre"}}""", without), model))
                .send(), without);
        Checks.noContent(purge(t).query("attrs", "almostFull").send());
        gone(t, with);
        present(t, without);
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_04_01: drop deletes only those attributes; the entities stay")
    void drop() {
        String t = Entities.tenant();
        String id = building(t, "Building", "Eiffel Tower");
        Checks.noContent(purge(t).query("type", "Building").query("drop", "name").send());
        JsonNode e = Checks.okJson(get(t, id), model);
        assertFalse(e.has("name"), e::toString);
        assertTrue(e.has("subCategory") && e.has("airQualityLevel") && e.has("almostFull"), e::toString);
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_05_01: keep deletes every other attribute; the entities stay")
    void keep() {
        String t = Entities.tenant();
        String id = building(t, "Building", "Eiffel Tower");
        Checks.noContent(purge(t).query("id", id).query("type", "Building").query("keep", "name").send());
        JsonNode e = Checks.okJson(get(t, id), model);
        assertTrue(e.has("name"), e::toString);
        assertFalse(e.has("subCategory") || e.has("airQualityLevel") || e.has("almostFull"), e::toString);
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_06_01: id alone is too wide (400 BadRequestData); the entity stays")
    void idAlone() {
        String t = Entities.tenant();
        String id = building(t, "Building", "Eiffel Tower");
        Checks.problem(purge(t).query("id", id).send(), 400, "BadRequestData");
        present(t, id);
    }

    @Test
    @DisplayName("5.6.21.4 TP 060_06_02: idPattern alone is too wide, even .*; the entity stays")
    void idPatternAlone() {
        String t = Entities.tenant();
        String id = building(t, "Building", "Eiffel Tower");
        Checks.problem(purge(t).query("idPattern", ".*").send(), 400, "BadRequestData");
        present(t, id);
    }

    @Test
    @DisplayName("5.6.21.4 b) TP 060_06_03: attrs of system attributes alone is too wide; the entity stays")
    void systemAttrsAlone() {
        String t = Entities.tenant();
        String id = building(t, "Building", "Eiffel Tower");
        Checks.problem(purge(t).query("attrs", "createdAt").send(), 400, "BadRequestData");
        present(t, id);
    }

    @Test
    @DisplayName("5.6.21.4 c) TP 060_06_04: a q over system attributes alone is too wide; the entity stays")
    void systemQAlone() {
        String t = Entities.tenant();
        String id = building(t, "Building", "Eiffel Tower");
        Checks.problem(purge(t).query("q", "modifiedAt>\"2020-01-01T00:00:00Z\"").send(), 400, "BadRequestData");
        present(t, id);
    }

    @Test
    @DisplayName("5.6.21.4 TP 5621_01_01: a q on Linked Entities is 400 BadRequestData; the entity stays")
    void linkedQ() {
        String t = Entities.tenant();
        String id = building(t, "Building", "Eiffel Tower");
        Checks.problem(purge(t).query("type", "Building").query("q", "owner{name}==\"x\"").send(), 400, "BadRequestData");
        present(t, id);
    }

    @Test
    @DisplayName("5.6.21.4 TP 5621_01_02: attrs asking for Linked Entity retrieval is 400 BadRequestData; the entity stays")
    void linkedAttrs() {
        String t = Entities.tenant();
        String id = building(t, "Building", "Eiffel Tower");
        Checks.problem(purge(t).query("type", "Building").query("attrs", "owner{name}").send(), 400, "BadRequestData");
        present(t, id);
    }

    @Test
    @DisplayName("5.6.21.4: an id that is not a URI is 400 BadRequestData")
    void invalidId() {
        String t = Entities.tenant();
        building(t, "Building", "Eiffel Tower");
        Checks.problem(purge(t).query("type", "Building").query("id", "notauri").send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.6.21.4: a q that does not parse is 400 BadRequestData")
    void invalidQ() {
        String t = Entities.tenant();
        building(t, "Building", "Eiffel Tower");
        Checks.problem(purge(t).query("q", "name==").send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.6.21.4: scopeQ narrows a purge by type to the entities in that scope")
    void byScope() {
        String t = Entities.tenant();
        String scoped = Entities.id("Building");
        ObjectNode e = Entities.building(scoped);
        e.put("scope", "/Madrid");
        Checks.created(api.post("/entities").tenant(t).ldJson(Entities.withContext(e, model)).send(), scoped);
        String elsewhere = building(t, "Building", "Eiffel Tower");
        Checks.noContent(purge(t).query("type", "Building").query("scopeQ", "/Madrid").send());
        gone(t, scoped);
        present(t, elsewhere);
    }

    @Test
    @DisplayName("5.6.21.4: a geo-query narrows a purge to the entities it matches")
    void byGeoQuery() {
        String t = Entities.tenant();
        String near = Entities.id("Building");
        String far = Entities.id("Building");
        for (String[] p : new String[][] {{near, "2.2945, 48.8584"}, {far, "-3.7038, 40.4168"}}) {
            Checks.created(api.post("/entities").tenant(t).ldJson(Entities.withContext(Json.obj("""
                    {"id": "%s", "type": "Building",
                     "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [%s]}}}""", p[0], p[1]),
                    model)).send(), p[0]);
        }
        Checks.noContent(purge(t).query("georel", "near;maxDistance==10000").query("geometry", "Point")
                .query("coordinates", "[2.29,48.85]").send());
        gone(t, near);
        present(t, far);
    }

    @Test
    @DisplayName("5.6.21.4, 4.5.x: each entity purged is a deletion that an entityDeleted subscription of the tenant is told")
    void notifiesEachDeletion() throws Exception {
        String t = Entities.tenant();
        try (NotificationReceiver receiver = NotificationReceiver.start()) {
            Checks.status(api.post("/subscriptions").tenant(t).ldJson(Json.obj("""
                    {"id": "%s", "type": "Subscription", "entities": [{"type": "Building"}],
                     "notificationTrigger": ["entityDeleted"],
                     "notification": {"endpoint": {"uri": "%s"}}, "@context": "%s"}""", Entities.id("Subscription"),
                    receiver.url(), model)).send(), 201);
            String a = building(t, "Building", "Eiffel Tower");
            String b = building(t, "Building", "Louvre");
            Checks.noContent(purge(t).query("type", "Building").send());
            java.util.Set<String> told = new java.util.HashSet<>();
            for (int i = 0; i < 2; i++) {
                for (JsonNode e : receiver.next(5_000).json().path("data")) {
                    assertTrue(e.has("deletedAt"), e::toString);
                    told.add(e.path("id").asText());
                }
                if (told.size() == 2) {
                    break;
                }
            }
            assertEquals(java.util.Set.of(a, b), told);
        }
    }

    @Test
    @DisplayName("5.6.21.4: drop deletes attributes as a write does: an attributeDeleted subscription is told")
    void dropNotifies() throws Exception {
        String t = Entities.tenant();
        try (NotificationReceiver receiver = NotificationReceiver.start()) {
            Checks.status(api.post("/subscriptions").tenant(t).ldJson(Json.obj("""
                    {"id": "%s", "type": "Subscription", "entities": [{"type": "Building"}],
                     "watchedAttributes": ["name"], "notificationTrigger": ["attributeDeleted"],
                     "notification": {"endpoint": {"uri": "%s"}, "format": "keyValues"}, "@context": "%s"}""",
                    Entities.id("Subscription"), receiver.url(), model)).send(), 201);
            String id = building(t, "Building", "Eiffel Tower");
            Checks.noContent(purge(t).query("type", "Building").query("drop", "name").send());
            JsonNode e = receiver.next(5_000).json().path("data").path(0);
            assertEquals(id, e.path("id").asText(), e::toString);
            assertEquals("urn:ngsi-ld:null", e.path("name").asText(), e::toString);
        }
    }

    @Test
    @DisplayName("6.4.3: DELETE is among the methods of /entities; PUT is 405 naming it")
    void allow() {
        Answer a = api.put("/entities").json("{}").send();
        Checks.problemDetails(a, 405);
        assertTrue(a.header("Allow").contains("DELETE"), a::toString);
    }
}
