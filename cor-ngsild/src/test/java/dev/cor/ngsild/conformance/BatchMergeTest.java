package dev.cor.ngsild.conformance;

import static dev.cor.ngsild.conformance.BatchCreateTest.withContexts;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Batch Entity Merge (5.6.20), POST /entityOperations/merge (6.31): Merge Entity (5.6.17) per
 * entity; 204 when all are merged, 207 with a BatchOperationResult otherwise. ETSI:
 * TP/NGSI-LD/ContextInformation/Provision/BatchEntities/MergeBatchOfEntities.
 */
class BatchMergeTest extends ConformanceTest {

    private static Answer merge(ObjectNode... entities) {
        return api.post("/entityOperations/merge").ldJson(withContexts(entities)).send();
    }

    @Test
    @DisplayName("5.6.20 TP 057_01_01: merging fragments with only id and type: 204, nothing changes")
    void mergeEmpty() {
        String[] ids = {createdBuilding(), createdBuilding()};
        Checks.noContent(merge(Entities.minimal(ids[0], "Building"), Entities.minimal(ids[1], "Building")));
        Json.assertSame(Entities.building(ids[0]), retrieve(ids[0]));
        Json.assertSame(Entities.building(ids[1]), retrieve(ids[1]));
    }

    @Test
    @DisplayName("5.6.20 TP 057_01_02/03: merged Properties and a Relationship replace and add, in each entity")
    void mergeAttributes() {
        String[] ids = {createdBuilding(), createdBuilding()};
        ObjectNode f = Json.obj("""
                {"name": {"type": "Property", "value": "Pisa Tower"},
                 "locatedAt": {"type": "Relationship", "object": "urn:ngsi-ld:City:Pisa"}}""");
        ObjectNode fa = Entities.minimal(ids[0], "Building");
        fa.setAll(f);
        ObjectNode fb = Entities.minimal(ids[1], "Building");
        fb.setAll(f);
        Checks.noContent(merge(fa, fb));
        for (String id : ids) {
            ObjectNode expected = Entities.building(id);
            expected.setAll(f);
            Json.assertSame(expected, retrieve(id));
        }
    }

    @Test
    @DisplayName("5.5.12 TP 057_01_04: merging value and observedAt keeps the unitCode")
    void mergePartial() {
        String[] ids = {createdBuilding(), createdBuilding()};
        ObjectNode f = Json.with(Entities.minimal(ids[0], "Building"), "airQualityLevel",
                Json.obj("{\"type\": \"Property\", \"value\": 1, \"observedAt\": \"2024-01-01T00:00:00.000Z\"}"));
        Checks.noContent(merge(f));
        Json.assertSame(Json.with(Entities.building(ids[0]), "airQualityLevel",
                Json.obj("{\"type\": \"Property\", \"value\": 1, \"unitCode\": \"C62\", \"observedAt\": \"2024-01-01T00:00:00.000Z\"}")),
                retrieve(ids[0]));
    }

    @Test
    @DisplayName("5.6.20 TP 057_02_01: two existing and one unknown: 207, the two merged, ResourceNotFound for the third")
    void oneUnknown() {
        String[] ids = {createdBuilding(), createdBuilding()};
        String unknown = Entities.id("Building");
        ObjectNode name = Json.obj("{\"type\": \"Property\", \"value\": \"Louvre\"}");
        Answer r = merge(Json.with(Entities.minimal(ids[0], "Building"), "name", name), Json.with(Entities.minimal(ids[1], "Building"), "name", name),
                Json.with(Entities.minimal(unknown, "Building"), "name", name));
        Checks.batchResult(r, List.of(ids[0], ids[1]), List.of(unknown), List.of("ResourceNotFound"));
        Json.assertSame(Json.with(Entities.building(ids[1]), "name", name), retrieve(ids[1]));
        assertGone(unknown);
    }

    @Test
    @DisplayName("5.5.4 TP 057_03_01: a body that is not JSON is 400 InvalidRequest")
    void invalidJson() {
        Checks.problem(api.post("/entityOperations/merge").ldJson("[{\"id\": ").send(), 400, "InvalidRequest");
    }

    @Test
    @DisplayName("5.5.4 TP 057_03_02: an entity with a JSON null value: 207, BadRequestData for it")
    void nullValue() {
        String[] ids = {createdBuilding(), createdBuilding()};
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": null}}", ids[0]);
        Checks.batchResult(merge(e), List.of(), List.of(ids[0]), List.of("BadRequestData"));
        Json.assertSame(Entities.building(ids[0]), retrieve(ids[0]));
    }

    @Test
    @DisplayName("5.6.20 TP 5620_01_01/02: a null item or an empty array is 400 BadRequestData")
    void nullItemAndEmpty() {
        String[] ids = {createdBuilding(), createdBuilding()};
        Checks.problem(api.post("/entityOperations/merge").json("[{\"id\": \"" + ids[0] + "\", \"type\": \"Building\"}, null]").send(), 400,
                "BadRequestData");
        Checks.problem(api.post("/entityOperations/merge").json("[]").send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.6.20 TP 5620_01_03: an NGSI-LD Null in concise form deletes the attribute; the others stay (204)")
    void nullDeletes() {
        String[] ids = {createdBuilding(), createdBuilding()};
        Checks.noContent(merge(Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"subCategory\": \"urn:ngsi-ld:null\"}", ids[0])));
        Answer a = api.get(Ngsi.entity(ids[0])).link(model).send();
        Json.assertSame(Json.without(Entities.building(ids[0]), "subCategory"), Checks.okJson(a));
        assertFalse(a.text().contains("urn:ngsi-ld:null"), a::toString);
    }

    @Test
    @DisplayName("5.5.11.5: two fragments of one entity are merged in order")
    void sameIdTwice() {
        String[] ids = {createdBuilding(), createdBuilding()};
        ObjectNode first = Json.with(Entities.minimal(ids[0], "Building"), "name", Json.obj("{\"type\": \"Property\", \"value\": \"first\"}"));
        ObjectNode second = Json.with(Entities.minimal(ids[0], "Building"), "source", Json.obj("{\"type\": \"Property\", \"value\": \"second\"}"));
        Checks.noContent(merge(first, second));
        ObjectNode expected = Entities.building(ids[0]);
        expected.set("name", Json.obj("{\"type\": \"Property\", \"value\": \"first\"}"));
        expected.set("source", Json.obj("{\"type\": \"Property\", \"value\": \"second\"}"));
        Json.assertSame(expected, retrieve(ids[0]));
    }
}
