package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code --corsOrigin} through the jar, over real sockets: preflight, exposed headers, other origins, no flag. */
@Tag("process")
class CorsProcessTest {
    private static final String APP = "https://app.example";
    private static final String ENTITY = """
            {"id": "urn:ngsi-ld:Room:cors1", "type": "Room", "temperature": {"type": "Property", "value": 20}}""";

    @Test
    void anAllowedOriginGetsItsPreflightAndTheNgsiLdHeadersAndAnotherOriginGetsNothing() throws Exception {
        try (ServerProcess s = ServerProcess.start("--httpLoops", "1", "--store", "memory", "--corsOrigin", APP)) {
            HttpResponse<String> pre = s.send("OPTIONS", "/ngsi-ld/v1/entities", null, "Origin", APP,
                    "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type, link");
            assertEquals(204, pre.statusCode(), pre.body());
            assertEquals(APP, pre.headers().firstValue("Access-Control-Allow-Origin").orElse(null));
            assertTrue(pre.headers().firstValue("Access-Control-Allow-Methods").orElse("").contains("PATCH"));
            assertTrue(pre.headers().firstValue("Access-Control-Allow-Headers").orElse("").contains("Link"));
            assertEquals("86400", pre.headers().firstValue("Access-Control-Max-Age").orElse(null));

            HttpResponse<String> created = s.send("POST", "/ngsi-ld/v1/entities", ENTITY, "Origin", APP);
            assertEquals(201, created.statusCode(), created.body());
            assertEquals(APP, created.headers().firstValue("Access-Control-Allow-Origin").orElse(null));
            String exposed = created.headers().firstValue("Access-Control-Expose-Headers").orElse("");
            for (String h : new String[] {"Link", "Location", "NGSILD-Results-Count", "NGSILD-Tenant", "NGSILD-Warning"}) {
                assertTrue(exposed.contains(h), h + " in " + exposed);
            }

            HttpResponse<String> other = s.send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:cors1", null,
                    "Origin", "https://evil.example");
            assertEquals(200, other.statusCode());
            assertTrue(other.headers().firstValue("Access-Control-Allow-Origin").isEmpty(), other.headers().toString());
            HttpResponse<String> otherPre = s.send("OPTIONS", "/ngsi-ld/v1/entities", null, "Origin", "https://evil.example",
                    "Access-Control-Request-Method", "POST");
            assertNotEquals(204, otherPre.statusCode());
            assertTrue(otherPre.headers().firstValue("Access-Control-Allow-Origin").isEmpty());
        }
    }

    @Test
    void allOriginsAreAnsweredStarAndWithoutTheFlagThereIsNoCors() throws Exception {
        try (ServerProcess s = ServerProcess.start("--httpLoops", "1", "--store", "memory", "--corsOrigin", "__ALL")) {
            HttpResponse<String> pre = s.send("OPTIONS", "/ngsi-ld/v1/types", null, "Origin", "http://any.example",
                    "Access-Control-Request-Method", "GET");
            assertEquals(204, pre.statusCode());
            assertEquals("*", pre.headers().firstValue("Access-Control-Allow-Origin").orElse(null));
        }
        try (ServerProcess s = ServerProcess.start("--httpLoops", "1", "--store", "memory")) {
            HttpResponse<String> pre = s.send("OPTIONS", "/ngsi-ld/v1/types", null, "Origin", APP,
                    "Access-Control-Request-Method", "GET");
            assertNotEquals(204, pre.statusCode());
            assertTrue(pre.headers().firstValue("Access-Control-Allow-Origin").isEmpty());
            HttpResponse<String> get = s.send("GET", "/ngsi-ld/v1/types", null, "Origin", APP);
            assertTrue(get.headers().firstValue("Access-Control-Allow-Origin").isEmpty());
        }
    }
}
