package dev.cor.ngsild.conformance;

import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.node.ArrayNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Batch Entity Delete (5.6.10), POST /entityOperations/delete (6.17): an array of ids; 204 when all
 * are deleted, 207 with a BatchOperationResult otherwise. ETSI:
 * TP/NGSI-LD/ContextInformation/Provision/BatchEntities/DeleteBatchOfEntities.
 */
class BatchDeleteTest extends ConformanceTest {

    private static Answer delete(String... ids) {
        ArrayNode a = Json.arr("[]");
        for (String id : ids) {
            a.add(id);
        }
        return api.post("/entityOperations/delete").json(a).send();
    }

    @Test
    @DisplayName("5.6.10 TP 006_01_01: two entities are deleted: 204, both gone")
    void deleteTwo() {
        String a = createdBuilding();
        String b = createdBuilding();
        Checks.noContent(delete(a, b));
        assertGone(a);
        assertGone(b);
    }

    @Test
    @DisplayName("5.6.10 TP 006_02_01: one existing and one unknown: 207, the existing deleted, ResourceNotFound for the other")
    void oneUnknown() {
        String a = createdBuilding();
        String unknown = Entities.id("Building");
        Checks.batchResult(delete(a, unknown), List.of(a), List.of(unknown), List.of("ResourceNotFound"));
        assertGone(a);
    }

    @Test
    @DisplayName("5.5.4 TP 006_03_01: a body that is not JSON is 400 InvalidRequest")
    void invalidJson() {
        Checks.problem(api.post("/entityOperations/delete").json("[\"urn:ngsi-ld:Building:x\",").send(), 400, "InvalidRequest");
    }

    @Test
    @DisplayName("5.6.10 TP 006_03_02: an empty array is 400 BadRequestData")
    void emptyArray() {
        Checks.problem(api.post("/entityOperations/delete").json("[]").send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.6.10: a null item fails the whole batch: 400 BadRequestData, the sibling stays")
    void nullItem() {
        String a = createdBuilding();
        Checks.problem(api.post("/entityOperations/delete").json("[\"" + a + "\", null]").send(), 400, "BadRequestData");
        Json.assertSame(Entities.building(a), retrieve(a));
    }

    @Test
    @DisplayName("5.5.11.4 TP 006_04_01: the same id twice: the first deletes it, the second is ResourceNotFound (207)")
    void sameIdTwice() {
        String a = createdBuilding();
        Checks.batchResult(delete(a, a), List.of(a), List.of(a), List.of("ResourceNotFound"));
        assertGone(a);
    }

    @Test
    @DisplayName("5.6.10: an id that is not a URI fails alone: 207, BadRequestData for it, the other deleted")
    void invalidId() {
        String a = createdBuilding();
        Checks.batchResult(delete(a, "not-a-uri"), List.of(a), List.of("not-a-uri"), List.of("BadRequestData"));
        assertGone(a);
    }

    @Test
    @DisplayName("5.6.10: the ids may come as application/ld+json too")
    void ldJson() {
        String a = createdBuilding();
        Checks.noContent(api.post("/entityOperations/delete").ldJson("[\"" + a + "\"]").send());
        assertGone(a);
    }
}
