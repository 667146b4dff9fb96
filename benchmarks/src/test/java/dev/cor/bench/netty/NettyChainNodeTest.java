package dev.cor.bench.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.cor.examples.gateway.BenchEntities;
import dev.cor.bench.cli.Endpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Three chain nodes A -> B -> C in process: forwarding, relaying, and the errors. */
class NettyChainNodeTest {
    private final List<NettyPeer> peers = new ArrayList<>();
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @AfterEach
    void closeAll() {
        peers.forEach(NettyPeer::close);
        client.shutdownNow();
    }

    private NettyPeer node(NettyPeer next, boolean preload) throws Exception {
        Endpoint to = next == null ? null : Endpoint.parse("http://127.0.0.1:" + next.port(), "next");
        NettyPeer p = NettyChainNode.start("127.0.0.1", 0, 1, to, 2_000, preload);
        peers.add(p);
        return p;
    }

    private HttpResponse<String> get(NettyPeer p, String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + p.port() + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theFirstNodeRelaysTheLastNodesEntityByteForByte() throws Exception {
        NettyPeer c = node(null, true);
        NettyPeer b = node(c, false);
        NettyPeer a = node(b, false);
        for (int i = 0; i < 3; i++) { // again on the pooled connections
            HttpResponse<String> small = get(a, "/entities/" + BenchEntities.SMALL_ID);
            assertEquals(200, small.statusCode());
            assertEquals("application/json", small.headers().firstValue("content-type").orElse(""));
            assertEquals(BenchEntities.SMALL_JSON, small.body());
        }
        assertEquals(BenchEntities.ATTRS20_JSON, get(a, "/entities/urn%3Angsi-ld%3ABench%3Aattrs20").body());
        HttpResponse<String> missing = get(a, "/entities/urn:ngsi-ld:Bench:none");
        assertEquals(404, missing.statusCode(), "C's 404, relayed");
        assertTrue(missing.body().contains("not found"), missing.body());
        assertEquals(404, get(a, "/elsewhere").statusCode());
    }

    @Test
    void aNextHopThatIsGoneIsA502() throws Exception {
        NettyPeer c = node(null, true);
        NettyPeer b = node(c, false);
        assertEquals(200, get(b, "/entities/" + BenchEntities.SMALL_ID).statusCode());
        c.close();
        HttpResponse<String> r = get(b, "/entities/" + BenchEntities.SMALL_ID);
        assertEquals(502, r.statusCode(), r.body());
    }

    @Test
    void theEntitiesAreWellFormedAndHaveTwentyAttributes() {
        assertTrue(BenchEntities.ATTRS20_JSON.contains("\"attr20\":{\"type\":\"Property\",\"value\":20.5}"));
        assertEquals(20, BenchEntities.ATTRS20_JSON.split("\"type\":\"Property\"", -1).length - 1);
        assertTrue(BenchEntities.SMALL_JSON.startsWith("{\"id\":\"" + BenchEntities.SMALL_ID + "\""));
    }
}
