package dev.cor.ngsild.conformance;

import static dev.cor.ngsild.conformance.BatchCreateTest.withContexts;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Batch Entity Update (5.6.9), POST /entityOperations/update (6.16): Append Attributes (5.6.3) per
 * entity, {@code options=noOverwrite} keeping existing attributes; 204 when all are updated, 207
 * with a BatchOperationResult otherwise. ETSI:
 * TP/NGSI-LD/ContextInformation/Provision/BatchEntities/UpdateBatchOfEntities.
 */
class BatchUpdateTest extends ConformanceTest {

    private static Answer update(String options, ObjectNode... entities) {
        Ngsi.Request r = api.post("/entityOperations/update").ldJson(withContexts(entities));
        if (options != null) {
            r.query("options", options);
        }
        return r.send();
    }

    @Test
    @DisplayName("5.6.9 TP 005_01_01: updating with the same attributes: 204, nothing changes")
    void sameAttributes() {
        String[] ids = {createdBuilding(), createdBuilding()};
        Checks.noContent(update(null, Entities.building(ids[0]), Entities.building(ids[1])));
        Json.assertSame(Entities.building(ids[0]), retrieve(ids[0]));
        Json.assertSame(Entities.building(ids[1]), retrieve(ids[1]));
    }

    @Test
    @DisplayName("5.6.9 TP 005_01_02: a new attribute is appended to each entity (204)")
    void newAttribute() {
        String[] ids = {createdBuilding(), createdBuilding()};
        ObjectNode rel = Json.obj("{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:City:Paris\"}");
        Checks.noContent(update(null, Json.with(Entities.minimal(ids[0], "Building"), "locatedAt", rel),
                Json.with(Entities.minimal(ids[1], "Building"), "locatedAt", rel)));
        Json.assertSame(Json.with(Entities.building(ids[0]), "locatedAt", rel), retrieve(ids[0]));
        Json.assertSame(Json.with(Entities.building(ids[1]), "locatedAt", rel), retrieve(ids[1]));
    }

    @Test
    @DisplayName("5.6.9 TP 005_01_03: an attribute is replaced whole, with its new sub-Relationship")
    void replacedAttribute() {
        String[] ids = {createdBuilding(), createdBuilding()};
        ObjectNode aql = Json.obj("""
                {"type": "Property", "value": 9, "providedBy": {"type": "Relationship", "object": "urn:ngsi-ld:Sensor:2"}}""");
        Checks.noContent(update(null, Json.with(Entities.minimal(ids[0], "Building"), "airQualityLevel", aql)));
        Json.assertSame(Json.with(Entities.building(ids[0]), "airQualityLevel", aql), retrieve(ids[0]));
    }

    @Test
    @DisplayName("5.6.9 TP 005_02_01: noOverwrite with only existing attributes: 207, nothing overwritten")
    void noOverwriteExisting() {
        // The suite only checks 207 here: what the BatchOperationResult lists for an entity whose
        // attributes were all kept is not specified (Orion-LD answers 204). See conf-notes.
        String[] ids = {createdBuilding(), createdBuilding()};
        ObjectNode changed = Json.with(Entities.minimal(ids[0], "Building"), "name", Json.obj("{\"type\": \"Property\", \"value\": \"Louvre\"}"));
        Answer r = update("noOverwrite", changed);
        Checks.status(r, 207);
        JsonNode body = r.json();
        assertTrue(body.path("success").isArray() && body.path("errors").isArray(), r::toString);
        Json.assertSame(Entities.building(ids[0]), retrieve(ids[0]));
    }

    @Test
    @DisplayName("5.6.9 TP 005_02_02: noOverwrite with only new attributes: 204, appended")
    void noOverwriteNew() {
        String[] ids = {createdBuilding(), createdBuilding()};
        ObjectNode rel = Json.obj("{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:City:Paris\"}");
        Checks.noContent(update("noOverwrite", Json.with(Entities.minimal(ids[0], "Building"), "locatedAt", rel)));
        Json.assertSame(Json.with(Entities.building(ids[0]), "locatedAt", rel), retrieve(ids[0]));
    }

    @Test
    @DisplayName("5.6.9 TP 005_02_03: noOverwrite with a new and an existing attribute: 207; the new appended, the existing kept")
    void noOverwriteMixed() {
        String[] ids = {createdBuilding(), createdBuilding()};
        ObjectNode rel = Json.obj("{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:City:Paris\"}");
        ObjectNode f = Json.with(Json.with(Entities.minimal(ids[0], "Building"), "locatedAt", rel), "name",
                Json.obj("{\"type\": \"Property\", \"value\": \"Louvre\"}"));
        Checks.status(update("noOverwrite", f), 207);
        Json.assertSame(Json.with(Entities.building(ids[0]), "locatedAt", rel), retrieve(ids[0]));
    }

    @Test
    @DisplayName("5.6.9 TP 005_03_01: two existing and one unknown: 207, the two updated, ResourceNotFound for the third")
    void oneUnknown() {
        String[] ids = {createdBuilding(), createdBuilding()};
        String unknown = Entities.id("Building");
        ObjectNode name = Json.obj("{\"type\": \"Property\", \"value\": \"Louvre\"}");
        Answer r = update(null, Json.with(Entities.minimal(ids[0], "Building"), "name", name),
                Json.with(Entities.minimal(ids[1], "Building"), "name", name), Json.with(Entities.minimal(unknown, "Building"), "name", name));
        Checks.batchResult(r, List.of(ids[0], ids[1]), List.of(unknown), List.of("ResourceNotFound"));
        Json.assertSame(Json.with(Entities.building(ids[0]), "name", name), retrieve(ids[0]));
        assertGone(unknown);
    }

    @Test
    @DisplayName("5.5.4 TP 005_04_01: a body that is not JSON is 400 InvalidRequest")
    void invalidJson() {
        Checks.problem(api.post("/entityOperations/update").ldJson("[{\"id\": ").send(), 400, "InvalidRequest");
    }

    @Test
    @DisplayName("5.5.4 TP 005_04_02: an entity with a JSON null value: 207, BadRequestData for it, it is unchanged")
    void nullValue() {
        String[] ids = {createdBuilding(), createdBuilding()};
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": null}}", ids[0]);
        Checks.batchResult(update(null, e), List.of(), List.of(ids[0]), List.of("BadRequestData"));
        Json.assertSame(Entities.building(ids[0]), retrieve(ids[0]));
    }

    @Test
    @DisplayName("4.16 TP 005_05_01: a new type in the fragment is added to the entity's types (204)")
    void newType() {
        String a = Entities.id("Building");
        create(Entities.minimal(a, "Building"));
        Checks.noContent(update(null, Json.obj("{\"id\": \"%s\", \"type\": [\"Building\", \"Vehicle\"]}", a)));
        Json.assertSame(Json.obj("{\"id\": \"%s\", \"type\": [\"Building\", \"Vehicle\"]}", a), retrieve(a));
    }

    @Test
    @DisplayName("5.6.9: an empty array and a null item are 400 BadRequestData")
    void emptyAndNull() {
        Checks.problem(api.post("/entityOperations/update").ldJson("[]").send(), 400, "BadRequestData");
        String[] ids = {createdBuilding(), createdBuilding()};
        Checks.problem(api.post("/entityOperations/update").json("[{\"id\": \"" + ids[0] + "\", \"type\": \"Building\"}, null]").send(), 400,
                "BadRequestData");
    }

    @Test
    @DisplayName("5.5.11.3: two fragments of one entity are applied in order: the later value stays")
    void sameIdTwice() {
        String a = Entities.id("Building");
        create(Entities.building(a));
        ObjectNode first = Json.with(Entities.minimal(a, "Building"), "name", Json.obj("{\"type\": \"Property\", \"value\": \"first\"}"));
        ObjectNode second = Json.with(Entities.minimal(a, "Building"), "name", Json.obj("{\"type\": \"Property\", \"value\": \"second\"}"));
        Checks.noContent(update(null, first, second));
        Json.assertSame(Json.with(Entities.building(a), "name", Json.obj("{\"type\": \"Property\", \"value\": \"second\"}")), retrieve(a));
    }
}
