package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The launcher's deadline and queue flags govern what the broker does, not only what
 * {@code /version} says: each one is given a value far from its default, and a peer that never
 * answers shows the broker giving up when the flag says (never sooner, and well before the
 * default of 5 s), or refusing what its queue cannot hold.
 */
@Tag("process")
class OperatorFlagsProcessTest {
    /** Every deadline flag's default (ServerOptions): a broker that ignores the flag waits this long. */
    private static final long DEFAULT_MS = 5_000;
    private static final long FLAG_MS = 800;

    /** Polls {@code series} until it reaches {@code atLeast}; returns when it did (System.nanoTime()). */
    private long awaitMetric(ServerProcess s, String series, double atLeast) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            if (s.metrics().valueOrZero(series) >= atLeast) {
                return System.nanoTime();
            }
            assertTrue(System.nanoTime() < deadline, series + " never reached " + atLeast + ": " + s);
            Thread.sleep(10);
        }
    }

    private static void assertGaveUpAtTheFlag(String what, long tookMs) {
        assertTrue(tookMs >= FLAG_MS - 50, what + " gave up after " + tookMs + " ms, before the flag's " + FLAG_MS + " ms");
        assertTrue(tookMs < DEFAULT_MS - 1_000, what + " gave up after " + tookMs + " ms: the default, not the flag's "
                + FLAG_MS + " ms");
    }

    @Test
    void contextTimeoutBoundsTheDownloadOfALinkedContext() throws Exception {
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--contextTimeout", String.valueOf(FLAG_MS));
                HangingPeer peer = HangingPeer.start()) {
            long t0 = System.nanoTime();
            HttpResponse<String> r = s.send("GET", "/ngsi-ld/v1/entities?type=T", null, "Link", "<" + peer.url("/ctx.jsonld")
                    + ">; rel=\"http://www.w3.org/ns/json-ld#context\"; type=\"application/ld+json\"");
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(504, r.statusCode(), r.body());
            assertTrue(r.body().contains("LdContextNotAvailable"), r.body());
            assertEquals(1, peer.accepted(), "the broker did try to download it");
            assertGaveUpAtTheFlag("the @context download", took);
        }
    }

    @Test
    void notificationTimeoutBoundsTheDeliveryToAReceiverThatNeverAnswers() throws Exception {
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--notificationTimeout", String.valueOf(FLAG_MS));
                HangingPeer peer = HangingPeer.start()) {
            subscribe(s, peer);
            create(s, "urn:ngsi-ld:T:1");
            long accepted = peer.awaitAccepted(1);
            long failed = awaitMetric(s, "cor_ngsild_notifications_total{outcome=\"failed\"}", 1);
            assertGaveUpAtTheFlag("the notification", TimeUnit.NANOSECONDS.toMillis(failed - accepted));
            assertEquals(0, s.metrics().valueOrZero("cor_ngsild_notifications_total{outcome=\"sent\"}"));
        }
    }

    @Test
    void notificationQueueBoundsTheNoticesHeldBehindABusyReceiver() throws Exception {
        // one notice may wait while the first is out (for as long as the 60 s deadline: the whole test)
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--notificationQueue", "1",
                        "--notificationTimeout", "60000");
                HangingPeer peer = HangingPeer.start()) {
            subscribe(s, peer);
            create(s, "urn:ngsi-ld:T:1");
            peer.awaitAccepted(1); // the first notification is out: it no longer holds a place in the queue
            for (int i = 2; i <= 4; i++) {
                create(s, "urn:ngsi-ld:T:" + i);
            }
            PromText m = s.metrics();
            // 2 is queued; 3 and 4 find the queue of one full (the default of 1024 would take all three)
            assertEquals(2, m.valueOrZero("cor_ngsild_notifications_total{outcome=\"overflowed\"}"), "overflowed");
            HttpResponse<String> sub = s.send("GET", "/ngsi-ld/v1/subscriptions/urn:ngsi-ld:Subscription:flags", null);
            assertTrue(sub.body().contains("\"timesFailed\":2"), "each overflow is a failure of the subscription: "
                    + sub.body());
        }
    }

    @Test
    void forwardTimeoutBoundsAForwardToASourceThatNeverAnswers() throws Exception {
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--forwardTimeout", String.valueOf(FLAG_MS));
                HangingPeer peer = HangingPeer.start()) {
            HttpResponse<String> reg = s.send("POST", "/ngsi-ld/v1/csourceRegistrations",
                    "{\"id\":\"urn:ngsi-ld:ContextSourceRegistration:flags\",\"type\":\"ContextSourceRegistration\","
                            + "\"information\":[{\"entities\":[{\"type\":\"T\"}]}],\"endpoint\":\"" + peer.url("") + "\"}");
            assertEquals(201, reg.statusCode(), reg.body());
            long t0 = System.nanoTime();
            HttpResponse<String> r = s.send("GET", "/ngsi-ld/v1/entities?type=T", null);
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(1, peer.accepted(), "the query was forwarded");
            assertGaveUpAtTheFlag("the forward", took);
            HttpResponse<String> status = s.send("GET",
                    "/ngsi-ld/v1/csourceRegistrations/urn:ngsi-ld:ContextSourceRegistration:flags", null);
            assertTrue(status.body().contains("\"timesFailed\":1"), "the forward counts as failed: " + status.body());
        }
    }

    @Test
    void brokerIdNamesTheBrokerInTheViaOfItsForwards() throws Exception {
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--brokerId", "broker-of-the-flags-test",
                "--forwardTimeout", String.valueOf(FLAG_MS));
                HangingPeer peer = HangingPeer.start()) {
            HttpResponse<String> reg = s.send("POST", "/ngsi-ld/v1/csourceRegistrations",
                    "{\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[{\"type\":\"T\"}]}],"
                            + "\"endpoint\":\"" + peer.url("") + "\"}");
            assertEquals(201, reg.statusCode(), reg.body());
            assertEquals(200, s.send("GET", "/ngsi-ld/v1/entities?type=T", null).statusCode());
            String head = peer.requestHead(0);
            assertTrue(head.toLowerCase(java.util.Locale.ROOT).matches("(?s).*\r\nvia: [^\r]*broker-of-the-flags-test.*"),
                    "the forward names the broker: " + head);
        }
    }

    private void subscribe(ServerProcess s, HangingPeer peer) throws Exception {
        HttpResponse<String> r = s.send("POST", "/ngsi-ld/v1/subscriptions",
                "{\"id\":\"urn:ngsi-ld:Subscription:flags\",\"type\":\"Subscription\",\"entities\":[{\"type\":\"T\"}],"
                        + "\"notification\":{\"endpoint\":{\"uri\":\"" + peer.url("/notify") + "\"}}}");
        assertEquals(201, r.statusCode(), r.body());
    }

    private void create(ServerProcess s, String id) throws Exception {
        HttpResponse<String> r = s.send("POST", "/ngsi-ld/v1/entities", "{\"id\":\"" + id + "\",\"type\":\"T\"}");
        assertEquals(201, r.statusCode(), r.body());
    }

    /** A TCP peer that accepts every connection, reads nothing and never answers, until closed. */
    private static final class HangingPeer implements AutoCloseable {
        private final ServerSocket listener;
        private final List<Socket> held = new CopyOnWriteArrayList<>();
        private final AtomicLong lastAcceptNanos = new AtomicLong();

        private HangingPeer(ServerSocket listener) {
            this.listener = listener;
        }

        static HangingPeer start() throws IOException {
            HangingPeer p = new HangingPeer(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
            Thread t = new Thread(p::acceptAll, "hanging-peer");
            t.setDaemon(true);
            t.start();
            return p;
        }

        private void acceptAll() {
            try {
                while (true) {
                    Socket c = listener.accept();
                    held.add(c);
                    lastAcceptNanos.set(System.nanoTime());
                }
            } catch (IOException closed) {
                // close() ends it
            }
        }

        String url(String path) {
            return "http://127.0.0.1:" + listener.getLocalPort() + path;
        }

        /** The head of the request on the {@code i}th connection, as it was sent. */
        String requestHead(int i) throws IOException {
            Socket c = held.get(i);
            c.setSoTimeout(10_000);
            java.io.ByteArrayOutputStream head = new java.io.ByteArrayOutputStream();
            java.io.InputStream in = c.getInputStream();
            while (!head.toString(java.nio.charset.StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    break;
                }
                head.write(b);
            }
            return head.toString(java.nio.charset.StandardCharsets.ISO_8859_1);
        }

        int accepted() {
            return held.size();
        }

        /** Waits until {@code n} connections came; returns when the last one did (System.nanoTime()). */
        long awaitAccepted(int n) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (held.size() < n) {
                assertTrue(System.nanoTime() < deadline, "no " + n + " connections came");
                Thread.sleep(5);
            }
            return lastAcceptNanos.get();
        }

        @Override
        public void close() throws IOException {
            listener.close();
            for (Socket c : held) {
                c.close();
            }
        }
    }
}
