package dev.cor.ngsild.conformance;

import static dev.cor.ngsild.conformance.BatchCreateTest.withContexts;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A write whose fragment names nothing to write - no attribute, no type, no scope; its id and
 * {@code @context} aside - is 400 BadRequestData and changes nothing, whatever the route: Append
 * (5.6.3), Update (5.6.2), Merge (5.6.17) and Replace (5.6.18) of an entity, as Partial Attribute
 * Update already is (TP 012_02_04) and as Orion-LD answers every empty body; in a batch update or
 * merge it is that entity's error. A fragment that names only a type is something to write (TP
 * 011_06_03).
 */
class EmptyFragmentTest extends ConformanceTest {

    @ParameterizedTest
    @CsvSource({"POST, /attrs", "PATCH, /attrs", "PATCH, ''", "PUT, ''"})
    void a_fragment_naming_nothing_to_write_is_400_and_changes_nothing(String method, String suffix) {
        String id = createdVehicle();
        JsonNode before = retrieve(id);
        String path = Ngsi.entity(id) + suffix;
        List<Ngsi.Request> empties = List.of(
                api.method(method, path).json(Json.obj("{}")),
                api.method(method, path).ldJson(Json.obj("{\"@context\": \"%s\"}", model)),
                api.method(method, path).json(Json.obj("{\"id\": \"%s\"}", id)).link(model),
                api.method(method, path).json(Json.obj("{\"id\": \"%s\", \"createdAt\": \"2020-01-01T00:00:00Z\"}", id)));
        for (Ngsi.Request r : empties) {
            Checks.problem(r.send(), 400, "BadRequestData");
            Json.assertSame(before, retrieve(id), method + " " + path + " changed the entity");
        }
        // a type alone is something to write (the suite's 011_06_03 patches a type and nothing else)
        Checks.noContent(api.method(method, path).json(Json.obj("{\"type\": \"Vehicle\"}")).link(model).send());
    }

    @ParameterizedTest
    @CsvSource({"update", "merge"})
    void a_batch_entity_naming_nothing_to_write_is_that_entitys_error(String operation) {
        String empty = createdBuilding();
        String other = createdBuilding();
        ObjectNode aql = Json.obj("{\"type\": \"Property\", \"value\": 9}");
        Checks.batchResult(api.post("/entityOperations/" + operation).ldJson(withContexts(Json.obj("{\"id\": \"%s\"}", empty),
                Json.with(Json.obj("{\"id\": \"%s\"}", other), "airQualityLevel", aql))).send(),
                List.of(other), List.of(empty), List.of("BadRequestData"));
        Json.assertSame(Entities.building(empty), retrieve(empty));
        // an entity with its type is a whole one: upsert (update) takes it, as a fragment naming its type
        Checks.noContent(api.post("/entityOperations/upsert").query("options", "update")
                .ldJson(withContexts(Entities.minimal(empty, "Building"))).send());
        Json.assertSame(Entities.building(empty), retrieve(empty));
    }
}
