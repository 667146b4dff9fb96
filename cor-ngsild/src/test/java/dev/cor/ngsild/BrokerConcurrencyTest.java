package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The store under 16 parallel clients on two loops: a write to one entity is atomic, so
 * concurrent writes to different attributes of one entity lose nothing, and of sixteen creates
 * of one id exactly one succeeds.
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

    @Test
    void ofSixteenClientsCreatingTheSameIdExactlyOneSucceeds() throws Exception {
        String id = "urn:ngsi-ld:Race:one";
        List<Integer> statuses = inParallel(CLIENTS, client -> http.postJson("/entities",
                "{\"id\": \"" + id + "\", \"type\": \"Race\", \"winner\": " + client + "}").statusCode());
        assertEquals(1, statuses.stream().filter(s -> s == 201).count(), statuses.toString());
        assertEquals(CLIENTS - 1, statuses.stream().filter(s -> s == 409).count(), statuses.toString());
        JsonNode e = BrokerHttp.json(http.get("/entities/" + id + "?options=keyValues"));
        assertTrue(e.get("winner").asInt() >= 0 && e.get("winner").asInt() < CLIENTS);
    }
}
