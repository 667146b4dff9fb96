package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.ManualClock;
import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.conformance.NotificationReceiver.Received;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Notifications (ETSI GS CIM 009 § 5.3.1, § 5.8.x, Table 5.2.12-1 / 5.2.14-1; ETSI TPs 046_*):
 * what triggers one on every write path, what it carries in each format and how it is sent,
 * throttling and expiry under a clock the test moves, and the status on failure. Every
 * notification is received by a real HTTP server over a real socket.
 */
class NotificationTest {
    /**
     * How long a notification that is due may take to arrive. "None comes" is never a wait: a
     * later write that must notify the same subscription is the barrier - its notices leave in
     * the order of the writes, so one that should not have come would have come before it
     * ({@link #nextIsOnly}).
     */
    static final long WAIT_MS = 5_000;

    static TestBroker broker;
    static ContextServer contexts;
    static Ngsi api;
    static String model;
    static ManualClock clock = new ManualClock(System.currentTimeMillis());
    NotificationReceiver receiver;

    @BeforeAll
    static void start() {
        contexts = ContextServer.start();
        broker = TestBroker.start(b -> b.clock(clock).notificationTimeoutMs(1_000), s -> { });
        api = new Ngsi(broker.baseUrl());
        model = contexts.url(ContextServer.MODEL);
    }

    @AfterAll
    static void stop() {
        broker.close();
        contexts.close();
    }

    @BeforeEach
    void receiver() {
        receiver = NotificationReceiver.start();
    }

    @AfterEach
    void closeReceiver() {
        receiver.close();
    }

    /** A subscription to entities of {@code type} (a fresh one), changed by {@code extra}; returns its id. */
    String subscribe(String type, String extra) {
        return subscribe(type, extra, null);
    }

    String subscribe(String type, String extra, String tenant) {
        return subscribe(type, extra, tenant, receiver);
    }

    /** A subscription of {@code tenant} ({@code null}: the default one) notifying {@code to}. */
    static String subscribe(String type, String extra, String tenant, NotificationReceiver to) {
        String id = Entities.id("Subscription");
        ObjectNode sub = Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}],
                 "notification": {"endpoint": {"uri": "%s"}}, "@context": "%s"}""", id, type, to.url(), model);
        ObjectNode more = Json.obj(extra == null ? "{}" : extra);
        more.properties().forEach(m -> {
            if (m.getKey().equals("notification")) {
                m.getValue().properties().forEach(n -> {
                    if (n.getKey().equals("endpoint")) {
                        n.getValue().properties().forEach(e -> ((ObjectNode) sub.get("notification").get("endpoint")).set(e.getKey(), e.getValue()));
                    } else {
                        ((ObjectNode) sub.get("notification")).set(n.getKey(), n.getValue());
                    }
                });
            } else {
                sub.set(m.getKey(), m.getValue());
            }
        });
        Ngsi.Request r = api.post("/subscriptions").ldJson(sub);
        if (tenant != null) {
            r.tenant(tenant);
        }
        Checks.status(r.send(), 201);
        return id;
    }

    static String freshType() {
        return Entities.uniqueName("T");
    }

    static void createEntity(String id, String type, int speed) {
        createEntity(id, type, speed, null);
    }

    /** Creates the entity in {@code tenant} ({@code null}: the default one). */
    static void createEntity(String id, String type, int speed, String tenant) {
        Ngsi.Request r = api.post("/entities").ldJson(Json.obj("""
                {"id": "%s", "type": "%s", "speed": {"type": "Property", "value": %d},
                 "brandName": {"type": "Property", "value": "Mercedes"}, "@context": "%s"}""", id, type, speed, model));
        if (tenant != null) {
            r.tenant(tenant);
        }
        Checks.status(r.send(), 201);
    }

    static void patchSpeed(String id, int speed) {
        Checks.noContent(api.patch("/entities/" + id + "/attrs").link(model)
                .json(Json.obj("{\"speed\": {\"type\": \"Property\", \"value\": %d}}", speed)).send());
    }

    JsonNode subscription(String id) {
        return Checks.okJson(api.get("/subscriptions/" + id).link(model).send());
    }

    /**
     * The next notification's one entity, which must be {@code id}: the barrier after writes
     * that must not notify - their notices, had there been any, were queued before this one's
     * and would have come first (alone, or together with it in one notification).
     */
    static JsonNode nextIsOnly(NotificationReceiver r, String id) {
        return onlyEntity(r.next(WAIT_MS), id);
    }

    /** The one entity of a notification, which must be {@code id}. */
    static JsonNode onlyEntity(Received r, String id) {
        JsonNode data = r.json().path("data");
        assertEquals(1, data.size(), () -> "one entity, " + id + ": " + data);
        assertEquals(id, data.path(0).path("id").asText(), data::toString);
        return data.path(0);
    }

    // ---------------------------------------------------------------- what a notification is

    @Test
    void a_created_entity_is_notified_normalized_with_the_link_of_the_subscribers_context_046_01() {
        String type = freshType();
        String sub = subscribe(type, null);
        String id = Entities.id(type);
        createEntity(id, type, 50);
        Received r = receiver.next(WAIT_MS);
        assertEquals("application/json", r.header("Content-Type"));
        assertTrue(r.header("Link").contains("<" + model + ">"), r.header("Link"));
        JsonNode n = r.json();
        assertTrue(n.path("id").asText().startsWith("urn:ngsi-ld:Notification:"), n::toString);
        assertEquals("Notification", n.path("type").asText());
        assertEquals(sub, n.path("subscriptionId").asText());
        assertTrue(Json.DATE_TIME.matcher(n.path("notifiedAt").asText()).matches(), n::toString);
        assertEquals(1, n.path("data").size());
        JsonNode e = n.path("data").path(0);
        assertEquals(id, e.path("id").asText());
        assertEquals(type, e.path("type").asText().replace(modelIri(""), ""), "type compacted as far as the context goes");
        assertEquals(50, e.path("speed").path("value").asInt(), "compacted with the subscriber's context");
        assertEquals("Property", e.path("speed").path("type").asText());
        assertFalse(n.has("@context"));
        JsonNode s = awaitTimesSent(sub, 1);
        assertEquals(1, s.path("notification").path("timesSent").asInt());
        assertTrue(s.path("notification").has("lastSuccess"));
        assertEquals("ok", s.path("notification").path("status").asText());
    }

    static String modelIri(String term) {
        return "https://cor.test/model#" + term;
    }

    @Test
    void an_ld_json_receiver_gets_the_context_in_the_body_and_no_link() {
        String type = freshType();
        subscribe(type, "{\"notification\": {\"endpoint\": {\"accept\": \"application/ld+json\"}}}");
        createEntity(Entities.id(type), type, 1);
        Received r = receiver.next(WAIT_MS);
        assertEquals("application/ld+json", r.header("Content-Type"));
        assertNull(r.header("Link"));
        assertEquals(model, r.json().path("@context").asText());
    }

    @Test
    void receiver_info_headers_and_the_tenant_go_with_each_notification() {
        String type = freshType();
        String tenant = Entities.tenant();
        subscribe(type, """
                {"notification": {"endpoint": {"receiverInfo": [{"key": "X-Auth-Token", "value": "s3cret"}]}}}""", tenant);
        Checks.status(api.post("/entities").tenant(tenant).ldJson(Json.obj("""
                {"id": "%s", "type": "%s", "@context": "%s", "speed": {"type": "Property", "value": 3}}""",
                Entities.id(type), type, model)).send(), 201);
        Received r = receiver.next(WAIT_MS);
        assertEquals("s3cret", r.header("X-Auth-Token"));
        assertEquals(tenant, r.header("NGSILD-Tenant"));
    }

    /**
     * A subscription notifies the writes of its own tenant only, though another tenant's entities
     * have the type it selects: a default-tenant subscription and one of tenant X select the
     * same type; writes in X, in the default tenant and in a tenant Y without subscriptions each
     * reach the subscription of their tenant alone. Each receiver's next notification is the
     * barrier for the writes before it.
     */
    @Test
    void a_write_notifies_only_the_subscriptions_of_its_own_tenant() {
        String type = freshType();
        String x = Entities.tenant();
        String y = Entities.tenant();
        try (NotificationReceiver ofX = NotificationReceiver.start()) {
            subscribe(type, null, null, receiver);
            subscribe(type, null, x, ofX);
            createEntity(Entities.id(type), type, 1, y); // a tenant without subscriptions: nobody is notified
            String inX = Entities.id(type);
            createEntity(inX, type, 2, x);
            Received first = ofX.next(WAIT_MS);
            assertEquals(x, first.header("NGSILD-Tenant"));
            onlyEntity(first, inX); // Y's write before it did not reach X's subscription
            String inDefault = Entities.id(type);
            createEntity(inDefault, type, 3);
            nextIsOnly(receiver, inDefault); // neither Y's write nor X's reached the default tenant's subscription
            String againInX = Entities.id(type);
            createEntity(againInX, type, 4, x);
            nextIsOnly(ofX, againInX); // nor did the default tenant's write reach X's
        }
    }

    /**
     * 4.9: {@code !~=} holds only for a string that does not match - a subscription tests each
     * written entity itself (no planner keeps out the entities without the attribute), so an
     * entity without {@code nickname}, or whose {@code speed} is a number, notifies nobody.
     */
    @Test
    void a_negated_pattern_is_false_on_a_missing_or_non_string_target() {
        String type = freshType();
        try (NotificationReceiver onNumber = NotificationReceiver.start()) {
            subscribe(type, "{\"q\": \"nickname!~=\\\"^x\\\"\"}", null, receiver);
            subscribe(type, "{\"q\": \"speed!~=\\\"^x\\\"\"}", null, onNumber);
            createEntity(Entities.id(type), type, 1); // no nickname, a numeric speed: neither matches
            String named = Entities.id(type);
            Checks.status(api.post("/entities").ldJson(Json.obj("""
                    {"id": "%s", "type": "%s", "nickname": {"type": "Property", "value": "y"},
                     "speed": {"type": "Property", "value": "y"}, "@context": "%s"}""", named, type, model)).send(), 201);
            nextIsOnly(receiver, named); // the barrier: the first entity's notice would have come first
            nextIsOnly(onNumber, named);
        }
    }

    @Test
    void keyValues_with_attributes_and_sysAttrs() {
        String type = freshType();
        subscribe(type, """
                {"notification": {"format": "keyValues", "attributes": ["speed"], "sysAttrs": true}}""");
        createEntity(Entities.id(type), type, 42);
        JsonNode e = receiver.next(WAIT_MS).json().path("data").path(0);
        assertEquals(42, e.path("speed").asInt());
        assertFalse(e.has("brandName"), "only the attributes asked for");
        assertTrue(e.has("createdAt"), e::toString);
    }

    @Test
    void pick_and_omit_choose_the_entity_members_046_42_046_43() {
        String type = freshType();
        subscribe(type, "{\"notification\": {\"format\": \"keyValues\", \"pick\": [\"id\", \"speed\"]}}");
        createEntity(Entities.id(type), type, 3);
        JsonNode e = receiver.next(WAIT_MS).json().path("data").path(0);
        assertEquals(java.util.Set.of("id", "speed"), Json.names(e), e::toString);
        String type2 = freshType();
        subscribe(type2, "{\"notification\": {\"format\": \"keyValues\", \"omit\": [\"type\", \"speed\"]}}");
        createEntity(Entities.id(type2), type2, 3);
        e = receiver.next(WAIT_MS).json().path("data").path(0);
        assertEquals(java.util.Set.of("id", "brandName"), Json.names(e), e::toString);
    }

    @Test
    void concise_drops_what_is_inferable() {
        String type = freshType();
        subscribe(type, "{\"notification\": {\"format\": \"concise\"}}");
        createEntity(Entities.id(type), type, 7);
        JsonNode e = receiver.next(WAIT_MS).json().path("data").path(0);
        assertEquals(7, e.path("speed").asInt(), e::toString);
    }

    @Test
    void showChanges_carries_the_previous_value() {
        String type = freshType();
        subscribe(type, "{\"notification\": {\"showChanges\": true}}");
        String id = Entities.id(type);
        createEntity(id, type, 10);
        receiver.next(WAIT_MS);
        patchSpeed(id, 11);
        JsonNode speed = receiver.next(WAIT_MS).json().path("data").path(0).path("speed");
        assertEquals(11, speed.path("value").asInt());
        assertEquals(10, speed.path("previousValue").asInt(), speed::toString);
    }

    // ---------------------------------------------------------------- what triggers one

    @Test
    void watched_attributes_only_their_change_notifies() {
        String type = freshType();
        subscribe(type, "{\"watchedAttributes\": [\"brandName\"]}");
        String id = Entities.id(type);
        createEntity(id, type, 10);
        receiver.next(WAIT_MS); // created with a brandName
        patchSpeed(id, 12); // speed is not watched: nothing comes before the next one
        Checks.noContent(api.patch("/entities/" + id + "/attrs").link(model)
                .json(Json.obj("{\"brandName\": {\"type\": \"Property\", \"value\": \"Audi\"}}")).send());
        assertEquals("Audi", nextIsOnly(receiver, id).path("brandName").path("value").asText());
    }

    @Test
    void q_lets_through_only_the_writes_whose_entity_matches_it_5_2_12() {
        String type = freshType();
        subscribe(type, "{\"q\": \"speed>50;brandName==\\\"Mercedes\\\"\"}");
        String id = Entities.id(type);
        createEntity(id, type, 10); // speed 10 does not match speed>50
        patchSpeed(id, 60);
        assertEquals(60, nextIsOnly(receiver, id).path("speed").path("value").asInt());
        patchSpeed(id, 40); // nor does 40
        patchSpeed(id, 70);
        assertEquals(70, nextIsOnly(receiver, id).path("speed").path("value").asInt(), "speed 40 was not notified");
    }

    @Test
    void geoQ_lets_through_only_entities_near_its_point_5_2_12() {
        String type = freshType();
        subscribe(type, """
                {"geoQ": {"georel": "near;maxDistance==1000", "geometry": "Point", "coordinates": [13.4, 52.5]}}""");
        String far = Entities.id(type);
        String near = Entities.id(type);
        for (String[] e : new String[][] {{far, "14.4"}, {near, "13.401"}}) {
            Checks.status(api.post("/entities").ldJson(Json.obj("""
                    {"id": "%s", "type": "%s", "speed": {"type": "Property", "value": 1},
                     "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [%s, 52.5]}},
                     "@context": "%s"}""", e[0], type, e[1], model)).send(), 201);
        }
        nextIsOnly(receiver, near); // the entity 68 km away, written first, was not notified
    }

    @Test
    void the_default_triggers_notify_creation_and_updates_not_deletion() {
        String type = freshType();
        subscribe(type, null);
        String id = Entities.id(type);
        createEntity(id, type, 1);
        receiver.next(WAIT_MS);
        patchSpeed(id, 2);
        receiver.next(WAIT_MS);
        Checks.noContent(api.delete("/entities/" + id).send());
        String next = Entities.id(type);
        createEntity(next, type, 3);
        nextIsOnly(receiver, next); // the deletion before it notified nothing
    }

    @Test
    void entityDeleted_notifies_the_deletion_with_id_and_type() {
        String type = freshType();
        subscribe(type, "{\"notificationTrigger\": [\"entityDeleted\"]}");
        String id = Entities.id(type);
        createEntity(id, type, 1);
        Checks.noContent(api.delete("/entities/" + id).send());
        JsonNode e = receiver.next(WAIT_MS).json().path("data").path(0);
        assertEquals(id, e.path("id").asText());
        assertTrue(e.has("deletedAt"));
        assertEquals(0, receiver.count(), "the creation did not notify: entityCreated is not asked for");
    }

    @Test
    void deleting_the_entity_deletes_a_watched_attribute_046_22_12() {
        String type = freshType();
        subscribe(type, "{\"watchedAttributes\": [\"brandName\"], \"notificationTrigger\": [\"attributeDeleted\"],"
                + " \"notification\": {\"format\": \"keyValues\"}}");
        String id = Entities.id(type);
        createEntity(id, type, 1);
        Checks.noContent(api.delete("/entities/" + id).send());
        JsonNode e = receiver.next(WAIT_MS).json().path("data").path(0);
        assertEquals(id, e.path("id").asText());
        assertTrue(e.has("deletedAt"), e::toString);
        assertEquals("urn:ngsi-ld:null", e.path("brandName").asText());
        assertFalse(e.has("speed"), "only the watched attribute");
    }

    @Test
    void showChanges_on_a_deletion_gives_each_attribute_its_previous_value_046_34_046_37() {
        String type = freshType();
        subscribe(type, "{\"notificationTrigger\": [\"attributeDeleted\", \"entityDeleted\"],"
                + " \"notification\": {\"showChanges\": true}}");
        String id = Entities.id(type);
        createEntity(id, type, 9);
        Checks.noContent(api.delete("/entities/" + id + "/attrs/speed").link(model).send());
        JsonNode speed = receiver.next(WAIT_MS).json().path("data").path(0).path("speed");
        assertEquals("urn:ngsi-ld:null", speed.path("value").asText(), speed::toString);
        assertEquals(9, speed.path("previousValue").asInt(), speed::toString);
        Checks.noContent(api.delete("/entities/" + id).send());
        JsonNode gone = receiver.next(WAIT_MS).json().path("data").path(0);
        assertTrue(gone.has("deletedAt"), gone::toString);
        assertEquals("Mercedes", gone.path("brandName").path("previousValue").asText(), gone::toString);
        assertEquals("urn:ngsi-ld:null", gone.path("brandName").path("value").asText());
    }

    @Test
    void datasetId_notifies_only_the_instances_of_those_datasets_046_19() {
        String type = freshType();
        subscribe(type, "{\"datasetId\": [\"urn:ngsi-ld:Dataset:gps\"]}");
        String id = Entities.id(type);
        Checks.status(api.post("/entities").ldJson(Json.obj("""
                {"id": "%s", "type": "%s", "@context": "%s",
                 "speed": [{"type": "Property", "value": 50},
                           {"type": "Property", "value": 51, "datasetId": "urn:ngsi-ld:Dataset:gps"}],
                 "brandName": {"type": "Property", "value": "Mercedes"}}""", id, type, model)).send(), 201);
        JsonNode e = receiver.next(WAIT_MS).json().path("data").path(0);
        assertEquals(51, e.path("speed").path("value").asInt(), e::toString);
        assertEquals("urn:ngsi-ld:Dataset:gps", e.path("speed").path("datasetId").asText());
        assertFalse(e.has("brandName"), "no instance of that dataset");
    }

    @Test
    void entityCreated_alone_does_not_notify_updates() {
        String type = freshType();
        subscribe(type, "{\"notificationTrigger\": [\"entityCreated\"]}");
        String id = Entities.id(type);
        createEntity(id, type, 1);
        receiver.next(WAIT_MS);
        patchSpeed(id, 2);
        String next = Entities.id(type);
        createEntity(next, type, 3);
        nextIsOnly(receiver, next); // the update before it notified nothing
    }

    @Test
    void attributeDeleted_and_attributeCreated_and_entityUpdated() {
        String type = freshType();
        subscribe(type, "{\"notificationTrigger\": [\"attributeDeleted\"]}");
        String id = Entities.id(type);
        createEntity(id, type, 1);
        patchSpeed(id, 2);
        Checks.noContent(api.delete("/entities/" + id + "/attrs/brandName").link(model).send());
        JsonNode e = receiver.next(WAIT_MS).json().path("data").path(0);
        assertEquals(Json.obj("{\"type\": \"Property\", \"value\": \"urn:ngsi-ld:null\"}"), e.path("brandName"),
                "a deleted attribute is notified with the NGSI-LD Null (046_22)");
        assertEquals(2, e.path("speed").path("value").asInt());
        assertEquals(0, receiver.count(), "only the deletion notified");

        String type2 = freshType();
        subscribe(type2, "{\"notificationTrigger\": [\"entityUpdated\"]}");
        String id2 = Entities.id(type2);
        createEntity(id2, type2, 1); // a creation is no update
        Checks.status(api.post("/entities/" + id2 + "/attrs").link(model)
                .json(Json.obj("{\"name\": {\"type\": \"Property\", \"value\": \"n\"}}")).send(), 204);
        assertEquals("n", nextIsOnly(receiver, id2).path("name").path("value").asText(), "the creation was not notified");
    }

    @Test
    void every_write_path_notifies_replace_merge_partial_update_and_batch() {
        String type = freshType();
        subscribe(type, "{\"notificationTrigger\": [\"entityCreated\", \"entityUpdated\", \"entityDeleted\"]}");
        String id = Entities.id(type);
        createEntity(id, type, 1);
        receiver.next(WAIT_MS);
        Checks.noContent(api.put("/entities/" + id).link(model).json(Json.obj("""
                {"type": "%s", "speed": {"type": "Property", "value": 5}}""", type)).send());
        assertEquals(5, receiver.next(WAIT_MS).json().path("data").path(0).path("speed").path("value").asInt());
        Checks.noContent(api.patch("/entities/" + id).link(model).json(Json.obj("{\"speed\": 6}")).send());
        assertEquals(6, receiver.next(WAIT_MS).json().path("data").path(0).path("speed").path("value").asInt());
        Checks.noContent(api.patch("/entities/" + id + "/attrs/speed").link(model).json(Json.obj("{\"value\": 7}")).send());
        assertEquals(7, receiver.next(WAIT_MS).json().path("data").path(0).path("speed").path("value").asInt());
        String id2 = Entities.id(type);
        Checks.status(api.post("/entityOperations/upsert").link(model).json(Json.arr("""
                [{"id": "%s", "type": "%s", "speed": {"type": "Property", "value": 8}},
                 {"id": "%s", "type": "%s", "speed": {"type": "Property", "value": 9}}]""", id, type, id2, type)).send(), 201);
        assertEquals(List.of(8, 9), speeds(2), "in the order of the batch");
        Checks.status(api.post("/entityOperations/delete").json(Json.arr("[\"%s\", \"%s\"]", id, id2)).send(), 204);
        List<String> deleted = new java.util.ArrayList<>();
        while (deleted.size() < 2) {
            receiver.next(WAIT_MS).json().path("data").forEach(e -> deleted.add(e.path("id").asText()));
        }
        assertEquals(List.of(id, id2), deleted);
    }

    /** The speeds of the next {@code n} entities notified, across notifications (queued ones may come together). */
    List<Integer> speeds(int n) {
        List<Integer> out = new java.util.ArrayList<>();
        while (out.size() < n) {
            receiver.next(WAIT_MS).json().path("data").forEach(e -> out.add(e.path("speed").path("value").asInt()));
        }
        return out;
    }

    @Test
    void the_same_value_written_again_is_an_update_and_notifies_again() {
        String type = freshType();
        subscribe(type, "{\"notificationTrigger\": [\"attributeUpdated\"]}");
        String id = Entities.id(type);
        createEntity(id, type, 1);
        patchSpeed(id, 2);
        patchSpeed(id, 2);
        assertEquals(List.of(2, 2), speeds(2));
    }

    @Test
    void notifications_queued_behind_a_slow_receiver_come_together_in_order() {
        String type = freshType();
        subscribe(type, "{\"notificationTrigger\": [\"attributeUpdated\"], \"notification\": {\"format\": \"keyValues\"}}");
        String id = Entities.id(type);
        createEntity(id, type, 0);
        receiver.delayMs = 500;
        for (int i = 1; i <= 5; i++) {
            patchSpeed(id, i);
        }
        List<Integer> got = new java.util.ArrayList<>();
        int notifications = 0;
        while (got.size() < 5) {
            receiver.next(WAIT_MS).json().path("data").forEach(e -> got.add(e.path("speed").asInt()));
            notifications++;
        }
        assertEquals(List.of(1, 2, 3, 4, 5), got, "every write, in order");
        assertTrue(notifications < 5, "what queued behind the first came in fewer notifications: " + notifications);
    }

    @Test
    void an_id_pattern_selects_within_the_type() {
        String type = freshType();
        String id = Entities.id(type);
        String sub = Entities.id("Subscription");
        Checks.status(api.post("/subscriptions").ldJson(Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s", "idPattern": ".*:keep-.*"}],
                 "notification": {"endpoint": {"uri": "%s"}}, "@context": "%s"}""", sub, type, receiver.url(), model)).send(), 201);
        createEntity(id, type, 1);
        String kept = "urn:ngsi-ld:x:keep-" + java.util.UUID.randomUUID();
        createEntity(kept, type, 1);
        nextIsOnly(receiver, kept); // the first one, written before it, was not selected
    }

    @Test
    void a_paused_subscription_does_not_notify_until_it_is_active_again() {
        String type = freshType();
        String sub = subscribe(type, "{\"isActive\": false}");
        String id = Entities.id(type);
        createEntity(id, type, 1);
        assertEquals("paused", subscription(sub).path("status").asText());
        Checks.noContent(api.patch("/subscriptions/" + sub).json(Json.obj("{\"isActive\": true}")).send());
        patchSpeed(id, 2);
        assertEquals(2, nextIsOnly(receiver, id).path("speed").path("value").asInt(), "the creation while paused was not notified");
    }

    @Test
    void a_periodic_subscription_notifies_every_interval_without_a_write() {
        String type = freshType();
        String id = Entities.id(type);
        createEntity(id, type, 5);
        String sub = Entities.id("Subscription");
        Checks.status(api.post("/subscriptions").ldJson(Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}], "timeInterval": 0.2,
                 "notification": {"endpoint": {"uri": "%s"}, "format": "keyValues"}, "@context": "%s"}""",
                sub, type, receiver.url(), model)).send(), 201);
        for (int i = 0; i < 2; i++) {
            JsonNode n = receiver.next(WAIT_MS).json();
            assertEquals(sub, n.path("subscriptionId").asText());
            assertEquals(5, n.path("data").path(0).path("speed").asInt());
        }
        patchSpeed(id, 6); // a change does not trigger a periodic subscription; the next period reports it
        JsonNode n;
        do {
            n = receiver.next(WAIT_MS).json();
        } while (n.path("data").path(0).path("speed").asInt() == 5);
        assertEquals(6, n.path("data").path(0).path("speed").asInt());
        Checks.noContent(api.delete("/subscriptions/" + sub).send());
    }

    @Test
    void lang_picks_one_language_of_a_language_property() {
        String type = freshType();
        subscribe(type, "{\"lang\": \"fr\", \"notification\": {\"format\": \"concise\"}}");
        Checks.status(api.post("/entities").ldJson(Json.obj("""
                {"id": "%s", "type": "%s", "@context": "%s",
                 "name": {"type": "LanguageProperty", "languageMap": {"en": "Tower", "fr": "Tour"}}}""",
                Entities.id(type), type, model)).send(), 201);
        JsonNode name = receiver.next(WAIT_MS).json().path("data").path(0).path("name");
        assertTrue(name.toString().contains("Tour") && !name.toString().contains("Tower"), name::toString);
    }

    // ---------------------------------------------------------------- throttling and expiry, on the test's clock

    @Test
    void throttling_lets_one_notification_through_per_period() {
        String type = freshType();
        subscribe(type, "{\"throttling\": 10}");
        String id = Entities.id(type);
        createEntity(id, type, 1);
        receiver.next(WAIT_MS);
        patchSpeed(id, 2);
        clock.advance(9_000);
        patchSpeed(id, 3); // 2 and 3: inside the 10 s of the first one
        clock.advance(1_000);
        patchSpeed(id, 4);
        assertEquals(4, nextIsOnly(receiver, id).path("speed").path("value").asInt(), "2 and 3 were held back");
    }

    @Test
    void an_expired_subscription_stops_notifying_and_says_so() {
        String type = freshType();
        String expires = java.time.Instant.ofEpochMilli(clock.millis() + 60_000).toString();
        String sub = subscribe(type, "{\"expiresAt\": \"" + expires + "\"}");
        String id = Entities.id(type);
        createEntity(id, type, 1);
        receiver.next(WAIT_MS);
        clock.advance(60_000);
        patchSpeed(id, 2);
        assertEquals("expired", subscription(sub).path("status").asText());
        String later = java.time.Instant.ofEpochMilli(clock.millis() + 60_000).toString();
        Checks.noContent(api.patch("/subscriptions/" + sub).json(Json.obj("{\"expiresAt\": \"%s\"}", later)).send());
        patchSpeed(id, 3);
        assertEquals(3, nextIsOnly(receiver, id).path("speed").path("value").asInt(), "the write while expired was not notified");
    }

    // ---------------------------------------------------------------- failures

    @Test
    void a_receiver_answering_500_makes_the_status_failed_until_one_succeeds() {
        String type = freshType();
        String sub = subscribe(type, null);
        receiver.status = 500;
        String id = Entities.id(type);
        createEntity(id, type, 1);
        receiver.next(WAIT_MS);
        JsonNode s = awaitTimesSent(sub, 1);
        assertEquals("failed", s.path("status").asText());
        assertEquals("failed", s.path("notification").path("status").asText());
        assertEquals(1, s.path("notification").path("timesFailed").asInt());
        assertTrue(s.path("notification").has("lastFailure"));
        receiver.status = 204;
        patchSpeed(id, 2);
        receiver.next(WAIT_MS);
        s = awaitTimesSent(sub, 2);
        assertEquals("active", s.path("status").asText());
        assertEquals(1, s.path("notification").path("timesFailed").asInt());
    }

    @Test
    void a_refused_connection_is_a_failure_counted_in_the_status_and_the_metrics() {
        String type = freshType();
        long failedBefore = broker.broker().metrics().notifications("failed");
        String sub = Entities.id("Subscription");
        Checks.status(api.post("/subscriptions").ldJson(Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}],
                 "notification": {"endpoint": {"uri": "http://127.0.0.1:%d/x"}}, "@context": "%s"}""",
                sub, type, NotificationReceiver.refusingPort(), model)).send(), 201);
        createEntity(Entities.id(type), type, 1);
        JsonNode s = awaitTimesSent(sub, 1);
        assertEquals("failed", s.path("status").asText());
        assertEquals(1, s.path("notification").path("timesFailed").asInt());
        assertTrue(broker.broker().metrics().notifications("failed") > failedBefore);
    }

    /** The subscription once it counts {@code n} notifications sent and their outcome known (polled, with a deadline). */
    JsonNode awaitTimesSent(String sub, int n) {
        long deadline = System.nanoTime() + WAIT_MS * 1_000_000;
        var live = broker.subscriptions().get("", sub);
        while (true) {
            // the sender counts a notification when it sends it and its outcome before it lets go of the queue
            if (live.timesSent() >= n && live.queued() == 0 && !live.sending()) {
                return subscription(sub);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the subscription did not count " + n + " notifications: " + subscription(sub));
            }
            Thread.onSpinWait();
        }
    }
}
