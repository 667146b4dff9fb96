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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.conformance.NotificationReceiver.Mode;
import dev.cor.ngsild.subscription.LiveSubscription;

/**
 * Notification receivers that fail - accepting and never answering, closing or resetting at
 * once, answering garbage - under several subscriptions and writes that match them all: every
 * failure is counted in the subscriptions' status with a reason that carries no byte the peer
 * sent, and afterwards the process has no more open descriptors ({@code /proc/self/fd}) than
 * before, the peer no connection from the broker. Everything is awaited by polling under a
 * deadline.
 */
class HostileNotificationPeerTest {
    /** The broker's notificationTimeoutMs for HTTP: a silent receiver costs it per notification. */
    static final long HTTP_TIMEOUT_MS = 500;
    /** How long anything may take to settle on a loaded machine: a deadline, never a pause. */
    static final long SETTLE_MS = 30_000;
    /** Descriptors the process may hold beyond its baseline once settled (a keep-alive to the broker, a selector). */
    static final int FD_SLACK = 6;

    // ---------------------------------------------------------------- HTTP

    @ParameterizedTest
    @EnumSource(value = Mode.class, names = {"HANG", "CLOSE", "RESET", "GARBAGE"})
    void a_failing_http_receiver_leaves_no_socket_behind(Mode mode) {
        try (TestBroker broker = broker(HTTP_TIMEOUT_MS); NotificationReceiver peer = NotificationReceiver.start(mode)) {
            Ngsi api = warmedUp(broker);
            Resources before = Resources.now();
            String type = Entities.uniqueName("HttpDead");
            // an HTTP receiver is tried each time, and a silent one costs its timeout each time
            List<String> subs = subscribeMany(api, type, peer.url(), 5);
            writeAndAwaitOutcomes(api, broker, type, subs, 2);
            settles(before, peer);
            for (String sub : subs) {
                LiveSubscription s = broker.broker().subscriptions().get("", sub);
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

    static TestBroker broker(long notificationTimeoutMs) {
        return TestBroker.start(b -> b.notificationTimeoutMs(notificationTimeoutMs), s -> { });
    }

    /** A client whose own connection and threads exist before any baseline is taken. */
    static Ngsi warmedUp(TestBroker broker) {
        Ngsi api = new Ngsi(broker.baseUrl());
        Checks.okJson(api.get("/subscriptions").send());
        return api;
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
                before[i] = broker.broker().subscriptions().get("", subs.get(i)).timesSent();
            }
            create(api, type);
            awaitOutcomes(broker, subs, before);
        }
    }

    /** Until every subscription has sent (and counted) a notification more than {@code before} and has nothing queued. */
    static void awaitOutcomes(TestBroker broker, List<String> subs, long[] before) {
        eventually(() -> {
            for (int i = 0; i < before.length; i++) {
                LiveSubscription s = broker.broker().subscriptions().get("", subs.get(i));
                if (s.timesSent() <= before[i] || s.queued() > 0 || s.sending()) {
                    return false;
                }
            }
            return true;
        }, () -> "not every subscription has its notification's outcome");
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
