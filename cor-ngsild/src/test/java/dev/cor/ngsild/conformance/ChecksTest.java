package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * The answer shapes of {@link Checks} on answers made up here: each accepts what clause 6.3 says and
 * rejects what it does not. No broker: a fault here would make every other test lie.
 */
class ChecksTest {
    private static final String CTX = "http://127.0.0.1:1/model.jsonld";

    private static Answer answer(int status, String body, String... headers) {
        Map<String, List<String>> h = new LinkedHashMap<>();
        for (int i = 0; i < headers.length; i += 2) {
            h.computeIfAbsent(headers[i], k -> new ArrayList<>()).add(headers[i + 1]);
        }
        return new Answer("TEST", status, HttpHeaders.of(h, (a, b) -> true), body.getBytes(StandardCharsets.UTF_8));
    }

    private static void rejects(Executable check) {
        assertThrows(AssertionError.class, check);
    }

    private static final String PROBLEM = "{\"type\": \"https://uri.etsi.org/ngsi-ld/errors/BadRequestData\", \"title\": \"Bad request data\", \"detail\": \"speed is not valid\"}";

    @Test
    @DisplayName("problem: the status, application/json, the ETSI type, a title and a detail beyond it, no Link")
    void problem() {
        Checks.problem(answer(400, PROBLEM, "Content-Type", "application/json"), 400, "BadRequestData");
        Checks.badData(answer(400, PROBLEM, "Content-Type", "application/json"), "speed");
        rejects(() -> Checks.problem(answer(404, PROBLEM, "Content-Type", "application/json"), 400, "BadRequestData"));
        rejects(() -> Checks.problem(answer(400, PROBLEM, "Content-Type", "application/json"), 400, "InvalidRequest"));
        rejects(() -> Checks.problem(answer(400, PROBLEM, "Content-Type", "application/ld+json"), 400, "BadRequestData"));
        rejects(() -> Checks.problem(answer(400, PROBLEM, "Content-Type", "application/json", "Link", "<" + CTX + ">; rel=\""
                + Ngsi.CONTEXT_REL + "\""), 400, "BadRequestData"));
        rejects(() -> Checks.problem(answer(400, "{\"type\": \"https://uri.etsi.org/ngsi-ld/errors/BadRequestData\", \"title\": \"x\"}",
                "Content-Type", "application/json"), 400, "BadRequestData"));
        rejects(() -> Checks.problem(answer(400, "{\"type\": \"https://uri.etsi.org/ngsi-ld/errors/BadRequestData\", \"title\": \"x\", \"detail\": \"x\"}",
                "Content-Type", "application/json"), 400, "BadRequestData"));
        rejects(() -> Checks.badData(answer(400, PROBLEM, "Content-Type", "application/json"), "brandName"));
        rejects(() -> Checks.problem(answer(400, PROBLEM.replace("}", ", \"status\": 404}"), "Content-Type", "application/json"), 400,
                "BadRequestData"));
    }

    @Test
    @DisplayName("created: 201, the relative path in Location, no body, no Link")
    void created() {
        Checks.created(answer(201, "", "Location", "/ngsi-ld/v1/entities/urn:a:b"), "urn:a:b");
        rejects(() -> Checks.created(answer(201, "", "Location", "http://h/ngsi-ld/v1/entities/urn:a:b"), "urn:a:b"));
        rejects(() -> Checks.created(answer(201, "{}", "Location", "/ngsi-ld/v1/entities/urn:a:b"), "urn:a:b"));
        rejects(() -> Checks.created(answer(204, "", "Location", "/ngsi-ld/v1/entities/urn:a:b"), "urn:a:b"));
    }

    @Test
    @DisplayName("okJson: 200, exactly application/json, one context Link naming the expected context")
    void okJson() {
        String link = "<" + CTX + ">; rel=\"" + Ngsi.CONTEXT_REL + "\"; type=\"application/ld+json\"";
        Checks.okJson(answer(200, "{}", "Content-Type", "application/json", "Link", link), CTX);
        Checks.okJson(answer(200, "{}", "Content-Type", "application/json", "Link",
                "<" + Ngsi.CORE_CONTEXT + ">; rel=\"" + Ngsi.CONTEXT_REL + "\""), Json.CORE);
        rejects(() -> Checks.okJson(answer(200, "{}", "Content-Type", "application/json"), CTX));
        rejects(() -> Checks.okJson(answer(200, "{}", "Content-Type", "application/json; charset=utf-8", "Link", link), CTX));
        rejects(() -> Checks.okJson(answer(200, "{}", "Content-Type", "application/json", "Link", link), Json.CORE));
        rejects(() -> Checks.okJson(answer(200, "{}", "Content-Type", "application/json", "Link", link + ", " + link), CTX));
        assertEquals(CTX, Checks.contextUrl(answer(200, "{}", "Link", "<http://x/next>; rel=\"next\", " + link)));
        assertNull(Checks.contextUrl(answer(200, "{}", "Link", "<http://x/next>; rel=\"next\"")));
    }

    @Test
    @DisplayName("okLdJson: 200, exactly application/ld+json, the context in the body as a string or a one-element array")
    void okLdJson() {
        Checks.okLdJson(answer(200, "{\"@context\": \"" + CTX + "\"}", "Content-Type", "application/ld+json"), CTX);
        Checks.okLdJson(answer(200, "{\"@context\": [\"" + CTX + "\"]}", "Content-Type", "application/ld+json"), CTX);
        rejects(() -> Checks.okLdJson(answer(200, "{}", "Content-Type", "application/ld+json"), CTX));
        rejects(() -> Checks.okLdJson(answer(200, "{\"@context\": \"" + CTX + "\"}", "Content-Type", "application/json"), CTX));
    }

    @Test
    @DisplayName("updateResult: 207, application/json, updated and notUpdated (with reasons) as sets")
    void updateResult() {
        String body = "{\"updated\": [\"urn:a\"], \"notUpdated\": [{\"attributeName\": \"urn:b\", \"reason\": \"exists\"}]}";
        Checks.updateResult(answer(207, body, "Content-Type", "application/json"), List.of("urn:a"), List.of("urn:b"));
        rejects(() -> Checks.updateResult(answer(207, body, "Content-Type", "application/json"), List.of("urn:b"), List.of("urn:a")));
        rejects(() -> Checks.updateResult(answer(207, body.replace("\"exists\"", "\"\""), "Content-Type", "application/json"),
                List.of("urn:a"), List.of("urn:b")));
    }

    @Test
    @DisplayName("batchResult: 207, success as a set, one error per id with its ProblemDetails type")
    void batchResult() {
        String body = "{\"success\": [\"urn:a\", \"urn:b\"], \"errors\": [{\"entityId\": \"urn:c\", \"error\": "
                + "{\"type\": \"https://uri.etsi.org/ngsi-ld/errors/AlreadyExists\", \"title\": \"Already exists\"}}]}";
        Checks.batchResult(answer(207, body, "Content-Type", "application/json"), List.of("urn:b", "urn:a"), List.of("urn:c"),
                List.of("AlreadyExists"));
        rejects(() -> Checks.batchResult(answer(207, body, "Content-Type", "application/json"), List.of("urn:a"), List.of("urn:c"),
                List.of("AlreadyExists")));
        rejects(() -> Checks.batchResult(answer(207, body, "Content-Type", "application/json"), List.of("urn:a", "urn:b"), List.of("urn:c"),
                List.of("BadRequestData")));
        rejects(() -> Checks.batchResult(answer(207, body, "Content-Type", "application/json"), List.of("urn:a", "urn:b"),
                List.of("urn:c", "urn:c"), List.of("AlreadyExists", "AlreadyExists")));
    }

    @Test
    @DisplayName("createdIds, noContent, bare")
    void others() {
        Checks.createdIds(answer(201, "[\"urn:b\", \"urn:a\"]", "Content-Type", "application/json"), List.of("urn:a", "urn:b"));
        rejects(() -> Checks.createdIds(answer(201, "[\"urn:a\", \"urn:a\"]", "Content-Type", "application/json"), List.of("urn:a", "urn:b")));
        Checks.noContent(answer(204, ""));
        rejects(() -> Checks.noContent(answer(204, "", "Link", "<" + CTX + ">; rel=\"" + Ngsi.CONTEXT_REL + "\"")));
        Checks.bare(answer(415, ""), 415);
        rejects(() -> Checks.bare(answer(415, PROBLEM), 415));
    }
}
