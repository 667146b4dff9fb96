package dev.cor.ngsild.conformance;

import static dev.cor.ngsild.conformance.BatchCreateTest.idOf;
import static dev.cor.ngsild.conformance.BatchCreateTest.withContexts;

import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Batch Entity Creation or Update (5.6.8), POST /entityOperations/upsert (6.15): 201 with the ids
 * of the created entities, 204 when all existed, 207 with a BatchOperationResult on errors;
 * {@code options=replace} (default) replaces an existing entity, {@code options=update} updates it.
 * ETSI: TP/NGSI-LD/ContextInformation/Provision/BatchEntities/UpsertBatchOfEntities.
 */
class BatchUpsertTest extends ConformanceTest {

    private static Answer upsert(String options, ObjectNode... entities) {
        Ngsi.Request r = api.post("/entityOperations/upsert").ldJson(withContexts(entities));
        if (options != null) {
            r.query("options", options);
        }
        return r.send();
    }

    @Test
    @DisplayName("5.6.8 TP 004_01_01..03: two new entities are created: 201 with both ids")
    void upsertNew() {
        ObjectNode a = Entities.building(Entities.id("Building"));
        ObjectNode b = Json.obj("""
                {"id": "%s", "type": "Building", "locatedAt": {"type": "Relationship", "object": "urn:ngsi-ld:City:Paris"}}""", Entities.id("Building"));
        Checks.createdIds(upsert(null, a, b), List.of(idOf(a), idOf(b)));
        Json.assertSame(a, retrieve(idOf(a)));
        Json.assertSame(b, retrieve(idOf(b)));
    }

    @Test
    @DisplayName("5.6.8 TP 004_02_01..03: one new and two existing: 201 with the new id only; the existing are replaced")
    void upsertNewAndExisting() {
        String e1 = Entities.id("Building");
        String e2 = Entities.id("Building");
        create(Entities.minimal(e1, "Building"));
        create(Entities.minimal(e2, "Building"));
        ObjectNode n = Entities.building(Entities.id("Building"));
        Checks.createdIds(upsert(null, n, Entities.building(e1), Entities.building(e2)), List.of(idOf(n)));
        Json.assertSame(n, retrieve(idOf(n)));
        Json.assertSame(Entities.building(e1), retrieve(e1));
        Json.assertSame(Entities.building(e2), retrieve(e2));
    }

    @Test
    @DisplayName("5.6.8 TP 004_03_01..05: all existing: 204; each is replaced whole (attributes, scope, types)")
    void upsertExistingReplaces() {
        String e1 = Entities.id("Building");
        String e2 = Entities.id("Building");
        create(Entities.building(e1));
        create(Entities.building(e2));
        ObjectNode r1 = Json.obj("""
                {"id": "%s", "type": ["Building", "Vehicle"], "scope": "/Madrid", "speed": {"type": "Property", "value": 3}}""", e1);
        ObjectNode r2 = Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"locatedAt\": {\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:City:Paris\"}}", e2);
        Checks.noContent(upsert(null, r1, r2));
        Json.assertSame(r1, retrieve(e1));
        Json.assertSame(r2, retrieve(e2));
    }

    @Test
    @DisplayName("6.15.3.1: options=replace is the default: the same as no option")
    void explicitReplace() {
        String e1 = Entities.id("Building");
        create(Entities.building(e1));
        ObjectNode r1 = Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"speed\": {\"type\": \"Property\", \"value\": 3}}", e1);
        Checks.noContent(upsert("replace", r1));
        Json.assertSame(r1, retrieve(e1));
    }

    @Test
    @DisplayName("5.6.8 TP 004_04_01..03: options=update: the new is created (201 with its id); the existing keeps its attributes and gets the new")
    void upsertUpdate() {
        // The suite appends the fragment's attributes to the existing entity in update mode; that is
        // what "update" means to an operator, and Orion-LD does the same.
        String existing = Entities.id("Building");
        create(Entities.minimal(existing, "Building"));
        ObjectNode n = Entities.building(Entities.id("Building"));
        Checks.createdIds(upsert("update", n, Entities.building(existing)), List.of(idOf(n)));
        Json.assertSame(n, retrieve(idOf(n)));
        Json.assertSame(Entities.building(existing), retrieve(existing));
    }

    @Test
    @DisplayName("5.6.8: options=update keeps the attributes the fragment does not name")
    void updateKeepsOthers() {
        String existing = Entities.id("Building");
        create(Entities.building(existing));
        Checks.noContent(upsert("update", Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": \"Louvre\"}}", existing)));
        ObjectNode expected = Entities.building(existing);
        expected.set("name", Json.obj("{\"type\": \"Property\", \"value\": \"Louvre\"}"));
        Json.assertSame(expected, retrieve(existing));
    }

    @Test
    @DisplayName("5.6.8 TP 004_05_01: two valid and one without type: 207, the two upserted, BadRequestData for the third")
    void oneInvalid() {
        ObjectNode a = Entities.minimal(Entities.id("Building"), "Building");
        ObjectNode b = Entities.minimal(Entities.id("Building"), "Building");
        ObjectNode c = Json.obj("{\"id\": \"%s\"}", Entities.id("Building"));
        Checks.batchResult(upsert(null, a, b, c), List.of(idOf(a), idOf(b)), List.of(idOf(c)), List.of("BadRequestData"));
        Json.assertSame(a, retrieve(idOf(a)));
        assertGone(idOf(c));
    }

    @Test
    @DisplayName("5.5.4 TP 004_06_01: a body that is not JSON is 400 InvalidRequest")
    void invalidJson() {
        Checks.problem(api.post("/entityOperations/upsert").ldJson("[{\"id\": ").send(), 400, "InvalidRequest");
    }

    @Test
    @DisplayName("5.5.4 TP 004_06_02: an entity with a JSON null value: 207, BadRequestData for it")
    void nullValue() {
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": null}}", Entities.id("Building"));
        Checks.batchResult(upsert(null, e), List.of(), List.of(idOf(e)), List.of("BadRequestData"));
        assertGone(idOf(e));
    }

    @Test
    @DisplayName("5.6.8: an empty array is 400 BadRequestData")
    void emptyArray() {
        Checks.problem(api.post("/entityOperations/upsert").ldJson("[]").send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.5.11.2 TP 004_07_01: the same new id twice: 201 with each id once")
    void sameIdTwice() {
        ObjectNode a = Entities.minimal(Entities.id("Building"), "Building");
        ObjectNode b = Entities.minimal(Entities.id("Building"), "Building");
        Checks.createdIds(upsert(null, a, b, a), List.of(idOf(a), idOf(b)));
    }

    @Test
    @DisplayName("5.5.11.2 TP 466_01_01: the later of two instances of an id decides; replace drops what only the first had")
    void laterInstanceWins() {
        String id = Entities.id("Vehicle");
        ObjectNode first = Json.obj("""
                {"id": "%s", "type": "Vehicle", "speed": {"type": "Property", "value": 1}, "old": {"type": "Property", "value": true}}""", id);
        ObjectNode second = Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"speed\": {\"type\": \"Property\", \"value\": 2}}", id);
        Checks.createdIds(upsert(null, first, second), List.of(id));
        Json.assertSame(second, retrieve(id));
    }

    @Test
    @DisplayName("4.16 TP 004_08_01: upsert of existing entities with other types replaces the types (204)")
    void newTypes() {
        String e1 = Entities.id("Building");
        create(Entities.minimal(e1, "Building"));
        ObjectNode r = Json.obj("{\"id\": \"%s\", \"type\": [\"Vehicle\", \"Car\"]}", e1);
        Checks.noContent(upsert(null, r));
        Json.assertSame(r, retrieve(e1));
    }

    @Test
    @DisplayName("6.15.3.1: an options value that is neither replace nor update is 400")
    void badOption() {
        ObjectNode a = Entities.minimal(Entities.id("Building"), "Building");
        Checks.problem(upsert("sideways", a), 400, "InvalidRequest");
        assertGone(idOf(a));
    }
}
