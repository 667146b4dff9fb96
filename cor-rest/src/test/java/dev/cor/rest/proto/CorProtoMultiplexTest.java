package dev.cor.rest.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.CorRestJson;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Many requests in flight on one connection (spec § 5.3, § 9.2). */
class CorProtoMultiplexTest {
    private final ProtoFixture fx = new ProtoFixture();

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    void sixteenCoroutinesShareOneConnectionAndEveryAnswerReachesItsRequest() throws Exception { // spec § 5.3, § 9.2
        CorCoLoop serverLoop = fx.loop("mux-server");
        CorCoLoop clientLoop = fx.loop("mux-client");
        AtomicLong arrivals = new AtomicLong();
        AtomicLong latestFinished = new AtomicLong(-1);
        AtomicInteger outOfOrder = new AtomicInteger();
        CorProtoServer server = fx.server(request -> {
            long arrival = arrivals.getAndIncrement();
            // Finish in another order than they came: each sleeps 0-2 ms as a coroutine.
            CorCo.sleep(ThreadLocalRandom.current().nextInt(3));
            if (arrival < latestFinished.getAndAccumulate(arrival, Math::max)) {
                outOfOrder.incrementAndGet();
            }
            ObjectNode echo = CorRestJson.mapper().createObjectNode();
            echo.put("path", request.path());
            echo.set("body", request.json());
            request.respondJson(200, echo);
        }, serverLoop);
        CorProtoClient client = fx.client(b -> b);
        int coroutines = 16;
        int each = 1000;
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Integer>> done = new ArrayList<>();
        for (int c = 0; c < coroutines; c++) {
            int caller = c;
            done.add(LoopTesting.coroutine(clientLoop, () -> {
                int ok = 0;
                for (int n = 0; n < each; n++) {
                    ObjectNode body = CorRestJson.mapper().createObjectNode().put("caller", caller).put("n", n);
                    String path = "/echo/" + caller + "/" + n;
                    CorProtoResponse r = client.send("POST", "127.0.0.1", server.port(), path, null,
                            new CorRestHeaders().add("Content-Type", "application/json"), body, null);
                    JsonNode answer = r.json();
                    if (r.status() != 200 || !path.equals(answer.path("path").asText()) || !body.equals(answer.get("body"))) {
                        wrong.add(path + " got " + r.status() + " " + answer);
                    } else {
                        ok++;
                    }
                }
                return ok;
            }));
        }
        int answered = 0;
        for (CompletableFuture<Integer> f : done) {
            answered += f.get(60, TimeUnit.SECONDS);
        }
        assertTrue(wrong.isEmpty(), "answers that reached the wrong request: " + wrong);
        assertEquals(coroutines * each, answered);
        assertEquals(1, server.connectionsAccepted(), "one multiplexed connection at the server");
        assertEquals(1, client.connectionsOpened());
        assertEquals(coroutines * each, server.requests());
        assertTrue(outOfOrder.get() > 0, "the server finished some answers out of order");
        assertEquals(0, ProtoFixture.liveCoroutines(clientLoop));
    }

    @Test
    void twoNewCoroutinesRacingForTheFirstConnectionShareOne() throws Exception { // spec § 9.2, busy before the connect
        CorCoLoop serverLoop = fx.loop("race-server");
        CorCoLoop clientLoop = fx.loop("race-client");
        CorProtoServer server = fx.server(request -> request.respond(200, "text/plain", request.path().getBytes()), serverLoop);
        for (int round = 0; round < 5; round++) {
            CorProtoClient client = fx.client(b -> b);
            CompletableFuture<List<String>> both = new CompletableFuture<>();
            List<String> answers = new ArrayList<>();
            // Both start in the same loop task: the second runs while the first waits in its connect or HELLO.
            clientLoop.execute(() -> {
                for (String path : List.of("/first", "/second")) {
                    CorCo.start(() -> {
                        CorProtoResponse r = client.send("GET", "127.0.0.1", server.port(), path, null, null, null, null);
                        answers.add(new String(r.body()));
                        return null;
                    }, co -> {
                        if (co.error() != null) {
                            both.completeExceptionally(co.error());
                        } else if (answers.size() == 2) {
                            both.complete(answers);
                        }
                    });
                }
            });
            List<String> got = both.get(10, TimeUnit.SECONDS);
            assertEquals(List.of("/first", "/second"), got.stream().sorted().toList());
            assertEquals(1, client.connectionsOpened(), "round " + round);
            assertEquals(1, client.openWaits(), "the second waited for the first's connection, round " + round);
        }
        assertEquals(5, server.connectionsAccepted(), "one connection per client");
        assertEquals(0, ProtoFixture.liveCoroutines(clientLoop));
    }

    @Test
    void aClientWithMoreCallersThanStreamsQueuesThemForAFreeStream() throws Exception { // spec § 5.3
        CorCoLoop serverLoop = fx.loop("streams-server");
        CorCoLoop clientLoop = fx.loop("streams-client");
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CorProtoServer server = fx.server(request -> {
            most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            CorCo.sleep(5);
            inFlight.decrementAndGet();
            request.respond(200, null, null);
        }, b -> b.maxStreams(4), serverLoop);
        CorProtoClient client = fx.client(b -> b);
        List<CompletableFuture<Integer>> all = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            all.add(LoopTesting.coroutine(clientLoop,
                    () -> client.send("GET", "127.0.0.1", server.port(), "/s", null, null, null, null).status()));
        }
        for (CompletableFuture<Integer> f : all) {
            assertEquals(200, f.get(10, TimeUnit.SECONDS));
        }
        assertTrue(most.get() <= 4, "never more than the agreed streams in flight: " + most.get());
        assertEquals(1, server.connectionsAccepted());
    }

    @Test
    void aQueuedRequestPastItsDeadlineIsNotSentAndTheOnesBehindItStillGo() throws Exception { // spec § 5.3
        CorCoLoop serverLoop = fx.loop("late-server");
        CorCoLoop clientLoop = fx.loop("late-client");
        CorProtoServer server = fx.server(request -> {
            CorCo.sleep(request.path().equals("/hold") ? 400 : 0);
            request.respond(200, "text/plain", request.path().getBytes());
        }, b -> b.maxStreams(1), serverLoop);
        CorProtoClient client = fx.client(b -> b);
        CompletableFuture<Integer> holder = LoopTesting.coroutine(clientLoop,
                () -> client.send("GET", "127.0.0.1", server.port(), "/hold", null, null, null, null).status());
        while (server.requests() < 1) {
            Thread.sleep(2);
        }
        // Queued behind the one stream: the first gives up before it frees, the second waits for it.
        CompletableFuture<Integer> late = LoopTesting.coroutine(clientLoop,
                () -> client.send("GET", "127.0.0.1", server.port(), "/late", null, null, null, null, 100).status());
        CompletableFuture<Integer> patient = LoopTesting.coroutine(clientLoop,
                () -> client.send("GET", "127.0.0.1", server.port(), "/patient", null, null, null, null, 5000).status());
        java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class, () -> late.get(5, TimeUnit.SECONDS));
        CorProtoException timeout = org.junit.jupiter.api.Assertions.assertInstanceOf(CorProtoTimeoutException.class, e.getCause());
        assertTrue(timeout.retryable(), "never sent: safe to retry");
        assertEquals(200, holder.get(5, TimeUnit.SECONDS));
        assertEquals(200, patient.get(5, TimeUnit.SECONDS));
        assertEquals(2, server.requests(), "the late one was never sent");
        assertEquals(0, ProtoFixture.liveCoroutines(clientLoop));
    }

    @Test
    void theRequestsAndAnswersOfOneLoopRoundGoOutInOneWriteEach() throws Exception {
        CorCoLoop serverLoop = fx.loop("batch-server");
        CorCoLoop clientLoop = fx.loop("batch-client");
        List<CorCo> held = new ArrayList<>(); // server loop only
        AtomicInteger arrived = new AtomicInteger();
        CorProtoServer server = fx.server(request -> {
            if (request.path().startsWith("/held/")) {
                held.add(CorCo.current());
                arrived.incrementAndGet();
                CorCo.park(10_000);
            }
            request.respond(200, "text/plain", request.path().getBytes());
        }, serverLoop);
        CorProtoClient client = fx.client(b -> b);
        assertEquals(200, (int) LoopTesting.inCoroutine(clientLoop,
                () -> client.send("GET", "127.0.0.1", server.port(), "/open", null, null, null, null).status()));
        // Counters read on the loop that writes: its round, and so its count, is over by then.
        long clientWrites = LoopTesting.onLoop(clientLoop, client::writes);
        int n = 16;
        // Sixteen coroutines that each send in the same round of the client's loop...
        List<CompletableFuture<String>> answers = LoopTesting.onLoop(clientLoop, () -> {
            List<CompletableFuture<String>> all = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String path = "/held/" + i;
                CompletableFuture<String> f = new CompletableFuture<>();
                all.add(f);
                CorCo.start(() -> new String(client.send("GET", "127.0.0.1", server.port(), path, null, null, null, null).body()),
                        co -> {
                            if (co.error() != null) {
                                f.completeExceptionally(co.error());
                            } else {
                                f.complete((String) co.result());
                            }
                        });
            }
            return all;
        });
        while (arrived.get() < n) {
            Thread.sleep(2);
        }
        assertEquals(1, LoopTesting.onLoop(clientLoop, client::writes) - clientWrites, "the round's 16 requests in one write");
        // ...and sixteen answers finished in the same round of the server's loop.
        long serverWrites = LoopTesting.onLoop(serverLoop, server::writes);
        serverLoop.execute(() -> held.forEach(CorCo::wake));
        for (int i = 0; i < n; i++) {
            assertEquals("/held/" + i, answers.get(i).get(10, TimeUnit.SECONDS));
        }
        assertEquals(1, LoopTesting.onLoop(serverLoop, server::writes) - serverWrites, "the round's 16 answers in one write");
        assertEquals(0, ProtoFixture.liveCoroutines(clientLoop));
    }
}
