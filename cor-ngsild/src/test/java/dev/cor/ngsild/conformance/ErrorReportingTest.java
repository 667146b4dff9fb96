package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Errors (5.5.2, 5.5.3, 6.3.2, 6.3.3): every error is a ProblemDetails with an ETSI type URI,
 * application/json, no Link; a query parameter an operation does not define is 400 InvalidRequest
 * (6.3.20 in V1.9.1, the suite's 059_01) and the operation is not carried out; a verb a resource does
 * not have is 405 with Allow. ETSI: CommonBehaviours/CommonResponses/VerifyInvalidParameters.
 */
class ErrorReportingTest extends ConformanceTest {

    /**
     * Every operation of the issue, with a valid body where it takes one: name, method, path, body.
     * {@code {id}} is an entity that exists, {@code {new}} an id nothing has.
     */
    static Stream<Arguments> operations() {
        return Stream.of(
                Arguments.of("create entity", "POST", "/entities", "{\"id\": \"{new}\", \"type\": \"Building\"}"),
                Arguments.of("query entities", "GET", "/entities?type=Building", null),
                Arguments.of("retrieve entity", "GET", "/entities/{id}", null),
                Arguments.of("replace entity", "PUT", "/entities/{id}", "{\"id\": \"{id}\", \"type\": \"Building\"}"),
                Arguments.of("merge entity", "PATCH", "/entities/{id}", "{\"name\": {\"type\": \"Property\", \"value\": \"x\"}}"),
                Arguments.of("delete entity", "DELETE", "/entities/{id}", null),
                Arguments.of("append attributes", "POST", "/entities/{id}/attrs", "{\"name\": {\"type\": \"Property\", \"value\": \"x\"}}"),
                Arguments.of("update attributes", "PATCH", "/entities/{id}/attrs", "{\"name\": {\"type\": \"Property\", \"value\": \"x\"}}"),
                Arguments.of("partial attribute update", "PATCH", "/entities/{id}/attrs/name", "{\"value\": \"x\"}"),
                Arguments.of("replace attribute", "PUT", "/entities/{id}/attrs/name", "{\"type\": \"Property\", \"value\": \"x\"}"),
                Arguments.of("delete attribute", "DELETE", "/entities/{id}/attrs/name", null),
                Arguments.of("batch create", "POST", "/entityOperations/create", "[{\"id\": \"{new}\", \"type\": \"Building\"}]"),
                Arguments.of("batch upsert", "POST", "/entityOperations/upsert", "[{\"id\": \"{id}\", \"type\": \"Building\"}]"),
                Arguments.of("batch update", "POST", "/entityOperations/update",
                        "[{\"id\": \"{id}\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": \"x\"}}]"),
                Arguments.of("batch delete", "POST", "/entityOperations/delete", "[\"{id}\"]"),
                Arguments.of("batch merge", "POST", "/entityOperations/merge",
                        "[{\"id\": \"{id}\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": \"x\"}}]"),
                Arguments.of("list @contexts", "GET", "/jsonldContexts", null),
                Arguments.of("add @context", "POST", "/jsonldContexts", "{\"@context\": {\"A1\": \"urn:ngsi-ld:attributes:A1\"}}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("operations")
    @DisplayName("6.3.20 TP 059_01_01..02: an unknown query parameter is 400 InvalidRequest, and the operation is not carried out")
    void unknownParameter(String name, String method, String path, String body) {
        String id = Entities.id("Building");
        String fresh = Entities.id("Building");
        ObjectNode entity = Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": \"kept\"}}", id);
        createPlain(entity);
        String p = path.replace("{id}", id);
        Ngsi.Request r = api.method(method, p + (p.contains("?") ? "&" : "?") + "invalidParams=invalidValue");
        if (body != null) {
            r.json(body.replace("{id}", id).replace("{new}", fresh));
        }
        JsonNode problem = Checks.problem(r.send(), 400, "InvalidRequest");
        assertTrue(problem.path("detail").asText().contains("invalidParams"), () -> "the detail names the parameter: " + problem);
        Json.assertSame(entity, Checks.okJson(api.get(Ngsi.entity(id)).send()));
        Checks.problem(api.get(Ngsi.entity(fresh)).send(), 404, "ResourceNotFound");
    }

    /**
     * The other resources of the suite's 059_01 rows (the temporal API, types, subscriptions, the
     * purge): name, method, path, body, and a path that must stay 404 (what a create would have made).
     * {@code {new}} is an id nothing has.
     */
    static Stream<Arguments> otherResources() {
        return Stream.of(
                Arguments.of("create temporal evolution", "POST", "/temporal/entities",
                        "{\"id\": \"{new}\", \"type\": \"Building\", \"name\": [{\"type\": \"Property\", \"value\": \"x\","
                                + " \"observedAt\": \"2020-08-01T12:00:00Z\"}]}", "/temporal/entities/{new}"),
                Arguments.of("query temporal evolutions", "GET", "/temporal/entities?type=Building", null, null),
                Arguments.of("retrieve entity types", "GET", "/types", null, null),
                Arguments.of("create subscription", "POST", "/subscriptions",
                        "{\"id\": \"{new}\", \"type\": \"Subscription\", \"entities\": [{\"type\": \"Building\"}],"
                                + " \"notification\": {\"endpoint\": {\"uri\": \"http://127.0.0.1:9/n\"}}}", "/subscriptions/{new}"),
                Arguments.of("query subscriptions", "GET", "/subscriptions", null, null),
                Arguments.of("purge entities", "DELETE", "/entities?type=Building", null, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("otherResources")
    @DisplayName("6.3.20 TP 059_01_03..08: an unknown query parameter is 400 InvalidRequest on the temporal API, types, subscriptions and the purge too")
    void unknownParameterElsewhere(String name, String method, String path, String body, String absent) {
        String id = Entities.id("Building");
        String fresh = Entities.id("Building");
        ObjectNode entity = Json.obj("{\"id\": \"%s\", \"type\": \"Building\", \"name\": {\"type\": \"Property\", \"value\": \"kept\"}}", id);
        createPlain(entity);
        Ngsi.Request r = api.method(method, path + (path.contains("?") ? "&" : "?") + "invalidParams=invalidValue");
        if (body != null) {
            r.json(body.replace("{new}", fresh));
        }
        JsonNode problem = Checks.problem(r.send(), 400, "InvalidRequest");
        assertTrue(problem.path("detail").asText().contains("invalidParams"), () -> "the detail names the parameter: " + problem);
        Json.assertSame(entity, Checks.okJson(api.get(Ngsi.entity(id)).send()));
        if (absent != null) {
            Checks.problem(api.get(absent.replace("{new}", fresh)).send(), 404, "ResourceNotFound");
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
        "POST,/entities/urn:ngsi-ld:Building:405,GET",
        "PUT,/entities/urn:ngsi-ld:Building:405/attrs,POST",
        "DELETE,/entities/urn:ngsi-ld:Building:405/attrs,PATCH",
        "GET,/entityOperations/create,POST",
        "PUT,/entityOperations/delete,POST",
        "POST,/entities/urn:ngsi-ld:Building:405/attrs/name,PATCH"})
    @DisplayName("6.3.2: a verb the resource does not have is 405, a ProblemDetails, with Allow naming the verbs it has")
    void methodNotAllowed(String method, String path, String allowed) {
        Ngsi.Request r = api.method(method, path);
        if (!method.equals("GET") && !method.equals("DELETE")) {
            r.json("{}");
        }
        Answer a = r.send();
        Checks.problemDetails(a, 405);
        assertTrue(a.header("Allow") != null && a.header("Allow").contains(allowed), () -> "Allow names " + allowed + ": " + a);
        assertTrue(!a.header("Allow").contains(method), () -> "Allow does not name " + method + ": " + a);
    }

    @Test
    @DisplayName("5.5.3: a resource the API does not have is 404 with a ProblemDetails")
    void unknownResource() {
        Checks.problemDetails(api.get("/nothingHere").send(), 404);
    }

    @Test
    @DisplayName("5.5.3 + 6.3.3: the ProblemDetails of a 400 explains itself: title, and a detail beyond it")
    void problemDetailsShape() {
        JsonNode p = Checks.problem(api.post("/entities").json("{\"id\": 5, \"type\": \"Building\"}").send(), 400, "BadRequestData");
        assertTrue(p.path("detail").asText().contains("id"), p::toString);
    }
}
