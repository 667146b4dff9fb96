package dev.cor.rest.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ConcurrentLinkedQueue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import dev.cor.rest.CorRestHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Names are sent once per connection, and the body arrives as a tree (spec § 6.1, § 6.4). */
class CorProtoNamesTest {
    private final ProtoFixture fx = new ProtoFixture();

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    void theSecondRequestWithTheSameAttributeNamesIsMuchSmallerOnTheWire() throws Exception { // spec § 6.4
        CorCoLoop serverLoop = fx.loop("names-server");
        CorCoLoop clientLoop = fx.loop("names-client");
        ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();
        CorProtoServer server = fx.server(request -> {
            if (request.isJson()) {
                // The tree, as it travelled: no text to parse, the @context one look-up away.
                seen.add(request.json().path("@context").asText() + " " + request.body().length + " "
                        + request.json().path("https://uri.etsi.org/ngsi-ld/default-context/attr07").path("value").asInt());
            }
            request.respond(204, null, null);
        }, serverLoop);
        CorProtoClient client = fx.client(b -> b);
        CorRestHeaders headers = new CorRestHeaders().add("Content-Type", "application/ld+json");
        long[] sizes = LoopTesting.inCoroutine(clientLoop, () -> {
            client.send("GET", "127.0.0.1", server.port(), "/warm", null, null, null, null);
            long[] s = new long[3];
            for (int i = 0; i < 3; i++) {
                long before = client.bytesSent();
                client.send("POST", "127.0.0.1", server.port(), "/ngsi-ld/v1/entities", null, headers, entity(i), null);
                s[i] = client.bytesSent() - before;
            }
            return s;
        });
        assertTrue(sizes[1] * 2 < sizes[0], "first " + sizes[0] + " bytes, then " + sizes[1]);
        assertEquals(sizes[1], sizes[2], "the steady state");
        assertEquals(java.util.List.of("https://example.org/ctx.jsonld 0 7", "https://example.org/ctx.jsonld 0 107",
                "https://example.org/ctx.jsonld 0 207"), java.util.List.copyOf(seen));
    }

    static ObjectNode entity(int n) {
        ObjectNode e = CorProtoCodecTest.entity(20, n);
        e.put("@context", "https://example.org/ctx.jsonld");
        return e;
    }
}
