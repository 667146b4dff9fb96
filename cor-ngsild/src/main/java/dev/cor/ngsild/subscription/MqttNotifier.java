package dev.cor.ngsild.subscription;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.eclipse.paho.client.mqttv3.MqttException;

import com.fasterxml.jackson.databind.node.ObjectNode;

import javax.net.ssl.SSLContext;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoTimeoutException;
import dev.cor.ngsild.subscription.MqttConnection.MqttFailure;
import dev.cor.rest.OutboundPolicy;
import dev.cor.rest.CorRestJson;

/**
 * MQTT notifications ({@code mqtt://}, {@code mqtts://}; MQTT 3.1.1; QoS 0 or 1; the topic is the
 * URI's path) through the Eclipse Paho client, one {@link MqttConnection} per broker and user,
 * kept open and opened again once lost.
 * <p>
 * A notification waits for its broker with its own deadline (the notification timeout), and no
 * thread waits with it: inside a coroutine it parks ({@link CorCo#await}), on a worker the worker
 * waits. Paho blocks and takes monitors, so every call into it runs off the loops: connects and
 * closes on this notifier's helper threads ({@code cor-mqtt-N}), a publish - which only hands the
 * message to Paho's sender - through {@link CorCo#blocking}. Its PUBACK (or, for QoS 0, its
 * sending) completes a future the notification awaits.
 * <p>
 * A broker that fails costs little: one connect at a time per broker, whatever the number of
 * subscriptions waiting for it (they all await that one); a connect or publish that fails or
 * times out closes its connection and everything Paho opened for it ({@link MqttConnection#close});
 * and the failure is remembered for a while - the notification timeout, at least a second,
 * doubling with each failure in a row up to {@link #MAX_FAIL_FAST_MS} - during which
 * notifications to that broker fail at once, counted as failures with the reason. A success
 * forgets it.
 * <p>
 * Thread-safe: any loop's coroutine or worker publishes.
 */
final class MqttNotifier implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(MqttNotifier.class.getName());
    /** The longest a failure is remembered. */
    static final long MAX_FAIL_FAST_MS = 60_000;
    /** The most brokers (and users) with a connection or a remembered failure at once. */
    static final int MAX_BROKERS = 1024;
    /** Helper threads for connects and closes, shared by every broker. */
    private static final int HELPERS = 8;

    private final long timeoutMs;
    private final SSLContext tls;
    private final OutboundPolicy policy;
    private final long firstFailFastMs;
    private final Map<String, Broker> brokers = new ConcurrentHashMap<>();
    private final ThreadPoolExecutor helpers;
    private volatile boolean closed;

    /** {@code tls} for {@code mqtts://} brokers; {@code policy} asked with each broker's address before connecting. */
    MqttNotifier(long timeoutMs, SSLContext tls, OutboundPolicy policy) {
        this.timeoutMs = timeoutMs;
        this.tls = tls;
        this.policy = policy;
        this.firstFailFastMs = Math.min(MAX_FAIL_FAST_MS, Math.max(1_000, timeoutMs));
        AtomicInteger n = new AtomicInteger();
        this.helpers = new ThreadPoolExecutor(HELPERS, HELPERS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "cor-mqtt-" + n.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
        helpers.allowCoreThreadTimeOut(true);
    }

    /**
     * Publishes a notification as the MQTT binding carries it: {@code {"metadata": {headers},
     * "body": notification}}. Returns {@code null} when the broker took it, else why not. In a
     * coroutine or on a worker, never on a loop thread outside a coroutine.
     */
    String publish(Subscription d, byte[] notification, List<String[]> headers) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        MqttEndpoint endpoint = MqttEndpoint.parse(d.endpoint().uri());
        if (endpoint.host() == null) {
            return "the MQTT endpoint names no host";
        }
        if (endpoint.topic() == null) {
            return "the MQTT endpoint " + endpoint + " names no topic";
        }
        Broker broker = broker(endpoint);
        if (broker == null) {
            return "the broker notifies " + MAX_BROKERS + " MQTT brokers already: not " + endpoint;
        }
        String remembered = broker.failingFast();
        if (remembered != null) {
            return remembered;
        }
        ObjectNode message = CorRestJson.mapper().createObjectNode();
        ObjectNode metadata = message.putObject("metadata");
        for (String[] h : headers) {
            metadata.put(h[0], h[1]);
        }
        message.set("body", CorRestJson.mapper().readTree(notification));
        byte[] payload = CorRestJson.mapper().writeValueAsBytes(message);
        int qos = d.endpoint().mqttQos();
        MqttConnection c;
        try {
            c = CorCo.await(broker.connection(), left(deadline));
        } catch (CorCoTimeoutException e) {
            return "connecting to the MQTT broker " + endpoint + " did not finish within " + timeoutMs + " ms";
        } catch (MqttFailure e) {
            return e.getMessage();
        }
        CompletableFuture<Void> done;
        try {
            done = CorCo.blocking(() -> c.publish(endpoint.topic(), payload, qos), left(deadline));
        } catch (CorCoTimeoutException e) {
            return "the MQTT message to " + endpoint + " was not handed over within " + timeoutMs + " ms";
        } catch (MqttException e) {
            if (e.getReasonCode() != MqttException.REASON_CODE_MAX_INFLIGHT) {
                broker.lost(c); // not connected after all
            }
            return MqttConnection.reason(e, endpoint, timeoutMs, "no answer from");
        }
        try {
            CorCo.await(done, left(deadline));
            broker.succeeded();
            return null;
        } catch (CorCoTimeoutException e) {
            // a broker that takes a connection and never acknowledges is a failing broker
            String why = (qos == 0 ? "the MQTT message could not be sent to " : "no PUBACK from the MQTT broker ")
                    + endpoint + " within " + timeoutMs + " ms";
            broker.failed(c, why);
            return why;
        } catch (MqttException e) {
            String why = MqttConnection.reason(e, endpoint, timeoutMs, "no answer from");
            broker.lost(c);
            return why;
        }
    }

    private static long left(long deadlineNanos) {
        long left = deadlineNanos - System.nanoTime();
        return left <= 0 ? 0 : (left + 999_999) / 1_000_000;
    }

    /** The broker of {@code endpoint}, made if need be; {@code null} past {@link #MAX_BROKERS}. */
    private Broker broker(MqttEndpoint endpoint) {
        Broker b = brokers.get(endpoint.key());
        if (b != null) {
            return b;
        }
        if (brokers.size() >= MAX_BROKERS) {
            long now = System.nanoTime();
            brokers.values().removeIf(x -> x.idle(now)); // brokers with nothing open, in flight or remembered
            if (brokers.size() >= MAX_BROKERS) {
                return null;
            }
        }
        return brokers.computeIfAbsent(endpoint.key(), k -> new Broker(endpoint));
    }

    /**
     * Runs {@code r} on a helper thread. After {@link #close}, right here: all that can come then
     * is the close of a connection {@link #close} closed already, a no-op.
     */
    private void onHelper(Runnable r) {
        try {
            helpers.execute(r);
        } catch (RejectedExecutionException stopped) {
            r.run();
        }
    }

    /**
     * One MQTT broker as one user: its connection (or the connect under way, which every
     * notification to it joins), and the failure remembered. Any thread.
     */
    private final class Broker {
        final MqttEndpoint endpoint;
        /** The connect under way, or done: its connection, or its failure. Replaced, never cleared. */
        private final AtomicReference<CompletableFuture<MqttConnection>> current = new AtomicReference<>();
        private volatile Remembered failure;
        private volatile int failuresInARow; // only approximate under races: it sizes a window

        Broker(MqttEndpoint endpoint) {
            this.endpoint = endpoint;
        }

        /** The remembered failure while it is in force, as a notification's reason; else {@code null}. */
        String failingFast() {
            Remembered f = failure;
            if (f == null) {
                return null;
            }
            long left = f.untilNanos() - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            return f.why() + "; not tried again for " + TimeUnit.NANOSECONDS.toMillis(left) + " ms";
        }

        /** A usable connection, or the connect every notification to this broker awaits now. */
        CompletableFuture<MqttConnection> connection() {
            while (true) {
                CompletableFuture<MqttConnection> f = current.get();
                if (f != null && (!f.isDone() || usable(f))) {
                    return f;
                }
                CompletableFuture<MqttConnection> next = new CompletableFuture<>();
                if (current.compareAndSet(f, next)) {
                    onHelper(() -> connect(next));
                    return next;
                }
            }
        }

        private boolean usable(CompletableFuture<MqttConnection> f) {
            MqttConnection c = f.isCompletedExceptionally() ? null : f.getNow(null);
            return c != null && c.usable();
        }

        /** On a helper thread: the one connect to this broker now. */
        private void connect(CompletableFuture<MqttConnection> next) {
            if (closed) {
                next.completeExceptionally(new MqttFailure("the broker is stopping"));
                return;
            }
            MqttConnection c;
            try {
                c = MqttConnection.open(endpoint, timeoutMs, tls, policy, this::lost);
            } catch (MqttFailure e) {
                remember(e.getMessage());
                next.completeExceptionally(e);
                return;
            } catch (RuntimeException | Error e) {
                next.completeExceptionally(new MqttFailure("connecting to the MQTT broker " + endpoint + " failed"));
                throw e;
            }
            if (brokers.get(endpoint.key()) != this) {
                // evicted as idle while this connect began: a connection here would be nobody's to close
                c.close(true);
                next.completeExceptionally(new MqttFailure("connecting to the MQTT broker " + endpoint
                        + " crossed its eviction: the next notification connects again"));
                return;
            }
            next.complete(c);
            if (closed) {
                c.close(true); // the notifier closed meanwhile and may not have seen it
            }
        }

        void succeeded() {
            if (failuresInARow != 0 || failure != null) { // no write (and no cache-line bounce) on the common path
                failuresInARow = 0;
                failure = null;
            }
        }

        /** The connection failed the way a dead broker does: closed, and the failure remembered. */
        void failed(MqttConnection c, String why) {
            remember(why);
            lost(c);
        }

        /** The connection is gone (Paho lost it, a publish found it closed): closed on a helper; the next notification connects anew. */
        void lost(MqttConnection c) {
            c.retire(); // no notification takes it from now on
            onHelper(() -> c.close(false));
        }

        private void remember(String why) {
            int n = Math.min(++failuresInARow, 30);
            long window = Math.min(MAX_FAIL_FAST_MS, firstFailFastMs << Math.min(n - 1, 16));
            failure = new Remembered(why, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(window));
            // once per window, not per notification: at most one line a minute per dead broker
            LOG.log(System.Logger.Level.INFO, () -> "cor-ngsild: " + why + "; notifications to " + endpoint
                    + " fail at once for " + window + " ms");
        }

        /** Nothing open, nothing under way, nothing remembered: it may go. */
        boolean idle(long now) {
            CompletableFuture<MqttConnection> f = current.get();
            Remembered r = failure;
            return (f == null || (f.isDone() && !usable(f))) && (r == null || now - r.untilNanos() >= 0);
        }

        void close() {
            CompletableFuture<MqttConnection> f = current.get();
            if (f != null && f.isDone() && !f.isCompletedExceptionally()) {
                f.getNow(null).close(true);
            }
        }
    }

    /** A failure and until when notifications fail at once because of it. */
    private record Remembered(String why, long untilNanos) {
    }

    /**
     * Closes every connection (politely: DISCONNECT first) and stops the helpers; a connect under
     * way closes its connection when it ends.
     */
    @Override
    public void close() {
        closed = true;
        for (Broker b : brokers.values()) {
            b.close();
        }
        helpers.shutdown();
    }
}
