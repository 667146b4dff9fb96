package dev.cor.rest.proto;

import dev.cor.base.LoopTesting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicReference;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.rest.CorRest;
import dev.cor.rest.client.CorRestCall;
import dev.cor.rest.client.CorRestClient;
import dev.cor.rest.client.CorRestClientException;
import dev.cor.rest.client.CorRestClientRequest;
import dev.cor.rest.client.CorRestClientResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A cor:// URL works wherever the HTTP client takes an http:// one (spec § 9.3). */
class CorRestClientCorUrlTest {
    private final ProtoFixture fx = new ProtoFixture();
    private final CorRestClient client = CorRestClient.builder().responseTimeoutMs(3000).build();

    @AfterEach
    void tearDown() throws Exception {
        client.close();
        fx.close();
    }

    @Test
    void aCorUrlIsSentOverCorProtoFromACoroutineAndFromAPlainThread() throws Exception {
        CorProtoServer server = fx.server(r -> r.respond(200, "text/plain",
                (r.method() + " " + r.path() + "?" + r.query()).getBytes(StandardCharsets.UTF_8)), fx.loop("cor-url-server"));
        String url = "cor://127.0.0.1:" + server.port() + "/entities/x?attrs=a";
        CorCoLoop loop = fx.loop("cor-url-client");
        String viaCoroutine = LoopTesting.inCoroutine(loop, () -> client.send(CorRestClientRequest.get(url)).bodyText());
        assertEquals("GET /entities/x?attrs=a", viaCoroutine);
        CorRestClientResponse blocking = client.send(CorRestClientRequest.get(url));
        assertEquals(200, blocking.status());
        assertEquals("GET /entities/x?attrs=a", blocking.bodyText());
        assertEquals("text/plain", blocking.header("Content-Type"));
    }

    @Test
    void aJsonBodyTravelsAsATreeWithNoTextToParse() throws Exception {
        AtomicReference<String> seen = new AtomicReference<>();
        CorProtoServer server = fx.server(r -> {
            seen.set("bytes=" + r.body().length + " tree=" + r.json().get("@context").asText());
            r.respond(201, null, null);
        }, fx.loop("cor-tree-server"));
        CorRestClientResponse r = client.send(CorRestClientRequest.post("cor://127.0.0.1:" + server.port() + "/entities",
                "application/ld+json", "{\"id\":\"urn:x\",\"@context\":\"https://example.org/ctx.jsonld\"}".getBytes()));
        assertEquals(201, r.status());
        assertEquals("bytes=0 tree=https://example.org/ctx.jsonld", seen.get());
    }

    @Test
    void anHttpAndACorRequestFanOutTogether() throws Exception {
        CorProtoServer slow = fx.server(r -> {
            CorCo.sleep(300);
            r.respond(200, "text/plain", "cor".getBytes());
        }, fx.loop("cor-slow"));
        CorCoLoop loop = fx.loop("fan-client");
        long ms = LoopTesting.inCoroutine(loop, () -> {
            long t0 = System.nanoTime();
            CorRestCall a = client.start(CorRestClientRequest.get("cor://127.0.0.1:" + slow.port() + "/a"));
            CorRestCall b = client.start(CorRestClientRequest.get("cor://127.0.0.1:" + slow.port() + "/b"));
            CorRestClient.awaitAll(a, b);
            assertEquals("cor", a.await().bodyText());
            assertEquals("cor", b.await().bodyText());
            return (System.nanoTime() - t0) / 1_000_000;
        });
        assertTrue(ms < 550, "two 300 ms cor:// requests awaited together took " + ms + " ms");
    }

    @Test
    void aCorPeerNobodyListensOnIsRefusedAndATimeoutIsA504() throws Exception {
        CorRestClientException refused = assertThrows(CorRestClientException.class,
                () -> client.send(CorRestClientRequest.get("cor://127.0.0.1:1/x")));
        assertEquals(CorRestClientException.Kind.REFUSED, refused.kind());
        assertEquals(502, refused.gatewayStatus());
        CorProtoServer stuck = fx.server(r -> {
            CorCo.sleep(10_000);
            r.respond(200, null, null);
        }, fx.loop("cor-stuck"));
        CorRestClientException late = assertThrows(CorRestClientException.class,
                () -> client.send(CorRestClientRequest.get("cor://127.0.0.1:" + stuck.port() + "/x")));
        assertEquals(CorRestClientException.Kind.TIMEOUT, late.kind());
        assertEquals(504, late.gatewayStatus());
        CorRestClientException noPort = assertThrows(CorRestClientException.class,
                () -> client.send(CorRestClientRequest.get("cor://127.0.0.1/x")));
        assertTrue(noPort.getMessage().contains("needs a port"), noPort.getMessage());
    }
}
