package dev.cor.server;

import static dev.cor.server.OutboundCalls.awaitLog;
import static dev.cor.server.OutboundCalls.create;
import static dev.cor.server.OutboundCalls.createWithContext;
import static dev.cor.server.OutboundCalls.detail;
import static dev.cor.server.OutboundCalls.notified;
import static dev.cor.server.OutboundCalls.queryWarnings;
import static dev.cor.server.OutboundCalls.register;
import static dev.cor.server.OutboundCalls.subscribe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.base.testing.TestCa;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The broker's outbound TLS through the jar: an https context server, notification receiver and
 * context source, each with a certificate a CA of the test signed, trusted through
 * {@code --trustStore}; and the same peers with a certificate of another CA, an expired one and
 * one for another host, each failing with what failed - in the 504, in the subscription's failure
 * (logged at warn), in the forward's warning.
 */
@Tag("process")
class OutboundTlsProcessTest {
    private static TestCa ca;
    private static TestCa other;
    /** Peer by what is wrong with its certificate ("good": nothing). */
    private static Map<String, OutboundPeer> peers;
    private static final Map<String, String> SAID = Map.of(
            "untrusted", "its certificate is not trusted",
            "expired", "its certificate has expired",
            "wrongHost", "its certificate is not for this host name");

    @BeforeAll
    static void makeCertificatesAndPeers() throws Exception {
        ca = TestCa.make("cor outbound test CA");
        other = TestCa.make("cor unknown test CA");
        peers = Map.of(
                "good", OutboundPeer.https(ca.issue().serverContext()),
                "untrusted", OutboundPeer.https(other.issue().serverContext()),
                "expired", OutboundPeer.https(ca.issue(TestCa.LOCAL, "-10d", "EC").serverContext()),
                "wrongHost", OutboundPeer.https(ca.issue("san=dns:elsewhere.example", null, "EC").serverContext()));
    }

    @AfterAll
    static void stopPeers() throws Exception {
        peers.values().forEach(OutboundPeer::close);
        ca.delete();
        other.delete();
    }

    private static ServerProcess broker(String... flags) throws Exception {
        String[] all = new String[flags.length + 4];
        System.arraycopy(new String[] {"--store", "memory", "--httpLoops", "1"}, 0, all, 0, 4);
        System.arraycopy(flags, 0, all, 4, flags.length);
        return ServerProcess.start(all);
    }

    @Test
    void https_contexts_are_downloaded_from_the_trust_stores_ca_and_each_bad_certificate_is_504_saying_what_failed() throws Exception {
        try (ServerProcess s = broker("--trustStore", ca.caPem().toString())) {
            HttpResponse<String> ok = createWithContext(s, peers.get("good").url(OutboundPeer.CONTEXT_PATH));
            assertEquals(201, ok.statusCode(), ok.body());
            for (Map.Entry<String, String> bad : SAID.entrySet()) {
                String url = peers.get(bad.getKey()).url(OutboundPeer.CONTEXT_PATH);
                HttpResponse<String> r = createWithContext(s, url);
                assertEquals(504, r.statusCode(), bad.getKey() + ": " + r.body());
                assertEquals("the @context " + url + " is not available: TLS with its server failed: " + bad.getValue(),
                        detail(r), bad.getKey());
                assertFalse(r.body().contains("PKIX") || r.body().contains("elsewhere.example") || r.body().contains("sslContext"),
                        r.body());
            }
        }
    }

    @Test
    void without_the_trust_store_the_tests_ca_is_not_trusted() throws Exception {
        try (ServerProcess s = broker()) {
            String url = peers.get("good").url(OutboundPeer.CONTEXT_PATH);
            HttpResponse<String> r = createWithContext(s, url);
            assertEquals(504, r.statusCode(), r.body());
            assertEquals("the @context " + url + " is not available: TLS with its server failed: its certificate is not trusted",
                    detail(r));
        }
    }

    @Test
    void https_notifications_reach_a_trusted_receiver_and_each_bad_certificate_fails_the_subscription_saying_what_failed()
            throws Exception {
        try (ServerProcess s = broker("--trustStore", ca.caPem().toString())) {
            for (String name : peers.keySet()) {
                subscribe(s, "urn:ngsi-ld:Subscription:tls-" + name, "TlsBike", peers.get(name).url(OutboundPeer.NOTIFY_PATH));
            }
            create(s, "TlsBike");
            JsonNode good = notified(s, "urn:ngsi-ld:Subscription:tls-good");
            assertEquals("ok", good.path("status").asText(), good.toString());
            assertEquals(1, peers.get("good").notifications.get());
            for (Map.Entry<String, String> bad : SAID.entrySet()) {
                JsonNode n = notified(s, "urn:ngsi-ld:Subscription:tls-" + bad.getKey());
                assertEquals("failed", n.path("status").asText(), bad.getKey() + ": " + n);
                assertEquals(1, n.path("timesFailed").asInt(), n.toString());
                // once, at warn, in the client's words
                awaitLog(s, "notifications of subscription urn:ngsi-ld:Subscription:tls-" + bad.getKey() + " fail: TLS with the receiver "
                        + peers.get(bad.getKey()).origin() + " failed: " + bad.getValue());
                assertEquals(0, peers.get(bad.getKey()).notifications.get());
            }
        }
    }

    @Test
    void forwards_reach_a_trusted_https_source_and_each_bad_certificate_is_a_warning_saying_what_failed() throws Exception {
        try (ServerProcess s = broker("--trustStore", ca.caPem().toString())) {
            for (String name : peers.keySet()) {
                register(s, "urn:ngsi-ld:ContextSourceRegistration:tls-" + name, "TlsRoom", peers.get(name).origin());
            }
            String warnings = queryWarnings(s, "TlsRoom");
            assertEquals(1, peers.get("good").forwards.get(), warnings);
            assertFalse(warnings.contains("tls-good"), "the trusted source warned: " + warnings);
            for (Map.Entry<String, String> bad : SAID.entrySet()) {
                String expected = "registration urn:ngsi-ld:ContextSourceRegistration:tls-" + bad.getKey() + " ("
                        + peers.get(bad.getKey()).origin() + "): TLS with its endpoint failed: " + bad.getValue();
                assertTrue(warnings.contains(expected), "no '" + expected + "' in: " + warnings);
                assertEquals(0, peers.get(bad.getKey()).forwards.get());
            }
        }
    }
}
