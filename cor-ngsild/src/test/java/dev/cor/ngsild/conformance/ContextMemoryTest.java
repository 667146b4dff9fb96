package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.policy.ContextLimits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A read must not grow the broker's memory for ever: reads that each carry a large inline
 * {@code @context} of their own, answered in {@code application/json} (so each makes an
 * ImplicitlyCreated context for its Link), leave the caches under their bounds in bytes and the
 * heap after a GC where it was; an ImplicitlyCreated context a read made is evicted, one a
 * subscription's notifications link stays served; an inline context past its bounds is refused
 * with 413 naming them.
 */
class ContextMemoryTest {
    private static final long PROCESSED_BOUND = 8L << 20;
    private static final long IMPLICIT_BOUND = 4L << 20;
    private static final int TERMS = 1_500;

    private TestBroker broker;
    private Ngsi api;
    private String type;
    /** More entities than reads: each read renders one its own (its render cache must not keep the read's context). */
    private final java.util.List<String> ids = new java.util.ArrayList<>();

    @BeforeEach
    void start() {
        broker = TestBroker.start(b -> b.contextLimits(ContextLimits.builder()
                .maxProcessedBytes(PROCESSED_BOUND).maxImplicitBytes(IMPLICIT_BOUND).build()),
                s -> { });
        api = new Ngsi(broker.baseUrl());
        type = Entities.uniqueName("Lorry");
        for (int i = 0; i < 120; i++) {
            String id = Entities.id(type);
            ids.add(id);
            Checks.created(api.post("/entities").json(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"load\": {\"type\":"
                    + " \"Property\", \"value\": %d}}", id, type, i)).send(), id);
        }
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    /** An inline context of its own for {@code n}: {@code TERMS} terms, and the type and attribute the entities have. */
    private ObjectNode context(int n, int terms) {
        ObjectNode c = Json.obj("{\"%s\": \"https://uri.etsi.org/ngsi-ld/default-context/%s\", \"weight\":"
                + " \"https://uri.etsi.org/ngsi-ld/default-context/load\"}", type, type);
        for (int i = 0; i < terms; i++) {
            c.put("t" + n + "_" + i, "https://example.org/" + n + "/vocabulary/term-" + i);
        }
        return c;
    }

    /** A query for entity {@code n} under {@code context}, answered in application/json: 200, the entity, a Link. */
    private String read(int n, ObjectNode context) {
        ObjectNode query = Json.obj("{\"type\": \"Query\", \"entities\": [{\"id\": \"%s\", \"type\": \"%s\"}]}",
                ids.get(n % ids.size()), type);
        query.set("@context", context);
        Answer a = api.post("/entityOperations/query").accept(Ngsi.JSON).ldJson(query).send();
        Checks.status(a, 200);
        assertEquals(1, a.json().size(), a::toString);
        assertTrue(a.json().path(0).has("weight"), "compacted with the request's own context: " + a.json().path(0));
        return ContextLinkTest.linkUrl(a.header("Link"));
    }

    private void assertUnderTheBounds() {
        LdContexts c = broker.contexts();
        assertTrue(c.processedBytes() <= PROCESSED_BOUND, "processed contexts: " + c.processedBytes() + " bytes");
        assertTrue(c.implicitBytes() <= IMPLICIT_BOUND, "ImplicitlyCreated contexts: " + c.implicitBytes() + " bytes");
    }

    /** The heap in use after a full GC: the least of three. */
    private static long heapAfterGc() {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            least = Math.min(least, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return least;
    }

    @Test
    @DisplayName("reads with large inline contexts of their own: the caches stay under their bounds in bytes, the heap stays flat")
    void readsWithInlineContextsDoNotGrowTheHeap() {
        int n = 0;
        for (; n < 40; n++) { // more than the bounds hold: every cache is full and evicting from here on
            read(n, context(n, TERMS));
            assertUnderTheBounds();
        }
        long before = heapAfterGc();
        for (; n < 120; n++) {
            read(n, context(n, TERMS));
            assertUnderTheBounds();
        }
        long grown = heapAfterGc() - before;
        // each read made ~1 MiB of context: 80 of them kept would be ~80 MiB
        assertTrue(grown < 8L << 20, "the heap grew by " + grown + " bytes over 80 reads");
    }

    @Test
    @DisplayName("150 reads with distinct ~400 kB inline contexts (8 000 terms, within the default bounds): flat heap")
    void readsWithFourHundredKilobyteContextsDoNotGrowTheHeap() {
        int n = 0;
        for (; n < 30; n++) { // the caches full and evicting from here on
            read(n, context(n, 8_000));
            assertUnderTheBounds();
        }
        assertTrue(context(0, 8_000).toString().length() > 400_000, "each context is over 400 kB");
        long before = heapAfterGc();
        for (; n < 150; n++) {
            read(n, context(n, 8_000));
            assertUnderTheBounds();
        }
        long grown = heapAfterGc() - before;
        // each read made ~4 MiB of context: 120 of them kept would be ~500 MiB
        assertTrue(grown < 8L << 20, "the heap grew by " + grown + " bytes over 120 reads");
    }

    @Test
    @DisplayName("5.13.1: an ImplicitlyCreated context a read made is evicted; one a subscription's notifications link stays served")
    void whatASubscriptionLinksStaysServed() throws Exception {
        ObjectNode own = context(-1, 10);
        try (NotificationReceiver receiver = NotificationReceiver.start()) {
            ObjectNode sub = Json.obj("{\"type\": \"Subscription\", \"entities\": [{\"type\": \"%s\"}], \"notification\":"
                    + " {\"endpoint\": {\"uri\": \"%s\", \"accept\": \"application/json\"}}}", type, receiver.url());
            sub.set("@context", own);
            Checks.status(api.post("/subscriptions").ldJson(sub).send(), 201);
            String first = read(0, context(0, TERMS));
            String id = Entities.id(type);
            Checks.created(api.post("/entities").json(Entities.minimal(id, type)).send(), id);
            String linked = ContextLinkTest.linkUrl(receiver.next(10_000).header("Link"));
            for (int n = 1; n < 40; n++) {
                read(n, context(n, TERMS));
            }
            assertUnderTheBounds();
            assertEquals(404, status(first), "the read's context was evicted");
            Json.assertSame(own, ContextLinkTest.follow(linked));
            // and the next notification links the same one
            String next = Entities.id(type);
            Checks.created(api.post("/entities").json(Entities.minimal(next, type)).send(), next);
            assertEquals(linked, ContextLinkTest.linkUrl(receiver.next(10_000).header("Link")));
        }
    }

    @Test
    @DisplayName("an inline @context over its bounds in terms or bytes is 413, naming the bound")
    void anInlineContextHasBounds() {
        broker.close();
        broker = TestBroker.start(b -> b.contextLimits(ContextLimits.builder()
                .maxInlineTerms(4_096).maxInlineBytes(256 << 10).build()), s -> { });
        api = new Ngsi(broker.baseUrl());
        ObjectNode query = Json.obj("{\"type\": \"Query\", \"entities\": [{\"type\": \"%s\"}]}", type);
        query.set("@context", context(0, 8_000));
        Answer terms = api.post("/entityOperations/query").ldJson(query).send();
        Checks.problem(terms, 413, "PayloadTooLarge");
        assertTrue(terms.json().path("detail").asText().contains("4096"), terms::toString);
        ObjectNode big = context(1, 10);
        big.put("long", "https://example.org/" + "x".repeat(300 << 10));
        query.set("@context", big);
        Answer bytes = api.post("/entityOperations/query").ldJson(query).send();
        Checks.problem(bytes, 413, "PayloadTooLarge");
        assertTrue(bytes.json().path("detail").asText().contains("262144"), bytes::toString);
        query.set("@context", context(2, 4_000)); // within both
        Checks.status(api.post("/entityOperations/query").ldJson(query).send(), 200);
    }

    @Test
    @DisplayName("the default bounds take an 8 000-term, 400 kB inline context and refuse one of 17 000 terms")
    void theDefaultInlineBoundsTakeALargeVocabulary() {
        ObjectNode query = Json.obj("{\"type\": \"Query\", \"entities\": [{\"type\": \"%s\"}]}", type);
        query.set("@context", context(0, 8_000));
        Checks.status(api.post("/entityOperations/query").ldJson(query).send(), 200);
        ObjectNode many = Json.obj("{}");
        for (int i = 0; i < 17_000; i++) {
            many.put("t" + i, "https://e.org/" + i); // short, so the body stays under the server's bound
        }
        query.set("@context", many);
        Answer terms = api.post("/entityOperations/query").ldJson(query).send();
        Checks.problem(terms, 413, "PayloadTooLarge");
        assertTrue(terms.json().path("detail").asText().contains("16384"), terms::toString);
    }

    private static int status(String url) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20)).GET().build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }
}
