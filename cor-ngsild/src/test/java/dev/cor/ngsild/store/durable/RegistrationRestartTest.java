package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import dev.cor.ngsild.BrokerHttp;
import dev.cor.ngsild.conformance.ContextServer;
import dev.cor.ngsild.conformance.NotificationReceiver;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.federation.RegistrationLookup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a restart keeps of the context source registrations: one made with a remote
 * {@code @context} (its server is gone after the stop: the restart needs no network), one made
 * with an inline context and then updated (the update stands), one deleted (it stays deleted).
 * After the restart they retrieve as before, compacted alike, and the lookup finds them with
 * their names expanded as before. After a clean stop (the last snapshot) and after a crash (the
 * journal replayed); the data check accepts the records either way. A subscription to
 * registrations comes back to its own resource and notifies a registration made after the restart.
 */
class RegistrationRestartTest {
    private static final String LINK = "; rel=\"http://www.w3.org/ns/json-ld#context\"";
    private static final String REMOTE = "{\"@context\": {\"Car\": \"urn:test:Car\", \"speed\": \"urn:test:speed\"}}";
    private static final String INLINE = "{\"Auto\": \"urn:test:Car\", \"velocity\": \"urn:test:speed\"}";

    private static String registration(String id, String type, String attr) {
        return "{\"id\": \"" + id + "\", \"type\": \"ContextSourceRegistration\", \"information\": [{\"entities\": [{\"type\": \""
                + type + "\"}], \"propertyNames\": [\"" + attr + "\"]}], \"endpoint\": \"http://127.0.0.1:9/source\"}";
    }

    private static String retrieved(BrokerHttp http, String id, String... headers) throws Exception {
        HttpResponse<String> r = http.get("/csourceRegistrations/" + id + "?options=sysAttrs", headers);
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    @ParameterizedTest(name = "after {0}")
    @ValueSource(strings = {"a clean stop", "a crash"})
    void registrationsSurviveARestart(String how, @TempDir Path dir) throws Exception {
        String a = "urn:ngsi-ld:ContextSourceRegistration:remote";
        String b = "urn:ngsi-ld:ContextSourceRegistration:updated";
        String c = "urn:ngsi-ld:ContextSourceRegistration:deleted";
        String defA;
        String defB;
        try (ContextServer contexts = ContextServer.start()) {
            contexts.serve("/car.jsonld", REMOTE);
            String link = "<" + contexts.url("/car.jsonld") + ">" + LINK;
            DurableBroker broker = DurableBroker.open(dir);
            try {
                BrokerHttp http = broker.http;
                assertEquals(201, http.postJson("/csourceRegistrations", registration(a, "Car", "speed"), "Link", link)
                        .statusCode());
                HttpResponse<String> created = http.send("POST", "/csourceRegistrations", "application/ld+json",
                        registration(b, "Auto", "velocity").replaceFirst("\\{", "{\"@context\": " + INLINE + ", "));
                assertEquals(201, created.statusCode(), created.body());
                assertEquals(204, http.send("PATCH", "/csourceRegistrations/" + b, "application/json",
                        "{\"registrationName\": \"fleet\", \"mode\": \"auxiliary\", \"operations\": [\"retrieveOps\"]}")
                        .statusCode());
                assertEquals(201, http.postJson("/csourceRegistrations", registration(c, "Car", "speed"), "Link", link)
                        .statusCode());
                assertEquals(204, http.send("DELETE", "/csourceRegistrations/" + c, null, null).statusCode());
                defA = retrieved(http, a);
                defB = retrieved(http, b);
            } finally {
                if (how.equals("a crash")) {
                    broker.crash();
                } else {
                    broker.close();
                }
            }
        } // the context server is gone: the restart must not need it

        String check = String.join("\n", DataCheck.run(dir).lines());
        assertTrue(check.contains("OK:") && check.contains("2 registration(s)"), check);

        DurableBroker again = DurableBroker.open(dir);
        try {
            BrokerHttp http = again.http;
            // retrieved under the core context: the names as the registrations' own contexts expanded them
            assertEquals(defA, retrieved(http, a));
            assertEquals(defB, retrieved(http, b));
            assertTrue(defB.contains("\"registrationName\":\"fleet\"") && defB.contains("\"urn:test:speed\""), defB);
            assertEquals(404, http.get("/csourceRegistrations/" + c).statusCode());
            List<Registration> found = again.broker.registrations().matching("", new RegistrationLookup.Want(
                    "retrieveEntity", "urn:ngsi-ld:Car:1", null, Set.of("urn:test:Car"), Set.of("urn:test:speed")),
                    System.currentTimeMillis());
            assertEquals(List.of(a, b), found.stream().map(Registration::id).toList());
            assertEquals(Registration.Mode.AUXILIARY, found.get(1).mode());
            assertEquals("urn:test:Car", found.get(0).context().expand("Car"), "the registration's own context, restored");
            assertFalse(found.get(1).operations().contains("queryBatch"));
        } finally {
            again.close();
        }
    }

    @Test
    void aRegistrationMadeAfterARestartIsKeptByTheNextOne(@TempDir Path dir) throws Exception {
        String a = "urn:ngsi-ld:ContextSourceRegistration:first";
        String b = "urn:ngsi-ld:ContextSourceRegistration:second";
        DurableBroker one = DurableBroker.open(dir);
        try {
            assertEquals(201, one.http.postJson("/csourceRegistrations", registration(a, "Car", "speed")).statusCode());
        } finally {
            one.crash();
        }
        DurableBroker two = DurableBroker.open(dir);
        try {
            assertEquals(201, two.http.postJson("/csourceRegistrations", registration(b, "Car", "speed")).statusCode());
            assertEquals(409, two.http.postJson("/csourceRegistrations", registration(a, "Car", "speed")).statusCode());
        } finally {
            two.close();
        }
        DurableBroker three = DurableBroker.open(dir);
        try {
            assertEquals(200, three.http.get("/csourceRegistrations/" + a).statusCode());
            assertEquals(200, three.http.get("/csourceRegistrations/" + b).statusCode());
        } finally {
            three.close();
        }
    }

    @ParameterizedTest(name = "after {0}")
    @ValueSource(strings = {"a clean stop", "a crash"})
    void aSubscriptionToRegistrationsSurvivesARestartAndNotifiesAsBefore(String how, @TempDir Path dir) throws Exception {
        String sub = "urn:ngsi-ld:Subscription:csr";
        String gone = "urn:ngsi-ld:Subscription:csr-deleted";
        try (NotificationReceiver receiver = NotificationReceiver.start()) {
            String csr = "{\"id\": \"%s\", \"type\": \"Subscription\", \"entities\": [{\"type\": \"Car\"}],"
                    + " \"notification\": {\"endpoint\": {\"uri\": \"" + receiver.url() + "\"}}}";
            DurableBroker broker = DurableBroker.open(dir);
            String before;
            try {
                assertEquals(201, broker.http.postJson("/csourceSubscriptions", csr.formatted(sub)).statusCode());
                assertEquals(201, broker.http.postJson("/csourceSubscriptions", csr.formatted(gone)).statusCode());
                assertEquals(204, broker.http.send("DELETE", "/csourceSubscriptions/" + gone, null, null).statusCode());
                HttpResponse<String> r = broker.http.get("/csourceSubscriptions/" + sub);
                assertEquals(200, r.statusCode(), r.body());
                before = r.body();
            } finally {
                if (how.equals("a crash")) {
                    broker.crash();
                } else {
                    broker.close();
                }
            }
            String check = String.join("\n", DataCheck.run(dir).lines());
            assertTrue(check.contains("OK:") && check.contains("1 subscription(s) to registrations"), check);
            DurableBroker again = DurableBroker.open(dir);
            try {
                HttpResponse<String> r = again.http.get("/csourceSubscriptions/" + sub);
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(before, r.body());
                assertEquals(404, again.http.get("/csourceSubscriptions/" + gone).statusCode());
                assertEquals(404, again.http.get("/subscriptions/" + sub).statusCode(), "not an entity subscription");
                String reg = "urn:ngsi-ld:ContextSourceRegistration:after";
                assertEquals(201, again.http.postJson("/csourceRegistrations", registration(reg, "Car", "speed")).statusCode());
                NotificationReceiver.Received n = receiver.next(10_000);
                assertEquals("ContextSourceNotification", n.json().path("type").asText(), n.json().toString());
                assertEquals(sub, n.json().path("subscriptionId").asText());
                assertEquals(reg, n.json().path("data").path(0).path("id").asText());
            } finally {
                again.close();
            }
        }
    }

    /**
     * A periodic subscription to registrations kept from before ticks again as soon as the
     * server has loops - not only once some request reaches one (the broker's {@code tickOn}).
     */
    @Test
    void aPeriodicSubscriptionToRegistrationsTicksAfterARestartWithoutAnyRequest(@TempDir Path dir) throws Exception {
        String sub = "urn:ngsi-ld:Subscription:csr-periodic";
        String reg = "urn:ngsi-ld:ContextSourceRegistration:periodic";
        try (NotificationReceiver receiver = NotificationReceiver.start()) {
            try (DurableBroker broker = DurableBroker.open(dir)) {
                assertEquals(201, broker.http.postJson("/csourceRegistrations", registration(reg, "Car", "speed")).statusCode());
                String csr = "{\"id\": \"" + sub + "\", \"type\": \"Subscription\", \"entities\": [{\"type\": \"Car\"}],"
                        + " \"timeInterval\": 1, \"notification\": {\"endpoint\": {\"uri\": \"" + receiver.url() + "\"}}}";
                assertEquals(201, broker.http.postJson("/csourceSubscriptions", csr).statusCode());
                assertEquals(sub, receiver.next(10_000).json().path("subscriptionId").asText());
            }
            long reopened = System.currentTimeMillis();
            try (DurableBroker again = DurableBroker.open(dir)) {
                // no request is sent to this broker; skipped: what the first one sent before it stopped
                NotificationReceiver.Received n = receiver.nextSentSince(reopened, 10_000);
                assertEquals("ContextSourceNotification", n.json().path("type").asText(), n.json().toString());
                assertEquals(sub, n.json().path("subscriptionId").asText());
                assertEquals(reg, n.json().path("data").path(0).path("id").asText());
            }
        }
    }
}
