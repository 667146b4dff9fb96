package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.function.Function;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Batch Entity Creation (5.6.7), POST /entityOperations/create (6.14): 201 with the ids when all
 * are created, 207 with a BatchOperationResult whose errors are {entityId, error: ProblemDetails}
 * otherwise; a batch is atomic per entity. ETSI:
 * TP/NGSI-LD/ContextInformation/Provision/BatchEntities/CreateBatchOfEntities.
 */
class BatchCreateTest extends ConformanceTest {

    static Answer batch(String op, ArrayNode entities) {
        return api.post("/entityOperations/" + op).ldJson(entities).send();
    }

    /** The entities, each with the tests' user context in it (application/ld+json). */
    static ArrayNode withContexts(ObjectNode... entities) {
        ArrayNode a = Json.arr("[]");
        for (ObjectNode e : entities) {
            a.add(Entities.withContext(e, model));
        }
        return a;
    }

    static String idOf(JsonNode e) {
        return e.get("id").asText();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"minimal", "properties", "relationship", "relationshipOfProperty"})
    @DisplayName("5.6.7 TP 003_01_01..04: two entities are created: 201 with both ids; each reads back as sent")
    void createTwo(String shape) {
        Function<String, ObjectNode> make = switch (shape) {
            case "minimal" -> id -> Entities.minimal(id, "Building");
            case "properties" -> Entities::building;
            case "relationship" -> id -> Json.obj("""
                    {"id": "%s", "type": "Building", "locatedAt": {"type": "Relationship", "object": "urn:ngsi-ld:City:Paris"}}""", id);
            default -> id -> {
                ObjectNode b = Entities.building(id);
                ((ObjectNode) b.get("airQualityLevel")).set("providedBy",
                        Json.obj("{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:Sensor:1\"}"));
                return b;
            };
        };
        ObjectNode a = make.apply(Entities.id("Building"));
        ObjectNode b = make.apply(Entities.id("Building"));
        Checks.createdIds(batch("create", withContexts(a, b)), List.of(idOf(a), idOf(b)));
        Json.assertSame(a, retrieve(idOf(a)));
        Json.assertSame(b, retrieve(idOf(b)));
    }

    @Test
    @DisplayName("5.6.7 TP 003_02_01: two new entities and one that exists: 207, the two created, AlreadyExists for the third")
    void oneExists() {
        String existing = Entities.id("Building");
        create(Entities.building(existing));
        ObjectNode a = Entities.minimal(Entities.id("Building"), "Building");
        ObjectNode b = Entities.minimal(Entities.id("Building"), "Building");
        Answer r = batch("create", withContexts(a, b, Entities.minimal(existing, "Building")));
        Checks.batchResult(r, List.of(idOf(a), idOf(b)), List.of(existing), List.of("AlreadyExists"));
        Json.assertSame(a, retrieve(idOf(a)));
        Json.assertSame(b, retrieve(idOf(b)));
        Json.assertSame(Entities.building(existing), retrieve(existing));
    }

    @Test
    @DisplayName("5.5.4 TP 003_03_01: a body that is not JSON is 400 InvalidRequest")
    void invalidJson() {
        Checks.problem(api.post("/entityOperations/create").ldJson("[{\"id\": \"urn:ngsi-ld:Building:x\", \"type\": ").send(), 400,
                "InvalidRequest");
    }

    @Test
    @DisplayName("5.6.7 TP 003_03_02, 567_01_01: an empty array is 400 BadRequestData")
    void emptyArray() {
        Checks.problem(api.post("/entityOperations/create").ldJson("[]").send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.6.7 TP 567_01_01: a null item fails the whole batch: 400 BadRequestData, the valid sibling is not created")
    void nullItem() {
        String id = Entities.id("Vehicle");
        Checks.problem(api.post("/entityOperations/create").json("[{\"id\": \"" + id + "\", \"type\": \"Vehicle\"}, null]").send(), 400,
                "BadRequestData");
        Checks.problem(api.get(Ngsi.entity(id)).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("6.3.5 TP 003_04_01/02: application/json with a Link: the entities expand with it")
    void jsonWithLink() {
        ObjectNode e = Entities.building(Entities.id("Building"));
        Answer r = api.post("/entityOperations/create").json(Json.array(e)).link(model).send();
        Checks.createdIds(r, List.of(idOf(e)));
        Json.assertSame(e, retrieve(idOf(e)));
        JsonNode plain = Checks.okJson(api.get(Ngsi.entity(idOf(e))).send(), Json.CORE);
        assertTrue(plain.has(modelIri("almostFull")), plain::toString);
    }

    @Test
    @DisplayName("6.3.5 TP 003_05_01/02: application/json without a Link: the core context (default vocabulary)")
    void jsonWithoutLink() {
        ObjectNode e = Entities.building(Entities.id("Building"));
        Checks.createdIds(api.post("/entityOperations/create").json(Json.array(e)).send(), List.of(idOf(e)));
        Json.assertSame(e, Checks.okJson(api.get(Ngsi.entity(idOf(e))).send(), Json.CORE));
        JsonNode withModel = retrieve(idOf(e));
        assertTrue(withModel.has("ngsi-ld:default-context/almostFull"), withModel::toString);
    }

    @Test
    @DisplayName("6.3.5 TP 003_06_01: application/json with @context in an entity: 207, BadRequestData for that entity")
    void jsonWithContextInBody() {
        ObjectNode e = Entities.withContext(Entities.building(Entities.id("Building")), model);
        Answer r = api.post("/entityOperations/create").json(Json.array(e)).send();
        Checks.batchResult(r, List.of(), List.of(idOf(e)), List.of("BadRequestData"));
        Checks.problem(api.get(Ngsi.entity(idOf(e))).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("6.3.5 TP 003_07_01/02: application/ld+json: each entity's own @context expands it")
    void ldJsonContextPerEntity() {
        ObjectNode e = Entities.building(Entities.id("Building"));
        Checks.createdIds(batch("create", withContexts(e)), List.of(idOf(e)));
        Json.assertSame(e, retrieve(idOf(e)));
        assertEquals(modelIri("Building"), Checks.okJson(api.get(Ngsi.entity(idOf(e))).send()).path("type").asText());
    }

    @Test
    @DisplayName("6.3.5 TP 003_08_01: application/ld+json with an entity lacking @context: 207, BadRequestData for it")
    void ldJsonEntityWithoutContext() {
        ObjectNode e = Entities.building(Entities.id("Building"));
        Checks.batchResult(api.post("/entityOperations/create").ldJson(Json.array(e)).send(), List.of(), List.of(idOf(e)),
                List.of("BadRequestData"));
        Checks.problem(api.get(Ngsi.entity(idOf(e))).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("6.3.5 TP 003_09_01: application/ld+json with a Link header is 400 BadRequestData")
    void ldJsonWithLink() {
        ObjectNode e = Entities.building(Entities.id("Building"));
        Checks.problem(api.post("/entityOperations/create").ldJson(withContexts(e)).link(model).send(), 400, "BadRequestData");
        Checks.problem(api.get(Ngsi.entity(idOf(e))).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.5.11.1 TP 003_10_01: the same id twice: the first creates it, the second is AlreadyExists (207)")
    void sameIdTwice() {
        ObjectNode a = Entities.minimal(Entities.id("Building"), "Building");
        ObjectNode b = Entities.minimal(Entities.id("Building"), "Building");
        ObjectNode a2 = Json.with(a, "name", Json.obj("{\"type\": \"Property\", \"value\": \"second\"}"));
        Checks.batchResult(batch("create", withContexts(a, b, a2)), List.of(idOf(a), idOf(b)), List.of(idOf(a)), List.of("AlreadyExists"));
        Json.assertSame(a, retrieve(idOf(a)));
    }

    @Test
    @DisplayName("5.6.7: an invalid entity fails alone: 207, BadRequestData for it, the others created")
    void invalidEntityFailsAlone() {
        ObjectNode a = Entities.minimal(Entities.id("Building"), "Building");
        ObjectNode bad = Json.obj("""
                {"id": "%s", "type": "Building", "name": {"type": "Property"}}""", Entities.id("Building"));
        Checks.batchResult(batch("create", withContexts(a, bad)), List.of(idOf(a)), List.of(idOf(bad)), List.of("BadRequestData"));
        Json.assertSame(a, retrieve(idOf(a)));
        assertGone(idOf(bad));
    }
}
