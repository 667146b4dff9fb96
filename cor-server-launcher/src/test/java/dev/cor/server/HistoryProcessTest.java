package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The history kept by the launcher's default store, {@code kill -9}ed in the middle of 16 writers
 * (each patching entities that others patch too, now and then adding instances through the
 * temporal API), with snapshots that truncate the journal under the load: after each restart every
 * acknowledged write is an instance of the history, once, each writer's in the order it made them,
 * and each history ends with what the entity shows now. {@code -Dcor.kill.seed=N} repeats a run.
 */
@Tag("process")
class HistoryProcessTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int WRITERS = 16;
    private static final int ENTITIES = 4;

    /** One writer's values: acknowledged ones, and the one in flight when the server died. */
    private static final class Writer {
        final int w;
        int counter;
        final List<Integer> acked = new ArrayList<>();
        Integer inFlight;

        Writer(int w) {
            this.w = w;
        }
    }

    private static String entity(int k) {
        return "urn:ngsi-ld:H:" + k;
    }

    private static HttpResponse<String> send(ServerProcess s, String method, String path, String body) throws Exception {
        return s.send(method, "/ngsi-ld/v1" + path, body);
    }

    private static void write(ServerProcess s, Writer x, Random rnd, AtomicBoolean stop, Set<String> surprises) {
        while (!stop.get()) {
            int v = x.w * 1_000_000 + ++x.counter;
            String id = entity(rnd.nextInt(ENTITIES));
            boolean temporal = rnd.nextInt(5) == 0;
            x.inFlight = v;
            HttpResponse<String> r;
            try {
                r = temporal
                        ? send(s, "POST", "/temporal/entities/" + id + "/attrs", "{\"n\": {\"type\": \"Property\", \"value\": " + v + "}}")
                        : send(s, "PATCH", "/entities/" + id + "/attrs/n", "{\"value\": " + v + "}");
            } catch (Exception gone) {
                return; // killed: this one stays in flight
            }
            if (r.statusCode() == 204) {
                x.acked.add(v);
                x.inFlight = null;
            } else {
                surprises.add((temporal ? "POST " : "PATCH ") + id + " answered " + r.statusCode() + ": " + r.body());
                return;
            }
        }
    }

    /**
     * Every instance of {@code n} of every entity, in the order recorded (by createdAt); checks that
     * each entity's current value is in its history - or was in flight when the server died: a
     * write's state and its history are two journal records, and a kill between the two keeps
     * the first of an unacknowledged write (doc/storage.md, "History").
     */
    private static Map<Integer, Integer> history(ServerProcess s, long seed, Set<Integer> inFlight) throws Exception {
        Map<Integer, Integer> seen = new HashMap<>(); // value -> how many times
        for (int k = 0; k < ENTITIES; k++) {
            HttpResponse<String> r = send(s, "GET", "/temporal/entities/" + entity(k) + "?attrs=n&timeproperty=createdAt", null);
            assertEquals(200, r.statusCode(), r.body());
            JsonNode n = JSON.readTree(r.body()).path("n");
            int[] lastOf = new int[WRITERS];
            int last = Integer.MIN_VALUE;
            for (JsonNode i : n) {
                int v = i.path("value").asInt();
                seen.merge(v, 1, Integer::sum);
                if (v >= 0) {
                    int w = v / 1_000_000;
                    assertTrue(v % 1_000_000 > lastOf[w], "seed " + seed + ": writer " + w + "'s instances in their order: " + n);
                    lastOf[w] = v % 1_000_000;
                }
                last = v;
            }
            HttpResponse<String> now = send(s, "GET", "/entities/" + entity(k) + "?options=keyValues", null);
            int current = JSON.readTree(now.body()).path("n").asInt();
            // a temporal write adds to the history, not to the current state: the last current-state write is the state
            assertTrue(seen.containsKey(current) || inFlight.contains(current), "seed " + seed + ": the current value "
                    + current + " is in the history, or was in flight");
            assertTrue(last != Integer.MIN_VALUE, "a history for " + entity(k));
        }
        return seen;
    }

    @Test
    void killedUnderSixteenWritersTheHistoryHoldsEveryAcknowledgedWriteOnceInOrder(@TempDir Path work) throws Exception {
        long seed = Long.getLong("cor.kill.seed", System.nanoTime());
        System.out.println("HistoryProcessTest: seed " + seed + " (-Dcor.kill.seed=" + seed + " repeats it)");
        Random rnd = new Random(seed);
        List<Writer> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            writers.add(new Writer(w));
        }
        Set<String> surprises = ConcurrentHashMap.newKeySet();
        int rounds = 3;
        for (int round = 1; round <= rounds + 1; round++) {
            try (ServerProcess s = ServerProcess.start(work, "--httpLoops", "2", "--snapshotEvery", "64k")) {
                if (round == 1) {
                    for (int k = 0; k < ENTITIES; k++) {
                        assertEquals(201, send(s, "POST", "/entities", "{\"id\": \"" + entity(k)
                                + "\", \"type\": \"H\", \"n\": {\"type\": \"Property\", \"value\": -1}}").statusCode());
                    }
                } else {
                    Set<Integer> inFlight = new java.util.HashSet<>();
                    writers.stream().filter(x -> x.inFlight != null).forEach(x -> inFlight.add(x.inFlight));
                    Map<Integer, Integer> seen = history(s, seed, inFlight);
                    for (Writer x : writers) {
                        for (int v : x.acked) {
                            assertEquals(1, seen.getOrDefault(v, 0), "seed " + seed + ", after kill " + (round - 1)
                                    + ": acknowledged " + v + " is in the history once");
                        }
                        if (x.inFlight != null) {
                            assertTrue(seen.getOrDefault(x.inFlight, 0) <= 1, "in flight, at most once");
                            if (seen.containsKey(x.inFlight)) {
                                x.acked.add(x.inFlight); // it was kept: from now on it must stay
                            }
                            x.inFlight = null;
                        }
                    }
                    int total = writers.stream().mapToInt(x -> x.acked.size()).sum();
                    int recorded = seen.entrySet().stream().filter(e -> e.getKey() >= 0).mapToInt(Map.Entry::getValue).sum();
                    assertEquals(total, recorded, "seed " + seed + ": nothing but the acknowledged writes (and those kept in flight)");
                    if (round == rounds + 1) {
                        break;
                    }
                }
                AtomicBoolean stop = new AtomicBoolean();
                List<Thread> threads = new ArrayList<>();
                for (Writer x : writers) {
                    Random own = new Random(rnd.nextLong());
                    threads.add(Thread.ofPlatform().name("writer-" + x.w).start(() -> write(s, x, own, stop, surprises)));
                }
                long killAfter = 500 + rnd.nextInt(1_500);
                Thread.sleep(killAfter);
                s.process.destroyForcibly(); // SIGKILL
                assertTrue(s.process.waitFor(10, TimeUnit.SECONDS));
                for (Thread t : threads) {
                    t.join(30_000);
                    assertFalse(t.isAlive());
                }
                assertEquals(Set.of(), surprises, "seed " + seed);
                System.out.println("HistoryProcessTest: round " + round + ": killed after " + killAfter + " ms, "
                        + writers.stream().mapToInt(x -> x.acked.size()).sum() + " acknowledged writes in all");
            }
        }
        ServerProcess check = ServerProcess.runToEnd(work, "--check-data", "cor-data");
        assertEquals(0, check.process.exitValue(), check.toString());
        check.close();
    }
}
