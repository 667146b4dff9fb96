package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.http.CorHttpServer;
import dev.cor.ngsild.TestBroker;
import org.junit.jupiter.api.Test;

/**
 * The post-response phase (history § 10): notifications leave after the write's answer, as
 * coroutines of the loop, so a slow receiver neither holds the write nor the other requests,
 * and several notifications wait on the network at once with one loop and one worker. And what
 * a receiver that hangs, resets or answers 500 leaves behind: a status that says so, and nothing
 * that leaks (the loop's live coroutines back to their baseline).
 */
class PostResponsePhaseTest {
    static final long WAIT_MS = 5_000;

    /** One loop, one worker: the seed's shape. */
    static TestBroker oneLoopOneWorker(Consumer<CorHttpServer.Builder> more) {
        return TestBroker.start(b -> b.notificationTimeoutMs(2_000), s -> {
            s.loops(1).workerThreads(1);
            more.accept(s);
        });
    }

    static String subscribe(Ngsi api, String type, String uri) {
        String id = Entities.id("Subscription");
        Checks.status(api.post("/subscriptions").json(Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}],
                 "notification": {"endpoint": {"uri": "%s"}}}""", id, type, uri)).send(), 201);
        return id;
    }

    static void create(Ngsi api, String id, String type) {
        Checks.status(api.post("/entities").json(Json.obj("""
                {"id": "%s", "type": "%s", "speed": {"type": "Property", "value": 1}}""", id, type)).send(), 201);
    }

    /** Three subscriptions, each to a fresh type, and one entity created of each: three notifications. */
    static List<String> threeNotifyingWrites(Ngsi api, NotificationReceiver receiver) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String type = Entities.uniqueName("Slow");
            subscribe(api, type, receiver.url());
            ids.add(Entities.id(type));
        }
        for (String id : ids) {
            create(api, id, id.split(":")[2]);
        }
        return ids;
    }

    /**
     * Three writes, each notifying a receiver that takes 1.5 s: as coroutines all three reach it
     * together, the writes are answered before it answers any, and a read is served meanwhile.
     */
    @Test
    void http_coroutine_post_response_phase() {
        try (TestBroker broker = oneLoopOneWorker(s -> { });
                NotificationReceiver receiver = NotificationReceiver.start()) {
            receiver.delayMs = 1_500;
            Ngsi api = new Ngsi(broker.baseUrl());
            List<String> ids = threeNotifyingWrites(api, receiver);
            assertEquals(0, receiver.answered(), "the three writes were answered before the receiver answered any notification");
            for (int i = 0; i < 3; i++) {
                receiver.next(WAIT_MS);
            }
            Checks.okJson(api.get("/entities/" + ids.get(0)).send());
            assertTrue(receiver.inFlight() > 0, "the read was answered while the receiver held the notifications");
            assertEquals(3, receiver.maxInFlight(), "all three notifications reached the receiver together");
        }
    }

    /** The same with the phase on the worker (the finish hook says no): one notification at a time. */
    @Test
    void on_the_worker_the_notifications_queue_behind_one_another() {
        try (TestBroker broker = oneLoopOneWorker(s -> s.finishCoroutineHook(r -> false));
                NotificationReceiver receiver = NotificationReceiver.start()) {
            receiver.delayMs = 300;
            Ngsi api = new Ngsi(broker.baseUrl());
            List<String> ids = threeNotifyingWrites(api, receiver);
            for (int i = 0; i < 3; i++) {
                receiver.next(WAIT_MS);
            }
            assertEquals(1, receiver.maxInFlight(), "one worker sends one notification at a time");
        }
    }

    /**
     * A receiver slower than the writes: the subscription's queue holds what it can, and what
     * overflows is counted - in its status (timesFailed) and in /metrics - not silently dropped.
     */
    @Test
    void a_full_queue_counts_what_overflows_in_the_status_and_the_metrics() {
        try (TestBroker broker = TestBroker.start(b -> b.notificationQueue(2).notificationTimeoutMs(5_000), s -> { });
                NotificationReceiver receiver = NotificationReceiver.start()) {
            receiver.delayMs = 1_000;
            Ngsi api = new Ngsi(broker.baseUrl());
            String type = Entities.uniqueName("Busy");
            String sub = subscribe(api, type, receiver.url());
            for (int i = 0; i < 6; i++) {
                create(api, Entities.id(type), type);
            }
            // 6 notices: one out, two queued at most meanwhile - at least three overflowed
            long overflowed = broker.subscriptions().get("", sub).overflowed();
            assertTrue(overflowed >= 3, "overflowed " + overflowed);
            JsonNode s = Checks.okJson(api.get("/subscriptions/" + sub).send());
            assertTrue(s.path("notification").path("timesFailed").asInt() >= 3, s::toString);
            assertEquals(overflowed, broker.broker().metrics().notifications("overflowed"));
            long sent = 6 - overflowed;
            int entities = 0;
            while (entities < sent) {
                entities += receiver.next(WAIT_MS).json().path("data").size();
            }
            assertEquals(sent, entities, "what did not overflow was sent");
        }
    }

    @Test
    void a_receiver_that_never_answers_fails_after_the_timeout_and_leaves_nothing_behind() {
        try (TestBroker broker = oneLoopOneWorker(s -> { });
                NotificationReceiver receiver = NotificationReceiver.start(NotificationReceiver.Mode.HANG)) {
            // the broker's notificationTimeoutMs (2 000) ended the wait
            String why = failureLeavesNothingBehind(broker, receiver.url());
            assertTrue(why.contains("within 2000 ms"), why);
            long deadline = System.nanoTime() + WAIT_MS * 1_000_000;
            while (receiver.openConnections() > 0) {
                assertTrue(System.nanoTime() < deadline, () -> "the broker keeps " + receiver.openConnections()
                        + " connection(s) to a receiver that timed out: they leak, or go back to the pool");
                Thread.onSpinWait();
            }
        }
    }

    @Test
    void a_receiver_that_resets_fails_and_leaves_nothing_behind() {
        try (TestBroker broker = oneLoopOneWorker(s -> { });
                NotificationReceiver receiver = NotificationReceiver.start(NotificationReceiver.Mode.RESET)) {
            String origin = receiver.url().substring(0, receiver.url().indexOf("/notify"));
            String why = failureLeavesNothingBehind(broker, receiver.url());
            // reset while connecting or after: the reason names the receiver and a failed connection,
            // in the broker's words (not the exception's text, which may quote the receiver)
            assertTrue(why.contains(origin), why);
            assertTrue(why.contains("cannot connect to ") || why.contains("the connection to "), why);
        }
    }

    @Test
    void a_receiver_that_answers_500_fails_and_leaves_nothing_behind() {
        try (TestBroker broker = oneLoopOneWorker(s -> { });
                NotificationReceiver receiver = NotificationReceiver.start()) {
            receiver.status = 500;
            String why = failureLeavesNothingBehind(broker, receiver.url());
            assertTrue(why.contains("the receiver answered 500"), why);
        }
    }

    /**
     * Two writes notify a receiver that fails: the subscription ends up failed with both counted
     * and a reason kept, and the loop has no more live coroutines than before. Returns the
     * reason, for the caller to say what it must name.
     */
    private static String failureLeavesNothingBehind(TestBroker broker, String uri) {
        Ngsi api = new Ngsi(broker.baseUrl());
        int baseline = Arrays.stream(broker.server().liveCoroutines()).sum();
        String type = Entities.uniqueName("Failing");
        String sub = subscribe(api, type, uri);
        create(api, Entities.id(type), type);
        create(api, Entities.id(type), type);
        long deadline = System.nanoTime() + 3 * WAIT_MS * 1_000_000;
        JsonNode s;
        while (true) {
            s = Checks.okJson(api.get("/subscriptions/" + sub).send());
            if (s.path("notification").path("timesFailed").asInt() == 2
                    && broker.subscriptions().get("", sub).queued() == 0
                    && Arrays.stream(broker.server().liveCoroutines()).sum() == baseline) {
                break;
            }
            assertTrue(System.nanoTime() < deadline, () -> "not settled: " + Arrays.toString(broker.server().liveCoroutines())
                    + " live coroutines (baseline " + baseline + ")");
            Thread.onSpinWait();
        }
        assertEquals("failed", s.path("status").asText());
        assertEquals(2, s.path("notification").path("timesSent").asInt());
        assertTrue(broker.broker().metrics().notifications("failed") >= 2);
        return broker.subscriptions().get("", sub).lastFailureReason();
    }
}
