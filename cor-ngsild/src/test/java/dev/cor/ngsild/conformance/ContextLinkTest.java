package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Every {@code Link} the broker gives dereferences (§ 6.3.6): its URL, fetched with a plain GET
 * as a JSON-LD processor fetches it - no {@code NGSILD-Tenant}, no other header than
 * {@code Accept} - answers the very context the request or the subscription gave. Answers in
 * {@code application/json} to an inline context, notifications to a JSON subscriber who gave one,
 * the forwards to a context source whose registration gave one; in the default tenant and in
 * another; and a 207 or an error carries no Link at all.
 */
class ContextLinkTest extends ConformanceTest {
    private static final HttpClient PLAIN = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** An inline context of its own for each call: a fresh term, so no cached one answers for it. */
    private static ObjectNode inline(String type) {
        return Json.obj("{\"%s\": \"urn:test:%s\", \"load\": \"urn:test:load\", \"%s\": \"urn:test:unique\"}", type, type,
                Entities.uniqueName("term"));
    }

    /** The URL of a JSON-LD context {@code Link} header value; fails when there is none. */
    static String linkUrl(String header) {
        assertNotNull(header, "a Link header");
        assertTrue(header.startsWith("<") && header.contains(">; rel=\"" + Ngsi.CONTEXT_REL + "\""), header);
        return header.substring(1, header.indexOf('>'));
    }

    /** GETs {@code url} as a JSON-LD processor does (no tenant); asserts a 200 with a context and returns its {@code @context}. */
    static JsonNode follow(String url) {
        try {
            HttpResponse<String> r = PLAIN.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20))
                    .header("Accept", "application/ld+json").GET().build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), () -> "GET " + url + " -> " + r.statusCode() + " " + r.body());
            JsonNode doc = Json.parse(r.body());
            assertTrue(doc.has("@context"), () -> "GET " + url + ": not a context document: " + r.body());
            return doc.get("@context");
        } catch (IOException e) {
            throw new AssertionError("GET " + url + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** A fresh tenant that exists (an entity was created in it) for "another", {@code null} (the default one) for "default". */
    private static String tenant(String which) {
        if (which.equals("default")) {
            return null;
        }
        String t = Entities.tenant();
        String seed = Entities.id("Seed");
        Checks.created(api.post("/entities").tenant(t).json(Entities.minimal(seed, "Seed")).send(), seed);
        return t;
    }

    private static Ngsi.Request in(Ngsi.Request r, String tenant) {
        return tenant == null ? r : r.tenant(tenant);
    }

    @ParameterizedTest(name = "in the {0} tenant")
    @ValueSource(strings = {"default", "another"})
    @DisplayName("6.3.6: an application/json answer to an inline @context links an ImplicitlyCreated context that a plain GET gets back")
    void anAnswerToAnInlineContextLinksWhatItGave(String which) {
        String tenant = tenant(which);
        String type = Entities.uniqueName("Lorry");
        ObjectNode ctx = inline(type);
        String id = Entities.id(type);
        ObjectNode entity = Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"load\": {\"type\": \"Property\", \"value\": 3}}", id, type);
        entity.set("@context", ctx);
        Checks.created(in(api.post("/entities"), tenant).ldJson(entity).send(), id);
        ObjectNode query = Json.obj("{\"type\": \"Query\", \"entities\": [{\"type\": \"%s\"}]}", type);
        query.set("@context", ctx);
        Answer a = in(api.post("/entityOperations/query"), tenant).accept(Ngsi.JSON).ldJson(query).send();
        Checks.status(a, 200);
        assertEquals(type, a.json().path(0).path("type").asText(), a::toString);
        Json.assertSame(ctx, follow(linkUrl(a.header("Link"))));
    }

    @ParameterizedTest(name = "in the {0} tenant")
    @ValueSource(strings = {"default", "another"})
    @DisplayName("6.3.6: the Link of an answer to a Hosted @context named by Link is served to a plain GET")
    void anAnswerToAHostedContextLinksWhatItNamed(String which) {
        String tenant = tenant(which);
        String type = Entities.uniqueName("Lorry");
        ObjectNode ctx = inline(type);
        Answer hosted = in(api.post("/jsonldContexts"), tenant).json(Json.obj("{\"@context\": %s}", Json.write(ctx))).send();
        Checks.status(hosted, 201);
        String url = api.origin() + hosted.header("Location");
        String id = Entities.id(type);
        Checks.created(in(api.post("/entities"), tenant).link(url)
                .json(Json.obj("{\"id\": \"%s\", \"type\": \"%s\"}", id, type)).send(), id);
        Answer a = in(api.get(Ngsi.entity(id)), tenant).link(url).send();
        Checks.status(a, 200);
        assertEquals(url, linkUrl(a.header("Link")));
        Json.assertSame(ctx, follow(url));
    }

    @Test
    @DisplayName("6.3.6: the Link of an answer to a remote @context is that URL, and it dereferences")
    void anAnswerToARemoteContextLinksIt() {
        String id = createdVehicle();
        Answer a = api.get(Ngsi.entity(id)).link(model).send();
        Checks.status(a, 200);
        assertEquals(model, linkUrl(a.header("Link")));
        assertTrue(follow(model).isObject() || follow(model).isArray());
    }

    @ParameterizedTest(name = "in the {0} tenant")
    @ValueSource(strings = {"default", "another"})
    @DisplayName("6.3.6, 5.8: a notification to a JSON subscriber who gave an inline @context links a context a plain GET gets back")
    void aNotificationLinksTheSubscribersInlineContext(String which) throws Exception {
        String tenant = tenant(which);
        String type = Entities.uniqueName("Lorry");
        ObjectNode ctx = inline(type);
        try (NotificationReceiver receiver = NotificationReceiver.start()) {
            ObjectNode sub = Json.obj("{\"type\": \"Subscription\", \"entities\": [{\"type\": \"%s\"}], \"notification\":"
                    + " {\"endpoint\": {\"uri\": \"%s\", \"accept\": \"application/json\"}}}", type, receiver.url());
            sub.set("@context", ctx);
            Checks.status(in(api.post("/subscriptions"), tenant).ldJson(sub).send(), 201);
            String id = Entities.id(type);
            ObjectNode entity = Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"load\": {\"type\": \"Property\", \"value\": 3}}", id,
                    type);
            entity.set("@context", ctx);
            Checks.created(in(api.post("/entities"), tenant).ldJson(entity).send(), id);
            NotificationReceiver.Received n = receiver.next(10_000);
            assertEquals(type, n.json().path("data").path(0).path("type").asText(), () -> n.json().toString());
            Json.assertSame(ctx, follow(linkUrl(n.header("Link"))));
        }
    }

    @Test
    @DisplayName("6.3.6, 4.3.6: a forward to a source whose registration gave an inline @context links a context a plain GET gets back")
    void aForwardLinksTheRegistrationsInlineContext() {
        String type = Entities.uniqueName("Lorry");
        ObjectNode ctx = inline(type);
        try (SourceStub source = SourceStub.start(seen -> new SourceStub.Answer(200, "[]", 0))) {
            ObjectNode reg = Json.obj("{\"type\": \"ContextSourceRegistration\", \"information\": [{\"entities\": [{\"type\":"
                    + " \"%s\"}]}], \"endpoint\": \"%s\", \"operations\": [\"retrieveOps\"]}", type, source.endpoint());
            reg.set("@context", ctx);
            Checks.status(api.post("/csourceRegistrations").ldJson(reg).send(), 201);
            ObjectNode query = Json.obj("{\"type\": \"Query\", \"entities\": [{\"type\": \"%s\"}]}", type);
            query.set("@context", ctx);
            Checks.status(api.post("/entityOperations/query").ldJson(query).send(), 200);
            List<SourceStub.Seen> seen = source.seen();
            assertFalse(seen.isEmpty(), "the query was forwarded");
            Json.assertSame(ctx, follow(linkUrl(seen.get(seen.size() - 1).header("Link"))));
        }
    }

    @Test
    @DisplayName("6.3.6: a 207 and an error carry no Link")
    void aPartialSuccessAndAnErrorCarryNoLink() {
        String type = Entities.uniqueName("Lorry");
        ObjectNode ctx = inline(type);
        String id = Entities.id(type);
        ObjectNode good = Json.obj("{\"id\": \"%s\", \"type\": \"%s\"}", id, type);
        good.set("@context", ctx);
        ObjectNode bad = Json.obj("{\"id\": \"not an id\", \"type\": \"%s\"}", type);
        bad.set("@context", ctx);
        Answer batch = api.post("/entityOperations/create").ldJson(Json.array(good, bad)).send();
        Checks.status(batch, 207);
        assertFalse(batch.has("Link"), batch::toString);
        Answer missing = api.get(Ngsi.entity(Entities.id(type))).link(model).send();
        Checks.status(missing, 404);
        assertFalse(missing.has("Link"), missing::toString);
    }
}
