package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

/** An entity's life over real sockets: create, read in each representation, change, delete. */
class EntityLifecycleTest {
    private static TestBroker broker;
    private static BrokerHttp http;

    @BeforeAll
    static void start() {
        broker = TestBroker.start();
        http = new BrokerHttp(broker);
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static HttpResponse<String> send(String method, String path, String contentType, String body) throws Exception {
        return http.send(method, path, contentType, body);
    }

    @Test
    void anEntityIsCreatedReadChangedAndDeleted() throws Exception {
        String id = "urn:ngsi-ld:Vehicle:life1";
        HttpResponse<String> r = send("POST", "/entities", "application/json", """
                {"id": "%s", "type": "Vehicle",
                 "speed": {"type": "Property", "value": 80, "unitCode": "KMH", "observedAt": "2026-01-01T00:00:00Z"},
                 "brand": "Volvo",
                 "isParked": {"type": "Relationship", "object": "urn:ngsi-ld:Parking:1"},
                 "location": {"type": "Point", "coordinates": [8.5, 49.1]}}
                """.formatted(id));
        assertEquals(201, r.statusCode(), r.body());
        assertEquals("/ngsi-ld/v1/entities/" + id, r.headers().firstValue("Location").orElseThrow());

        r = send("GET", "/entities/" + id, null, null);
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("application/json", r.headers().firstValue("Content-Type").orElseThrow());
        assertTrue(r.headers().firstValue("Link").orElseThrow().contains("ngsi-ld-core-context"));
        JsonNode e = BrokerHttp.json(r);
        assertEquals("Vehicle", e.get("type").asText());
        assertEquals(80, e.at("/speed/value").asInt());
        assertEquals("KMH", e.at("/speed/unitCode").asText());
        assertEquals("Property", e.at("/brand/type").asText());
        assertEquals("GeoProperty", e.at("/location/type").asText());
        assertEquals("urn:ngsi-ld:Parking:1", e.at("/isParked/object").asText());
        assertNull(e.get("createdAt"));

        r = send("GET", "/entities/" + id + "?options=keyValues", null, null);
        e = BrokerHttp.json(r);
        assertEquals(80, e.get("speed").asInt());
        assertEquals("urn:ngsi-ld:Parking:1", e.get("isParked").asText());

        r = send("GET", "/entities/" + id + "?options=concise,sysAttrs", null, null);
        e = BrokerHttp.json(r);
        assertTrue(e.has("createdAt"), r.body());
        assertEquals("Volvo", e.at("/brand/value").asText(), r.body());

        r = send("PATCH", "/entities/" + id + "/attrs", "application/json", """
                {"speed": {"type": "Property", "value": 90}, "missing": {"type": "Property", "value": 1}}""");
        assertEquals(207, r.statusCode(), r.body());
        e = BrokerHttp.json(r);
        // a partial success names attributes as the client did (compacted with the request's context)
        assertEquals("speed", e.at("/updated/0").asText());
        assertEquals("missing", e.at("/notUpdated/0/attributeName").asText());

        r = send("GET", "/entities/" + id + "?attrs=speed", null, null);
        e = BrokerHttp.json(r);
        assertEquals(90, e.at("/speed/value").asInt());
        assertNull(e.get("brand"));

        r = send("DELETE", "/entities/" + id, null, null);
        assertEquals(204, r.statusCode(), r.body());
        r = send("GET", "/entities/" + id, null, null);
        assertEquals(404, r.statusCode());
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound", BrokerHttp.json(r).get("type").asText());
    }
}
