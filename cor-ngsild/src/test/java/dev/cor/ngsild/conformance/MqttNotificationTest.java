package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.eclipse.paho.client.mqttv3.MqttClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.TestBroker;

/**
 * MQTT notifications (ETSI GS CIM 009 § 5.2.15 notifierInfo, the MQTT binding): end to end
 * through a real mosquitto the test starts on a free port - the topic from the endpoint's URI,
 * QoS 0 and 1, the message as {@code {"metadata": ..., "body": Notification}} - and a broker
 * that cannot be reached, counted as a failure.
 */
class MqttNotificationTest {
    static Mosquitto mosquitto;
    static TestBroker broker;
    static Ngsi api;

    @BeforeAll
    static void start() {
        mosquitto = Mosquitto.start();
        broker = TestBroker.start(b -> b.notificationTimeoutMs(2_000), s -> { });
        api = new Ngsi(broker.baseUrl());
    }

    @AfterAll
    static void stop() {
        broker.close();
        mosquitto.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "1"})
    void a_notification_is_published_on_the_uris_topic_with_its_metadata(String qos) throws Exception {
        String type = Entities.uniqueName("Mqtt");
        String topic = "cor/notifications/" + type;
        LinkedBlockingQueue<JsonNode> got = new LinkedBlockingQueue<>();
        MqttClient listener = mosquitto.listen(topic, got);
        try {
            String sub = Entities.id("Subscription");
            Checks.status(api.post("/subscriptions").json(Json.obj("""
                    {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}],
                     "notification": {"endpoint": {"uri": "mqtt://127.0.0.1:%d/%s",
                        "notifierInfo": [{"key": "MQTT-QoS", "value": "%s"}, {"key": "MQTT-Version", "value": "mqtt3.1.1"}],
                        "receiverInfo": [{"key": "fiware-service", "value": "cor"}]}}}""",
                    sub, type, mosquitto.port(), topic, qos)).send(), 201);
            String id = Entities.id(type);
            Checks.status(api.post("/entities").json(Json.obj("""
                    {"id": "%s", "type": "%s", "speed": {"type": "Property", "value": 33}}""", id, type)).send(), 201);
            JsonNode m = got.poll(10, TimeUnit.SECONDS);
            assertNotNull(m, "no MQTT message on " + topic);
            assertEquals("application/json", m.path("metadata").path("Content-Type").asText());
            assertEquals("cor", m.path("metadata").path("fiware-service").asText());
            JsonNode n = m.path("body");
            assertEquals("Notification", n.path("type").asText());
            assertEquals(sub, n.path("subscriptionId").asText());
            assertEquals(id, n.path("data").path(0).path("id").asText());
            assertEquals(33, n.path("data").path(0).path("speed").path("value").asInt());
        } finally {
            listener.disconnect();
            listener.close();
        }
    }

    @Test
    void an_unreachable_mqtt_broker_is_a_failure_in_the_status() {
        String type = Entities.uniqueName("Mqtt");
        String sub = Entities.id("Subscription");
        Checks.status(api.post("/subscriptions").json(Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}],
                 "notification": {"endpoint": {"uri": "mqtt://127.0.0.1:%d/nowhere"}}}""",
                sub, type, NotificationReceiver.refusingPort())).send(), 201);
        Checks.status(api.post("/entities").json(Json.obj("{\"id\": \"%s\", \"type\": \"%s\"}", Entities.id(type), type)).send(), 201);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        JsonNode s;
        do {
            s = Checks.okJson(api.get("/subscriptions/" + sub).send());
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no failure counted: " + s);
            }
            Thread.onSpinWait();
        } while (s.path("notification").path("timesFailed").asInt() < 1);
        assertEquals("failed", s.path("status").asText());
    }
}
