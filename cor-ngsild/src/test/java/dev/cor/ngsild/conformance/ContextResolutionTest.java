package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * JSON-LD {@code @context} resolution (6.3.5) and term expansion/compaction (5.5.7): GET and DELETE
 * take the Link header; POST, PATCH and PUT take the Link with application/json and the body's
 * {@code @context} with application/ld+json, and mixing the two is 400 BadRequestData, for every
 * operation with a body. Remote contexts that fail are {@link RemoteContextTest}'s.
 * ETSI: CreateEntity 001_04..001_09, CreateBatchOfEntities 003_04..003_09.
 */
class ContextResolutionTest extends ConformanceTest {

    /** Every operation with a body, on an entity that exists: method, path, a valid body for it. */
    static Stream<Arguments> writes() {
        return Stream.of(
                Arguments.of("create", "POST", null, "{\"id\": \"%s\", \"type\": \"Vehicle\"}"),
                Arguments.of("append", "POST", "/attrs", "{\"speed\": {\"type\": \"Property\", \"value\": 1}}"),
                Arguments.of("update", "PATCH", "/attrs", "{\"brandName\": {\"type\": \"Property\", \"value\": \"x\"}}"),
                Arguments.of("partial update", "PATCH", "/attrs/brandName", "{\"value\": \"x\"}"),
                Arguments.of("replace attribute", "PUT", "/attrs/brandName", "{\"type\": \"Property\", \"value\": \"x\"}"),
                Arguments.of("replace", "PUT", "", "{\"id\": \"%s\", \"type\": \"Vehicle\"}"),
                Arguments.of("merge", "PATCH", "", "{\"brandName\": {\"type\": \"Property\", \"value\": \"x\"}}"),
                Arguments.of("batch create", "POST", "batch:create", "{\"id\": \"%s\", \"type\": \"Vehicle\"}"),
                Arguments.of("batch upsert", "POST", "batch:upsert", "{\"id\": \"%s\", \"type\": \"Vehicle\"}"),
                Arguments.of("batch update", "POST", "batch:update", "{\"id\": \"%s\", \"type\": \"Vehicle\"}"),
                Arguments.of("batch merge", "POST", "batch:merge", "{\"id\": \"%s\", \"type\": \"Vehicle\"}"));
    }

    /** The request of {@link #writes()} against a fresh Vehicle (created first), or a fresh id for a create. */
    private static Ngsi.Request write(String method, String where, String body, ObjectNode extra, String contentType) {
        String id = Entities.id("Vehicle");
        if (where != null && !where.startsWith("batch:create")) {
            create(Entities.vehicle(id));
        }
        String path = where == null ? "/entities" : where.startsWith("batch:") ? "/entityOperations/" + where.substring(6) : Ngsi.entity(id) + where;
        ObjectNode b = Json.obj(body.contains("%s") ? body.formatted(id) : body);
        b.setAll(extra);
        Object payload = where != null && where.startsWith("batch:") ? Json.array(b) : b;
        return api.method(method, path).body(contentType, payload);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("writes")
    @DisplayName("6.3.5 TP 001_06_01, 003_06_01: application/json with @context in the body is 400 BadRequestData (207 per entity in a batch)")
    void jsonWithContextInBody(String op, String method, String where, String body) {
        Answer a = write(method, where, body, Json.obj("{\"@context\": \"%s\"}", model), Ngsi.JSON).send();
        if (where != null && where.startsWith("batch:")) {
            Checks.status(a, 207);
            assertEquals(Checks.ERRORS + "BadRequestData", a.json().path("errors").path(0).path("error").path("type").asText(), a::toString);
        } else {
            Checks.problem(a, 400, "BadRequestData");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("writes")
    @DisplayName("6.3.5 TP 001_08_01, 003_08_01: application/ld+json without @context is 400 BadRequestData (207 per entity in a batch)")
    void ldJsonWithoutContext(String op, String method, String where, String body) {
        Answer a = write(method, where, body, Json.obj("{}"), Ngsi.LD_JSON).send();
        if (where != null && where.startsWith("batch:")) {
            Checks.status(a, 207);
            assertEquals(Checks.ERRORS + "BadRequestData", a.json().path("errors").path(0).path("error").path("type").asText(), a::toString);
        } else {
            Checks.problem(a, 400, "BadRequestData");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("writes")
    @DisplayName("6.3.5 TP 001_09_01, 003_09_01: application/ld+json with a context Link header is 400 BadRequestData")
    void ldJsonWithLink(String op, String method, String where, String body) {
        Answer a = write(method, where, body, Json.obj("{\"@context\": \"%s\"}", model), Ngsi.LD_JSON).link(model).send();
        Checks.problem(a, 400, "BadRequestData");
    }

    @Test
    @DisplayName("6.3.5 TP 001_04_01/02: application/json takes the Link: the terms expand with it")
    void jsonTakesTheLink() {
        String id = Entities.id("Building");
        Checks.created(api.post("/entities").json(Entities.building(id)).link(model).send(), id);
        Json.assertSame(Entities.building(id), retrieve(id));
        JsonNode plain = Checks.okJson(api.get(Ngsi.entity(id)).send(), Json.CORE);
        assertTrue(plain.has(modelIri("almostFull")), plain::toString);
    }

    @Test
    @DisplayName("6.3.5 TP 001_05_01/02: application/json without a Link takes the core context; under the user context the term compacts to a CURIE")
    void jsonWithoutLinkTakesCore() {
        String id = Entities.id("Building");
        createPlain(Entities.building(id));
        Json.assertSame(Entities.building(id), Checks.okJson(api.get(Ngsi.entity(id)).send(), Json.CORE));
        JsonNode withModel = retrieve(id);
        assertTrue(withModel.has("ngsi-ld:default-context/almostFull"), withModel::toString);
    }

    @Test
    @DisplayName("6.3.5 TP 001_07_01/02: application/ld+json takes the body's @context")
    void ldJsonTakesTheBody() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Json.assertSame(Entities.building(id), retrieve(id));
        assertEquals(modelIri("Building"), Checks.okJson(api.get(Ngsi.entity(id)).send()).path("type").asText());
    }

    @Test
    @DisplayName("6.3.5: two JSON-LD context Links in one request are 400 BadRequestData")
    void twoContextLinks() {
        String id = Entities.id("Building");
        Answer a = api.post("/entities").json(Entities.building(id)).link(model).link(contexts.url(ContextServer.OTHER)).send();
        Checks.problem(a, 400, "BadRequestData");
        Checks.problem(api.get(Ngsi.entity(id)).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("6.3.5: a Link whose rel is not the JSON-LD context is not a context: the core context applies")
    void otherLinkRelIgnored() {
        String id = Entities.id("Building");
        createPlain(Entities.building(id));
        Answer a = api.get(Ngsi.entity(id)).header("Link", "<" + model + ">; rel=\"describedby\"").send();
        Json.assertSame(Entities.building(id), Checks.okJson(a, Json.CORE));
    }

    @Test
    @DisplayName("6.3.5: a malformed context Link header is 400 BadRequestData")
    void malformedLink() {
        Checks.problem(api.get("/entities").query("type", "Building").header("Link", model + "; rel=\"" + Ngsi.CONTEXT_REL + "\"").send(),
                400, "BadRequestData");
    }

    @Test
    @DisplayName("5.5.7: a Link to the core context itself is the same as none; the answer links the core context")
    void linkToCore() {
        String id = Entities.id("Building");
        createPlain(Entities.building(id));
        Json.assertSame(Entities.building(id), Checks.okJson(api.get(Ngsi.entity(id)).link(Ngsi.CORE_CONTEXT).send(), Json.CORE));
    }

    @Test
    @DisplayName("5.5.7: a context that names the core context by URL works without downloading it (air-gapped), and is echoed")
    void compoundContext() {
        String compound = contexts.url(ContextServer.COMPOUND);
        String id = Entities.id("Building");
        Checks.created(api.post("/entities").ldJson(Entities.withContext(Entities.building(id), compound)).send(), id);
        Json.assertSame(Entities.building(id), Checks.okJson(api.get(Ngsi.entity(id)).link(compound).send(), compound));
        Json.assertSame(Entities.withContext(Entities.building(id), compound),
                Checks.okLdJson(api.get(Ngsi.entity(id)).link(compound).accept(Ngsi.LD_JSON).send(), compound));
    }

    @Test
    @DisplayName("5.5.7: an inline @context object in the body expands the terms it defines")
    void inlineContext() {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("""
                {"id": "%s", "type": "Sensor", "height": {"type": "Property", "value": 3},
                 "@context": {"Sensor": "https://inline.test/Sensor", "height": "https://inline.test/height"}}""", id);
        Checks.created(api.post("/entities").ldJson(e).send(), id);
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "https://inline.test/Sensor", "https://inline.test/height": {"type": "Property", "value": 3}}""", id),
                Checks.okJson(api.get(Ngsi.entity(id)).send(), Json.CORE));
    }

    @Test
    @DisplayName("5.5.7: in an array @context a later inline definition overrides an earlier remote one")
    void arrayContextOrder() {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("""
                {"id": "%s", "type": "Vehicle", "speed": {"type": "Property", "value": 3},
                 "@context": ["%s", {"speed": "https://inline.test/speed"}]}""", id, model);
        Checks.created(api.post("/entities").ldJson(e).send(), id);
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Vehicle", "https://inline.test/speed": {"type": "Property", "value": 3}}""", id), retrieve(id));
    }

    @Test
    @DisplayName("4.4: the core context counts as the last one, so its @vocab is the fallback even over a user @vocab")
    void coreVocabIsTheFallback() {
        // 4.4: "implementations shall consider the Core @context as if it were in the last position"; as JSON-LD
        // processes a context array in order, the core's @vocab replaces the user's. Orion-LD likewise looks a term
        // up in the core, then in the user's terms, then falls back to the default vocabulary.
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("""
                {"id": "%s", "type": "Sensor", "height": {"type": "Property", "value": 3}, "@context": {"@vocab": "https://vocab.test/"}}""", id);
        Checks.created(api.post("/entities").ldJson(e).send(), id);
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Sensor", "height": {"type": "Property", "value": 3}}""", id),
                Checks.okJson(api.get(Ngsi.entity(id)).send(), Json.CORE));
    }

    @Test
    @DisplayName("5.5.7: a prefix defines CURIEs: ex:height expands on input and compacts back under the same context")
    void curies() {
        contexts.serve("/prefix.jsonld", "{\"@context\": {\"ex\": \"https://example.test/terms/\"}}");
        String ctx = contexts.url("/prefix.jsonld");
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"ex:Sensor\", \"ex:height\": {\"type\": \"Property\", \"value\": 3}}", id);
        Checks.created(api.post("/entities").json(e).link(ctx).send(), id);
        Json.assertSame(e, Checks.okJson(api.get(Ngsi.entity(id)).link(ctx).send(), ctx));
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "https://example.test/terms/Sensor", "https://example.test/terms/height": {"type": "Property", "value": 3}}""", id),
                Checks.okJson(api.get(Ngsi.entity(id)).send(), Json.CORE));
    }

    @Test
    @DisplayName("5.5.7: one term under two contexts is two attributes; an answer compacts each with the request's context only")
    void sameTermTwoContexts() {
        String other = contexts.url(ContextServer.OTHER);
        String id = Entities.id("Vehicle");
        create(Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"speed\": {\"type\": \"Property\", \"value\": 1}}", id));
        Checks.noContent(api.post(Ngsi.entity(id) + "/attrs").json(Json.obj("{\"speed\": {\"type\": \"Property\", \"value\": 2}}")).link(other).send());
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "%s", "speed": {"type": "Property", "value": 2},
                 "%s": {"type": "Property", "value": 1}}""", id, modelIri("Vehicle"), modelIri("speed")),
                Checks.okJson(api.get(Ngsi.entity(id)).link(other).send(), other));
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "Vehicle", "speed": {"type": "Property", "value": 1},
                 "https://other.test/terms/speed": {"type": "Property", "value": 2}}""", id), retrieve(id));
    }

    @Test
    @DisplayName("5.5.7: a term given as a full IRI needs no context and is answered compacted when the context has a term for it")
    void fullIriInput() {
        String id = Entities.id("Vehicle");
        ObjectNode e = Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"%s\": {\"type\": \"Property\", \"value\": 5}}", id,
                modelIri("Vehicle"), modelIri("speed"));
        createPlain(e);
        Json.assertSame(Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"speed\": {\"type\": \"Property\", \"value\": 5}}", id), retrieve(id));
    }
}
