package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.conformance.NotificationReceiver.Received;

/**
 * Subscriptions to context source registrations (ETSI GS CIM 009 § 5.11; the data type of
 * § 5.2.12 applied to registrations; the notification of § 5.3.2): create, retrieve, list,
 * update, delete, and a ContextSourceNotification - newlyMatching, updated, noLongerMatching -
 * to a real receiver when a registration it concerns is created, updated or deleted, and at its
 * creation for those that exist. ETSI TPs 038-042, 047. Each test in a tenant of its own.
 * "None comes" is never a wait: a subscription's notifications leave in the order of the
 * changes, so a later change that must notify it is the barrier - one that should not have
 * come would have come before it.
 */
class CsourceSubscriptionTest extends ConformanceTest {
    NotificationReceiver receiver;
    String tenant;

    @BeforeEach
    void receiver() {
        receiver = NotificationReceiver.start();
        tenant = RegistrationResourceTest.freshTenant();
    }

    @AfterEach
    void closeReceiver() {
        receiver.close();
    }

    private ObjectNode subscription(String id, String type) {
        return Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}],
                 "notification": {"endpoint": {"uri": "%s", "accept": "application/json"}},
                 "@context": "%s"}""", id, type, receiver.url(), model);
    }

    private Answer subscribe(ObjectNode s) {
        return api.post("/csourceSubscriptions").ldJson(s).tenant(tenant).send();
    }

    private String registered(String type) {
        String id = RegistrationResourceTest.registrationId();
        ObjectNode r = RegistrationResourceTest.vehicles(id);
        r.set("information", Json.arr("[{\"entities\": [{\"type\": \"%s\"}], \"propertyNames\": [\"speed\"]}]", type));
        Checks.status(RegistrationResourceTest.registerIn(tenant, r), 201);
        return id;
    }

    private static void isNotification(Received n, String subscription, String reason, String registration) {
        JsonNode body = n.json();
        assertEquals("ContextSourceNotification", body.path("type").asText(), body.toString());
        assertEquals(subscription, body.path("subscriptionId").asText());
        assertEquals(reason, body.path("triggerReason").asText(), body.toString());
        assertTrue(Json.DATE_TIME.matcher(body.path("notifiedAt").asText()).matches(), body.toString());
        assertEquals(1, body.path("data").size(), body.toString());
        assertEquals(registration, body.path("data").path(0).path("id").asText(), body.toString());
        assertEquals("ContextSourceRegistration", body.path("data").path(0).path("type").asText());
    }

    @Test
    void create_answers_201_and_retrieve_and_list_give_it_back_038_01_040_01_041_01() {
        String id = SubscriptionResourceTest.subscriptionId();
        Answer a = subscribe(subscription(id, "Vehicle"));
        Checks.status(a, 201);
        assertEquals("/ngsi-ld/v1/csourceSubscriptions/" + id, a.header("Location"));
        JsonNode s = Checks.okJson(api.get("/csourceSubscriptions/" + id).link(model).tenant(tenant).send());
        assertEquals("Vehicle", s.path("entities").path(0).path("type").asText());
        assertEquals("Subscription", s.path("type").asText());
        JsonNode all = Checks.okJson(api.get("/csourceSubscriptions").link(model).tenant(tenant).send());
        assertEquals(List.of(id), Json.texts(all.findValues("id").isEmpty() ? all : Json.array(all.findValues("id")
                .toArray(JsonNode[]::new))));
        // an entity subscription it is not
        Checks.problem(api.get("/subscriptions/" + id).tenant(tenant).send(), 404, "ResourceNotFound");
    }

    @Test
    void an_invalid_one_is_400_and_a_duplicate_409_038_03_038_04() {
        String id = SubscriptionResourceTest.subscriptionId();
        ObjectNode bad = subscription(id, "Vehicle");
        bad.put("type", "RandomType");
        Checks.problem(subscribe(bad), 400, "BadRequestData");
        Checks.status(subscribe(subscription(id, "Vehicle")), 201);
        Checks.problem(subscribe(subscription(id, "Vehicle")), 409, "AlreadyExists");
    }

    @Test
    void update_and_delete_039_01_039_04_042_01() {
        String id = SubscriptionResourceTest.subscriptionId();
        Checks.status(subscribe(subscription(id, "Vehicle")), 201);
        Checks.noContent(api.patch("/csourceSubscriptions/" + id).json(Json.obj("{\"isActive\": false}")).tenant(tenant)
                .send());
        assertEquals("paused", Checks.okJson(api.get("/csourceSubscriptions/" + id).tenant(tenant).send())
                .path("status").asText());
        // § 5.11.3 modifies it as § 5.5.8 does: a notification without its endpoint replaces nothing (039_04_02)
        Checks.problem(api.patch("/csourceSubscriptions/" + id).json(Json.obj("{\"notification\": {\"format\": \"keyValues\"}}"))
                .tenant(tenant).send(), 400, "BadRequestData");
        Checks.noContent(api.delete("/csourceSubscriptions/" + id).tenant(tenant).send());
        // the tenant held nothing else: it is gone with it (NonexistentTenant), a 404 either way
        Checks.status(api.get("/csourceSubscriptions/" + id).tenant(tenant).send(), 404);
        Checks.status(api.delete("/csourceSubscriptions/" + id).tenant(tenant).send(), 404);
    }

    @Test
    void a_new_matching_registration_is_notified_as_newly_matching_047_03_047_04() {
        String sub = SubscriptionResourceTest.subscriptionId();
        Checks.status(subscribe(subscription(sub, "Vehicle")), 201);
        registered("Building"); // not of its type: had it notified, that would come first
        String reg = registered("Vehicle");
        Received n = receiver.next(5_000);
        isNotification(n, sub, "newlyMatching", reg);
        // compacted with the subscriber's context, in application/json with a Link
        JsonNode data = n.json().path("data").path(0);
        assertEquals("Vehicle", data.path("information").path(0).path("entities").path(0).path("type").path(0).asText());
        assertEquals("speed", data.path("information").path(0).path("propertyNames").path(0).asText());
        assertTrue(n.header("Link").contains("rel=\"http://www.w3.org/ns/json-ld#context\""), n.header("Link"));
        assertEquals(tenant, n.header("NGSILD-Tenant"));
    }

    /** A registration of {@code type} whose {@code interval} (observationInterval or managementInterval) is [start, end). */
    private String registeredWithInterval(String type, String interval, String start, String end) {
        String id = RegistrationResourceTest.registrationId();
        ObjectNode r = RegistrationResourceTest.vehicles(id);
        r.set("information", Json.arr("[{\"entities\": [{\"type\": \"%s\"}]}]", type));
        r.set(interval, Json.obj("{\"startAt\": \"%s\", \"endAt\": \"%s\"}", start, end));
        Checks.status(RegistrationResourceTest.registerIn(tenant, r), 201);
        return id;
    }

    /**
     * § 5.11.7 (TPs 047_10, 047_11): a temporalQ is matched against the observationInterval
     * (timeproperty observedAt) or the managementInterval (createdAt, modifiedAt): told of the
     * registration whose interval it meets, not of one whose interval ended before, nor of one
     * with the other interval, nor of a source of latest information.
     */
    @Test
    void a_temporalQ_is_matched_against_the_registrations_interval_047_10_047_11() {
        String observed = SubscriptionResourceTest.subscriptionId();
        ObjectNode s = subscription(observed, "Vehicle");
        s.set("temporalQ", Json.obj("{\"timerel\": \"after\", \"timeAt\": \"2020-06-01T00:00:00Z\", \"timeproperty\": \"observedAt\"}"));
        Checks.status(subscribe(s), 201);
        registered("Vehicle"); // latest information: not for a temporalQ
        registeredWithInterval("Vehicle", "observationInterval", "2019-01-01T00:00:00Z", "2019-06-01T00:00:00Z"); // ended before
        registeredWithInterval("Vehicle", "managementInterval", "2020-08-01T00:00:00Z", "2021-08-01T00:00:00Z"); // the other interval
        String meets = registeredWithInterval("Vehicle", "observationInterval", "2020-08-01T00:00:00Z", "2021-08-01T00:00:00Z");
        // the three before it, had they notified, would come first
        isNotification(receiver.next(5_000), observed, "newlyMatching", meets);

        String managed = SubscriptionResourceTest.subscriptionId();
        ObjectNode m = subscription(managed, "Vehicle");
        m.set("temporalQ", Json.obj("{\"timerel\": \"before\", \"timeAt\": \"2021-01-01T00:00:00Z\", \"timeproperty\": \"createdAt\"}"));
        Checks.status(subscribe(m), 201);
        Received n = receiver.next(5_000);
        assertEquals(managed, n.json().path("subscriptionId").asText(), n.json().toString());
        assertEquals(1, n.json().path("data").size(), "only the managementInterval registration: " + n.json());
        assertEquals("2020-08-01T00:00:00Z", n.json().path("data").path(0).path("managementInterval").path("startAt").asText(),
                n.json().toString());
        // the barrier for both: a registration that each one's interval meets is the next each is told of
        String both = RegistrationResourceTest.registrationId();
        ObjectNode r = RegistrationResourceTest.vehicles(both);
        r.set("information", Json.arr("[{\"entities\": [{\"type\": \"Vehicle\"}]}]"));
        r.set("observationInterval", Json.obj("{\"startAt\": \"2020-08-01T00:00:00Z\", \"endAt\": \"2021-08-01T00:00:00Z\"}"));
        r.set("managementInterval", Json.obj("{\"startAt\": \"2020-08-01T00:00:00Z\", \"endAt\": \"2021-08-01T00:00:00Z\"}"));
        Checks.status(RegistrationResourceTest.registerIn(tenant, r), 201);
        java.util.Map<String, String> next = new java.util.TreeMap<>();
        for (int i = 0; i < 2; i++) {
            JsonNode b = receiver.next(5_000).json();
            assertEquals(1, b.path("data").size(), b::toString);
            next.put(b.path("subscriptionId").asText(), b.path("data").path(0).path("id").asText());
        }
        assertEquals(new java.util.TreeMap<>(java.util.Map.of(observed, both, managed, both)), next,
                "each subscription was told of nothing else before");
    }

    @Test
    void a_subscription_is_told_at_once_of_the_registrations_that_match_when_it_is_made_047_02() {
        String reg = registered("Vehicle");
        String sub = SubscriptionResourceTest.subscriptionId();
        Checks.status(subscribe(subscription(sub, "Vehicle")), 201);
        isNotification(receiver.next(5_000), sub, "newlyMatching", reg);
    }

    @Test
    void an_update_notifies_updated_and_one_that_leaves_the_subscription_no_longer_matching_047_02() {
        String sub = SubscriptionResourceTest.subscriptionId();
        Checks.status(subscribe(subscription(sub, "Vehicle")), 201);
        String reg = registered("Vehicle");
        isNotification(receiver.next(5_000), sub, "newlyMatching", reg);
        Checks.noContent(api.patch("/csourceRegistrations/" + reg).json(Json.obj("{\"registrationName\": \"fleet\"}"))
                .tenant(tenant).send());
        Received updated = receiver.next(5_000);
        isNotification(updated, sub, "updated", reg);
        assertEquals("fleet", updated.json().path("data").path(0).path("registrationName").asText());
        Checks.noContent(api.patch("/csourceRegistrations/" + reg).ldJson(Json.obj("""
                {"information": [{"entities": [{"type": "Building"}]}], "@context": "%s"}""", model)).tenant(tenant).send());
        isNotification(receiver.next(5_000), sub, "noLongerMatching", reg);
    }

    @Test
    void a_deletion_notifies_no_longer_matching_047() {
        String sub = SubscriptionResourceTest.subscriptionId();
        Checks.status(subscribe(subscription(sub, "Vehicle")), 201);
        String reg = registered("Vehicle");
        isNotification(receiver.next(5_000), sub, "newlyMatching", reg);
        Checks.noContent(api.delete("/csourceRegistrations/" + reg).tenant(tenant).send());
        isNotification(receiver.next(5_000), sub, "noLongerMatching", reg);
    }

    @Test
    void watched_attributes_select_by_the_registered_attributes_047() {
        String sub = SubscriptionResourceTest.subscriptionId();
        ObjectNode s = subscription(sub, "Vehicle");
        s.set("watchedAttributes", Json.arr("[\"brandName\"]"));
        Checks.status(subscribe(s), 201);
        registered("Vehicle"); // speed only, not watched: had it notified, that would come first
        String id = RegistrationResourceTest.registrationId();
        Checks.status(RegistrationResourceTest.registerIn(tenant, RegistrationResourceTest.vehicles(id)), 201); // speed, brandName
        isNotification(receiver.next(5_000), sub, "newlyMatching", id);
    }

    @Test
    void a_paused_subscription_is_not_notified_and_the_counters_count_the_ones_sent() {
        String sub = SubscriptionResourceTest.subscriptionId();
        Checks.status(subscribe(subscription(sub, "Vehicle")), 201);
        String reg = registered("Vehicle");
        isNotification(receiver.next(5_000), sub, "newlyMatching", reg);
        Checks.noContent(api.patch("/csourceSubscriptions/" + sub).json(Json.obj("{\"isActive\": false}")).tenant(tenant)
                .send());
        String whilePaused = registered("Vehicle");
        JsonNode s = Checks.okJson(api.get("/csourceSubscriptions/" + sub).tenant(tenant).send());
        assertEquals(1, s.path("notification").path("timesSent").asInt(), s.toString());
        // active again, it is told of what it matches now - the next notification, had the one made while paused
        // notified, would be that one alone
        Checks.noContent(api.patch("/csourceSubscriptions/" + sub).json(Json.obj("{\"isActive\": true}")).tenant(tenant)
                .send());
        JsonNode now = receiver.next(5_000).json();
        assertEquals(java.util.Set.of(reg, whilePaused), java.util.Set.copyOf(Json.texts(Json.array(now.path("data")
                .findValues("id").toArray(JsonNode[]::new)))), now::toString);
    }

    @Test
    void an_update_of_the_subscription_notifies_what_it_matches_now_047_16() {
        String reg = registered("Vehicle");
        String sub = SubscriptionResourceTest.subscriptionId();
        Checks.status(subscribe(subscription(sub, "Building")), 201); // nothing matches a Building subscription yet
        Checks.noContent(api.patch("/csourceSubscriptions/" + sub).ldJson(Json.obj("""
                {"entities": [{"type": "Vehicle"}], "@context": "%s"}""", model)).tenant(tenant).send());
        isNotification(receiver.next(5_000), sub, "newlyMatching", reg);
        // the barrier: had the creation notified too, this would be reg again
        String next = registered("Vehicle");
        isNotification(receiver.next(5_000), sub, "newlyMatching", next);
    }

    @Test
    void a_geoQ_matches_the_registrations_location_047_14_047_15() {
        String sub = SubscriptionResourceTest.subscriptionId();
        ObjectNode s = subscription(sub, "Vehicle");
        s.set("geoQ", Json.obj("{\"georel\": \"near;maxDistance==2000\", \"geometry\": \"Point\", \"coordinates\": [8.68, 49.41]}"));
        Checks.status(subscribe(s), 201);
        registered("Vehicle"); // no location: does not match
        ObjectNode far = RegistrationResourceTest.vehicles(RegistrationResourceTest.registrationId());
        far.set("location", Json.obj("{\"type\": \"Point\", \"coordinates\": [2.35, 48.85]}"));
        Checks.status(RegistrationResourceTest.registerIn(tenant, far), 201); // had either notified, it would come first
        String near = RegistrationResourceTest.registrationId();
        ObjectNode r = RegistrationResourceTest.vehicles(near);
        r.set("location", Json.obj("{\"type\": \"Point\", \"coordinates\": [8.681, 49.411]}"));
        Checks.status(RegistrationResourceTest.registerIn(tenant, r), 201);
        isNotification(receiver.next(5_000), sub, "newlyMatching", near);
    }

    @Test
    void q_matches_the_registrants_own_members_5_11() {
        String sub = SubscriptionResourceTest.subscriptionId();
        ObjectNode s = subscription(sub, "Vehicle");
        s.put("q", "brandName==\"camera\"");
        Checks.status(subscribe(s), 201);
        registered("Vehicle"); // without that member: had it notified, that would come first
        String id = RegistrationResourceTest.registrationId();
        ObjectNode r = RegistrationResourceTest.vehicles(id);
        r.put("brandName", "camera");
        Checks.status(RegistrationResourceTest.registerIn(tenant, r), 201);
        isNotification(receiver.next(5_000), sub, "newlyMatching", id);
    }

    @Test
    void a_periodic_subscription_notifies_what_it_matches_at_once_and_on_every_period_047_01() {
        String reg = registered("Vehicle");
        String sub = SubscriptionResourceTest.subscriptionId();
        ObjectNode s = subscription(sub, "Vehicle");
        s.put("timeInterval", 0.3);
        Checks.status(subscribe(s), 201);
        for (int i = 0; i < 3; i++) {
            isNotification(receiver.next(5_000), sub, "newlyMatching", reg);
        }
        Checks.noContent(api.delete("/csourceSubscriptions/" + sub).tenant(tenant).send());
    }

    @Test
    void a_notification_carries_only_the_registration_information_the_subscription_matches_047_03() {
        String sub = SubscriptionResourceTest.subscriptionId();
        Checks.status(subscribe(subscription(sub, "Building")), 201);
        String reg = RegistrationResourceTest.registrationId();
        ObjectNode r = RegistrationResourceTest.vehicles(reg);
        r.set("information", Json.arr("[{\"entities\": [{\"type\": \"Building\"}]}, {\"entities\": [{\"type\": \"Bus\"}]}]"));
        Checks.status(RegistrationResourceTest.registerIn(tenant, r), 201);
        Received n = receiver.next(5_000);
        isNotification(n, sub, "newlyMatching", reg);
        JsonNode information = n.json().path("data").path(0).path("information");
        assertEquals(1, information.size(), information.toString());
        assertEquals("Building", information.path(0).path("entities").path(0).path("type").path(0).asText());
    }

    /** § 5.11.4 (as § 5.5.9 pages every listing): the listing of csourceSubscriptions links its pages too. */
    @Test
    void the_listing_links_the_previous_and_the_next_page() {
        for (int i = 0; i < 3; i++) {
            Checks.status(subscribe(subscription(SubscriptionResourceTest.subscriptionId(), "Vehicle")), 201);
        }
        Answer middle = api.get("/csourceSubscriptions").tenant(tenant).query("limit", "1").query("offset", "1")
                .accept("application/ld+json").send();
        Checks.status(middle, 200);
        assertEquals(1, middle.json().size());
        assertEquals(List.of("</ngsi-ld/v1/csourceSubscriptions?limit=1&offset=0>;rel=\"prev\";type=\"application/ld+json\"",
                "</ngsi-ld/v1/csourceSubscriptions?limit=1&offset=2>;rel=\"next\";type=\"application/ld+json\""),
                middle.headerValues("Link"));
    }

    /** § 6.3.11 for /csourceSubscriptions too: createdAt and modifiedAt with options=sysAttrs only. */
    @Test
    void created_and_modified_at_come_back_with_options_sysAttrs_only() {
        String sub = SubscriptionResourceTest.subscriptionId();
        Checks.status(subscribe(subscription(sub, "Vehicle")), 201);
        JsonNode plain = Checks.okJson(api.get("/csourceSubscriptions/" + sub).tenant(tenant).link(model).send());
        assertFalse(plain.has("createdAt"), plain::toString);
        JsonNode sys = Checks.okJson(api.get("/csourceSubscriptions/" + sub).tenant(tenant).query("options", "sysAttrs")
                .link(model).send());
        assertTrue(sys.has("createdAt") && sys.has("modifiedAt"), sys::toString);
    }
}
