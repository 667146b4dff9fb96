package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cor.ngsild.BrokerHttp;

/**
 * What a restart keeps: every entity exactly as it was answered (every attribute kind, JSON
 * number types, datasets, sub-attributes, scopes, the broker's times), the tenants - one whose
 * entities were all deleted among them - and the Hosted {@code @context}s, still usable by URL.
 * After a clean stop (the last snapshot) and after a crash (the journal replayed).
 */
class RestartTest {
    static final String RICH = """
            {"id": "urn:ngsi-ld:Rich:1", "type": ["Rich", "Thing"], "scope": ["/a/b", "/c"],
             "p": {"type": "Property", "value": 12.5, "unitCode": "CEL", "observedAt": "2026-01-01T00:00:00Z",
                   "sub": {"type": "Property", "value": "nested", "deeper": {"type": "Property", "value": true}}},
             "big": {"type": "Property", "value": 123456789012345678901234567890},
             "long": {"type": "Property", "value": 9007199254740993},
             "neg": {"type": "Property", "value": -7},
             "text": {"type": "Property", "value": "caf\\u00e9 \\u6771\\u4eac \\ud83d\\ude00"},
             "multi": [{"type": "Property", "value": 1},
                       {"type": "Property", "value": 2, "datasetId": "urn:ngsi-ld:Dataset:two"}],
             "rel": {"type": "Relationship", "object": "urn:ngsi-ld:Other:1", "objectType": "Other"},
             "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [-3.7, 40.4]}},
             "name": {"type": "LanguageProperty", "languageMap": {"en": "Big", "fr": "Grand"}},
             "list": {"type": "ListProperty", "valueList": [1, "two", {"three": 3}]},
             "friends": {"type": "ListRelationship", "objectList": [{"object": "urn:ngsi-ld:F:1"}, {"object": "urn:ngsi-ld:F:2"}]},
             "state": {"type": "VocabProperty", "vocab": "open"},
             "doc": {"type": "JsonProperty", "json": {"a": [1, 2.25, null, false], "b": {"c": "d"}}}}
            """;

    /** Everything the broker answers about what it holds, as text: each answer a line. */
    private static List<String> state(BrokerHttp http, String hostedId) throws Exception {
        List<String> out = new ArrayList<>();
        out.add(ok(http.get("/entities/urn:ngsi-ld:Rich:1?options=sysAttrs")));
        out.add(ok(http.get("/entities?type=Thing&options=sysAttrs")));
        // the query planner's indexes (type, attribute, space) are rebuilt by the recovery
        for (String query : List.of("georel=near;maxDistance==1000&geometry=Point&coordinates=%5B-3.7,40.4%5D",
                "q=neg%3C0&attrs=neg")) {
            String found = ok(http.get("/entities?" + query));
            assertTrue(found.contains("urn:ngsi-ld:Rich:1"), query + " -> " + found);
            out.add(found);
        }
        out.add(ok(http.get("/types?details=true")));
        out.add(ok(http.get("/entities?type=Batch&options=sysAttrs", "NGSILD-Tenant", "t2")));
        out.add(ok(http.get("/entities?type=Gone", "NGSILD-Tenant", "t1"))); // the tenant exists, empty
        out.add(ok(http.get("/jsonldContexts/" + hostedId)));
        out.add(ok(http.get("/entities/urn:ngsi-ld:Ctx:1?options=keyValues", "Link", "<http://localhost/ngsi-ld/v1/jsonldContexts/"
                + hostedId + ">; rel=\"http://www.w3.org/ns/json-ld#context\"")));
        out.add(ok(http.get("/jsonldContexts?kind=Hosted")).replaceAll("http://127\\.0\\.0\\.1:\\d+", "http://host"));
        return out;
    }

    private static String ok(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    private static String writeEverything(BrokerHttp http) throws Exception {
        assertEquals(201, http.postJson("/entities", RICH).statusCode());
        assertEquals(201, http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:Gone:1\", \"type\": \"Gone\"}",
                "NGSILD-Tenant", "t1").statusCode());
        assertEquals(204, http.send("DELETE", "/entities/urn:ngsi-ld:Gone:1", null, null, "NGSILD-Tenant", "t1").statusCode());
        StringBuilder batch = new StringBuilder("[");
        for (int i = 0; i < 3; i++) {
            batch.append(i == 0 ? "" : ",").append("{\"id\": \"urn:ngsi-ld:Batch:").append(i)
                    .append("\", \"type\": \"Batch\", \"n\": {\"type\": \"Property\", \"value\": ").append(i).append("}}");
        }
        assertEquals(201, http.postJson("/entityOperations/upsert", batch + "]", "NGSILD-Tenant", "t2").statusCode());
        assertEquals(204, http.send("PATCH", "/entities/urn:ngsi-ld:Batch:1/attrs", "application/json",
                "{\"n\": {\"type\": \"Property\", \"value\": 100}}", "NGSILD-Tenant", "t2").statusCode());
        assertEquals(204, http.send("DELETE", "/entities/urn:ngsi-ld:Batch:2", null, null, "NGSILD-Tenant", "t2").statusCode());
        HttpResponse<String> added = http.postJson("/jsonldContexts", "{\"@context\": {\"speed\": \"urn:x:speed\"}}");
        assertEquals(201, added.statusCode(), added.body());
        String location = added.headers().firstValue("Location").orElseThrow();
        String hostedId = location.substring(location.lastIndexOf('/') + 1);
        HttpResponse<String> second = http.postJson("/jsonldContexts", "{\"@context\": {\"other\": \"urn:x:other\"}}");
        String secondId = second.headers().firstValue("Location").orElseThrow();
        assertEquals(204, http.send("DELETE", "/jsonldContexts/" + secondId.substring(secondId.lastIndexOf('/') + 1),
                null, null).statusCode());
        assertEquals(201, http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:Ctx:1\", \"type\": \"Ctx\", \"speed\": "
                + "{\"type\": \"Property\", \"value\": 3}}", "Link", "<http://localhost/ngsi-ld/v1/jsonldContexts/"
                + hostedId + ">; rel=\"http://www.w3.org/ns/json-ld#context\"").statusCode());
        return hostedId;
    }

    @ParameterizedTest(name = "after {0}")
    @ValueSource(strings = {"a clean stop", "a crash"})
    void aRestartKeepsEntitiesTenantsAndHostedContexts(String how, @TempDir Path dir) throws Exception {
        List<String> before;
        String hostedId;
        DurableBroker b = DurableBroker.open(dir);
        try {
            hostedId = writeEverything(b.http);
            before = state(b.http, hostedId);
            assertTrue(before.get(0).contains("123456789012345678901234567890"), before.get(0));
        } finally {
            if (how.equals("a crash")) {
                b.crash();
            } else {
                b.close();
            }
        }
        try (Stream<Path> files = Files.list(dir)) {
            List<String> names = files.map(p -> p.getFileName().toString()).sorted().toList();
            if (how.equals("a clean stop")) {
                assertEquals(3, names.size(), "the lock, the history's directory and the last snapshot only: " + names);
                assertEquals("history", names.get(1), names.toString());
                assertTrue(names.get(2).startsWith("snapshot-"), names.toString());
            } else {
                assertTrue(names.stream().anyMatch(n -> n.startsWith("journal-")), names.toString());
            }
        }
        try (DurableBroker again = DurableBroker.open(dir)) {
            assertEquals(before, state(again.http, hostedId));
            assertEquals(java.util.Set.of("", "t1", "t2"), again.store.tenants());
        }
        // and once more, from what the second run left
        try (DurableBroker third = DurableBroker.open(dir)) {
            assertEquals(before, state(third.http, hostedId));
        }
    }

    @Test
    void aSecondBrokerCannotOpenTheSameDirectory(@TempDir Path dir) {
        try (DurableBroker b = DurableBroker.open(dir)) {
            IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    () -> DurableEntityStore.builder(dir).open());
            assertTrue(e.getMessage().contains("in use by another broker"), e.getMessage());
        }
    }
}
