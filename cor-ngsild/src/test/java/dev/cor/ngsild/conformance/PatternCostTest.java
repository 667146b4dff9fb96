package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * What a regular expression may cost (q's {@code ~=}, idPattern; {@code doc/broker.md}, "Patterns"):
 * one match takes at most 100 000 steps (a step: a character read, weighted by the pattern's
 * size) whatever its input's length, the matches of one request at most 10 000 000 together, and a subscription's pattern that runs out of its budget
 * on a write fails neither the write nor the other subscriptions - it is failed itself, and
 * matches nothing until it is updated. Over real sockets, each bound shown by an answer (a 403,
 * a 201 and a notification), never by a timing.
 */
class PatternCostTest extends ConformanceTest {
    private static final long WAIT_MS = 10_000;
    /** A value of 900 000 characters: the reproduction (the body limit is 1 MiB). */
    private static final String HUGE = "a".repeat(900_000);
    private static NotificationReceiver receiver;

    @BeforeAll
    static void startReceiver() {
        receiver = NotificationReceiver.start();
    }

    @AfterAll
    static void stopReceiver() {
        receiver.close();
    }

    private static String entityWithName(String id, String type, String name) {
        return "{\"id\": \"" + id + "\", \"type\": \"" + type + "\", \"name\": {\"type\": \"Property\", \"value\": \"" + name
                + "\"}}";
    }

    private static Answer query(String type, String q) {
        return api.get("/entities").query("type", type).query("q", q).send();
    }

    @Test
    @DisplayName("4.9: a pattern that backtracks without bound on a 900 kB value is 403 TooComplexQuery at once")
    void aPathologicalPatternOnAHugeValueIsTooComplex() {
        String type = Entities.uniqueName("Huge");
        createPlain(Json.obj(entityWithName(Entities.id(type), type, HUGE)));
        // the deadline is the client's (20 s); the match stops after 100 000 steps, well under a millisecond
        JsonNode p = Checks.problem(query(type, "name~=\"((a+)+)+b\""), 403, "TooComplexQuery");
        assertTrue(p.path("detail").asText().contains("100000"), p::toString);
    }

    @Test
    @DisplayName("4.9: one match takes at most 100 000 steps, however long its input: even a plain search of a"
            + " 900 kB value is 403 TooComplexQuery")
    void oneMatchHasAnAbsoluteBound() {
        String type = Entities.uniqueName("Long");
        createPlain(Json.obj(entityWithName(Entities.id(type), type, HUGE)));
        // 900 000 characters to read (a step each: the pattern is one character) before "no b here": past the bound
        Checks.problem(query(type, "name~=\"b\""), 403, "TooComplexQuery");
        // 90 001 within it
        String short1 = Entities.id(type);
        createPlain(Json.obj(entityWithName(short1, type, "a".repeat(90_000) + "b")));
        Answer a = api.get("/entities").query("type", type).query("q", "name~=\"b\"").query("id", short1).send();
        assertEquals(short1, Checks.okJson(a, Json.CORE).path(0).path("id").asText(), a::toString);
    }

    @Test
    @DisplayName("4.9: the matches of one request share one budget - a query over a thousand entities, each match"
            + " well under the bound of one, is 403 TooComplexQuery once they have taken 10 000 000 steps together")
    void theMatchesOfOneRequestShareOneBudget() {
        String type = Entities.uniqueName("Many");
        // (a+)+b on 80 a's reads about 12 700 characters (quadratic backtracking), at 4 steps each (a group, two
        // quantifiers): about 51 000 steps a match, a thousand of them 51 million
        ArrayNode batch = Json.arr("[]");
        for (int i = 0; i < 1000; i++) {
            batch.add(Json.obj(entityWithName(Entities.id(type), type, "a".repeat(80))));
        }
        Checks.status(api.post("/entityOperations/create").json(batch).send(), 201);
        String one = batch.get(0).path("id").asText();
        // one of them alone: 200, no match
        Answer alone = api.get("/entities").query("type", type).query("id", one).query("q", "name~=\"(a+)+b\"").send();
        assertEquals(0, Checks.okJson(alone, Json.CORE).size(), alone::toString);
        // all of them: nothing matches, so the query reads every one - and stops with the budget of the request
        JsonNode p = Checks.problem(query(type, "name~=\"(a+)+b\""), 403, "TooComplexQuery");
        assertTrue(p.path("detail").asText().contains("10000000"), p::toString);
    }

    @Test
    @DisplayName("5.2.8, 5.2.33: what can be judged at creation is: an idPattern longer than 256 characters is 400"
            + " BadRequestData for a subscription and a registration, as for a query")
    void aPatternTooLongIsRefusedAtCreation() {
        String pattern = "a".repeat(257);
        Checks.badData(api.post("/subscriptions").json(Json.obj("""
                {"type": "Subscription", "entities": [{"type": "T", "idPattern": "%s"}],
                 "notification": {"endpoint": {"uri": "http://127.0.0.1:1/n"}}}""", pattern)).send(), "256");
        Checks.badData(api.post("/csourceRegistrations").json(Json.obj("""
                {"type": "ContextSourceRegistration", "information": [{"entities": [{"type": "T", "idPattern": "%s"}]}],
                 "endpoint": "http://127.0.0.1:1"}""", pattern)).send(), "256");
        Checks.badData(api.get("/entities").query("type", "T").query("idPattern", pattern).send(), "256");
    }

    @Test
    @DisplayName("5.8.1, 4.9: a subscription whose idPattern backtracks without bound stalls no write - the write is"
            + " answered, the other subscriptions are notified, and that one is failed until it is updated")
    void aCostlySubscriptionPatternStallsNoWrite() {
        String type = Entities.uniqueName("Watched");
        String costly = Entities.id("Subscription");
        String innocent = Entities.id("Subscription");
        // ((a+)+)+b on forty a's: hours of backtracking for a regular expression left to itself
        Checks.status(api.post("/subscriptions").json(Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s", "idPattern": "((a+)+)+b"}],
                 "notification": {"endpoint": {"uri": "%s/costly"}}}""", costly, type, receiver.url())).send(), 201);
        Checks.status(api.post("/subscriptions").json(Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s", "idPattern": "a{40}:.*"}],
                 "notification": {"endpoint": {"uri": "%s/innocent"}}}""", innocent, type, receiver.url())).send(), 201);
        // a URI whose scheme is forty a's: the pattern backtracks from its first character
        String id = "a".repeat(40) + ":" + type;
        createPlain(Json.obj(entityWithName(id, type, "first")));
        NotificationReceiver.Received first = receiver.next(WAIT_MS);
        assertEquals("/notify/innocent first", first.path() + " " + name(first), "the other subscription is notified");
        JsonNode failed = Checks.okJson(api.get("/subscriptions/" + costly).send(), Json.CORE);
        assertEquals("failed", failed.path("status").asText(), failed::toString);
        assertEquals("failed", failed.path("notification").path("status").asText(), failed::toString);
        // spent, it costs the next write nothing and notifies nothing
        setName(id, "second");
        NotificationReceiver.Received second = receiver.next(WAIT_MS);
        assertEquals("/notify/innocent second", second.path() + " " + name(second));
        // an update replaces its definition: in force again, it matches
        Checks.noContent(api.patch("/subscriptions/" + costly).json(Json.obj("""
                {"entities": [{"type": "%s", "idPattern": "^a+:.*"}]}""", type)).send());
        assertEquals("active", Checks.okJson(api.get("/subscriptions/" + costly).send(), Json.CORE).path("status").asText());
        setName(id, "third");
        // the barrier: both notifications of the third write; a notification of the costly one before it fails here
        java.util.Set<String> got = new java.util.TreeSet<>();
        while (got.size() < 2) {
            NotificationReceiver.Received r = receiver.next(WAIT_MS);
            got.add(r.path() + " " + name(r));
            assertTrue(name(r).equals("third"), () -> "only the third write notifies both: " + r.path() + " " + name(r));
        }
        assertEquals(java.util.Set.of("/notify/costly third", "/notify/innocent third"), got);
    }

    private static void setName(String id, String value) {
        Checks.noContent(api.patch(Ngsi.attr(id, "name")).json(Json.obj("{\"type\": \"Property\", \"value\": \"%s\"}",
                value)).send());
    }

    private static String name(NotificationReceiver.Received r) {
        return r.json().path("data").path(0).path("name").path("value").asText();
    }
}
