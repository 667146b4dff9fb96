package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Replace Entity (5.6.18), PUT /entities/{entityId} (6.5.3.3): everything but the id and createdAt
 * is replaced by the body. ETSI: TP/NGSI-LD/ContextInformation/Provision/Entities/ReplaceEntity.
 */
class ReplaceEntityTest extends ConformanceTest {

    private static ObjectNode replacement(String id) {
        return Json.obj("""
                {"id": "%s", "type": "Building",
                 "name": {"type": "Property", "value": "Louvre"},
                 "locatedAt": {"type": "Relationship", "object": "urn:ngsi-ld:City:Paris"}}""", id);
    }

    @Test
    @DisplayName("5.6.18 TP 054_01_01: replace answers 204; the entity is the new content alone and keeps its createdAt")
    void replace() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        JsonNode before = Checks.okJson(retrieve(id, "options", "sysAttrs"), model);
        Json.assertDateTime(before.get("createdAt"), "createdAt");
        Checks.noContent(api.put(Ngsi.entity(id)).json(replacement(id)).link(model).send());
        JsonNode after = Checks.okJson(retrieve(id, "options", "sysAttrs"), model);
        Json.assertSame(replacement(id), Json.withoutSysAttrs(after));
        assertEquals(before.get("createdAt").asText(), after.path("createdAt").asText(), "createdAt stays");
        Json.assertDateTime(after.get("modifiedAt"), "modifiedAt");
        assertTrue(!Instant.parse(after.get("modifiedAt").asText()).isBefore(Instant.parse(before.get("modifiedAt").asText())),
                () -> "modifiedAt moves forward: " + before + " -> " + after);
    }

    @Test
    @DisplayName("5.6.18 TP 054_02_01: an id that is not a URI is 400 BadRequestData")
    void invalidId() {
        Checks.badData(api.put(Ngsi.entity("invalidUri")).json(replacement("invalidUri")).link(model).send(), "invalidUri");
    }

    @Test
    @DisplayName("6.3.2 TP 054_02_02 (differs): PUT on /entities/ without an id is 405 Method Not Allowed, with Allow")
    void noId() {
        // The suite expects 400 here. /entities/ is a resource of its own (6.4) that has no PUT, and
        // 6.3.2 answers a wrong verb over a resource with 405 and the allowed methods.
        Ngsi.Answer a = api.put("/entities/").json(replacement(Entities.id("Building"))).link(model).send();
        Checks.problemDetails(a, 405);
        assertTrue(a.header("Allow") != null && a.header("Allow").contains("GET") && a.header("Allow").contains("POST"), a::toString);
    }

    @Test
    @DisplayName("5.6.18 TP 054_02_03: an id not known is 404 ResourceNotFound")
    void unknownId() {
        String id = Entities.id("Building");
        Checks.problem(api.put(Ngsi.entity(id)).json(replacement(id)).link(model).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("4.18 TP 054_03_01: the scopes of the entity are replaced too")
    void scopesReplaced() {
        String id = Entities.id("Building");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"scope\": [\"/Madrid\", \"/Spain\"]}", id));
        ObjectNode r = Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"scope\": \"/Madrid/Centro\"}", id);
        Checks.noContent(api.put(Ngsi.entity(id)).json(r).send());
        Json.assertSame(r, Checks.okJson(api.get(Ngsi.entity(id)).send()));
    }

    @Test
    @DisplayName("5.6.18: replacing with another type replaces the type")
    void typeReplaced() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        ObjectNode r = Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"speed\": {\"type\": \"Property\", \"value\": 3}}", id);
        Checks.noContent(api.put(Ngsi.entity(id)).ldJson(Entities.withContext(r, model)).send());
        Json.assertSame(r, retrieve(id));
    }

    @Test
    @DisplayName("5.6.18: a body whose id is another entity's is 400 BadRequestData, and nothing changes")
    void bodyIdMismatch() {
        // The spec does not say; Orion-LD rejects a payload id that differs from the URL's, and
        // replacing entity A by a document about entity B can only be a client error.
        String id = Entities.id("Building");
        create(Entities.building(id));
        String other = Entities.id("Building");
        Checks.problem(api.put(Ngsi.entity(id)).json(replacement(other)).link(model).send(), 400, "BadRequestData");
        Json.assertSame(Entities.building(id), retrieve(id));
        assertGone(other);
    }

    @Test
    @DisplayName("5.6.18: NGSI-LD Null is not supported by replace: 400 BadRequestData, and nothing changes")
    void nullNotSupported() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        ObjectNode r = Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": \"urn:ngsi-ld:null\"}}", id);
        Checks.problem(api.put(Ngsi.entity(id)).json(r).link(model).send(), 400, "BadRequestData");
        Json.assertSame(Entities.building(id), retrieve(id));
    }

    @Test
    @DisplayName("5.6.18 + 6.3.5: replace as application/ld+json takes the body's @context")
    void replaceLdJson() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.noContent(api.put(Ngsi.entity(id)).ldJson(Entities.withContext(replacement(id), model)).send());
        Json.assertSame(replacement(id), retrieve(id));
    }

    @Test
    @DisplayName("4.17: a type selector the entity does not match is 404 and nothing changes")
    void typeSelector() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.problem(api.put(Ngsi.entity(id)).query("type", "Vehicle").json(replacement(id)).link(model).send(), 404, "ResourceNotFound");
        Json.assertSame(Entities.building(id), retrieve(id));
        Checks.noContent(api.put(Ngsi.entity(id)).query("type", "Building").json(replacement(id)).link(model).send());
        Json.assertSame(replacement(id), retrieve(id));
    }
}
