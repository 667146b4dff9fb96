package dev.cor.ngsild.ld;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.rest.CorRestJson;
import dev.cor.rest.client.CorRestClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The context-source API (ETSI GS CIM 009 § 5.13; HTTP binding § 6.29 - 6.30 of V1.9.1) as the
 * API layer calls it: statuses, bodies, kinds and tenants, case by case after the ETSI suite's
 * TP/NGSI-LD/jsonldContext (the TP ids are in the test names' comments).
 */
class JsonldContextsApiTest {
    private static final String ORIGIN = "http://broker.test:1026";
    /** Where the broker's resources are, as a client reaches them. */
    private static final String BASE = ORIGIN + "/ngsi-ld/v1";
    private static final Set<String> DETAIL_KEYS = Set.of("URL", "localId", "kind", "createdAt", "lastUsage", "numberOfHits",
            "extraInfo", "body", "expiresAt");
    private static final String A1 = "{\"@context\": {\"A1\": \"urn:ngsi-ld:attributes:A1\", \"A2\": \"urn:ngsi-ld:attributes:A2\"}}";

    private ContextServer server;
    private CorRestClient client;
    private LdContexts contexts;
    private JsonldContextsApi api;

    @BeforeEach
    void start() throws Exception {
        server = new ContextServer();
        client = CorRestClient.builder().build();
        contexts = LdContexts.builder().client(client).timeoutMs(3_000).build();
        api = new JsonldContextsApi(contexts);
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
    }

    private static JsonNode json(String s) throws Exception {
        return CorRestJson.mapper().readTree(s);
    }

    private JsonldContextsApi.Response call(String method, String id, Map<String, String> params, String body, String tenant)
            throws Exception {
        return api.handle(method, id, params, body == null ? null : json(body), tenant, ORIGIN);
    }

    private NgsiLdException error(String method, String id, Map<String, String> params, String body, String tenant) {
        return assertThrows(NgsiLdException.class, () -> call(method, id, params, body, tenant));
    }

    /** POSTs a context and returns its local id (the last segment of its Location). */
    private String add(String body, String tenant) throws Exception {
        JsonldContextsApi.Response r = call("POST", null, Map.of(), body, tenant);
        assertEquals(201, r.status());
        String location = r.headers().get("Location");
        assertTrue(location.startsWith("/ngsi-ld/v1/jsonldContexts/"), location);
        return location.substring(location.lastIndexOf('/') + 1);
    }

    private JsonNode body(JsonldContextsApi.Response r) throws Exception {
        assertEquals("application/json", r.contentType());
        return CorRestJson.mapper().readTree(r.body());
    }

    private List<String> list(Map<String, String> params, String tenant) throws Exception {
        List<String> urls = new ArrayList<>();
        body(call("GET", null, params, null, tenant)).forEach(n -> urls.add(n.isTextual() ? n.asText() : n.get("URL").asText()));
        return urls;
    }

    // ---------------------------------------------------------------- § 5.13.2 Add

    @Test
    void a_posted_context_is_hosted_201_with_its_location_and_served_as_posted() throws Exception {
        // 050_01_01, 053_01_01/02, 053_02_01
        JsonldContextsApi.Response r = call("POST", null, Map.of(), "{\"@context\": " + json(A1).get("@context") + ", \"extra\": 1}", null);
        assertEquals(201, r.status());
        assertEquals(0, r.body().length);
        String id = r.headers().get("Location").substring("/ngsi-ld/v1/jsonldContexts/".length());
        assertEquals(json(A1), body(call("GET", id, Map.of(), null, null)), "served as posted, what is outside @context discarded");
        assertEquals(json(A1), body(call("GET", id, Map.of("details", "false"), null, null)));
        JsonNode details = body(call("GET", id, Map.of("details", "true"), null, null));
        assertEquals(BASE + "/jsonldContexts/" + id, details.get("URL").asText());
        assertEquals(id, details.get("localId").asText());
        assertEquals("Hosted", details.get("kind").asText());
        assertTrue(details.get("createdAt").asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z"), details.toString());
        details.fieldNames().forEachRemaining(k -> assertTrue(DETAIL_KEYS.contains(k), "unexpected detail " + k));
    }

    @Test
    void a_body_without_a_context_member_is_InvalidRequest() {
        // 050_02_01
        assertEquals(ErrorType.INVALID_REQUEST, error("POST", null, Map.of(), "{\"A1\": \"urn:ngsi-ld:attributes:A1\"}", null).type());
        assertEquals(ErrorType.INVALID_REQUEST, error("POST", null, Map.of(), "[1]", null).type());
        assertEquals(ErrorType.INVALID_REQUEST, error("POST", null, Map.of(), null, null).type());
    }

    @Test
    void a_context_value_that_is_no_context_is_BadRequestData_and_nothing_is_stored() throws Exception {
        // 5132_01_01..03; and an invalid term definition
        for (String bad : List.of("42", "true", "[\"https://example.org/ctx.jsonld\", 7]", "{\"a\": 5}", "{\"a\": {\"@context\": {}}}")) {
            NgsiLdException e = error("POST", null, Map.of(), "{\"@context\": " + bad + "}", null);
            assertEquals(ErrorType.BAD_REQUEST_DATA, e.type(), bad);
        }
        assertEquals(List.of(), list(Map.of("kind", "Hosted"), null));
    }

    @Test
    void a_context_naming_urls_is_hosted_without_downloading_them() throws Exception {
        // 050_01_02 / 050_04_01: the URLs are downloaded when a request uses the context, not when it is added
        String id = add("{\"@context\": [\"" + server.url("/a.jsonld") + "\", \"" + server.url("/b.jsonld") + "\"]}", null);
        assertEquals("Hosted", body(call("GET", id, Map.of("details", "true"), null, null)).get("kind").asText());
        assertEquals(0, server.hits("/a.jsonld"));
    }

    // ---------------------------------------------------------------- § 5.13.3 List

    @Test
    void the_list_has_the_core_and_what_was_hosted_by_kind() throws Exception {
        // 052_01, 052_02, 052_03, 052_05
        assertEquals(List.of(CoreContext.URL), list(Map.of(), null));
        assertEquals(List.of(), list(Map.of("kind", "Hosted"), null));
        String a = add(A1, null);
        String b = add("{\"@context\": {\"B1\": \"urn:ngsi-ld:attributes:B1\"}}", null);
        String c = add("{\"@context\": {\"C1\": \"urn:ngsi-ld:attributes:C1\"}}", null);
        List<String> hosted = List.of(BASE + "/jsonldContexts/" + a, BASE + "/jsonldContexts/" + b, BASE + "/jsonldContexts/" + c);
        assertTrue(list(Map.of(), null).containsAll(hosted));
        assertEquals(hosted, list(Map.of("kind", "Hosted"), null));
        assertEquals(hosted, list(Map.of("kind", "Hosted", "details", "false"), null));
        assertEquals(List.of(CoreContext.URL), list(Map.of("kind", "Cached"), null));
        assertEquals(List.of(), list(Map.of("kind", "ImplicitlyCreated"), null));
        for (JsonNode d : body(call("GET", null, Map.of("details", "true", "kind", "Hosted"), null, null))) {
            assertEquals("Hosted", d.get("kind").asText());
            d.fieldNames().forEachRemaining(k -> assertTrue(DETAIL_KEYS.contains(k), "unexpected detail " + k));
            assertFalse(d.has("numberOfHits"));
        }
    }

    @Test
    void a_bad_kind_or_details_is_BadRequestData_and_an_unknown_parameter_InvalidRequest() {
        // 052_04_01..05
        for (Map<String, String> p : List.of(Map.of("kind", "other"), Map.of("details", "other"), Map.of("details", "other", "kind", "other"),
                Map.of("details", "true", "kind", "other"), Map.of("details", "other", "kind", "Hosted"))) {
            assertEquals(ErrorType.BAD_REQUEST_DATA, error("GET", null, p, null, null).type(), p.toString());
        }
        assertEquals(ErrorType.INVALID_REQUEST, error("GET", null, Map.of("invalidParam", "x"), null, null).type());
        assertEquals(ErrorType.INVALID_REQUEST, error("DELETE", "x", Map.of("details", "true"), null, null).type());
        assertEquals(ErrorType.METHOD_NOT_ALLOWED, error("PUT", null, Map.of(), null, null).type());
        assertEquals(ErrorType.METHOD_NOT_ALLOWED, error("PATCH", "x", Map.of(), null, null).type());
    }

    // ---------------------------------------------------------------- § 5.13.4 Serve

    @Test
    void an_unknown_id_is_ResourceNotFound() {
        // 053_03_01
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("GET", "wrong_id_context", Map.of("details", "true"), null, null).type());
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("GET", "wrong_id_context", Map.of(), null, null).type());
    }

    @Test
    void a_cached_context_is_not_served_but_its_details_are_by_url_or_local_id() throws Exception {
        // § 5.13.4.4: OperationNotSupported for a Cached one; 053_05_01: its details, kind Cached
        server.put("/cached.jsonld", A1);
        String url = server.url("/cached.jsonld");
        contexts.resolve(ContextRef.link(url), 3_000);
        assertEquals(ErrorType.OPERATION_NOT_SUPPORTED, error("GET", url, Map.of(), null, null).type());
        JsonNode details = body(call("GET", url, Map.of("details", "true"), null, null));
        assertEquals("Cached", details.get("kind").asText());
        assertEquals(url, details.get("URL").asText());
        assertTrue(details.has("expiresAt") && details.has("lastUsage"), details.toString());
        assertEquals(details, body(call("GET", details.get("localId").asText(), Map.of("details", "true"), null, null)));
        assertTrue(list(Map.of("kind", "Cached"), null).contains(url));
    }

    // ---------------------------------------------------------------- § 5.13.5 Delete and Reload

    @Test
    void a_hosted_context_is_deleted_204_then_gone() throws Exception {
        // 051_01_01, 051_02_01
        String id = add(A1, null);
        JsonldContextsApi.Response r = call("DELETE", id, Map.of(), null, null);
        assertEquals(204, r.status());
        assertEquals(0, r.body().length);
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("GET", id, Map.of(), null, null).type());
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("DELETE", id, Map.of(), null, null).type());
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("DELETE", "1234567890123456", Map.of(), null, null).type());
    }

    @Test
    void reload_is_for_cached_contexts_only() throws Exception {
        // 051_04_02..05: BadRequestData for a wrong reload value, a Hosted context with reload. A wrong id with
        // reload is ResourceNotFound: § 5.13.5.4 checks the id first (the suite's 051_04_01 asks BadRequestData)
        String id = add(A1, null);
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("DELETE", "wrong_id_context", Map.of("reload", "true"), null, null).type());
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("DELETE", "wrong_id_context", Map.of("reload", "false"), null, null).type());
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("DELETE", "wrong_id_context", Map.of(), null, null).type());
        assertEquals(ErrorType.BAD_REQUEST_DATA, error("DELETE", "wrong_id_context", Map.of("reload", "xxx"), null, null).type());
        assertEquals(ErrorType.BAD_REQUEST_DATA, error("DELETE", id, Map.of("reload", "true"), null, null).type());
        assertTrue(api.canWait("DELETE", Map.of("reload", "true")));
        assertFalse(api.canWait("DELETE", Map.of()));
        assertFalse(api.canWait("GET", Map.of("reload", "true")));
    }

    @Test
    void the_core_cannot_be_deleted_but_can_be_reloaded() throws Exception {
        // 051_08_01/02, 051_09_01 (the suite names the core by its V1.6 URL)
        String core = "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.6.jsonld";
        assertEquals(ErrorType.BAD_REQUEST_DATA, error("DELETE", core, Map.of(), null, null).type());
        assertEquals(ErrorType.BAD_REQUEST_DATA, error("DELETE", core, Map.of("reload", "false"), null, null).type());
        assertEquals(204, call("DELETE", core, Map.of("reload", "true"), null, null).status());
        JsonNode details = body(call("GET", core, Map.of("details", "true"), null, null));
        assertEquals("Cached", details.get("kind").asText());
        assertEquals(ErrorType.OPERATION_NOT_SUPPORTED, error("GET", core, Map.of(), null, null).type());
    }

    @Test
    void a_deleted_cached_context_is_downloaded_again_by_the_next_request() throws Exception {
        // 051_03_01
        server.put("/c.jsonld", A1);
        ContextRef ref = ContextRef.link(server.url("/c.jsonld"));
        contexts.resolve(ref, 3_000);
        assertEquals(204, call("DELETE", server.url("/c.jsonld"), Map.of(), null, null).status());
        assertTrue(contexts.needsDownload(ref));
        contexts.resolve(ref, 3_000);
        assertEquals(2, server.hits("/c.jsonld"));
    }

    @Test
    void a_reload_replaces_a_cached_context_and_a_failed_one_keeps_it() throws Exception {
        // § 5.13.5.4; 051_05_01 and 5135_01_01: the failure is LdContextNotAvailable and the entry stays
        server.put("/r.jsonld", A1);
        String url = server.url("/r.jsonld");
        assertEquals("urn:ngsi-ld:attributes:A1", contexts.resolve(ContextRef.link(url), 3_000).expand("A1"));
        server.put("/r.jsonld", "{\"@context\": {\"A1\": \"urn:ngsi-ld:attributes:A1-v2\"}}");
        assertEquals(204, call("DELETE", url, Map.of("reload", "true"), null, null).status());
        assertEquals("urn:ngsi-ld:attributes:A1-v2", contexts.cached(ContextRef.link(url)).expand("A1"));

        server.put("/r.jsonld", new ContextServer.Reply(500, Map.of(), new byte[0], 0, false));
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, error("DELETE", url, Map.of("reload", "true"), null, null).type());
        server.put("/r.jsonld", "not json at all");
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, error("DELETE", url, Map.of("reload", "true"), null, null).type());
        assertEquals("Cached", body(call("GET", url, Map.of("details", "true"), null, null)).get("kind").asText());
        assertEquals("urn:ngsi-ld:attributes:A1-v2", contexts.cached(ContextRef.link(url)).expand("A1"), "the old one still serves");
        assertEquals(204, call("DELETE", url, Map.of(), null, null).status());
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("GET", url, Map.of("details", "true"), null, null).type());
    }

    // ---------------------------------------------------------------- tenants (§ 5.5.10)

    @Test
    void a_hosted_context_belongs_to_its_tenant() throws Exception {
        // 5134_01_01..03
        String id = add("{\"@context\": {\"TenantPrivateTerm\": \"urn:ngsi-ld:attributes:TenantPrivateTerm\"}}", "tenantA");
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("GET", id, Map.of(), null, "tenantB").type());
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("GET", id, Map.of("details", "true"), null, "tenantB").type());
        // a request that names no tenant is how a JSON-LD processor follows a Link (§ 6.3.6): the document, by its id
        assertTrue(new String(call("GET", id, Map.of(), null, null).body()).contains("TenantPrivateTerm"));
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("GET", id, Map.of("details", "true"), null, null).type());
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("DELETE", id, Map.of(), null, null).type());
        assertFalse(new String(call("GET", null, Map.of("details", "true"), null, null).body()).contains(id));
        assertFalse(new String(call("GET", null, Map.of("details", "true"), null, "tenantB").body()).contains(id));
        assertFalse(new String(call("GET", null, Map.of(), null, "tenantB").body()).contains(id));
        assertEquals(ErrorType.RESOURCE_NOT_FOUND, error("DELETE", id, Map.of(), null, "tenantB").type());
        assertTrue(new String(call("GET", id, Map.of(), null, "tenantA").body()).contains("TenantPrivateTerm"));
        assertEquals(204, call("DELETE", id, Map.of(), null, "tenantA").status());
    }

    // ---------------------------------------------------------------- ImplicitlyCreated, and hosted URLs in use

    @Test
    void an_inline_context_gets_an_implicitly_created_url_once_per_tenant() throws Exception {
        // § 5.13.1 "ImplicitlyCreated"; 050_03_01, 051_06_01, 051_07_01, 052_06, 053_07_01
        JsonNode inline = json("[\"https://example.org/one.jsonld\", \"https://example.org/two.jsonld\"]");
        LdContext c = LdContexts.builder().build().core().withOrigin(inline, null, new LdContext.Source[0]);
        String url = contexts.linkUrlFor(c, ORIGIN, "t1");
        assertTrue(url.startsWith(BASE + "/jsonldContexts/"), url);
        assertEquals(url, contexts.linkUrlFor(c, ORIGIN, "t1"), "the same context, the same URL");
        assertNotEquals(url, contexts.linkUrlFor(c, ORIGIN, "t2"), "another tenant's own");
        String id = url.substring(url.lastIndexOf('/') + 1);
        assertEquals(List.of(url), list(Map.of("kind", "ImplicitlyCreated"), "t1"));
        assertEquals("ImplicitlyCreated", body(call("GET", id, Map.of("details", "true"), null, "t1")).get("kind").asText());
        assertEquals(json("{\"@context\": " + inline + "}"), body(call("GET", id, Map.of(), null, "t1")));
        assertEquals(json("{\"@context\": " + inline + "}"), contexts.hostedDocument(id));
        assertEquals(ErrorType.BAD_REQUEST_DATA, error("DELETE", id, Map.of("reload", "true"), null, "t1").type());
        assertEquals(204, call("DELETE", id, Map.of(), null, "t1").status());
        assertNull(contexts.hostedDocument(id));
        // a context that has a URL needs none made for it
        assertEquals(CoreContext.URL, contexts.linkUrlFor(contexts.core(), ORIGIN, "t1"));
    }

    @Test
    void a_hosted_context_is_resolved_here_by_its_url_and_the_urls_it_names_become_cached() throws Exception {
        // 050_04_01: an entity created with a Link to the hosted context; its URLs are then Cached
        server.put("/a.jsonld", "{\"@context\": {\"A\": \"https://example.org/A\"}}");
        server.put("/b.jsonld", "{\"@context\": {\"B\": \"https://example.org/B\"}}");
        String id = add("{\"@context\": [\"" + server.url("/a.jsonld") + "\", \"" + server.url("/b.jsonld") + "\"]}", "t");
        ContextRef hosted = ContextRef.link(BASE + "/jsonldContexts/" + id); // broker.test does not even resolve
        LdContext c = contexts.resolve(hosted, 3_000);
        assertEquals("https://example.org/A", c.expand("A"));
        assertEquals("https://example.org/B", c.expand("B"));
        for (String p : List.of("/a.jsonld", "/b.jsonld")) {
            assertEquals(1, server.hits(p));
            assertEquals("Cached", body(call("GET", server.url(p), Map.of("details", "true"), null, null)).get("kind").asText());
        }
        assertEquals(1, body(call("GET", id, Map.of("details", "true"), null, "t")).get("extraInfo").get("requests").asInt());
        // once deleted, its URL is a URL like any other: it would have to be downloaded
        assertEquals(204, call("DELETE", id, Map.of(), null, "t").status());
        assertTrue(contexts.needsDownload(hosted));
    }
}
