package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The broker's "can this wait?": a request whose context needs no download runs inline on its
 * loop - no coroutine, no hop - however it ends.
 */
class BrokerDispatchTest {
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

    @Test
    void requestsWithACachedContextRunInlineWhateverTheirOutcome() throws Exception {
        long inline = broker.server().inlineCount();
        long coroutines = broker.server().coroutineCount();
        long hops = broker.server().hopCount();
        assertEquals(201, http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:D:1\", \"type\": \"D\", \"v\": 1}").statusCode());
        assertEquals(200, http.get("/entities/urn:ngsi-ld:D:1").statusCode());
        assertEquals(200, http.get("/entities/urn:ngsi-ld:D:1", "Link",
                "<https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.6.jsonld>; rel=\"http://www.w3.org/ns/json-ld#context\"").statusCode());
        assertEquals(404, http.get("/entities/urn:ngsi-ld:D:none").statusCode());
        assertEquals(400, http.postJson("/entities", "{\"id\": \"not a uri\", \"type\": \"D\"}").statusCode());
        assertEquals(204, http.send("DELETE", "/entities/urn:ngsi-ld:D:1", null, null).statusCode());
        assertEquals(6, broker.server().inlineCount() - inline, "every one ran inline");
        assertEquals(0, broker.server().coroutineCount() - coroutines, "no coroutine was started");
        assertEquals(0, broker.server().hopCount() - hops, "nothing took the hop");
    }
}
