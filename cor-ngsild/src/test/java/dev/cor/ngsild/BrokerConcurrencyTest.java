package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.conformance.RawHttp;

/**
 * The store under 16 parallel clients: a write to one entity is atomic, so concurrent writes to
 * different attributes of one entity lose nothing (two loops), and of sixteen creates of one id
 * sent at the same moment exactly one succeeds, every round (more loops than cores).
 */
class BrokerConcurrencyTest {
    private static final int CLIENTS = 16;
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

    /** Runs {@code task} on {@code n} threads released at once; its results in thread order. */
    static <T> List<T> inParallel(int n, ThrowingTask<T> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int k = i;
                futures.add(pool.submit(() -> {
                    go.await();
                    return task.run(k);
                }));
            }
            go.countDown();
            List<T> out = new ArrayList<>();
            for (Future<T> f : futures) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    @FunctionalInterface
    interface ThrowingTask<T> {
        T run(int client) throws Exception;
    }

    @Test
    void sixteenClientsUpdatingDifferentAttributesOfOneEntityLoseNoUpdate() throws Exception {
        String id = "urn:ngsi-ld:Counter:c16";
        StringBuilder attrs = new StringBuilder();
        for (int i = 0; i < CLIENTS; i++) {
            attrs.append(", \"a").append(i).append("\": {\"type\": \"Property\", \"value\": 0}");
        }
        assertEquals(201, http.postJson("/entities", "{\"id\": \"" + id + "\", \"type\": \"Counter\"" + attrs + "}").statusCode());
        int rounds = 40;
        List<Integer> failures = inParallel(CLIENTS, client -> {
            int failed = 0;
            for (int v = 1; v <= rounds; v++) {
                // half of the clients use the partial attribute update, half the update of the entity's attributes
                HttpResponse<String> r = client % 2 == 0
                        ? http.send("PATCH", "/entities/" + id + "/attrs/a" + client, "application/json",
                                "{\"type\": \"Property\", \"value\": " + v + "}")
                        : http.send("PATCH", "/entities/" + id + "/attrs", "application/json",
                                "{\"a" + client + "\": {\"type\": \"Property\", \"value\": " + v + "}}");
                if (r.statusCode() != 204) {
                    failed++;
                }
            }
            return failed;
        });
        assertEquals(List.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), failures);
        JsonNode e = BrokerHttp.json(http.get("/entities/" + id + "?options=keyValues"));
        for (int i = 0; i < CLIENTS; i++) {
            assertEquals(rounds, e.get("a" + i).asInt(), "attribute a" + i + " lost an update: " + e);
        }
    }

    @Test
    void sixteenClientsAppendingNewAttributesToOneEntityAllLand() throws Exception {
        String id = "urn:ngsi-ld:Counter:append16";
        assertEquals(201, http.postJson("/entities", "{\"id\": \"" + id + "\", \"type\": \"Counter\"}").statusCode());
        inParallel(CLIENTS, client -> {
            for (int k = 0; k < 10; k++) {
                HttpResponse<String> r = http.postJson("/entities/" + id + "/attrs",
                        "{\"c" + client + "_" + k + "\": " + k + "}");
                assertEquals(204, r.statusCode(), r.body());
            }
            return null;
        });
        JsonNode e = BrokerHttp.json(http.get("/entities/" + id + "?options=keyValues"));
        assertEquals(2 + CLIENTS * 10, e.size(), "every appended attribute is there: " + e);
    }

    /**
     * Sixteen clients create the same id at the same moment, round after round, on a broker with
     * more loops than the machine has cores: exactly one create wins each round. Each client
     * holds its request on a kept-alive connection but for its last byte, and all send that byte
     * when a barrier lets them go - so the creates reach the store within microseconds of each
     * other, on as many loops as there are, some of them preempted mid-request. A create that
     * checks and then writes in two steps answers 201 twice in some round.
     */
    @Test
    void ofSixteenClientsCreatingTheSameIdAtOnceExactlyOneSucceedsEveryRound() throws Exception {
        int rounds = 400;
        int loops = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
        try (TestBroker racing = TestBroker.start(b -> { }, s -> s.loops(loops))) {
            List<RawHttp.Held> connections = new ArrayList<>();
            try {
                for (int i = 0; i < CLIENTS; i++) {
                    connections.add(new RawHttp.Held(racing.port()));
                }
                CyclicBarrier go = new CyclicBarrier(CLIENTS);
                List<List<Integer>> statuses = inParallel(CLIENTS, client -> {
                    List<Integer> mine = new ArrayList<>();
                    for (int round = 0; round < rounds; round++) {
                        connections.get(client).arm("POST /ngsi-ld/v1/entities HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                + "Content-Type: application/json", ("{\"id\": \"urn:ngsi-ld:Race:" + round
                                + "\", \"type\": \"Race\", \"winner\": " + client + "}").getBytes(StandardCharsets.UTF_8));
                        go.await(30, TimeUnit.SECONDS);
                        mine.add(connections.get(client).fire().status());
                    }
                    return mine;
                });
                List<String> wrong = new ArrayList<>();
                for (int round = 0; round < rounds; round++) {
                    List<Integer> answers = new ArrayList<>();
                    for (List<Integer> c : statuses) {
                        answers.add(c.get(round));
                    }
                    if (answers.stream().filter(s -> s == 201).count() != 1
                            || answers.stream().filter(s -> s == 409).count() != CLIENTS - 1) {
                        wrong.add("round " + round + ": " + answers);
                    }
                }
                assertTrue(wrong.isEmpty(), wrong.size() + " of " + rounds + " rounds without exactly one 201 and "
                        + (CLIENTS - 1) + " 409s, first: " + wrong.subList(0, Math.min(3, wrong.size())));
            } finally {
                connections.forEach(RawHttp.Held::close);
            }
            BrokerHttp racingHttp = new BrokerHttp(racing);
            JsonNode e = BrokerHttp.json(racingHttp.get("/entities/urn:ngsi-ld:Race:0?options=keyValues"));
            assertTrue(e.get("winner").asInt() >= 0 && e.get("winner").asInt() < CLIENTS, e::toString);
        }
    }
}
