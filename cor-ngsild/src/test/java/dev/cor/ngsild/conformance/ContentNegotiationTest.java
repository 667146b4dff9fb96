package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * The HTTP preconditions and common answer requirements (6.3.4, 6.3.6): Accept negotiation over
 * application/json, application/ld+json and application/geo+json in that order unless q-values say
 * otherwise, 406 otherwise; Content-Type application/json or application/ld+json (and
 * application/merge-patch+json on PATCH and on POST .../attrs: NgsijsRequestsTest), else a bare 415;
 * Content-Length on POST, PATCH and PUT, else a bare 411; 207 and errors always application/json; no Content-Length on a 204.
 * ETSI: TP/NGSI-LD/CommonBehaviours/CommonResponses.
 */
class ContentNegotiationTest extends ConformanceTest {

    @Test
    @DisplayName("6.3.4: no Accept header at all means application/json")
    void noAccept() {
        String id = createdBuilding();
        RawHttp.Answer a = RawHttp.exchange(broker.port(), "GET " + Ngsi.PREFIX + "/entities/" + id + " HTTP/1.1\r\nHost: 127.0.0.1", new byte[0]);
        assertEquals(200, a.status(), a::toString);
        assertEquals(Ngsi.JSON, a.field("Content-Type"), a::toString);
        assertTrue(a.field("Link") != null && a.field("Link").contains(Ngsi.CONTEXT_REL), a::toString);
        assertEquals(id, Json.parse(a.text()).path("id").asText());
    }

    @ParameterizedTest(name = "Accept: {0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "*/*|application/json",
        "application/*|application/json",
        "application/json|application/json",
        "application/ld+json|application/ld+json",
        "application/ld+json, application/json|application/json",
        "application/geo+json, application/json|application/json",
        "application/json;q=0.1, application/ld+json;q=0.9|application/ld+json",
        "application/json;q=0, application/ld+json|application/ld+json",
        "application/json;q=0, */*|application/ld+json",
        "*/*;q=0.9, application/ld+json;q=0.8|application/json",
        "application/ld+json;q=notanumber|application/ld+json",
        "text/html, application/json;q=0.5|application/json"})
    @DisplayName("6.3.4 TP 045_01_01, 045_02_01..04, 045_04_01..04: Accept selects by q-value, then by the list order json, ld+json, geo+json")
    void acceptNegotiation(String accept, String expected) {
        String id = createdBuilding();
        Answer a = api.get(Ngsi.entity(id)).accept(accept).send();
        Checks.status(a, 200);
        assertEquals(expected, a.contentType(), a::toString);
        if (expected.equals(Ngsi.JSON)) {
            assertTrue(Checks.contextUrl(a) != null, () -> "application/json links its context: " + a);
        } else {
            assertTrue(a.json().has("@context"), () -> "application/ld+json carries @context: " + a);
        }
    }

    @ParameterizedTest(name = "Accept: {0}")
    @ValueSource(strings = {"application/xml", "text/plain", "application/json;q=0", "image/*"})
    @DisplayName("6.3.4 TP 049_01_01: an Accept that implies neither JSON nor JSON-LD is 406, before the entity is even looked up")
    void notAcceptable(String accept) {
        Answer a = api.get(Ngsi.entity(Entities.id("Building"))).accept(accept).send();
        JsonNode p = Checks.problemDetails(a, 406);
        assertTrue(p.path("detail").asText().contains(Ngsi.JSON) && p.path("detail").asText().contains(Ngsi.LD_JSON),
                () -> "a 406 lists the available representations (6.3.4): " + a);
    }

    @Test
    @DisplayName("6.3.4: the Accept precondition is a GET's: a create (no answer body) with Accept: application/xml is created")
    void acceptNotCheckedOnCreate() {
        String id = Entities.id("Building");
        Checks.created(api.post("/entities").accept("application/xml").json(Entities.minimal(id, "Building")).send(), id);
    }

    @Test
    @DisplayName("6.3.4: the Content-Type precondition is POST's, PATCH's and PUT's: a GET with an odd Content-Type is answered")
    void contentTypeNotCheckedOnGet() {
        String id = createdBuilding();
        Checks.okJson(api.get(Ngsi.entity(id)).header("Content-Type", "application/xml").send());
    }

    @Test
    @DisplayName("6.3.4: 406 on a listing too")
    void notAcceptableOnQuery() {
        Checks.problemDetails(api.get("/entities").query("type", "Building").accept("application/xml").send(), 406);
    }

    @Test
    @DisplayName("6.3.4 TP 049_02: application/geo+json alone is 406 outside Retrieve Entity and Query Entities")
    void geoJsonOnlyForEntities() {
        Checks.problemDetails(api.get("/jsonldContexts").accept(Ngsi.GEO_JSON).send(), 406);
    }

    @ParameterizedTest(name = "Accept: {0} on {1}")
    @CsvSource(delimiter = '|', value = {
        "application/xml|/subscriptions/urn:ngsi-ld:Subscription:none",
        "application/xml|/csourceRegistrations?type=Building",
        "application/xml|/csourceSubscriptions",
        "application/xml|/temporal/entities?type=Vehicle&timerel=after&timeAt=2020-08-01T12:05:00Z",
        "application/geo+json|/subscriptions/urn:ngsi-ld:Subscription:none",
        "application/geo+json|/temporal/entities?type=Vehicle&timerel=after&timeAt=2020-08-01T12:05:00Z",
        "application/geo+json|/csourceRegistrations?type=Building"})
    @DisplayName("6.3.4 TP 049_01_02..05, 049_02_01..03: every GET's Accept is checked first - subscriptions, registrations, the temporal API")
    void notAcceptableEverywhere(String accept, String target) {
        Checks.problemDetails(api.get(target).accept(accept).send(), 406);
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', value = {
        "POST|/temporal/entities",
        "POST|/subscriptions",
        "PATCH|/subscriptions/urn:ngsi-ld:Subscription:none"})
    @DisplayName("6.3.4 TP 048_01_02, 048_01_04, 048_01_06: a body as application/xml is 415 on the subscriptions and the temporal API too")
    void unsupportedMediaTypeEverywhere(String method, String path) {
        Checks.bare(api.method(method, path).body("application/xml", "{}").send(), 415);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/csourceRegistrations?type=Vehicle", "/temporal/entities?type=Vehicle&timerel=after&timeAt=2020-08-01T12:05:00Z"})
    @DisplayName("6.3.4 TP 045_01_03, 045_01_04: Accept */* on a listing of registrations or of temporal evolutions is application/json with the context's Link")
    void anyMediaTypeIsJsonOnListings(String target) {
        Checks.okJson(api.get(target).accept("*/*").link(model).send(), model);
    }

    @ParameterizedTest(name = "Content-Type: {0}")
    @ValueSource(strings = {"application/xml", "text/plain", "application/merge-patch+json", "application/x-www-form-urlencoded"})
    @DisplayName("6.3.4 TP 048_01_03: POST /entities with another Content-Type is just 415, no body; nothing is created")
    void unsupportedMediaTypeOnCreate(String contentType) {
        String id = Entities.id("Building");
        Checks.bare(api.post("/entities").body(contentType, Entities.minimal(id, "Building")).send(), 415);
        assertGone(id);
    }

    @Test
    @DisplayName("6.3.4 TP 048_01_01: PATCH /attrs/{attr} as application/xml is 415, before the entity is looked up")
    void unsupportedMediaTypeOnPatch() {
        Checks.bare(api.patch(Ngsi.attr(Entities.id("Vehicle"), "speed")).body("application/xml", "<speed>1</speed>").send(), 415);
    }

    @Test
    @DisplayName("6.3.4 TP 048_01_05: a batch create as application/xml is 415")
    void unsupportedMediaTypeOnBatch() {
        Checks.bare(api.post("/entityOperations/create").body("application/xml", "[]").send(), 415);
    }

    @Test
    @DisplayName("6.3.4: a body without Content-Type is 415")
    void missingContentType() {
        String id = Entities.id("Building");
        Checks.bare(api.post("/entities").bodyWithoutContentType(Json.write(Entities.minimal(id, "Building"))).send(), 415);
        assertGone(id);
    }

    @ParameterizedTest(name = "Content-Type: {0}")
    @ValueSource(strings = {"application/json; charset=utf-8", "Application/JSON"})
    @DisplayName("6.3.4: media types compare case-insensitively and may carry parameters (RFC 9110 8.3.1)")
    void contentTypeVariants(String contentType) {
        String id = Entities.id("Building");
        Checks.created(api.post("/entities").body(contentType, Entities.minimal(id, "Building")).send(), id);
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"POST,/entities", "PATCH,/entities/urn:ngsi-ld:Building:411-01/attrs", "PUT,/entities/urn:ngsi-ld:Building:411-01",
            "POST,/entityOperations/create", "PATCH,/entities/urn:ngsi-ld:Building:411-01"})
    @DisplayName("6.3.4 TP 046_01_01..03: a chunked body (no Content-Length) on POST, PATCH, PUT is just 411")
    void lengthRequiredChunked(String method, String path) {
        String body = "{\"id\": \"urn:ngsi-ld:Building:411-01\", \"type\": \"Building\"}";
        RawHttp.Answer a = RawHttp.exchange(broker.port(), method + " " + Ngsi.PREFIX + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Content-Type: application/json\r\nTransfer-Encoding: chunked", RawHttp.chunked(body));
        assertEquals(411, a.status(), a::toString);
        assertEquals(0, a.body().length, () -> "411 has no body: " + a);
        assertGone("urn:ngsi-ld:Building:411-01");
    }

    @Test
    @DisplayName("6.3.4: a POST with neither Content-Length nor a body is just 411")
    void lengthRequiredNoBody() {
        RawHttp.Answer a = RawHttp.exchange(broker.port(), "POST " + Ngsi.PREFIX + "/entities HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Content-Type: application/json", new byte[0]);
        assertEquals(411, a.status(), a::toString);
        assertEquals(0, a.body().length, a::toString);
    }

    @Test
    @DisplayName("6.3.4 TP 046_01_04: a GET needs no Content-Length")
    void getNeedsNoLength() {
        RawHttp.Answer a = RawHttp.exchange(broker.port(), "GET " + Ngsi.PREFIX + "/entities?type=Building HTTP/1.1\r\nHost: 127.0.0.1", new byte[0]);
        assertNotEquals(411, a.status(), a::toString);
        assertEquals(200, a.status(), a::toString);
    }

    @Test
    @DisplayName("6.3.4 TP 046_01_05: the 411 comes before the tenant is looked up: an unknown tenant does not turn it into a 404")
    void lengthRequiredBeforeTenant() {
        RawHttp.Answer a = RawHttp.exchange(broker.port(), "POST " + Ngsi.PREFIX + "/entities HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Content-Type: application/json\r\nNGSILD-Tenant: " + Entities.tenant() + "\r\nTransfer-Encoding: chunked",
                RawHttp.chunked("{\"id\": \"urn:ngsi-ld:Building:411-02\", \"type\": \"Building\"}"));
        assertEquals(411, a.status(), a::toString);
        assertEquals(0, a.body().length, a::toString);
    }

    @Test
    @DisplayName("6.3.6 TP 636_01_03: a 204 carries no Content-Length")
    void noContentLengthOn204() {
        String id = createdBuilding();
        RawHttp.Answer a = RawHttp.exchange(broker.port(), "DELETE " + Ngsi.PREFIX + "/entities/" + id + " HTTP/1.1\r\nHost: 127.0.0.1", new byte[0]);
        assertEquals(204, a.status(), a::toString);
        assertNull(a.field("Content-Length"), () -> "no Content-Length on 204: " + a);
    }

    @Test
    @DisplayName("6.3.6: a 207 is application/json whatever the Accept, with the request's names and no Link")
    void partialSuccessIsJson() {
        String id = createdBuilding();
        Answer a = api.post(Ngsi.entity(id) + "/attrs").query("options", "noOverwrite").accept(Ngsi.LD_JSON)
                .ldJson(Entities.withContext(Json.obj("{\"name\": {\"type\": \"Property\", \"value\": \"x\"}, \"speed\": {\"type\": \"Property\", \"value\": 1}}"), model))
                .send();
        Checks.updateResult(a, List.of("speed"), List.of("name"));
    }

    @Test
    @DisplayName("6.3.6: an error is application/json whatever the Accept, and carries no Link even when the request had one")
    void errorIsJson() {
        Answer a = api.get(Ngsi.entity(Entities.id("Building"))).accept(Ngsi.LD_JSON).link(model).send();
        Checks.problem(a, 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("6.3.6: a 201 and a 204 carry no Link (no body)")
    void noLinkWithoutBody() {
        String id = Entities.id("Building");
        Answer created = api.post("/entities").json(Entities.minimal(id, "Building")).link(model).send();
        Checks.created(created, id);
        Checks.noContent(api.delete(Ngsi.entity(id)).link(model).send());
    }

    @Test
    @DisplayName("6.3.6: an application/ld+json answer carries the request's Link context as its @context")
    void ldJsonAnswer() {
        String id = createdBuilding();
        Answer a = api.get(Ngsi.entity(id)).accept(Ngsi.LD_JSON).link(model).send();
        Json.assertSame(Entities.withContext(Entities.building(id), model), Checks.okLdJson(a, model));
    }
}
