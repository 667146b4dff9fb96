package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.conformance.NotificationReceiver.Mode;
import dev.cor.ngsild.subscription.LiveSubscription;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Notification peers that fail - an MQTT broker or an HTTP receiver that accepts and never
 * answers, closes or resets at once, answers garbage, or (MQTT) announces a packet of 256 MiB -
 * under twenty subscriptions and writes
 * that match them all: every failure is counted in the subscriptions' status with a reason that
 * carries no byte the peer sent, and afterwards the process has no more {@code MQTT*} threads
 * and no more open descriptors ({@code /proc/self/fd}) than before, the peer no connection from
 * the broker. A dead MQTT broker is tried once at a time and not again for a while (the
 * notifications meanwhile fail at once, counted); once it answers - or the subscription names a
 * live one - notifications flow again. Everything is awaited by polling under a deadline.
 */
class HostileNotificationPeerTest {
    /**
     * The broker's notificationTimeoutMs for MQTT: every connect and publish has it. Paho 1.2.5
     * alone takes up to ~300 ms to connect (it looks for each of its threads to run every 100 ms),
     * so a shorter one would turn "the broker refused" into "it did not answer in time" on a
     * loaded machine.
     */
    static final long TIMEOUT_MS = 2_000;
    /** The broker's notificationTimeoutMs for HTTP: a silent receiver costs it per notification. */
    static final long HTTP_TIMEOUT_MS = 500;
    /** How long anything may take to settle on a loaded machine: a deadline, never a pause. */
    static final long SETTLE_MS = 30_000;
    static final int SUBSCRIPTIONS = 20;
    static final int WRITES = 5;
    /** Descriptors the process may hold beyond its baseline once settled (a keep-alive to the broker, a selector). */
    static final int FD_SLACK = 6;

    // ---------------------------------------------------------------- MQTT

    @ParameterizedTest
    @EnumSource(value = Mode.class, names = {"HANG", "CLOSE", "RESET", "GARBAGE", "HUGE_MQTT_PACKET"})
    void a_failing_mqtt_broker_leaves_no_thread_or_socket_behind(Mode mode) {
        try (TestBroker broker = broker(); NotificationReceiver peer = NotificationReceiver.start(mode)) {
            Ngsi api = warmedUp(broker);
            Resources before = Resources.now();
            String type = Entities.uniqueName("MqttDead");
            List<String> subs = subscribeMany(api, type, "mqtt://127.0.0.1:" + peer.port() + "/cor/" + type);
            writeAndAwaitOutcomes(api, broker, type, subs, WRITES);
            settles(before, peer);
            for (String sub : subs) {
                LiveSubscription s = broker.subscriptions().get("", sub);
                assertEquals(WRITES, s.timesFailed(), () -> sub + ": every notification failed and is counted");
                assertFailedWithoutForeignBytes(api, s, sub, "mqtt://127.0.0.1:" + peer.port());
                String reason = s.lastFailureReason();
                assertTrue(switch (mode) {
                    case HANG -> reason.startsWith("no CONNACK from the MQTT broker") && reason.contains("within " + TIMEOUT_MS + " ms");
                    case CLOSE -> reason.contains("closed the connection");
                    case GARBAGE -> reason.contains("sent what is not MQTT");
                    // refused as its length is read, before Paho allocates it
                    case HUGE_MQTT_PACKET -> reason.contains("announced a packet of 268435455 bytes");
                    default -> reason.contains("closed the connection") || reason.contains("connection to the MQTT broker");
                }, () -> mode + ": " + reason);
            }
        }
    }

    @Test
    void an_mqtt_broker_that_never_acknowledges_fails_qos_1_notifications_and_leaves_nothing_behind() {
        try (TestBroker broker = broker(); NotificationReceiver peer = NotificationReceiver.start(Mode.MQTT_CONNACK_ONLY)) {
            Ngsi api = warmedUp(broker);
            Resources before = Resources.now();
            String type = Entities.uniqueName("MqttNoAck");
            List<String> subs = new ArrayList<>();
            for (int i = 0; i < SUBSCRIPTIONS; i++) {
                String id = Entities.id("Subscription");
                Checks.status(api.post("/subscriptions").json(Json.obj("""
                        {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}],
                         "notification": {"endpoint": {"uri": "mqtt://127.0.0.1:%d/cor/%s",
                            "notifierInfo": [{"key": "MQTT-QoS", "value": "1"}]}}}""", id, type, peer.port(), type)).send(), 201);
                subs.add(id);
            }
            writeAndAwaitOutcomes(api, broker, type, subs, WRITES);
            settles(before, peer);
            boolean sawNoPuback = false;
            for (String sub : subs) {
                LiveSubscription s = broker.subscriptions().get("", sub);
                assertEquals(WRITES, s.timesFailed(), () -> sub + ": every notification failed and is counted");
                assertFailedWithoutForeignBytes(api, s, sub, "mqtt://127.0.0.1:" + peer.port());
                sawNoPuback |= s.lastFailureReason().startsWith("no PUBACK from the MQTT broker");
            }
            assertTrue(sawNoPuback, "the publish that timed out is remembered as the broker's failure");
        }
    }

    @Test
    void a_silent_mqtt_broker_is_tried_once_at_a_time_and_not_again_for_a_while() {
        try (TestBroker broker = broker(); NotificationReceiver peer = NotificationReceiver.start(Mode.HANG)) {
            Ngsi api = warmedUp(broker);
            String type = Entities.uniqueName("MqttSilent");
            List<String> subs = subscribeMany(api, type, "mqtt://127.0.0.1:" + peer.port() + "/cor/" + type);
            long t0 = System.nanoTime();
            // writes at once from as many clients: their notifications to the dead broker overlap
            List<java.util.concurrent.CompletableFuture<Ngsi.Answer>> burst = new ArrayList<>();
            for (int i = 0; i < SUBSCRIPTIONS; i++) {
                burst.add(api.post("/entities").json(Json.obj("""
                        {"id": "%s", "type": "%s"}""", Entities.id(type), type)).sendAsync());
            }
            burst.forEach(f -> Checks.status(f.join(), 201));
            awaitOutcomes(broker, subs, new long[subs.size()]);
            // then one write after the other: each finds the failure remembered
            writeAndAwaitOutcomes(api, broker, type, subs, WRITES);
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            // each attempt waits TIMEOUT_MS for a CONNACK, then the failure is remembered at least
            // as long again: one attempt per notification (hundreds) or per write is a leak of time
            long bound = 1 + elapsedMs / (2 * TIMEOUT_MS);
            assertTrue(peer.accepted() <= bound, () -> peer.accepted() + " connections in " + elapsedMs
                    + " ms for " + SUBSCRIPTIONS * (SUBSCRIPTIONS + WRITES) + " matches: at most " + bound + " expected");
            for (String sub : subs) {
                LiveSubscription s = broker.subscriptions().get("", sub);
                assertEquals(s.timesSent(), s.timesFailed(), () -> sub + ": a notification that fails fast is a failure too");
                assertTrue(s.lastFailureReason().contains("not tried again"), () -> sub + ": the later writes found the "
                        + "failure remembered: " + s.lastFailureReason());
            }
        }
    }

    @Test
    void notifications_flow_again_once_the_dead_mqtt_broker_answers() throws Exception {
        try (TestBroker broker = broker()) {
            Ngsi api = warmedUp(broker);
            String type = Entities.uniqueName("MqttRevived");
            String topic = "cor/" + type;
            int port;
            String sub;
            try (NotificationReceiver peer = NotificationReceiver.start(Mode.HANG)) {
                port = peer.port();
                sub = subscribeMany(api, type, "mqtt://127.0.0.1:" + port + "/" + topic, 1).get(0);
                writeAndAwaitOutcomes(api, broker, type, List.of(sub), 1);
                assertEquals(1, broker.subscriptions().get("", sub).timesFailed());
            }
            try (Mosquitto mosquitto = Mosquitto.start(port)) {
                LinkedBlockingQueue<JsonNode> got = new LinkedBlockingQueue<>();
                MqttClient listener = mosquitto.listen(topic, got);
                try {
                    // the failure is remembered for a while: write until a notification gets through
                    JsonNode m = writeUntilReceived(api, type, got);
                    assertEquals(sub, m.path("body").path("subscriptionId").asText());
                    eventually(() -> "active".equals(Checks.okJson(api.get("/subscriptions/" + sub).send()).path("status")
                            .asText()), () -> "the subscription still says failed after a notification went through");
                } finally {
                    listener.disconnect();
                    listener.close();
                }
            }
        }
    }

    @Test
    void an_update_to_a_live_mqtt_broker_notifies_at_once() throws Exception {
        try (TestBroker broker = broker(); NotificationReceiver peer = NotificationReceiver.start(Mode.HANG);
                Mosquitto mosquitto = Mosquitto.start()) {
            Ngsi api = warmedUp(broker);
            String type = Entities.uniqueName("MqttMoved");
            String topic = "cor/" + type;
            String sub = subscribeMany(api, type, "mqtt://127.0.0.1:" + peer.port() + "/" + topic, 1).get(0);
            writeAndAwaitOutcomes(api, broker, type, List.of(sub), 1);
            assertEquals(1, broker.subscriptions().get("", sub).timesFailed());
            LinkedBlockingQueue<JsonNode> got = new LinkedBlockingQueue<>();
            MqttClient listener = mosquitto.listen(topic, got);
            try {
                Checks.status(api.patch("/subscriptions/" + sub).json(Json.obj("""
                        {"notification": {"endpoint": {"uri": "mqtt://127.0.0.1:%d/%s"}}}""", mosquitto.port(), topic))
                        .send(), 204);
                create(api, type);
                // the dead broker's failure is its own: the live one is tried at once
                JsonNode m = got.poll(SETTLE_MS, TimeUnit.MILLISECONDS);
                assertNotNull(m, "no notification through the live broker after the update");
                assertEquals(sub, m.path("body").path("subscriptionId").asText());
            } finally {
                listener.disconnect();
                listener.close();
            }
        }
    }

    @Test
    void a_live_mqtt_broker_is_one_connection_for_every_subscription_and_the_broker_stop_closes_it() throws Exception {
        int baselineThreads = Resources.mqttThreadNames().size();
        try (Mosquitto mosquitto = Mosquitto.start()) {
            String type = Entities.uniqueName("MqttLive");
            String topic = "cor/" + type;
            LinkedBlockingQueue<JsonNode> got = new LinkedBlockingQueue<>();
            MqttClient listener = mosquitto.listen(topic, got);
            int listenerThreads = Resources.mqttThreadNames().size();
            try {
                try (TestBroker broker = broker()) {
                    Ngsi api = warmedUp(broker);
                    List<String> subs = subscribeMany(api, type, "mqtt://127.0.0.1:" + mosquitto.port() + "/" + topic);
                    writeAndAwaitOutcomes(api, broker, type, subs, 2);
                    for (String sub : subs) {
                        LiveSubscription s = broker.subscriptions().get("", sub);
                        assertEquals(0, s.timesFailed(), () -> sub + " failed: " + s.lastFailureReason());
                    }
                    for (int i = 0; i < 2 * SUBSCRIPTIONS; i++) {
                        assertNotNull(got.poll(SETTLE_MS, TimeUnit.MILLISECONDS), "notification " + i + " did not arrive");
                    }
                    // one connection: Paho's receiver, sender, callback and ping threads, not twenty times that
                    int mqtt = Resources.mqttThreadNames().size() - listenerThreads;
                    assertTrue(mqtt <= 5, () -> mqtt + " MQTT threads for one broker: " + Resources.mqttThreadNames());
                }
                eventually(() -> Resources.mqttThreadNames().size() <= listenerThreads,
                        () -> "the stopped broker left MQTT threads: " + Resources.mqttThreadNames());
            } finally {
                listener.disconnect();
                listener.close();
            }
        }
        eventually(() -> Resources.mqttThreadNames().size() <= baselineThreads, () -> "MQTT threads left: " + Resources.mqttThreadNames());
    }

    // ---------------------------------------------------------------- HTTP

    @ParameterizedTest
    @EnumSource(value = Mode.class, names = {"HANG", "CLOSE", "RESET", "GARBAGE"})
    void a_failing_http_receiver_leaves_no_socket_behind(Mode mode) {
        try (TestBroker broker = broker(HTTP_TIMEOUT_MS); NotificationReceiver peer = NotificationReceiver.start(mode)) {
            Ngsi api = warmedUp(broker);
            Resources before = Resources.now();
            String type = Entities.uniqueName("HttpDead");
            // fewer than for MQTT: an HTTP receiver is tried each time, and a silent one costs its timeout each time
            List<String> subs = subscribeMany(api, type, peer.url(), 5);
            writeAndAwaitOutcomes(api, broker, type, subs, 2);
            settles(before, peer);
            for (String sub : subs) {
                LiveSubscription s = broker.subscriptions().get("", sub);
                assertEquals(2, s.timesFailed(), () -> sub + ": every notification failed and is counted");
                assertFailedWithoutForeignBytes(api, s, sub, "http://127.0.0.1:" + peer.port());
                String reason = s.lastFailureReason();
                assertTrue(switch (mode) {
                    case HANG -> reason.contains("did not answer within " + HTTP_TIMEOUT_MS + " ms");
                    case CLOSE -> reason.contains("closed the connection");
                    case GARBAGE -> reason.contains("answered what is not HTTP/1.1");
                    default -> reason.contains("connect") || reason.contains("closed");
                }, () -> mode + ": " + reason);
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    static TestBroker broker() {
        return broker(TIMEOUT_MS);
    }

    static TestBroker broker(long notificationTimeoutMs) {
        return TestBroker.start(b -> b.notificationTimeoutMs(notificationTimeoutMs), s -> { });
    }

    /** A client whose own connection and threads exist before any baseline is taken. */
    static Ngsi warmedUp(TestBroker broker) {
        Ngsi api = new Ngsi(broker.baseUrl());
        Checks.okJson(api.get("/subscriptions").send());
        return api;
    }

    static List<String> subscribeMany(Ngsi api, String type, String uri) {
        return subscribeMany(api, type, uri, SUBSCRIPTIONS);
    }

    static List<String> subscribeMany(Ngsi api, String type, String uri, int n) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String id = Entities.id("Subscription");
            Checks.status(api.post("/subscriptions").json(Json.obj("""
                    {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}],
                     "notification": {"endpoint": {"uri": "%s"}}}""", id, type, uri)).send(), 201);
            ids.add(id);
        }
        return ids;
    }

    static void create(Ngsi api, String type) {
        Checks.status(api.post("/entities").json(Json.obj("""
                {"id": "%s", "type": "%s", "speed": {"type": "Property", "value": 1}}""", Entities.id(type), type)).send(), 201);
    }

    /**
     * {@code writes} creations of an entity of {@code type}, each after the previous one's
     * notifications are all out and counted (so none is batched with the next).
     */
    static void writeAndAwaitOutcomes(Ngsi api, TestBroker broker, String type, List<String> subs, int writes) {
        for (int w = 1; w <= writes; w++) {
            long[] before = new long[subs.size()];
            for (int i = 0; i < before.length; i++) {
                before[i] = broker.subscriptions().get("", subs.get(i)).timesSent();
            }
            create(api, type);
            awaitOutcomes(broker, subs, before);
        }
    }

    /** Until every subscription has sent (and counted) a notification more than {@code before} and has nothing queued. */
    static void awaitOutcomes(TestBroker broker, List<String> subs, long[] before) {
        eventually(() -> {
            for (int i = 0; i < before.length; i++) {
                LiveSubscription s = broker.subscriptions().get("", subs.get(i));
                if (s.timesSent() <= before[i] || s.queued() > 0 || s.sending()) {
                    return false;
                }
            }
            return true;
        }, () -> "not every subscription has its notification's outcome");
    }

    /** Writes an entity of {@code type} until a notification arrives; the failure memory lasts a while. */
    static JsonNode writeUntilReceived(Ngsi api, String type, LinkedBlockingQueue<JsonNode> got) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * SETTLE_MS);
        while (true) {
            create(api, type);
            JsonNode m = got.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            if (m != null) {
                return m;
            }
            assertTrue(System.nanoTime() < deadline, "no notification through the revived broker");
        }
    }

    /** The status says failed, the last failure is timed and its reason names the endpoint and nothing the peer sent. */
    static void assertFailedWithoutForeignBytes(Ngsi api, LiveSubscription s, String sub, String endpoint) {
        JsonNode rendered = Checks.okJson(api.get("/subscriptions/" + sub).send());
        assertEquals("failed", rendered.path("status").asText(), rendered::toString);
        assertEquals("failed", rendered.path("notification").path("status").asText(), rendered::toString);
        assertTrue(rendered.path("notification").hasNonNull("lastFailure"), rendered::toString);
        String reason = s.lastFailureReason();
        assertNotNull(reason);
        assertTrue(reason.contains(endpoint), () -> "the reason names the endpoint: " + reason);
        assertFalse(reason.contains("GARBAGE") || reason.contains(NotificationReceiver.GARBAGE_TOKEN.substring(0, 10)),
                () -> "the reason echoes the peer: " + reason);
        assertFalse(rendered.toString().contains("GARBAGE"), rendered::toString);
    }

    /** Threads and descriptors back to {@code before}, and the peer holding no connection from the broker. */
    static void settles(Resources before, NotificationReceiver peer) {
        eventually(() -> {
            Resources now = Resources.now();
            return now.mqttThreads <= before.mqttThreads && now.fds <= before.fds + FD_SLACK && peer.openConnections() == 0;
        }, () -> "not back to the baseline " + before + ": " + Resources.now() + ", " + peer.openConnections()
                + " connection(s) held by the peer; MQTT threads " + Resources.mqttThreadNames());
    }

    static void eventually(BooleanSupplier condition, Supplier<String> what) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what);
            LockSupport.parkNanos(5_000_000); // the poll's pace (two shared cores), not what decides
        }
    }

    /** What a leak shows in: the MQTT client's threads and the process's open descriptors. */
    record Resources(int mqttThreads, long fds) {
        static Resources now() {
            return new Resources(mqttThreadNames().size(), openFds());
        }

        static List<String> mqttThreadNames() {
            List<String> names = new ArrayList<>();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("MQTT")) {
                    names.add(t.getName());
                }
            }
            return names;
        }

        static long openFds() {
            try (var files = Files.list(Path.of("/proc/self/fd"))) {
                return files.count();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
