package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Storing, managing and serving @contexts (5.13), /jsonldContexts (6.29, 6.30): Hosted contexts
 * added by clients and served on demand, Cached ones downloaded during normal operations (listed,
 * described, deleted and reloaded, never served), the core context never deleted.
 * ETSI: TP/NGSI-LD/jsonldContext.
 */
class JsonLdContextsApiTest extends ConformanceTest {
    private static final String PATH = Ngsi.PREFIX + "/jsonldContexts/";
    private static final Set<String> DETAIL_KEYS = Set.of("URL", "localId", "kind", "createdAt", "expiresAt", "lastUsage",
            "numberOfHits", "extraInfo");

    private static ObjectNode hostedDocument() {
        String a = Entities.uniqueName("A");
        return Json.obj("{\"@context\": {\"%s\": \"urn:ngsi-ld:attributes:%s\", \"Vehicle\": \"https://hosted.test/Vehicle\"}}", a, a);
    }

    /** Adds {@code doc} as a Hosted context; asserts the 201 and returns its local id. */
    private static String addHosted(JsonNode doc) {
        Answer a = api.post("/jsonldContexts").json(doc).send();
        Checks.status(a, 201);
        assertEquals(0, a.body().length, () -> "a 201 of Add @context has no body: " + a);
        String location = a.header("Location");
        assertTrue(location != null && location.startsWith(PATH) && location.length() > PATH.length(),
                () -> "Location is the local relative path of the @context: " + a);
        return location.substring(PATH.length());
    }

    private static Answer serve(String idOrUrl, String details) {
        Ngsi.Request r = api.get("/jsonldContexts/" + idOrUrl);
        if (details != null) {
            r.query("details", details);
        }
        return r.send();
    }

    private static Answer remove(String idOrUrl, String reload) {
        Ngsi.Request r = api.delete("/jsonldContexts/" + idOrUrl);
        if (reload != null) {
            r.query("reload", reload);
        }
        return r.send();
    }

    /** The metadata of a stored @context (5.13.3.5): the mandatory members, nothing unknown. */
    private static JsonNode details(Answer a, String kind) {
        JsonNode d = Checks.okPlainJson(a);
        for (String k : List.of("URL", "localId", "kind")) {
            assertTrue(d.path(k).isTextual() && !d.path(k).asText().isEmpty(), () -> k + " in " + a);
        }
        assertEquals(kind, d.path("kind").asText(), a::toString);
        Json.assertDateTime(d.get("createdAt"), "createdAt of " + a);
        for (String k : Json.names(d)) {
            assertTrue(DETAIL_KEYS.contains(k), () -> "no member " + k + " in the details (5.13.3.5): " + a);
        }
        return d;
    }

    /** Makes the broker download (and cache) a fresh remote context; returns its URL. */
    private static String cachedContext() {
        String path = "/cached-" + Entities.uniqueName("c") + ".jsonld";
        contexts.serve(path, "{\"@context\": {\"Vehicle\": \"https://cached.test/Vehicle\"}}");
        String url = contexts.url(path);
        String id = Entities.id("Vehicle");
        Checks.created(api.post("/entities").json(Entities.minimal(id, "Vehicle")).link(url).send(), id);
        return url;
    }

    private static List<String> texts(JsonNode list) {
        assertTrue(list.isArray(), list::toString);
        List<String> l = new ArrayList<>();
        list.forEach(n -> {
            assertTrue(n.isTextual(), () -> "a list of URLs: " + list);
            l.add(n.asText());
        });
        return l;
    }

    @Test
    @DisplayName("5.13.2 TP 050_01_01, 053_02_01: a Hosted context is added (201, Location, no body) and described with details=true")
    void addHosted() {
        String id = addHosted(hostedDocument());
        JsonNode d = details(serve(id, "true"), "Hosted");
        assertEquals(id, d.path("localId").asText());
        assertTrue(d.path("URL").asText().endsWith(PATH + id), d::toString);
    }

    @ParameterizedTest(name = "details={0}")
    @ValueSource(strings = {"", "false"})
    @DisplayName("5.13.4 TP 053_01_01/02: serving a Hosted context gives back the document as added, as application/json")
    void serveHosted(String details) {
        ObjectNode doc = hostedDocument();
        String id = addHosted(doc);
        Answer a = serve(id, details.isEmpty() ? null : details);
        Checks.status(a, 200);
        assertEquals(Ngsi.JSON, a.contentType(), a::toString);
        Json.assertSame(doc, a.json());
    }

    @Test
    @DisplayName("5.13.2 TP 050_02_01: a body without an @context member is 400 InvalidRequest")
    void addWithoutContextMember() {
        Answer a = api.post("/jsonldContexts").json(Json.obj("{\"A1\": \"urn:ngsi-ld:attributes:A1\"}")).send();
        Checks.problem(a, 400, "InvalidRequest");
        assertNull(a.header("Location"), a::toString);
    }

    @Test
    @DisplayName("5.13.2 TP 050_02_02: a body that is not JSON is 400 InvalidRequest")
    void addNotJson() {
        Checks.problem(api.post("/jsonldContexts").json("{\"@context\": {\"A1\": \"urn:a\" \"A2\": \"urn:b\"}}").send(), 400, "InvalidRequest");
    }

    @ParameterizedTest(name = "@context: {0}")
    @ValueSource(strings = {"5", "true", "[5]", "[\"x\", false]"})
    @DisplayName("5.13.2 TP 5132_01_01..03: an @context that is no valid JSON-LD context is 400 BadRequestData, nothing stored")
    void addInvalidContext(String value) {
        Answer a = api.post("/jsonldContexts").json("{\"@context\": " + value + "}").send();
        Checks.problem(a, 400, "BadRequestData");
        assertNull(a.header("Location"), a::toString);
    }

    @Test
    @DisplayName("5.13.3 TP 052_01_01..08: a broker nothing was added to lists no Hosted or ImplicitlyCreated context")
    void listEmpty() {
        try (TestBroker fresh = TestBroker.start()) {
            Ngsi freshApi = new Ngsi(fresh.baseUrl());
            texts(Checks.okPlainJson(freshApi.get("/jsonldContexts").send()));
            texts(Checks.okPlainJson(freshApi.get("/jsonldContexts").query("details", "false").send()));
            assertTrue(texts(Checks.okPlainJson(freshApi.get("/jsonldContexts").query("kind", "Hosted").send())).isEmpty());
            assertTrue(texts(Checks.okPlainJson(freshApi.get("/jsonldContexts").query("kind", "ImplicitlyCreated").send())).isEmpty());
            texts(Checks.okPlainJson(freshApi.get("/jsonldContexts").query("details", "false").query("kind", "Cached").send()));
        }
    }

    @Test
    @DisplayName("5.13.3 TP 052_02, 052_03: the URLs of the added contexts are listed, with and without kind=Hosted")
    void listHosted() {
        List<String> ids = List.of(addHosted(hostedDocument()), addHosted(hostedDocument()), addHosted(hostedDocument()));
        for (Ngsi.Request r : List.of(api.get("/jsonldContexts"), api.get("/jsonldContexts").query("kind", "Hosted"),
                api.get("/jsonldContexts").query("details", "false").query("kind", "Hosted"))) {
            List<String> urls = texts(Checks.okPlainJson(r.send()));
            for (String id : ids) {
                assertTrue(urls.stream().anyMatch(u -> u.endsWith(PATH + id)), () -> id + " listed in " + urls);
            }
        }
    }

    @ParameterizedTest(name = "details={0} kind={1}")
    @CsvSource({",other", "other,", "other,other", "true,other", "other,Hosted"})
    @DisplayName("5.13.3 TP 052_04_01..05: a details or kind value that is not defined is 400 BadRequestData")
    void listBadParameters(String details, String kind) {
        Ngsi.Request r = api.get("/jsonldContexts");
        if (details != null) {
            r.query("details", details);
        }
        if (kind != null) {
            r.query("kind", kind);
        }
        Checks.problem(r.send(), 400, "BadRequestData");
    }

    @Test
    @DisplayName("5.13.3 TP 052_05_01/02: details=true lists a metadata object per context")
    void listDetails() {
        String id = addHosted(hostedDocument());
        for (Ngsi.Request r : List.of(api.get("/jsonldContexts").query("details", "true"),
                api.get("/jsonldContexts").query("details", "true").query("kind", "Hosted"))) {
            Answer a = r.send();
            JsonNode list = Checks.okPlainJson(a);
            JsonNode mine = null;
            for (JsonNode d : list) {
                assertTrue(d.isObject() && d.has("URL") && d.has("localId") && d.has("kind"), () -> "metadata objects: " + a);
                if (id.equals(d.path("localId").asText())) {
                    mine = d;
                }
            }
            assertNotNull(mine, () -> id + " in " + a);
            assertEquals("Hosted", mine.path("kind").asText(), a::toString);
        }
    }

    @Test
    @DisplayName("5.13.3 TP 052_07_01: a context downloaded during an operation is listed as Cached under its URL")
    void listCached() {
        String url = cachedContext();
        Answer a = api.get("/jsonldContexts").query("details", "true").query("kind", "Cached").send();
        boolean found = false;
        for (JsonNode d : Checks.okPlainJson(a)) {
            found |= url.equals(d.path("URL").asText()) && "Cached".equals(d.path("kind").asText());
        }
        assertTrue(found, () -> url + " listed as Cached: " + a);
        assertTrue(texts(Checks.okPlainJson(api.get("/jsonldContexts").query("kind", "Cached").send())).contains(url));
    }

    @Test
    @DisplayName("5.13.1, 5.13.3 TP 052_06: a subscription made with an @context array has its ImplicitlyCreated context at once,"
            + " listed and named by the subscription's jsonldContext")
    void subscriptionWithAnArrayContext() {
        ArrayNode ctx = JsonNodeFactory.instance.arrayNode();
        for (String part : List.of("T1", "T2")) {
            String path = "/array-" + Entities.uniqueName(part) + ".jsonld";
            contexts.serve(path, "{\"@context\": {\"" + part + "\": \"https://array.test/" + part + "\"}}");
            ctx.add(contexts.url(path));
        }
        String id = SubscriptionResourceTest.subscriptionId();
        ObjectNode sub = Json.obj("{\"id\": \"%s\", \"type\": \"Subscription\", \"entities\": [{\"type\": \"T1\"}],"
                + " \"notification\": {\"endpoint\": {\"uri\": \"http://127.0.0.1:9/notify\"}}}", id);
        sub.set("@context", ctx);
        Checks.status(api.post("/subscriptions").ldJson(sub).send(), 201);
        // its JSON notifications need a URL for that array (5.13.1): the broker hosts it before any is sent,
        // and the subscription names it as the @context of its notifications (5.2.12 jsonldContext)
        String url = Checks.okJson(api.get("/subscriptions/" + id).send()).path("jsonldContext").asText();
        assertTrue(url.startsWith(api.origin() + PATH), () -> "jsonldContext " + url);
        String localId = url.substring((api.origin() + PATH).length());
        assertTrue(texts(Checks.okPlainJson(api.get("/jsonldContexts").query("kind", "ImplicitlyCreated").send())).contains(url));
        assertFalse(texts(Checks.okPlainJson(api.get("/jsonldContexts").query("kind", "Hosted").send())).contains(url));
        details(serve(localId, "true"), "ImplicitlyCreated");
        Json.assertSame(ctx, Checks.okPlainJson(serve(localId, null)).get("@context"));
        for (JsonNode part : ctx) {
            assertTrue(texts(Checks.okPlainJson(api.get("/jsonldContexts").query("kind", "Cached").send())).contains(part.asText()));
        }
        // one named by a single URL needs no other: that URL is its jsonldContext
        String single = SubscriptionResourceTest.subscriptionId();
        Checks.status(SubscriptionResourceTest.createSub(SubscriptionResourceTest.vehicles(single)), 201);
        assertEquals(model, Checks.okJson(api.get("/subscriptions/" + single).send()).path("jsonldContext").asText());
    }

    @Test
    @DisplayName("5.13.4 TP 053_03_01: serving an identifier not stored is 404 ResourceNotFound")
    void serveUnknown() {
        Checks.problem(serve("wrong_id_context", "true"), 404, "ResourceNotFound");
        Checks.problem(serve("wrong_id_context", null), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.13.4: a Cached context is described by its URL with details=true, and never served: 422 OperationNotSupported")
    void serveCached() {
        String url = cachedContext();
        JsonNode d = details(serve(Ngsi.segment(url), "true"), "Cached");
        assertEquals(url, d.path("URL").asText());
        Checks.problem(serve(Ngsi.segment(url), null), 422, "OperationNotSupported");
        Checks.problem(serve(Ngsi.segment(url), "false"), 422, "OperationNotSupported");
    }

    @Test
    @DisplayName("5.13.5 TP 051_01_01: a Hosted context is deleted (204, no body) and no longer served or listed")
    void deleteHosted() {
        String id = addHosted(hostedDocument());
        Checks.noContent(remove(id, null));
        Checks.problem(serve(id, null), 404, "ResourceNotFound");
        assertFalse(texts(Checks.okPlainJson(api.get("/jsonldContexts").send())).stream().anyMatch(u -> u.endsWith(PATH + id)));
    }

    @ParameterizedTest(name = "reload={0}")
    @ValueSource(strings = {"", "false", "true"})
    @DisplayName("5.13.5 TP 051_02_01, 051_04_01..03: deleting an identifier not stored is 404 ResourceNotFound, reload or not")
    void deleteUnknown(String reload) {
        // The suite expects 400 for reload=true (051_04_01). 5.13.5.4 checks the identifier first,
        // as Orion-LD does: an unknown one is ResourceNotFound whatever reload says.
        Checks.problem(remove("wrong_id_context", reload.isEmpty() ? null : reload), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.13.5 TP 051_03_01: a Cached context is deleted by its URL (204)")
    void deleteCached() {
        String url = cachedContext();
        Checks.noContent(remove(Ngsi.segment(url), null));
        Checks.problem(serve(Ngsi.segment(url), "true"), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.13.5 TP 051_04_04: a reload value that is not a boolean is 400 BadRequestData")
    void badReloadValue() {
        String id = addHosted(hostedDocument());
        Checks.problem(remove(id, "xxx"), 400, "BadRequestData");
        Checks.status(serve(id, null), 200);
    }

    @Test
    @DisplayName("5.13.5 TP 051_04_05: reload=true of a Hosted context is 400 BadRequestData, and it stays")
    void reloadHosted() {
        String id = addHosted(hostedDocument());
        Checks.problem(remove(id, "true"), 400, "BadRequestData");
        Checks.status(serve(id, null), 200);
    }

    @ParameterizedTest(name = "reload={0}")
    @ValueSource(strings = {"", "false"})
    @DisplayName("5.13.5 TP 051_08_01/02: the core context cannot be deleted: 400 BadRequestData")
    void deleteCore(String reload) {
        Checks.problem(remove(Ngsi.segment(Ngsi.CORE_CONTEXT), reload.isEmpty() ? null : reload), 400, "BadRequestData");
        String id = Entities.id("Vehicle");
        Checks.created(api.post("/entities").json(Json.obj("""
                {"id": "%s", "type": "Vehicle", "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1, 2]}}}""", id))
                .send(), id);
    }

    @Test
    @DisplayName("5.13.5 TP 5135_01_01, 051_05_01: a failed reload is LdContextNotAvailable and keeps the Cached context; a plain delete then removes it")
    void failedReload() {
        String url = cachedContext();
        contexts.remove(url.substring(contexts.origin().length()));
        Checks.problem(remove(Ngsi.segment(url), "true"), RemoteContextTest.LD_CONTEXT_NOT_AVAILABLE, "LdContextNotAvailable");
        details(serve(Ngsi.segment(url), "true"), "Cached");
        Checks.noContent(remove(Ngsi.segment(url), null));
        Checks.problem(serve(Ngsi.segment(url), "true"), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.13.5: a reload downloads the context again and uses the new content from then on")
    void reload() {
        String path = "/reload-" + Entities.uniqueName("c") + ".jsonld";
        contexts.serve(path, "{\"@context\": {\"Vehicle\": \"https://first.test/Vehicle\"}}");
        String url = contexts.url(path);
        String id = Entities.id("Vehicle");
        Checks.created(api.post("/entities").json(Entities.minimal(id, "Vehicle")).link(url).send(), id);
        contexts.serve(path, "{\"@context\": {\"Vehicle\": \"https://second.test/Vehicle\"}}");
        Checks.noContent(remove(Ngsi.segment(url), "true"));
        assertEquals(2, contexts.hits(path), "downloaded again");
        details(serve(Ngsi.segment(url), "true"), "Cached");
        JsonNode e = Checks.okJson(api.get(Ngsi.entity(id)).link(url).send(), url);
        assertEquals("https://first.test/Vehicle", e.path("type").asText(), () -> "Vehicle now means another type: " + e);
    }

    @Test
    @DisplayName("5.13.4 TP 053_04_01, 050_04_01: a Hosted context is a context: an entity uses it by its URL, and its URLs get Cached")
    void hostedUsedAsContext() {
        String hostedId = addHosted(Json.obj("{\"@context\": [\"%s\"]}", model));
        String hostedUrl = api.origin() + PATH + hostedId;
        String id = Entities.id("Building");
        Checks.created(api.post("/entities").ldJson(Entities.withContext(Entities.building(id), hostedUrl)).send(), id);
        Json.assertSame(Entities.building(id), Checks.okJson(api.get(Ngsi.entity(id)).link(hostedUrl).send(), hostedUrl));
        Json.assertSame(Entities.building(id), retrieve(id));
        details(serve(Ngsi.segment(model), "true"), "Cached");
    }

    @Test
    @DisplayName("5.13.4 + 5.5.10 TP 5134_01_01..03: a Hosted context of one tenant is neither served, listed nor deletable in another")
    void hostedPerTenant() {
        String a = Entities.tenant();
        String b = Entities.tenant();
        // Both tenants exist (Add @context is not among the operations 5.5.10 lets create a tenant).
        for (String t : List.of(a, b)) {
            String seed = Entities.id("Vehicle");
            Checks.created(api.post("/entities").tenant(t).json(Entities.minimal(seed, "Vehicle")).send(), seed);
        }
        Answer added = api.post("/jsonldContexts").tenant(a).json(Json.obj("{\"@context\": {\"TenantPrivateTerm\": \"urn:ngsi-ld:attributes:private\"}}")).send();
        Checks.status(added, 201);
        String id = added.header("Location").substring(PATH.length());
        Answer other = api.get("/jsonldContexts/" + id).tenant(b).send();
        Checks.problem(other, 404, "ResourceNotFound");
        assertFalse(other.text().contains("TenantPrivateTerm"), other::toString);
        Checks.problem(api.get("/jsonldContexts/" + id).tenant(b).query("details", "true").send(), 404, "ResourceNotFound");
        assertFalse(api.get("/jsonldContexts").tenant(b).query("details", "true").send().text().contains(id));
        Checks.problem(api.delete("/jsonldContexts/" + id).tenant(b).send(), 404, "ResourceNotFound");
        Answer own = api.get("/jsonldContexts/" + id).tenant(a).send();
        Checks.status(own, 200);
        assertTrue(own.text().contains("TenantPrivateTerm"), own::toString);
        Checks.noContent(api.delete("/jsonldContexts/" + id).tenant(a).send());
    }
}
