package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Random;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Bad input gets a clear 4xx and changes nothing: random and truncated JSON, nesting past every
 * bound, ten thousand attributes, a 100 MiB body. After each, the broker still serves and the
 * entity it held is as it was.
 */
class BrokerBadInputTest {
    private static final String KEEP = "urn:ngsi-ld:Keep:1";
    private static final String VALID = """
            {"id": "urn:ngsi-ld:Fuzz:1", "type": "Fuzz", "name": {"type": "Property", "value": "x", "observedAt": "2026-01-01T00:00:00Z"},
             "owner": {"type": "Relationship", "object": "urn:ngsi-ld:Person:1"}, "location": {"type": "Point", "coordinates": [1, 2]},
             "tags": ["a", "b"], "n": 3.5, "ok": true}""";
    /** What the fuzz writes over a valid body's bytes: JSON's structure, a letter, a digit, a control character. */
    private static final String NOISE = "{}[]\":,0a \\x\u0001";
    private static TestBroker broker;
    private static BrokerHttp http;
    private static String kept;

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start();
        http = new BrokerHttp(broker);
        assertEquals(201, http.postJson("/entities", "{\"id\": \"" + KEEP + "\", \"type\": \"Keep\", \"v\": 1}").statusCode());
        kept = http.get("/entities/" + KEEP).body();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static void unchanged() throws Exception {
        HttpResponse<String> r = http.get("/entities/" + KEEP);
        assertEquals(200, r.statusCode());
        assertEquals(kept, r.body(), "the entity that was there is as it was");
    }

    private static void assertProblem(HttpResponse<String> r, int status, String type) throws Exception {
        assertEquals(status, r.statusCode(), r.body());
        assertEquals("application/json", r.headers().firstValue("Content-Type").orElse(""));
        JsonNode p = BrokerHttp.json(r);
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/" + type, p.get("type").asText(), r.body());
        assertTrue(p.hasNonNull("title") && p.hasNonNull("detail"), r.body());
    }

    @Test
    void randomAndTruncatedJsonGetA4xxNever500AndChangeNothingElse() throws Exception {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        byte[] valid = VALID.getBytes(StandardCharsets.UTF_8);
        int created = 0;
        for (int i = 0; i < 400; i++) {
            byte[] b;
            if (i < valid.length && i % 2 == 0) {
                b = java.util.Arrays.copyOf(valid, i); // truncated at every other byte
            } else {
                b = valid.clone();
                for (int k = 0, n = 1 + rnd.nextInt(4); k < n; k++) {
                    b[rnd.nextInt(b.length)] = (byte) NOISE.charAt(rnd.nextInt(NOISE.length()));
                }
            }
            HttpResponse<String> r = http.postJson("/entities", new String(b, StandardCharsets.ISO_8859_1));
            assertTrue(r.statusCode() == 201 || (r.statusCode() >= 400 && r.statusCode() < 500),
                    "seed " + seed + " case " + i + ": " + r.statusCode() + " " + r.body());
            if (r.statusCode() == 201) {
                created++;
                // The Location is a URI reference the broker has already percent-encoded: it is used as given.
                String location = r.headers().firstValue("Location").orElseThrow();
                assertTrue(location.startsWith("/ngsi-ld/v1/entities/"), location);
                assertEquals(204, http.send("DELETE", location.substring("/ngsi-ld/v1".length()), null, null)
                        .statusCode(), "seed " + seed + ": the entity created can be deleted at its Location: " + location);
            } else {
                JsonNode p = BrokerHttp.json(r);
                assertTrue(p.get("type").asText().startsWith("https://uri.etsi.org/ngsi-ld/errors/"), r.body());
            }
        }
        assertTrue(created < 400, "seed " + seed + ": some of the broken bodies were refused");
        assertEquals(1, broker.broker().store().count(""), "seed " + seed + ": only the kept entity is left");
        unchanged();
    }

    @Test
    void anEntityWhoseIdHoldsSubDelimitersIsReadAndDeletedAtItsLocation() throws Exception {
        for (String id : new String[] {"urn:n,si-ld:Fuzz:1", "urn:ngsi-ld:F&z=1", "urn:ngsi-ld:F+z;1", "urn:ngsi-ld:F%2Fz:1"}) {
            HttpResponse<String> r = http.postJson("/entities", "{\"id\": \"" + id + "\", \"type\": \"Fuzz\"}");
            assertEquals(201, r.statusCode(), r.body());
            String location = r.headers().firstValue("Location").orElseThrow();
            assertEquals(200, http.get(location.substring("/ngsi-ld/v1".length())).statusCode(), location);
            assertEquals(204, http.send("DELETE", location.substring("/ngsi-ld/v1".length()), null, null).statusCode(), location);
        }
        unchanged();
    }

    @Test
    void jsonNestedPastTheParsersBoundIsAnInvalidRequest() throws Exception {
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        assertProblem(http.postJson("/entities", "{\"id\": \"urn:a:b\", \"type\": \"T\", \"x\": " + deep + "}"), 400, "InvalidRequest");
        unchanged();
    }

    @Test
    void aValueNestedPastTheBrokersBoundIsBadRequestData() throws Exception {
        String deep = "{\"a\": ".repeat(200) + "1" + "}".repeat(200);
        HttpResponse<String> r = http.postJson("/entities", "{\"id\": \"urn:a:deep\", \"type\": \"T\", \"x\": {\"value\": " + deep + "}}");
        assertProblem(r, 400, "BadRequestData");
        assertTrue(BrokerHttp.json(r).get("detail").asText().contains("deeper"), r.body());
        assertEquals(404, http.get("/entities/urn:a:deep").statusCode());
    }

    @Test
    void tenThousandAttributesAreRefusedWholeWithBadRequestData() throws Exception {
        StringBuilder b = new StringBuilder("{\"id\": \"urn:a:many\", \"type\": \"T\"");
        for (int i = 0; i < 10_000; i++) {
            b.append(", \"attr").append(i).append("\": ").append(i);
        }
        b.append('}');
        HttpResponse<String> r = http.postJson("/entities", b.toString());
        assertProblem(r, 400, "BadRequestData");
        assertTrue(BrokerHttp.json(r).get("detail").asText().contains("more than"), r.body());
        assertEquals(404, http.get("/entities/urn:a:many").statusCode(), "nothing of it was stored");
        unchanged();
    }

    @Test
    void aHundredMebibyteBodyIsRefusedWith413WhileItIsStillBeingSent() throws Exception {
        try (Socket s = new Socket("127.0.0.1", broker.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /ngsi-ld/v1/entities HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + (100 * 1024 * 1024) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write("{\"id\": \"urn:a:huge\", \"type\": \"T\", \"x\": \"".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] head = new byte[12];
            int n = 0;
            while (n < head.length) {
                int r = in.read(head, n, head.length - n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
            assertEquals("HTTP/1.1 413", new String(head, 0, n, StandardCharsets.US_ASCII));
        }
        assertEquals(404, http.get("/entities/urn:a:huge").statusCode());
        unchanged();
    }

    @Test
    void theLockCheckIsOnInEveryBrokerTest() {
        assertTrue(Boolean.getBoolean("cor.debug"), "cor-ngsild's tests run with -Dcor.debug=true (design rule 1)");
    }
}
