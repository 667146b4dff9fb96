package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.store.durable.DurableEntityStore;
import dev.cor.ngsild.subscription.LiveSubscription;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The order of notifications under concurrency, as a property of the whole output: many clients
 * on a broker with two loops each append their own counter attribute to one entity (or a few),
 * again and again; one subscription carries the whole entity to a real receiver. Per entity, the
 * states the receiver gets must never go backwards for any client's counter (a notification
 * that overtook a later one shows an older counter after a newer one), and the last state it
 * gets must be the entity's final one - a mirror kept from the notifications is right once the
 * writes stop. Several bursts, each with a fresh type and subscription.
 */
class NotificationOrderTest {
    static final int CLIENTS = 32;
    static final long WAIT_MS = 30_000;

    static TestBroker inMemory;
    static Ngsi inMemoryApi;
    static ExecutorService clients;

    @BeforeAll
    static void start() {
        // a queue no burst fills: an overflow would drop a state, and that is not what is tested here
        inMemory = TestBroker.start(b -> b.notificationQueue(100_000), s -> s.loops(2));
        inMemoryApi = new Ngsi(inMemory.baseUrl());
        clients = Executors.newFixedThreadPool(CLIENTS);
    }

    @AfterAll
    static void stop() {
        clients.shutdownNow();
        inMemory.close();
    }

    @Test
    void each_entitys_states_arrive_in_write_order_and_the_last_one_is_its_final_state() throws Exception {
        for (int burst = 0; burst < 6; burst++) {
            burst(inMemory, inMemoryApi, 1, 20, 0, 0);
        }
    }

    @Test
    void with_a_few_entities_each_ones_states_arrive_in_write_order() throws Exception {
        for (int burst = 0; burst < 4; burst++) {
            burst(inMemory, inMemoryApi, 4, 20, 0, 0);
        }
    }

    @Test
    void with_hundreds_of_other_subscriptions_the_states_still_arrive_in_write_order() throws Exception {
        for (int burst = 0; burst < 4; burst++) {
            burst(inMemory, inMemoryApi, 2, 16, 300, 0);
        }
    }

    /**
     * A receiver that takes a few milliseconds: notices pile up while one is out, and the write
     * phases of both loops find the subscription busy - only one of them may send at a time, or
     * two notifications race to the receiver and one overtakes the other.
     */
    @Test
    void a_slow_receiver_gets_the_states_in_write_order_from_one_sender_at_a_time() throws Exception {
        for (int burst = 0; burst < 4; burst++) {
            burst(inMemory, inMemoryApi, 1, 16, 0, 3);
        }
    }

    /** The same on the durable store, whose write appends its journal record in the same critical section. */
    @Test
    void on_the_durable_store_each_entitys_states_arrive_in_write_order(@TempDir Path dir) throws Exception {
        try (DurableEntityStore store = DurableEntityStore.builder(dir).open();
                TestBroker durable = TestBroker.start(b -> b.store(store).notificationQueue(100_000), s -> s.loops(2))) {
            Ngsi client = new Ngsi(durable.baseUrl());
            for (int burst = 0; burst < 3; burst++) {
                burst(durable, client, 2, 16, 0, 0);
            }
        }
    }

    /**
     * One burst on {@code broker}: {@code entities} fresh entities of a fresh type, a subscription to the type (and
     * {@code others} that select none of the writes, tested on each), {@link #CLIENTS} clients
     * released together, each writing its counter {@code rounds} times to the entities in turn.
     */
    static void burst(TestBroker broker, Ngsi api, int entities, int rounds, int others, long receiverDelayMs)
            throws Exception {
        String type = Entities.uniqueName("Order");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < entities; i++) {
            ids.add(Entities.id(type));
            Checks.status(api.post("/entities").json(Entities.minimal(ids.get(i), type)).send(), 201);
        }
        List<String> otherSubs = new ArrayList<>();
        for (int i = 0; i < others; i++) {
            // the same type, so each one is matched on every write; its q holds for none of them
            otherSubs.add(subscribe(api, type, "{\"q\": \"c0==-1\"}", "http://127.0.0.1:"
                    + NotificationReceiver.refusingPort() + "/never"));
        }
        try (NotificationReceiver receiver = NotificationReceiver.start()) {
            receiver.delayMs = receiverDelayMs;
            String sub = subscribe(api, type, null, receiver.url());
            CyclicBarrier go = new CyclicBarrier(CLIENTS);
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                done.add(clients.submit(() -> {
                    go.await(WAIT_MS, TimeUnit.MILLISECONDS);
                    for (int round = 1; round <= rounds; round++) {
                        String id = ids.get((client + round) % ids.size());
                        Checks.noContent(api.post("/entities/" + id + "/attrs")
                                .json(Json.obj("{\"c%d\": {\"type\": \"Property\", \"value\": %d}}", client, round)).send());
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(WAIT_MS, TimeUnit.MILLISECONDS);
            }
            Map<String, JsonNode> last = new HashMap<>();
            List<String> inversions = new ArrayList<>();
            LiveSubscription live = broker.subscriptions().get("", sub);
            awaitSent(live);
            int notifications = 0;
            for (NotificationReceiver.Received r; (r = receiver.poll(0)) != null;) {
                notifications++;
                for (JsonNode e : r.json().path("data")) {
                    JsonNode before = last.put(e.path("id").asText(), e);
                    if (before != null) {
                        backwards(before, e, inversions);
                    }
                }
            }
            assertEquals(0, live.overflowed(), "the queue overflowed: a state was dropped on purpose");
            assertEquals(0, live.timesFailed(), "a notification failed");
            List<String> stale = new ArrayList<>();
            for (String id : ids) {
                Map<String, Integer> end = counters(Checks.okJson(api.get("/entities/" + id)
                        .query("options", "keyValues").send()));
                if (!last.containsKey(id) || !end.equals(counters(last.get(id)))) {
                    stale.add(id + ": last notified " + (last.containsKey(id) ? counters(last.get(id)) : "nothing")
                            + ", final " + end);
                }
            }
            assertTrue(inversions.isEmpty() && stale.isEmpty(), inversions.size() + " states went backwards among "
                    + notifications + " notifications, first: " + inversions.subList(0, Math.min(5, inversions.size()))
                    + "; entities whose last notification is not their final state (a mirror stays wrong): " + stale);
            Checks.noContent(api.delete("/subscriptions/" + sub).send());
        }
        for (String s : otherSubs) {
            Checks.noContent(api.delete("/subscriptions/" + s).send());
        }
    }

    /** Adds to {@code out} each client counter that is lower in {@code next} than in {@code before}. */
    static void backwards(JsonNode before, JsonNode next, List<String> out) {
        counters(before).forEach((name, was) -> {
            int now = next.path(name).asInt(0);
            if (now < was) {
                out.add(next.path("id").asText() + " " + name + " " + was + " -> " + now);
            }
        });
    }

    /** The client counters of an entity in keyValues. */
    static Map<String, Integer> counters(JsonNode e) {
        Map<String, Integer> out = new TreeMap<>();
        e.properties().forEach(m -> {
            if (m.getKey().matches("c\\d+")) {
                out.put(m.getKey(), m.getValue().asInt());
            }
        });
        return out;
    }

    /**
     * Waits until the subscription has sent all it queued: nothing queued and no sender at it.
     * The writes were all answered, and each queued its notice before its answer; a notice the
     * receiver has is one it took before it answered, and the sender waits for that answer - so
     * then the receiver holds every notification. A notice left in the queue that nobody sends
     * (stranded) fails here.
     */
    static void awaitSent(LiveSubscription live) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (live.queued() > 0 || live.sending()) {
            assertTrue(System.nanoTime() < deadline, () -> "not sent within " + WAIT_MS + " ms: " + live.queued()
                    + " notices left in the queue, " + (live.sending() ? "a sender still counted" : "no sender (stranded)"));
            Thread.onSpinWait();
        }
    }

    /** A subscription to the type's entities in keyValues, {@code extra} members added. */
    static String subscribe(Ngsi api, String type, String extra, String uri) {
        String id = Entities.id("Subscription");
        var sub = Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}],
                 "notification": {"endpoint": {"uri": "%s"}, "format": "keyValues"}}""", id, type, uri);
        if (extra != null) {
            Json.obj(extra).properties().forEach(m -> sub.set(m.getKey(), m.getValue()));
        }
        Checks.status(api.post("/subscriptions").json(sub).send(), 201);
        return id;
    }
}
