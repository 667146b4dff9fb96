package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * What the HTTP binding (clause 6.3) says every answer of a kind looks like, as assertions: the
 * status, the exact Content-Type, the {@code Link} header and the body's shape. Each failure shows
 * the whole answer. Stateless.
 */
final class Checks {
    /** The prefix of every NGSI-LD error type URI (5.5.2). */
    static final String ERRORS = "https://uri.etsi.org/ngsi-ld/errors/";

    private Checks() {
    }

    static void status(Answer a, int status) {
        if (a.status() != status) {
            fail("expected " + status + ", got " + a);
        }
    }

    /**
     * An error (6.3.3): the status, Content-Type exactly {@code application/json}, a ProblemDetails
     * body whose {@code type} is the ETSI error URI, a non-empty {@code title} and a {@code detail}
     * that says more than the title, and no {@code Link} header (6.3.6: error answers carry none).
     *
     * @return the ProblemDetails
     */
    static JsonNode problem(Answer a, int status, String error) {
        JsonNode p = problemDetails(a, status);
        assertEquals(ERRORS + error, p.path("type").asText(), () -> "the error type of " + a);
        return p;
    }

    /** As {@link #problem}, with only the ETSI prefix of {@code type} fixed (HTTP's own errors: 405, 406). */
    static JsonNode problemDetails(Answer a, int status) {
        status(a, status);
        assertEquals(Ngsi.JSON, a.contentType(), () -> "an error is application/json: " + a);
        assertFalse(a.has("Link"), () -> "an error carries no Link header: " + a);
        JsonNode p = a.json();
        assertTrue(p.isObject(), () -> "a ProblemDetails is an object: " + a);
        assertTrue(p.path("type").asText().startsWith(ERRORS), () -> "the type is an ETSI error URI: " + a);
        assertTrue(p.path("title").isTextual() && !p.path("title").asText().isBlank(), () -> "a title: " + a);
        assertTrue(p.path("detail").isTextual() && !p.path("detail").asText().isBlank(), () -> "a detail: " + a);
        assertNotEquals(p.path("title").asText(), p.path("detail").asText(), () -> "the detail says more than the title: " + a);
        if (p.has("status")) {
            assertEquals(status, p.get("status").asInt(), () -> "the ProblemDetails status is the HTTP status: " + a);
        }
        return p;
    }

    /** A ProblemDetails whose detail names {@code what} (an attribute, a value, a parameter). */
    static JsonNode problemNaming(Answer a, int status, String error, String what) {
        JsonNode p = problem(a, status, error);
        assertTrue(p.path("detail").asText().contains(what), () -> "the detail names '" + what + "': " + a);
        return p;
    }

    /** 400 BadRequestData whose detail names {@code what}. */
    static JsonNode badData(Answer a, String what) {
        return problemNaming(a, 400, "BadRequestData", what);
    }

    /** An answer with a status and no body at all (411, 415: 6.3.4 "just" the status). */
    static void bare(Answer a, int status) {
        status(a, status);
        assertEquals(0, a.body().length, () -> "no body: " + a);
    }

    /** 201 Created of an entity (6.4.3.1): Location is its relative path, no body, no Link. */
    static void created(Answer a, String entityId) {
        status(a, 201);
        assertEquals(Ngsi.PREFIX + "/entities/" + entityId, a.header("Location"), () -> "the Location of " + a);
        assertEquals(0, a.body().length, () -> "a 201 of Create Entity has no body: " + a);
        assertFalse(a.has("Link"), () -> "an answer without a body carries no Link header: " + a);
    }

    /** 204 No Content: no body, no Link header (6.3.6). */
    static void noContent(Answer a) {
        status(a, 204);
        assertEquals(0, a.body().length, () -> "a 204 has no body: " + a);
        assertFalse(a.has("Link"), () -> "an answer without a body carries no Link header: " + a);
    }

    /**
     * 200 with an {@code application/json} body (6.3.6): Content-Type exactly that, and a Link header
     * naming the context the body is compacted with.
     *
     * @return the body
     */
    static JsonNode okJson(Answer a) {
        status(a, 200);
        assertEquals(Ngsi.JSON, a.contentType(), () -> "the Content-Type of " + a);
        assertNotNull(contextUrl(a), () -> "an application/json answer links its @context: " + a);
        return a.json();
    }

    /**
     * 200 with an {@code application/json} body that holds no NGSI-LD terms (the /jsonldContexts
     * answers): the Content-Type, no Link required.
     */
    static JsonNode okPlainJson(Answer a) {
        status(a, 200);
        assertEquals(Ngsi.JSON, a.contentType(), () -> "the Content-Type of " + a);
        return a.json();
    }

    /** 200 with an {@code application/json} body compacted with {@code context} (its Link header). */
    static JsonNode okJson(Answer a, String context) {
        JsonNode body = okJson(a);
        assertContext(context, contextUrl(a), a);
        return body;
    }

    /** 200 with an {@code application/ld+json} body whose {@code @context} is {@code context} (6.3.6). */
    static JsonNode okLdJson(Answer a, String context) {
        status(a, 200);
        assertEquals(Ngsi.LD_JSON, a.contentType(), () -> "the Content-Type of " + a);
        JsonNode body = a.json();
        assertTrue(body.has("@context"), () -> "an application/ld+json answer carries @context: " + a);
        assertContextMember(context, body.get("@context"), a);
        return body;
    }

    /**
     * Asserts {@code member} (an {@code @context} of a body) is {@code context}: the one URL as a
     * string or a one-element array; {@link Json#CORE} for any core context URL.
     */
    static void assertContextMember(String context, JsonNode member, Object where) {
        List<String> urls = Json.texts(member);
        assertEquals(1, urls.size(), () -> "one @context, got " + member + " in " + where);
        assertContext(context, urls.get(0), where);
    }

    private static void assertContext(String expected, String actual, Object where) {
        if (Json.CORE.equals(expected)) {
            assertTrue(actual != null && Json.CORE_URL.matcher(actual).matches(),
                    () -> "the core context, got " + actual + " in " + where);
        } else {
            assertEquals(expected, actual, () -> "the @context of " + where);
        }
    }

    /**
     * The URL of the one JSON-LD context {@code Link} of an answer, or {@code null} when it has none;
     * fails when there are several, or when the link names another type than application/ld+json.
     */
    static String contextUrl(Answer a) {
        List<String> found = new ArrayList<>();
        for (String value : a.headerValues("Link")) {
            for (String link : value.split(",(?=\\s*<)")) {
                String l = link.trim();
                int close = l.indexOf('>');
                if (!l.startsWith("<") || close < 0) {
                    fail("a malformed Link header: " + a);
                }
                String params = l.substring(close + 1).toLowerCase(Locale.ROOT);
                if (params.contains("rel=\"" + Ngsi.CONTEXT_REL + "\"") || params.contains("rel=" + Ngsi.CONTEXT_REL)) {
                    if (params.contains("type=") && !params.contains("application/ld+json")) {
                        fail("a context Link of another type than application/ld+json: " + a);
                    }
                    found.add(l.substring(1, close));
                }
            }
        }
        if (found.size() > 1) {
            fail("more than one JSON-LD context Link: " + a);
        }
        return found.isEmpty() ? null : found.get(0);
    }

    static void noLink(Answer a) {
        assertNull(a.header("Link"), () -> "no Link header: " + a);
    }

    /** The members of an {@code UpdateResult} (5.2.18) in a 207 (6.6.3): {@code updated} and {@code notUpdated} names. */
    static JsonNode updateResult(Answer a, Collection<String> updated, Collection<String> notUpdated) {
        status(a, 207);
        assertEquals(Ngsi.JSON, a.contentType(), () -> "a 207 is application/json (6.3.6): " + a);
        noLink(a);
        JsonNode r = a.json();
        assertEquals(new TreeSet<>(updated), new TreeSet<>(Json.texts(r.path("updated"))), () -> "updated of " + a);
        TreeSet<String> names = new TreeSet<>();
        for (JsonNode n : r.path("notUpdated")) {
            names.add(n.path("attributeName").asText());
            assertTrue(n.path("reason").isTextual() && !n.path("reason").asText().isBlank(),
                    () -> "each notUpdated has a reason: " + a);
        }
        assertEquals(new TreeSet<>(notUpdated), names, () -> "notUpdated of " + a);
        assertEquals(notUpdated.size(), r.path("notUpdated").size(), () -> "notUpdated of " + a);
        return r;
    }

    /**
     * A {@code BatchOperationResult} (5.2.16) in a 207: the ids in {@code success} (a set), and one
     * {@code BatchEntityError} per id of {@code errors}, in any order, each
     * {@code {entityId, error: ProblemDetails}} with the error type of the matching {@code errorTypes}.
     */
    static JsonNode batchResult(Answer a, Collection<String> success, List<String> errors, List<String> errorTypes) {
        status(a, 207);
        assertEquals(Ngsi.JSON, a.contentType(), () -> "a 207 is application/json (6.3.6): " + a);
        noLink(a);
        JsonNode r = a.json();
        assertTrue(r.path("success").isArray(), () -> "success is an array: " + a);
        assertEquals(success.size(), r.path("success").size(), () -> "success of " + a);
        assertEquals(new TreeSet<>(success), new TreeSet<>(Json.texts(r.path("success"))), () -> "success of " + a);
        assertTrue(r.path("errors").isArray(), () -> "errors is an array: " + a);
        assertEquals(errors.size(), r.path("errors").size(), () -> "errors of " + a);
        List<JsonNode> left = new ArrayList<>();
        r.path("errors").forEach(left::add);
        for (int i = 0; i < errors.size(); i++) {
            String id = errors.get(i);
            String type = ERRORS + errorTypes.get(i);
            JsonNode match = null;
            for (JsonNode e : left) {
                if (id.equals(e.path("entityId").asText()) && type.equals(e.path("error").path("type").asText())) {
                    match = e;
                    break;
                }
            }
            if (match == null) {
                fail("no error {entityId: " + id + ", error.type: " + type + "} in " + a);
            }
            left.remove(match);
            JsonNode p = match.get("error");
            assertTrue(p.path("title").isTextual() && !p.path("title").asText().isBlank(), () -> "the error has a title: " + a);
        }
        return r;
    }

    /** The 201 of a batch create/upsert (6.14, 6.15): a JSON array of the created ids, in any order. */
    static void createdIds(Answer a, Collection<String> ids) {
        status(a, 201);
        assertEquals(Ngsi.JSON, a.contentType(), () -> "the Content-Type of " + a);
        JsonNode body = a.json();
        assertTrue(body.isArray(), () -> "an array of ids: " + a);
        assertEquals(ids.size(), body.size(), () -> "one id per created entity: " + a);
        assertEquals(new TreeSet<>(ids), new TreeSet<>(Json.texts(body)), () -> "the created ids of " + a);
    }
}
