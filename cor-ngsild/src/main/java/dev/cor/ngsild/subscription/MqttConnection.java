package dev.cor.ngsild.subscription;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;

import org.eclipse.paho.client.mqttv3.IMqttActionListener;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.IMqttToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.ScheduledExecutorPingSender;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

import dev.cor.rest.OutboundPolicy;
import dev.cor.rest.client.CorRestClientException;
import dev.cor.rest.client.TlsFailure;

/**
 * One Paho client connected to one MQTT broker, with everything it runs on: its threads (an
 * executor of its own, so that none starts once it is closed) and its sockets
 * ({@link MqttSockets}). {@link #open} connects or leaves nothing behind; {@link #close} ends
 * all of it, in whatever state Paho is. Every call into Paho here may take Paho's monitors:
 * never on a loop thread - {@link MqttNotifier} calls from helper threads.
 */
final class MqttConnection implements MqttCallback {
    private static final System.Logger LOG = System.getLogger(MqttConnection.class.getName());
    /** Paho's threads of one connection: connect, receiver, sender, callback (and a ping now and then). */
    private static final int THREADS = 4;
    /** QoS 1 notifications awaiting their PUBACK at once; a sender per subscription has one out at a time. */
    static final int MAX_INFLIGHT = 256;
    /** How long a polite close waits for its DISCONNECT to be written. */
    private static final long DISCONNECT_MS = 200;
    /** How long a close waits for Paho's connect thread (a name lookup under way may hold it). */
    private static final long CONNECT_THREAD_MS = 10_000;

    final MqttEndpoint endpoint;
    private final MqttAsyncClient client;
    private final PahoThreads threads;
    private final MqttSockets sockets;
    private final AtomicBoolean closing = new AtomicBoolean();
    private final Consumer<MqttConnection> onLost;
    private volatile boolean usable = true;

    private MqttConnection(MqttEndpoint endpoint, MqttAsyncClient client, PahoThreads threads,
            MqttSockets sockets, Consumer<MqttConnection> onLost) {
        this.endpoint = endpoint;
        this.client = client;
        this.threads = threads;
        this.sockets = sockets;
        this.onLost = onLost;
    }

    /**
     * Connects to the endpoint's broker, waiting for its CONNACK until {@code timeoutMs} has
     * passed. On a helper thread (it blocks). Whatever fails, what was opened is closed before
     * this returns.
     *
     * @param tls    the TLS of an {@code mqtts} endpoint (unused for {@code mqtt})
     * @param policy asked with the broker's address before connecting
     * @param onLost told (on one of Paho's threads) when the connection is lost later - the
     *               broker closed it, the network failed - so that its owner closes it
     * @throws MqttFailure why not, in words that carry nothing the peer sent
     */
    static MqttConnection open(MqttEndpoint endpoint, long timeoutMs, SSLContext tls, OutboundPolicy policy,
            Consumer<MqttConnection> onLost) throws MqttFailure {
        String clientId = "cor-ngsild-" + UUID.randomUUID();
        MqttSockets sockets = new MqttSockets(endpoint.host(), endpoint.tls() ? tls : null, policy, timeoutMs);
        PahoThreads threads = new PahoThreads(clientId, sockets);
        MqttConnection c = null;
        boolean connected = false;
        try {
            // always Paho's tcp module: the TLS of mqtts is the sockets' (MqttSockets)
            MqttAsyncClient client = new MqttAsyncClient("tcp://" + endpoint.hostForUri() + ":" + endpoint.port(), clientId,
                    new MemoryPersistence(), new ScheduledExecutorPingSender(threads), threads);
            c = new MqttConnection(endpoint, client, threads, sockets, onLost);
            client.setCallback(c);
            client.connect(options(endpoint, sockets, timeoutMs)).waitForCompletion(timeoutMs);
            connected = true;
            return c;
        } catch (MqttException e) {
            throw new MqttFailure(reason(e, endpoint, timeoutMs, "no CONNACK from"));
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.WARNING, "cor-ngsild: connecting to the MQTT broker " + endpoint + " failed", e);
            throw new MqttFailure("connecting to the MQTT broker " + endpoint + " failed (" + e.getClass().getSimpleName() + ")");
        } finally {
            if (!connected) { // timed out, refused, lost, interrupted: nothing of it stays
                if (c != null) {
                    c.close(false);
                } else {
                    sockets.close();
                    threads.shutdownNow();
                }
            }
        }
    }

    private static MqttConnectOptions options(MqttEndpoint endpoint, MqttSockets sockets, long timeoutMs) {
        MqttConnectOptions o = new MqttConnectOptions();
        // an explicit 3.1.1: with the default, Paho tries 3.1 again after a failure
        o.setMqttVersion(MqttConnectOptions.MQTT_VERSION_3_1_1);
        o.setCleanSession(true);
        o.setAutomaticReconnect(false);
        o.setConnectionTimeout((int) Math.max(1, (timeoutMs + 999) / 1000));
        o.setMaxInflight(MAX_INFLIGHT);
        o.setSocketFactory(sockets);
        if (endpoint.user() != null) {
            o.setUserName(endpoint.user());
            if (endpoint.password() != null) {
                o.setPassword(endpoint.password().toCharArray());
            }
        }
        return o;
    }

    /**
     * Paho's threads for one client, all ours: once {@link #close} shuts them down, none starts
     * again. Paho hands its connect thread to {@link #execute} (its receiver, sender and callback
     * to {@code submit}, its pings to {@code schedule}): the end of that one opens the sockets'
     * reads ({@link MqttSockets#connectThreadEnded}).
     */
    private static final class PahoThreads extends ScheduledThreadPoolExecutor {
        private final MqttSockets sockets;
        private volatile boolean connectStarted;

        PahoThreads(String clientId, MqttSockets sockets) {
            super(THREADS, new java.util.concurrent.ThreadFactory() {
                private final AtomicInteger n = new AtomicInteger();

                @Override
                public Thread newThread(Runnable r) {
                    // Paho renames them as it uses them ("MQTT Rec: <client id>", ...)
                    Thread t = new Thread(r, "MQTT " + clientId + "-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                }
            });
            this.sockets = sockets;
            setKeepAliveTime(1, TimeUnit.SECONDS);
            allowCoreThreadTimeOut(true); // the connect thread's worker goes once CONNECT is queued
            // a ping scheduled a keep-alive ahead must not hold a thread after the close
            setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
            setRemoveOnCancelPolicy(true);
        }

        @Override
        public void execute(Runnable connectThread) {
            connectStarted = true;
            try {
                super.execute(() -> {
                    try {
                        connectThread.run();
                    } finally {
                        sockets.connectThreadEnded();
                    }
                });
            } catch (RuntimeException rejected) {
                sockets.connectThreadEnded();
                throw rejected;
            }
        }
    }

    /** Whether notifications may still be published on it: connected, not lost, not closing. */
    boolean usable() {
        return usable;
    }

    /** No notification may take it any more: it is being closed. */
    void retire() {
        usable = false;
    }

    /**
     * Hands a message to Paho and returns at once: the future completes when it is sent (QoS 0)
     * or acknowledged (QoS 1), exceptionally with Paho's reason. Not on a loop thread (it takes
     * Paho's monitors).
     */
    CompletableFuture<Void> publish(String topic, byte[] payload, int qos) throws MqttException {
        CompletableFuture<Void> done = new CompletableFuture<>();
        MqttMessage m = new MqttMessage(payload);
        m.setQos(qos);
        client.publish(topic, m, null, new IMqttActionListener() {
            @Override
            public void onSuccess(IMqttToken token) {
                done.complete(null);
            }

            @Override
            public void onFailure(IMqttToken token, Throwable e) {
                done.completeExceptionally(e != null ? e : new MqttException(MqttException.REASON_CODE_CLIENT_EXCEPTION));
            }
        });
        return done;
    }

    /**
     * Ends the connection and everything it runs on; idempotent, never throws. {@code polite}:
     * a connected client first sends DISCONNECT (waiting {@link #DISCONNECT_MS} at most). Blocks
     * a little (Paho stops its threads by polling): a helper thread's work.
     */
    void close(boolean polite) {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        usable = false;
        threads.shutdown(); // no thread of Paho's starts from now on
        if (polite && client.isConnected()) {
            try {
                client.disconnectForcibly(0, DISCONNECT_MS, true);
            } catch (MqttException e) {
                // impolite it is
            }
        }
        sockets.close(); // every thread of Paho's still reading or writing sees its stream end
        // Paho's connect thread first: stopping the receiver while that thread waits to see it
        // running would have it wait for ever (it ends now anyway: no socket, no thread to start)
        if (threads.connectStarted && !sockets.awaitConnectThread(CONNECT_THREAD_MS)) {
            LOG.log(System.Logger.Level.WARNING, "cor-ngsild: Paho's connect thread for " + endpoint
                    + " did not end within " + CONNECT_THREAD_MS + " ms of its close");
        }
        try {
            client.close(true);
        } catch (MqttException e) {
            int code = e.getReasonCode();
            // Paho closes only a disconnected client: one still connecting or connected is shut
            // down first (disconnectForcibly on a client that never got that far would announce
            // a lost connection it never had)
            if (code == MqttException.REASON_CODE_CONNECT_IN_PROGRESS || code == MqttException.REASON_CODE_CLIENT_CONNECTED) {
                try {
                    client.disconnectForcibly(0, DISCONNECT_MS, false);
                    client.close(true);
                } catch (MqttException again) {
                    LOG.log(System.Logger.Level.DEBUG, () -> "cor-ngsild: closing the MQTT client of " + endpoint
                            + ": Paho reason " + again.getReasonCode());
                }
            }
        }
        threads.shutdownNow();
    }

    @Override
    public void connectionLost(Throwable cause) {
        usable = false;
        onLost.accept(this);
    }

    @Override
    public void messageArrived(String topic, MqttMessage message) {
        // a publisher subscribes to nothing: whatever a broker sends unasked is dropped
    }

    @Override
    public void deliveryComplete(IMqttDeliveryToken token) {
        // the publish's own listener completes its future
    }

    /**
     * Why an MQTT operation failed, in words of our own: the endpoint (as the subscriber gave
     * it, without its user information), what failed, and Paho's reason code - never a message
     * text that may carry what the peer sent.
     */
    static String reason(MqttException e, MqttEndpoint endpoint, long timeoutMs, String timeoutPhrase) {
        String broker = "the MQTT broker " + endpoint;
        Throwable cause = e.getCause();
        return switch (e.getReasonCode()) {
            case MqttException.REASON_CODE_CLIENT_TIMEOUT -> timeoutPhrase + " " + broker + " within " + timeoutMs + " ms";
            case MqttException.REASON_CODE_SERVER_CONNECT_ERROR -> "cannot connect to " + broker;
            case MqttException.REASON_CODE_CONNECTION_LOST -> cause instanceof MqttSockets.MqttPeerException p
                    ? broker + " " + p.getMessage() : broker + " closed the connection";
            case MqttException.REASON_CODE_INVALID_MESSAGE -> broker + " sent what is not MQTT";
            case MqttException.REASON_CODE_INVALID_PROTOCOL_VERSION -> refused(broker, "unacceptable protocol version", 1);
            case MqttException.REASON_CODE_INVALID_CLIENT_ID -> refused(broker, "identifier rejected", 2);
            case MqttException.REASON_CODE_BROKER_UNAVAILABLE -> refused(broker, "server unavailable", 3);
            case MqttException.REASON_CODE_FAILED_AUTHENTICATION -> refused(broker, "bad user name or password", 4);
            case MqttException.REASON_CODE_NOT_AUTHORIZED -> refused(broker, "not authorized", 5);
            case MqttException.REASON_CODE_MAX_INFLIGHT -> "more than " + MAX_INFLIGHT + " notifications in flight to " + broker;
            case MqttException.REASON_CODE_CLIENT_NOT_CONNECTED, MqttException.REASON_CODE_CLIENT_DISCONNECTING,
                    MqttException.REASON_CODE_CLIENT_CLOSED -> "the connection to " + broker + " was closed";
            case MqttException.REASON_CODE_CLIENT_EXCEPTION -> cause(cause, broker);
            default -> "the connection to " + broker + " failed (Paho reason " + e.getReasonCode() + ")";
        };
    }

    private static String refused(String broker, String why, int code) {
        return broker + " refused the connection: " + why + " (CONNACK " + code + ")";
    }

    private static String cause(Throwable cause, String broker) {
        if (cause instanceof MqttSockets.MqttPeerException p) {
            return broker + " " + p.getMessage();
        }
        if (cause instanceof MqttSockets.HandshakeTimeout) {
            return "TLS with " + broker + " failed: " + TlsFailure.HANDSHAKE_TIMEOUT.words();
        }
        if (cause instanceof SocketTimeoutException) {
            return "connecting to " + broker + " timed out";
        }
        if (cause instanceof UnknownHostException) {
            return "the host of " + broker + " did not resolve";
        }
        if (cause instanceof ConnectException || cause instanceof NoRouteToHostException) {
            return "cannot connect to " + broker;
        }
        if (cause instanceof CorRestClientException denied && denied.kind() == CorRestClientException.Kind.DENIED) {
            return OutboundPolicy.REFUSAL; // one text, whatever the address
        }
        if (cause instanceof SSLException) {
            return "TLS with " + broker + " failed: " + TlsFailure.of(cause).words();
        }
        if (cause instanceof IOException) {
            return "the connection to " + broker + " failed";
        }
        return "the connection to " + broker + " failed ("
                + (cause == null ? "MqttException" : cause.getClass().getSimpleName()) + ")";
    }

    /** An MQTT connect or publish that failed: its message is the reason the subscription's status shows. */
    static final class MqttFailure extends Exception {
        private static final long serialVersionUID = 1L;

        MqttFailure(String reason) {
            super(reason, null, false, false);
        }
    }
}
