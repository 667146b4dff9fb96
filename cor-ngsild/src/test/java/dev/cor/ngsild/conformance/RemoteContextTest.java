package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Remote {@code @context}s (6.3.5, 5.5.6): one that cannot be had (not found, refused, no answer
 * within the broker's context timeout) is LdContextNotAvailable, which V1.8.1's Table 6.3.2-1 maps to
 * 504 (it was 503 before V1.8.1; the suite's 043_01 says 504); so is one that is had but is not a
 * JSON-LD context (not JSON, no {@code @context} member, a cycle), where 5.5.6 and the suite's
 * 556_01 say BadRequestData: one answer for every unusable source, so that no client learns what
 * the broker can reach (doc/broker.md; {@link ForeignTextTest} holds every kind to it). Nothing is
 * written in either case. ETSI: CommonBehaviours/CommonResponses/VerifyLdContextNotAvailable.
 */
class RemoteContextTest extends ConformanceTest {

    /** The status of LdContextNotAvailable since V1.8.1 (Table 6.3.2-1); 503 before. */
    static final int LD_CONTEXT_NOT_AVAILABLE = 504;

    private static Answer createWith(String id, String contextUrl) {
        return api.post("/entities").ldJson(Entities.withContext(Entities.building(id), contextUrl)).send();
    }

    private static int closedPort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    @DisplayName("6.3.2 TP 043_01_01 (504): a body @context the server does not have (404) is LdContextNotAvailable; nothing is created")
    void contextNotFound() {
        String id = Entities.id("Building");
        Checks.problem(createWith(id, contexts.url("/missing-" + Entities.uniqueName("c") + ".jsonld")), LD_CONTEXT_NOT_AVAILABLE,
                "LdContextNotAvailable");
        assertGone(id);
    }

    @Test
    @DisplayName("6.3.2: a Link context on a GET that cannot be had is LdContextNotAvailable")
    void linkNotFound() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.problem(api.get(Ngsi.entity(id)).link(contexts.url("/missing-" + Entities.uniqueName("c") + ".jsonld")).send(),
                LD_CONTEXT_NOT_AVAILABLE, "LdContextNotAvailable");
    }

    @Test
    @DisplayName("6.3.2: a context on a port nobody listens on is LdContextNotAvailable")
    void connectionRefused() {
        String id = Entities.id("Building");
        Checks.problem(createWith(id, "http://127.0.0.1:" + closedPort() + "/ctx.jsonld"), LD_CONTEXT_NOT_AVAILABLE, "LdContextNotAvailable");
        assertGone(id);
    }

    @Test
    @DisplayName("6.3.2: a context server that never answers is LdContextNotAvailable within the context timeout, and the broker serves others meanwhile")
    void contextServerHangs() throws Exception {
        String other = Entities.id("Building");
        create(Entities.building(other));
        String id = Entities.id("Building");
        long start = System.nanoTime();
        CompletableFuture<Answer> hanging = api.post("/entities")
                .ldJson(Entities.withContext(Entities.building(id), contexts.url(ContextServer.HANG))).sendAsync();
        Json.assertSame(Entities.building(other), retrieve(other));
        assertFalse(hanging.isDone(), "the hanging create is still waiting for its context when the GET is answered");
        Answer a = hanging.get(CONTEXT_TIMEOUT_MS + 10_000, TimeUnit.MILLISECONDS);
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        Checks.problem(a, LD_CONTEXT_NOT_AVAILABLE, "LdContextNotAvailable");
        assertTrue(tookMs < CONTEXT_TIMEOUT_MS + 5_000, () -> "answered within the context timeout, took " + tookMs + " ms");
        assertGone(id);
    }

    @Test
    @DisplayName("5.5.6 TP 556_01_02 (LdContextNotAvailable, not BadRequestData): a remote context that is not JSON; nothing is created")
    void contextNotJson() {
        String path = "/garbage-" + Entities.uniqueName("c") + ".jsonld";
        contexts.reply(path, 200, "application/ld+json", "this is { not json");
        String id = Entities.id("Vehicle");
        Checks.problem(createWith(id, contexts.url(path)), LD_CONTEXT_NOT_AVAILABLE, "LdContextNotAvailable");
        assertGone(id);
    }

    @Test
    @DisplayName("5.5.6 TP 556_01_01 (LdContextNotAvailable, not BadRequestData): a remote document without an @context member")
    void documentWithoutContext() {
        String path = "/nocontext-" + Entities.uniqueName("c") + ".jsonld";
        contexts.reply(path, 200, "application/ld+json", "{\"note\": \"no context member here\"}");
        String id = Entities.id("Vehicle");
        Checks.problem(api.post("/entities").ldJson(Json.obj("{\"id\": \"%s\", \"type\": \"Vehicle\", \"@context\": \"%s\"}", id, contexts.url(path)))
                .send(), LD_CONTEXT_NOT_AVAILABLE, "LdContextNotAvailable");
        assertGone(id);
    }

    @Test
    @DisplayName("5.5.6: two remote contexts that include each other (a cycle) are an unusable context: LdContextNotAvailable")
    void cycle() {
        String a = "/cycle-a-" + Entities.uniqueName("c") + ".jsonld";
        String b = "/cycle-b-" + Entities.uniqueName("c") + ".jsonld";
        contexts.serve(a, "{\"@context\": [\"" + contexts.url(b) + "\", {\"speed\": \"https://cycle.test/speed\"}]}");
        contexts.serve(b, "{\"@context\": [\"" + contexts.url(a) + "\"]}");
        String id = Entities.id("Vehicle");
        Checks.problem(createWith(id, contexts.url(a)), LD_CONTEXT_NOT_AVAILABLE, "LdContextNotAvailable");
        assertGone(id);
    }

    @Test
    @DisplayName("6.3.2 TP 043_01_04: a batch whose entities name a context that cannot be had: 207, LdContextNotAvailable for each")
    void batchWithUnavailableContext() {
        String missing = contexts.url("/missing-" + Entities.uniqueName("c") + ".jsonld");
        ObjectNode a = Entities.withContext(Entities.building(Entities.id("Building")), missing);
        ObjectNode b = Entities.withContext(Entities.building(Entities.id("Building")), missing);
        ArrayNode batch = Json.array(a, b);
        Checks.batchResult(api.post("/entityOperations/create").ldJson(batch).send(), List.of(),
                List.of(a.get("id").asText(), b.get("id").asText()), List.of("LdContextNotAvailable", "LdContextNotAvailable"));
        assertGone(a.get("id").asText());
    }

    @Test
    @DisplayName("5.13.1: a remote context is downloaded once for many requests (cached)")
    void downloadedOnce() {
        String path = "/once-" + Entities.uniqueName("c") + ".jsonld";
        contexts.serve(path, "{\"@context\": {\"Vehicle\": \"https://cor.test/model#Vehicle\"}}");
        String url = contexts.url(path);
        for (int i = 0; i < 3; i++) {
            String id = Entities.id("Vehicle");
            Checks.created(api.post("/entities").json(Entities.minimal(id, "Vehicle")).link(url).send(), id);
            Json.assertSame(Entities.minimal(id, "Vehicle"), Checks.okJson(api.get(Ngsi.entity(id)).link(url).send(), url));
        }
        assertEquals(1, contexts.hits(path), "one download for six requests");
    }

    @Test
    @DisplayName("JSON-LD 1.1 § 9.1: a remote context served as application/json is accepted")
    void servedAsJson() {
        String path = "/as-json-" + Entities.uniqueName("c") + ".jsonld";
        contexts.reply(path, 200, "application/json", "{\"@context\": {\"Vehicle\": \"https://cor.test/model#Vehicle\"}}");
        String id = Entities.id("Vehicle");
        Checks.created(api.post("/entities").json(Entities.minimal(id, "Vehicle")).link(contexts.url(path)).send(), id);
        Json.assertSame(Entities.minimal(id, "Vehicle"), retrieve(id));
    }
}
