package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.base.testing.TestCa;
import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.subscription.LiveSubscription;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code mqtts://} notifications through real mosquitto brokers with TLS listeners, their
 * certificates made by a CA of the test: delivered when the broker's SSLContext trusts that CA,
 * and otherwise a failure in the subscription's status that says which check failed - not
 * trusted, not for this host, expired.
 */
class MqttsNotificationTest {
    private static TestCa ca;
    private static Mosquitto good;
    private static Mosquitto wrongHost;
    private static Mosquitto expired;
    private static SSLContext trust;

    @BeforeAll
    static void start() throws Exception {
        ca = TestCa.make("cor mqtts test CA");
        trust = ca.trusting();
        good = tls(ca.issue(), trust);
        wrongHost = tls(ca.issue("san=dns:elsewhere.example", null, "EC"), trust);
        expired = tls(ca.issue(TestCa.LOCAL, "-10d", "EC"), trust);
    }

    private static Mosquitto tls(TestCa.Issued cert, SSLContext trust) {
        return Mosquitto.startTls(ca.caPem(), cert.chainPem, cert.keyPem, trust);
    }

    @AfterAll
    static void stop() throws Exception {
        good.close();
        wrongHost.close();
        expired.close();
        ca.delete();
    }

    private static String subscribe(Ngsi api, String type, Mosquitto to, String topic) {
        String sub = Entities.id("Subscription");
        Checks.status(api.post("/subscriptions").json(Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}],
                 "notification": {"endpoint": {"uri": "mqtts://localhost:%d/%s",
                    "notifierInfo": [{"key": "MQTT-QoS", "value": "1"}]}}}""", sub, type, to.port(), topic)).send(), 201);
        Checks.status(api.post("/entities").json(Json.obj("""
                {"id": "%s", "type": "%s"}""", Entities.id(type), type)).send(), 201);
        return sub;
    }

    private static String failureOf(TestBroker broker, String sub) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            LiveSubscription s = broker.subscriptions().get("", sub);
            if (s != null && s.lastFailureReason() != null) {
                return s.lastFailureReason();
            }
            Thread.sleep(20); // polling a status with a deadline
        }
        throw new AssertionError("no failure of " + sub + " within 20 s");
    }

    @Test
    void a_notification_reaches_an_mqtts_broker_whose_ca_the_broker_trusts() throws Exception {
        try (TestBroker broker = TestBroker.start(b -> b.sslContext(trust), s -> { })) {
            String type = Entities.uniqueName("Mqtts");
            String topic = "cor/tls/" + type;
            LinkedBlockingQueue<JsonNode> got = new LinkedBlockingQueue<>();
            MqttClient listener = good.listen(topic, got);
            try {
                String sub = subscribe(new Ngsi(broker.baseUrl()), type, good, topic);
                JsonNode m = got.poll(20, TimeUnit.SECONDS);
                assertNotNull(m, "no MQTT message over TLS on " + topic + "; status: "
                        + broker.subscriptions().get("", sub).lastFailureReason());
                assertEquals(sub, m.path("body").path("subscriptionId").asText());
                assertNull(broker.subscriptions().get("", sub).lastFailureReason());
            } finally {
                listener.disconnect();
                listener.close();
            }
        }
    }

    @Test
    void an_mqtts_broker_whose_ca_the_broker_does_not_trust_is_a_failure_saying_so() throws Exception {
        try (TestBroker broker = TestBroker.start()) { // the JDK's trust: not the test's CA
            String type = Entities.uniqueName("Mqtts");
            String sub = subscribe(new Ngsi(broker.baseUrl()), type, good, "cor/tls/" + type);
            assertEquals("TLS with the MQTT broker mqtts://localhost:" + good.port() + " failed: its certificate is not trusted",
                    failureOf(broker, sub));
        }
    }

    @Test
    void an_mqtts_broker_with_a_certificate_for_another_host_is_a_failure_saying_so() throws Exception {
        try (TestBroker broker = TestBroker.start(b -> b.sslContext(trust), s -> { })) {
            String type = Entities.uniqueName("Mqtts");
            String sub = subscribe(new Ngsi(broker.baseUrl()), type, wrongHost, "cor/tls/" + type);
            String reason = failureOf(broker, sub);
            assertEquals(true, reason.endsWith("failed: its certificate is not for this host name"), reason);
        }
    }

    @Test
    void an_mqtts_broker_with_an_expired_certificate_is_a_failure_saying_so() throws Exception {
        try (TestBroker broker = TestBroker.start(b -> b.sslContext(trust), s -> { })) {
            String type = Entities.uniqueName("Mqtts");
            String sub = subscribe(new Ngsi(broker.baseUrl()), type, expired, "cor/tls/" + type);
            String reason = failureOf(broker, sub);
            assertEquals(true, reason.endsWith("failed: its certificate has expired"), reason);
        }
    }
}
