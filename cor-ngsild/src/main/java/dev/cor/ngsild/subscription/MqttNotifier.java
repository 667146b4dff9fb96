package dev.cor.ngsild.subscription;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.base.CorCo;
import dev.cor.rest.CorRestJson;

/**
 * MQTT notifications ({@code mqtt://}, {@code mqtts://}; MQTT 3.1.1; QoS 0 or 1; the topic is the
 * URI's path) through the Eclipse Paho client. Paho blocks its caller, so every connect and
 * publish runs through {@link CorCo#blocking} with a deadline: inside a coroutine the coroutine
 * waits and its loop goes on; never on a loop thread itself. One connection per broker and user,
 * kept open and reopened when it drops. Thread-safe.
 */
final class MqttNotifier implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(MqttNotifier.class.getName());

    private final long timeoutMs;
    private final Map<String, MqttClient> clients = new ConcurrentHashMap<>();

    MqttNotifier(long timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    /**
     * Publishes a notification as the MQTT binding carries it: {@code {"metadata": {headers},
     * "body": notification}}. Returns {@code null} when the broker took it, else why not.
     */
    String publish(Subscription d, byte[] notification, List<String[]> headers) throws Exception {
        URI uri = URI.create(d.endpoint().uri());
        String topic = uri.getRawPath() == null || uri.getRawPath().length() <= 1 ? null : uri.getPath().substring(1);
        if (topic == null) {
            return "the MQTT endpoint " + d.endpoint().uri() + " names no topic";
        }
        ObjectNode message = CorRestJson.mapper().createObjectNode();
        ObjectNode metadata = message.putObject("metadata");
        for (String[] h : headers) {
            metadata.put(h[0], h[1]);
        }
        message.set("body", CorRestJson.mapper().readTree(notification));
        byte[] payload = CorRestJson.mapper().writeValueAsBytes(message);
        int qos = d.endpoint().mqttQos();
        String server = (uri.getScheme().equals("mqtts") ? "ssl://" : "tcp://") + uri.getHost() + ":"
                + (uri.getPort() > 0 ? uri.getPort() : uri.getScheme().equals("mqtts") ? 8883 : 1883);
        String userInfo = uri.getUserInfo();
        String key = server + (userInfo == null ? "" : "|" + userInfo);
        return CorCo.blocking(() -> {
            MqttClient c = connected(key, server, userInfo);
            MqttMessage m = new MqttMessage(payload);
            m.setQos(qos);
            try {
                c.publish(topic, m);
                return null;
            } catch (MqttException e) {
                drop(key, c);
                return "MQTT publish to " + server + " failed: " + e.getMessage();
            }
        }, timeoutMs);
    }

    /** The open connection to {@code server}, opened if need be. On a helper thread (it blocks). */
    private MqttClient connected(String key, String server, String userInfo) throws MqttException {
        MqttClient c = clients.get(key);
        if (c != null && c.isConnected()) {
            return c;
        }
        if (c != null) {
            drop(key, c);
        }
        MqttClient fresh = new MqttClient(server, "cor-ngsild-" + UUID.randomUUID(), new MemoryPersistence());
        fresh.setTimeToWait(timeoutMs);
        MqttConnectOptions o = new MqttConnectOptions();
        o.setMqttVersion(MqttConnectOptions.MQTT_VERSION_3_1_1);
        o.setCleanSession(true);
        o.setAutomaticReconnect(false);
        o.setConnectionTimeout((int) Math.max(1, (timeoutMs + 999) / 1000));
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            o.setUserName(colon < 0 ? userInfo : userInfo.substring(0, colon));
            if (colon >= 0) {
                o.setPassword(userInfo.substring(colon + 1).toCharArray());
            }
        }
        fresh.connect(o);
        MqttClient other = clients.putIfAbsent(key, fresh);
        if (other != null && other.isConnected()) {
            close(fresh); // another sender connected meanwhile
            return other;
        }
        clients.put(key, fresh);
        return fresh;
    }

    private void drop(String key, MqttClient c) {
        clients.remove(key, c);
        close(c);
    }

    private static void close(MqttClient c) {
        try {
            if (c.isConnected()) {
                c.disconnectForcibly(100, 100);
            }
            c.close(true);
        } catch (MqttException e) {
            LOG.log(System.Logger.Level.DEBUG, "cor-ngsild: closing an MQTT connection: " + e.getMessage());
        }
    }

    @Override
    public void close() {
        for (Map.Entry<String, MqttClient> e : clients.entrySet()) {
            drop(e.getKey(), e.getValue());
        }
    }

}
