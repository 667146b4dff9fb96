package dev.cor.ngsild.ld;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;

import dev.cor.ngsild.TestBroker;
import dev.cor.rest.CorRestJson;

import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;

/**
 * A one-element array in an entity comes back as JSON-LD compaction gives it (compactArrays, the
 * default of JSON-LD 1.1 § 4.1.5 and Orion-LD's "array reduction"): the element alone for a
 * Property's value, a Relationship's object, a VocabProperty's vocab, a language of a languageMap,
 * the types, the scopes and a lone instance; an array still where the core context makes the member
 * a list ({@code valueList}, {@code objectList}) or a JSON literal ({@code json}). The normalized
 * answer of a real broker is held to Titanium's compaction of the expansion of what was sent; the
 * concise and simplified answers (no JSON-LD forms of their own) to the same values.
 */
class OneElementArrayOracleTest {
    private static final String CORE = CoreContext.URL;
    private static TestBroker broker;
    private static HttpClient http;

    /** Every shape that may hold a one-element array, as a client would send it (core context only). */
    private static ObjectNode sent(String id) {
        return (ObjectNode) json("""
                {"id": "%s", "type": ["T"], "scope": ["/a"],
                 "reading": {"type": "Property", "value": ["x"], "unitCode": "C62",
                             "source": {"type": "Property", "value": [7]}},
                 "owner": {"type": "Relationship", "object": ["urn:ngsi-ld:T:a"]},
                 "category": {"type": "VocabProperty", "vocab": ["x"]},
                 "title": {"type": "LanguageProperty", "languageMap": {"en": ["x"], "fr": ["a", "b"]}},
                 "series": {"type": "ListProperty", "valueList": ["x"]},
                 "members": {"type": "ListRelationship", "objectList": [{"object": "urn:ngsi-ld:T:b"}]},
                 "document": {"type": "JsonProperty", "json": [{"k": [1]}]},
                 "flag": [{"type": "Property", "value": [true], "datasetId": "urn:ngsi-ld:Dataset:1"}],
                 "pair": {"type": "Property", "value": ["x", "y"]}}""".formatted(id));
    }

    @BeforeAll
    static void start() {
        broker = TestBroker.start();
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void the_normalized_answer_is_the_json_ld_compaction_of_what_was_sent() throws Exception {
        String id = created();

        TitaniumOracle oracle = new TitaniumOracle(Map.of());
        // the core context as the broker processes it: last, and served by the oracle's loader
        JsonObject document = Json.createObjectBuilder((JsonObject) TitaniumOracle.toJakarta(sent(id)))
                .add("@context", TitaniumOracle.effective(TextNode.valueOf(CORE))).build();
        JsonArray expanded = oracle.expandDocument(document);
        ObjectNode compacted = (ObjectNode) json(oracle.compactDocument(expanded, TextNode.valueOf(CORE)).toString());
        compacted.remove("@context");
        // a JsonProperty's json is a JSON literal, opaque to JSON-LD (1.1 § 4.2.2; its expansion keeps the
        // whole array as one @value): Titanium 1.6 unwraps a one-element literal array on compaction, the
        // broker keeps the literal as it was written
        compacted.set("document", sent(id).get("document"));

        assertEquals(compacted, retrieved(id, ""), "the broker's normalized entity against Titanium's compaction");
        // a partial update's one-element value is read the same way
        assertEquals(204, send("PATCH", "/entities/" + id + "/attrs/reading", "{\"value\": [\"y\"]}").statusCode());
        assertEquals(json("\"y\""), retrieved(id, "").path("reading").path("value"));
    }

    @Test
    void the_concise_answer_gives_the_same_values() throws Exception {
        String id = created();
        assertEquals(json("""
                {"id": "%s", "type": "T", "scope": "/a",
                 "reading": {"value": "x", "unitCode": "C62", "source": 7},
                 "owner": {"object": "urn:ngsi-ld:T:a"},
                 "category": {"vocab": "x"},
                 "title": {"languageMap": {"en": "x", "fr": ["a", "b"]}},
                 "series": {"valueList": ["x"]},
                 "members": {"objectList": [{"object": "urn:ngsi-ld:T:b"}]},
                 "document": {"json": [{"k": [1]}]},
                 "flag": {"value": true, "datasetId": "urn:ngsi-ld:Dataset:1"},
                 "pair": {"value": ["x", "y"]}}""".formatted(id)), retrieved(id, "?options=concise"));
    }

    @Test
    void the_simplified_answer_gives_the_same_values() throws Exception {
        String id = created();
        assertEquals(json("""
                {"id": "%s", "type": "T", "scope": "/a",
                 "reading": "x", "owner": "urn:ngsi-ld:T:a", "category": {"vocab": "x"},
                 "title": {"languageMap": {"en": "x", "fr": ["a", "b"]}},
                 "series": ["x"], "members": ["urn:ngsi-ld:T:b"], "document": {"json": [{"k": [1]}]},
                 "flag": true, "pair": ["x", "y"]}""".formatted(id)), retrieved(id, "?options=keyValues"));
    }

    /** Creates {@link #sent} under a fresh id, as application/json with the core context; returns the id. */
    private static String created() throws Exception {
        String id = "urn:ngsi-ld:T:" + System.nanoTime();
        assertEquals(201, send("POST", "/entities", sent(id).toString()).statusCode());
        return id;
    }

    private static JsonNode retrieved(String id, String query) throws Exception {
        HttpResponse<String> r = send("GET", "/entities/" + id + query, null);
        assertEquals(200, r.statusCode(), r::body);
        return json(r.body());
    }

    private static HttpResponse<String> send(String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(broker.baseUrl() + path)).timeout(Duration.ofSeconds(20));
        if (body == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode json(String text) {
        try {
            return CorRestJson.mapper().readTree(text);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
