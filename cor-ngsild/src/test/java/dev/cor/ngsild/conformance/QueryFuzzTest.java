package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Fuzzing the query parameters through the API (4.9, 4.10, 6.3.2): random, mutated and truncated
 * q expressions, idPatterns, scopeQs and geo-queries never give a 500 or hang - every answer is a
 * 200 or a ProblemDetails 400 (BadRequestData/InvalidRequest) or 403 (TooComplexQuery). The seed
 * is printed on failure.
 */
class QueryFuzzTest extends ConformanceTest {
    private static final String[] SEEDS = {
        "name==\"Eiffel Tower\"", "level>=4;level<7", "(a==1|b==2);c~=\"^x\"", "level==1..9", "tags==\"a\",\"b\"",
        "address[city.street]==\"x\"", "level.observedAt>=2020-01-01T00:00:00Z", "rel==urn:ngsi-ld:City:1",
        "!rel;name!~=\"(a|b)*\"", "x.y.z[w]!=true", "t<=12:00:00Z", "d==2020-01-01..2021-01-01"};
    private static final String ALPHABET = "abcxyz019_.,;|()[]\"\\=!<>~*:/# -+eE";
    private static String type;

    @BeforeAll
    static void entities() {
        type = Entities.uniqueName("Fuzz");
        createPlain(Json.obj("""
                {"id": "%s", "type": "%s", "name": {"type": "Property", "value": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"},
                 "level": {"type": "Property", "value": 5, "observedAt": "2021-01-01T00:00:00Z"},
                 "address": {"type": "Property", "value": {"city": {"street": "x"}}},
                 "rel": {"type": "Relationship", "object": "urn:ngsi-ld:City:1"},
                 "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1, 2]}}}""",
                Entities.id(type), type));
    }

    private static void check(Answer a, String what) {
        int s = a.status();
        assertTrue(s == 200 || s == 400 || s == 403, () -> what + " -> " + a);
        if (s != 200) {
            String t = a.json().path("type").asText();
            assertTrue(Set.of("BadRequestData", "InvalidRequest", "TooComplexQuery").stream().anyMatch(t::endsWith),
                    () -> what + " -> " + a);
        }
    }

    private static String mutate(Random r, String s) {
        StringBuilder b = new StringBuilder(s);
        int edits = 1 + r.nextInt(4);
        for (int i = 0; i < edits; i++) {
            int at = b.isEmpty() ? 0 : r.nextInt(b.length() + 1);
            switch (r.nextInt(3)) {
                case 0 -> b.insert(at, ALPHABET.charAt(r.nextInt(ALPHABET.length())));
                case 1 -> {
                    if (at < b.length()) {
                        b.deleteCharAt(at);
                    }
                }
                default -> b.setLength(Math.min(at, b.length()));
            }
        }
        return b.toString();
    }

    private static String random(Random r) {
        StringBuilder b = new StringBuilder();
        int n = 1 + r.nextInt(30);
        for (int i = 0; i < n; i++) {
            b.append(ALPHABET.charAt(r.nextInt(ALPHABET.length())));
        }
        return b.toString();
    }

    @Test
    @DisplayName("4.9: 1500 random, mutated and truncated q expressions: never a 500, never a hang")
    void qNeverFails() {
        long seed = System.nanoTime();
        Random r = new Random(seed);
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            for (int i = 0; i < 1500; i++) {
                String q = switch (i % 3) {
                    case 0 -> random(r);
                    case 1 -> mutate(r, SEEDS[r.nextInt(SEEDS.length)]);
                    default -> {
                        String whole = SEEDS[r.nextInt(SEEDS.length)];
                        yield whole.substring(0, r.nextInt(whole.length()));
                    }
                };
                if (q.isEmpty()) {
                    continue;
                }
                check(api.get("/entities").query("type", type).query("q", q).send(), "seed " + seed + " q=" + q);
            }
        });
    }

    @Test
    @DisplayName("4.9, 5.7.2: random idPatterns and scopeQs (catastrophic ones included): never a 500, never a hang")
    void patternsNeverFail() {
        long seed = System.nanoTime();
        Random r = new Random(seed);
        String[] evil = {"(.*a){12}$", "(a|aa)+b", "((a+)+)+$", "(x+x+)+y", "[", "(?<", "\\"};
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            for (int i = 0; i < 400; i++) {
                String p = i % 4 == 0 ? evil[r.nextInt(evil.length)] : mutate(r, evil[r.nextInt(evil.length)]);
                check(api.get("/entities").query("type", type).query("idPattern", p.isEmpty() ? "x" : p).send(),
                        "seed " + seed + " idPattern=" + p);
                check(api.get("/entities").query("type", type).query("q", "name~=\"" + p.replace("\"", "") + "\"").send(),
                        "seed " + seed + " pattern=" + p);
                check(api.get("/entities").query("type", type).query("scopeQ", mutate(r, "/a/+/b;/c/#")).send(),
                        "seed " + seed + " scopeQ");
            }
        });
    }

    @Test
    @DisplayName("4.10: 600 mutated geo-queries: never a 500")
    void geoNeverFails() {
        long seed = System.nanoTime();
        Random r = new Random(seed);
        String[][] seeds = {{"near;maxDistance==500", "Point", "[1,2]"}, {"within", "Polygon", "[[[0,0],[3,0],[3,3],[0,0]]]"},
            {"intersects", "MultiLineString", "[[[0,0],[1,1]]]"}};
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            for (int i = 0; i < 600; i++) {
                String[] s = seeds[r.nextInt(seeds.length)];
                int part = r.nextInt(3);
                String georel = part == 0 ? mutate(r, s[0]) : s[0];
                String geometry = part == 1 ? mutate(r, s[1]) : s[1];
                String coordinates = part == 2 ? mutate(r, s[2]) : s[2];
                check(api.get("/entities").query("type", type).query("georel", georel).query("geometry", geometry)
                        .query("coordinates", coordinates).send(), "seed " + seed + " " + georel + " " + geometry + " " + coordinates);
            }
        });
    }
}
