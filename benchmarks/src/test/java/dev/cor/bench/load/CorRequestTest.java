package dev.cor.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cor.http.CorHttpServer;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The generator against an in-process cor-http server: its counts, and where open-loop latency starts. */
class CorRequestTest {
    private static final byte[] HELLO = "{\"hello\":\"world\"}".getBytes(StandardCharsets.UTF_8);

    private CorHttpServer server;
    private final ByteArrayOutputStream progress = new ByteArrayOutputStream();

    /** Answers /hello inline; the request numbered {@code stallOn} first blocks the (only) loop for 300 ms. */
    private static final class StallingApp implements CorRestApplication {
        final AtomicInteger requests = new AtomicInteger();
        final int stallOn;

        StallingApp(int stallOn) {
            this.stallOn = stallOn;
        }

        @Override
        public boolean canWait(CorRest request) {
            return false;
        }

        @Override
        public void handle(CorRest request) throws Exception {
            if (requests.incrementAndGet() == stallOn) {
                Thread.sleep(300); // on the loop: every connection stalls, as a GC pause or a slow disk would
            }
            request.respond(200, "application/json", HELLO);
        }
    }

    private String start(StallingApp app) {
        server = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).workerThreads(1).application(app).build()
                .start();
        return "http://127.0.0.1:" + server.port() + "/hello";
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(1000);
        }
    }

    private LoadResult measure(LoadOptions options) throws Exception {
        return CorRequest.measure(options, new PrintStream(progress, true, StandardCharsets.UTF_8));
    }

    @Test
    void closedLoopCountsEveryAnswerTheServerGaveOnTheSocketsAsked() throws Exception {
        StallingApp app = new StallingApp(-1);
        LoadResult r = measure(LoadOptions.builder(start(app)).connections(4).sockets(2).warmup(0).duration(2).build());

        assertEquals(0, r.errors(), r.text());
        assertEquals(0, r.notOk(), r.text());
        assertEquals(0, r.unfinished(), r.text());
        assertTrue(r.requests() > 100, r.text());
        // warmup 0: every request the server saw was sent in the measured time and counted
        assertEquals(app.requests.get(), r.requests(), r.text());
        assertEquals(2, server.connectionsAccepted(), "4 callers on 2 sockets");
        assertEquals(0, r.exitCode());
        assertTrue(r.p50Us() > 0 && r.p50Us() <= r.p99Us() && r.p99Us() <= r.maxUs(), r.text());
        assertTrue(progress.toString(StandardCharsets.UTF_8).contains("t=1s req/s="), progress.toString());
    }

    @Test
    void openLoopChargesAStallToEveryRequestThatFellDueDuringIt() throws Exception {
        // 200 req/s for 2 s: 400 requests due 5 ms apart; the 150th (~0.75 s in) stalls the server
        // 300 ms, during which some 60 more fall due. Measured from their due time, the top few
        // percent wait 150-300 ms; measured from their send (once the stall is over), they would not.
        StallingApp app = new StallingApp(150);
        LoadResult r = measure(LoadOptions.builder(start(app)).connections(2).sockets(1).rate(200).warmup(0)
                .duration(2).build());

        assertEquals(0, r.errors(), r.text());
        assertEquals(400, r.requests() + r.unfinished(), r.text());
        assertEquals(400, app.requests.get(), r.text());
        assertTrue(r.maxUs() >= 290_000 && r.maxUs() < 1_000_000, "the stalled request waited ~300 ms: " + r.text());
        assertTrue(r.p99Us() >= 200_000, "p99 must reflect the requests due during the stall: " + r.text());
        assertTrue(r.p90Us() >= 10_000, "~15% of requests fell due during the stall: " + r.text());
        assertTrue(r.p50Us() < 50_000, "most requests never met the stall: " + r.text());
        assertTrue(r.sendLag() != null && r.sendLag().p50Us() < r.p99Us(), r.text());
    }

    @Test
    void aServerThatIsNotThereIsAnIoErrorNotAHang() {
        LoadOptions o = LoadOptions.builder("http://127.0.0.1:1/x").warmup(0).duration(1).timeoutMs(2000).build();
        assertThrows(java.io.IOException.class, () -> measure(o));
    }

    @Test
    void aCorTargetPutsEveryCallerOnOneMultiplexedConnectionAndCountsEachAnswer() throws Exception {
        StallingApp app = new StallingApp(-1);
        start(app);
        dev.cor.rest.proto.CorProtoServer cor = dev.cor.rest.proto.CorProtoServer.builder().loops(server.loops())
                .dispatcher(server.dispatcher()).build().start();
        try {
            LoadResult r = measure(LoadOptions.builder("cor://127.0.0.1:" + cor.port() + "/hello").connections(8).sockets(1)
                    .warmup(0).duration(2).build());
            assertEquals(0, r.errors(), r.text());
            assertEquals(0, r.unfinished(), r.text());
            assertTrue(r.requests() > 100, r.text());
            assertEquals(app.requests.get() - 1, r.requests(), "every answer counted but the probe that opened the connection: " + r.text());
            assertEquals(1, cor.connectionsAccepted(), "8 callers on one multiplexed connection");
        } finally {
            cor.stop();
        }
    }

    @Test
    void flagsAreCheckedWithMessagesThatNameTheFlag() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LoadOptions.parse(new String[] {"--url", "http://127.0.0.1:1/", "--connections", "2", "--sockets", "3"}));
        assertTrue(e.getMessage().contains("--sockets"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> LoadOptions.parse(new String[] {"--connections", "2"}));
        assertTrue(e.getMessage().contains("--url is required"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> LoadOptions.parse(new String[] {"--url", "http://127.0.0.1:1/", "--header", "Bad Name: x"}));
        assertTrue(e.getMessage().contains("header"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> LoadOptions.parse(new String[] {"--url", "http://127.0.0.1:1/", "--rate", "0"}));
        assertTrue(e.getMessage().contains("--rate"), e.getMessage());
        LoadOptions ok = LoadOptions.parse(new String[] {"--url", "http://127.0.0.1:1/a?b=c", "--connections", "8",
                "--rate=100.5", "--header", "Accept: application/json", "--method", "HEAD"});
        assertEquals(8, ok.sockets());
        assertEquals("/a?b=c", ok.url().requestTarget());
        assertTrue(ok.openLoop());
    }

    @Test
    void aBodyWithSeqSendsEachRequestANumberOfItsOwn() throws Exception {
        java.util.Set<String> bodies = java.util.concurrent.ConcurrentHashMap.newKeySet();
        AtomicInteger seen = new AtomicInteger();
        CorRestApplication app = new CorRestApplication() {
            @Override
            public boolean canWait(CorRest request) {
                return false;
            }

            @Override
            public void handle(CorRest request) {
                seen.incrementAndGet();
                bodies.add(new String(request.body(), StandardCharsets.UTF_8));
                request.respond(201, null, null);
            }
        };
        server = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).workerThreads(1).application(app).build().start();
        LoadResult r = measure(LoadOptions.builder("http://127.0.0.1:" + server.port() + "/entities").connections(4)
                .sockets(4).warmup(0).duration(1).method("POST")
                .body("{\"id\": \"urn:ngsi-ld:T:{seq}\"}".getBytes(StandardCharsets.UTF_8)).build());
        assertEquals(0, r.errors(), r.text());
        assertTrue(seen.get() > 10, r.text());
        assertEquals(seen.get(), bodies.size(), "every request carried a number no other one did");
        assertTrue(bodies.contains("{\"id\": \"urn:ngsi-ld:T:000000000001\"}"), "twelve digits, from 1: " + bodies.iterator().next());
    }

    @Test
    void everySeqOfOneBodyTakesThatRequestsNumber() throws Exception {
        java.util.Set<String> bodies = java.util.concurrent.ConcurrentHashMap.newKeySet();
        server = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).workerThreads(1).application(new CorRestApplication() {
            @Override
            public boolean canWait(CorRest request) {
                return false;
            }

            @Override
            public void handle(CorRest request) {
                bodies.add(new String(request.body(), StandardCharsets.UTF_8));
                request.respond(201, null, null);
            }
        }).build().start();
        LoadResult r = measure(LoadOptions.builder("http://127.0.0.1:" + server.port() + "/batch").connections(2)
                .warmup(0).duration(5).requests(3).method("POST").body("[\"{seq}-01\", \"{seq}-02\"]".getBytes(StandardCharsets.UTF_8))
                .build());
        assertEquals(3, r.requests(), r.text());
        assertEquals(java.util.Set.of("[\"000000000001-01\", \"000000000001-02\"]", "[\"000000000002-01\", \"000000000002-02\"]",
                "[\"000000000003-01\", \"000000000003-02\"]"), bodies);
    }

    @Test
    void aUrlWithSocketSendsEachConnectionsRequestsToAPathOfItsOwn() throws Exception {
        java.util.Map<String, AtomicInteger> paths = new java.util.concurrent.ConcurrentHashMap<>();
        server = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).workerThreads(1).application(new CorRestApplication() {
            @Override
            public boolean canWait(CorRest request) {
                return false;
            }

            @Override
            public void handle(CorRest request) {
                paths.computeIfAbsent(request.path(), p -> new AtomicInteger()).incrementAndGet();
                request.respond(204, null, null);
            }
        }).build().start();
        LoadOptions options = LoadOptions.builder("http://127.0.0.1:" + server.port() + "/entities/urn:ngsi-ld:T:{socket}/attrs/a")
                .connections(6).sockets(3).warmup(0).duration(5).requests(60).method("PATCH").build();
        LoadResult r = measure(options);
        assertEquals(60, r.requests(), r.text());
        assertEquals(java.util.Set.of("/entities/urn:ngsi-ld:T:0/attrs/a", "/entities/urn:ngsi-ld:T:1/attrs/a",
                "/entities/urn:ngsi-ld:T:2/attrs/a"), paths.keySet(), "one path a socket");
        assertEquals(60, paths.values().stream().mapToInt(AtomicInteger::get).sum());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Targets.create(LoadOptions.parse(new String[] {"--url", "cor://127.0.0.1:1/e/{socket}"})));
        assertTrue(e.getMessage().contains("{socket}"), e.getMessage());
    }

    @Test
    void requestsEndsTheRunOnceThatManyAreAnsweredNotAtTheEndOfItsDuration() throws Exception {
        StallingApp app = new StallingApp(-1);
        long t0 = System.nanoTime();
        LoadResult r = measure(LoadOptions.builder(start(app)).connections(4).warmup(0).duration(60).requests(500).build());
        long tookMs = (System.nanoTime() - t0) / 1_000_000;

        assertEquals(500, r.requests(), r.text());
        assertEquals(500, app.requests.get(), "not one request past the limit");
        assertEquals(0, r.unfinished(), r.text());
        assertTrue(tookMs < 30_000, "ended with its last answer, not after --duration 60: " + tookMs + " ms");
        assertTrue(r.requestsPerSecond() > 500 / 30.0, "req/s over the time the 500 took, not over 60 s: " + r.text());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LoadOptions.parse(new String[] {"--url", "http://127.0.0.1:1/", "--rate", "10", "--requests", "5"}));
        assertTrue(e.getMessage().contains("--requests"), e.getMessage());
    }
}
