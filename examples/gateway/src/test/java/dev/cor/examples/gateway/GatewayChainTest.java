package dev.cor.examples.gateway;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Three gateways chained A -> B -> C, the entities on C, asked on A: the seed's three-broker chain. */
class GatewayChainTest {
    private final List<GatewayMain.Gateway> nodes = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @AfterEach
    void stop() {
        for (GatewayMain.Gateway g : nodes) {
            g.stop();
        }
    }

    private GatewayMain.Gateway node(String next, boolean preload, int coroutines) {
        return node(next, preload, coroutines, false);
    }

    private GatewayMain.Gateway node(String next, boolean preload, int coroutines, boolean cor) {
        List<String> args = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0", "--httpLoops", "2",
                "--coroutines", String.valueOf(coroutines), "--workers", "8"));
        if (cor) {
            args.addAll(List.of("--corPort", "0"));
        }
        if (next != null) {
            args.addAll(List.of("--next", next));
        }
        if (preload) {
            args.add("--preload");
        }
        GatewayMain.Gateway g = GatewayMain.Gateway.start(GatewayOptions.parse(args.toArray(String[]::new)));
        nodes.add(g);
        return g;
    }

    private GatewayMain.Gateway chain(int coroutines) {
        GatewayMain.Gateway c = node(null, true, coroutines);
        GatewayMain.Gateway b = node("http://127.0.0.1:" + c.http().port(), false, coroutines);
        return node("http://127.0.0.1:" + b.http().port(), false, coroutines);
    }

    private HttpResponse<byte[]> get(GatewayMain.Gateway g, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.http().port() + path)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    @Test
    void anEntityOnTheLastNodeIsAnsweredThroughTheChainAsACoroutineOnEachHop() throws Exception {
        GatewayMain.Gateway a = chain(1024);
        HttpResponse<byte[]> small = get(a, "/entities/" + BenchEntities.SMALL_ID);
        assertEquals(200, small.statusCode());
        assertArrayEquals(BenchEntities.SMALL, small.body());
        assertEquals("application/json", small.headers().firstValue("content-type").orElseThrow());
        assertArrayEquals(BenchEntities.ATTRS20, get(a, "/entities/" + BenchEntities.ATTRS20_ID).body());
        assertEquals(2, a.http().coroutineCount(), "each forward on A ran as a coroutine");
        assertEquals(0, a.http().hopCount());
    }

    @Test
    void httpInFrontAndCorProtoBetweenTheNodesGivesTheSameEntity() throws Exception {
        for (int coroutines : new int[] {1024, 0}) {
            GatewayMain.Gateway c = node(null, true, coroutines, true);
            GatewayMain.Gateway b = node("cor://127.0.0.1:" + c.corPort(), false, coroutines, true);
            GatewayMain.Gateway a = node("cor://127.0.0.1:" + b.corPort(), false, coroutines, false);
            assertArrayEquals(BenchEntities.ATTRS20, get(a, "/entities/" + BenchEntities.ATTRS20_ID).body());
            assertArrayEquals(BenchEntities.SMALL, get(a, "/entities/" + BenchEntities.SMALL_ID).body());
            assertEquals(coroutines == 0 ? 0 : 2, b.http().coroutineCount(), "B's cor:// requests took the same dispatch");
            assertEquals(coroutines == 0 ? 2 : 0, b.http().hopCount());
        }
    }

    @Test
    void corProtoEndToEndAnswersACorProtoClient() throws Exception {
        GatewayMain.Gateway c = node(null, true, 1024, true);
        GatewayMain.Gateway b = node("cor://127.0.0.1:" + c.corPort(), false, 1024, true);
        GatewayMain.Gateway a = node("cor://127.0.0.1:" + b.corPort(), false, 1024, true);
        try (dev.cor.rest.client.CorRestClient client = dev.cor.rest.client.CorRestClient.builder().build()) {
            dev.cor.rest.client.CorRestClientResponse r = client.send(dev.cor.rest.client.CorRestClientRequest.get(
                    "cor://127.0.0.1:" + a.corPort() + "/entities/" + BenchEntities.SMALL_ID));
            assertEquals(200, r.status());
            assertArrayEquals(BenchEntities.SMALL, r.body());
        }
    }

    @Test
    void withCoroutinesOffEveryForwardTakesTheHopAndTheAnswersAreTheSame() throws Exception {
        GatewayMain.Gateway a = chain(0);
        assertArrayEquals(BenchEntities.SMALL, get(a, "/entities/" + BenchEntities.SMALL_ID).body());
        assertEquals(1, a.http().hopCount());
        assertEquals(0, a.http().coroutineCount());
    }

    @Test
    void anUnknownIdIsA404FromTheEndRelayedAsProblemDetails() throws Exception {
        GatewayMain.Gateway a = chain(1024);
        HttpResponse<byte[]> r = get(a, "/entities/urn:ngsi-ld:Bench:none");
        assertEquals(404, r.statusCode());
        String body = new String(r.body());
        assertTrue(body.contains("ResourceNotFound") && body.contains("urn:ngsi-ld:Bench:none"), body);
    }

    @Test
    void aNextHopThatIsDownIsA502NamingIt() throws Exception {
        GatewayMain.Gateway a = node("http://127.0.0.1:9", false, 1024);
        HttpResponse<byte[]> r = get(a, "/entities/x");
        assertEquals(502, r.statusCode());
        assertTrue(new String(r.body()).contains("127.0.0.1:9"), new String(r.body()));
        assertEquals(404, get(a, "/other").statusCode());
    }

    @Test
    void sixteenParallelCallersEachGetTheWholeEntity() throws Exception {
        GatewayMain.Gateway a = chain(1024);
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Void>> callers = new ArrayList<>();
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int c = 0; c < 16; c++) {
                int caller = c;
                callers.add(CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < 100; i++) {
                        boolean big = (i + caller) % 2 == 0;
                        try {
                            HttpResponse<byte[]> r = get(a, "/entities/" + (big ? BenchEntities.ATTRS20_ID : BenchEntities.SMALL_ID));
                            if (r.statusCode() != 200 || !java.util.Arrays.equals(r.body(), big ? BenchEntities.ATTRS20 : BenchEntities.SMALL)) {
                                wrong.add(caller + "/" + i + ": " + r.statusCode());
                            }
                        } catch (Exception e) {
                            wrong.add(caller + "/" + i + ": " + e);
                        }
                    }
                }, threads));
            }
            CompletableFuture.allOf(callers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        }
        assertTrue(wrong.isEmpty(), wrong.stream().limit(5).toList().toString());
    }

    @Test
    void flagsAreCheckedWithReasons() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> GatewayOptions.parse(new String[] {"--next", "ftp://x"}));
        assertTrue(e.getMessage().contains("--next"), e.getMessage());
    }
}
