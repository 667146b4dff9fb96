package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A subscription's notifications join as a retrieval does (ETSI GS CIM 009 V1.8 Table 5.2.14-1
 * {@code join}, {@code joinLevel}; § 4.5.23): with {@code inline} each relationship of a notified
 * entity carries the entity it points to, with {@code flat} the notification's data holds the
 * linked entities after the notified ones, each once. The suite's 046_23-046_27 subscribe with a
 * join (their trigger is a write § 5.6.2.4 leaves unchanged: doc/conformance.md). Received by a
 * real HTTP server.
 */
class NotificationJoinTest extends ConformanceTest {
    private NotificationReceiver receiver;

    @BeforeEach
    void receiver() {
        receiver = NotificationReceiver.start();
    }

    @AfterEach
    void closeReceiver() {
        receiver.close();
    }

    /** A subscription of {@code tenant} to entities of type Building, whose notification has {@code notification}'s members too. */
    private void subscribe(String tenant, String notification) {
        Checks.status(api.post("/subscriptions").tenant(tenant).json(subscription(notification)).send(), 201);
    }

    /** A subscription to entities of type Building, notifying the receiver, its notification with {@code notification}'s members too. */
    private ObjectNode subscription(String notification) {
        ObjectNode sub = Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "Building"}],
                 "notification": {"endpoint": {"uri": "%s"}}}""", Entities.id("Subscription"), receiver.url());
        Json.obj(notification).properties().forEach(m -> ((ObjectNode) sub.get("notification")).set(m.getKey(), m.getValue()));
        return sub;
    }

    /** A City in a Country, both created first (nothing subscribes to them); returns their ids. */
    private static List<String> cityInCountry(String tenant, String suffix) {
        String city = "urn:ngsi-ld:City:" + suffix;
        String country = "urn:ngsi-ld:Country:" + suffix;
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Country", "name": {"type": "Property", "value": "France"}}""", country)).send(), 201);
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "City", "name": {"type": "Property", "value": "Paris"},
                 "isInCountry": {"type": "Relationship", "object": "%s"}}""", city, country)).send(), 201);
        return List.of(city, country);
    }

    /** Creates a Building located at {@code city}: the write that notifies. */
    private static String building(String tenant, String suffix, String city) {
        String id = "urn:ngsi-ld:Building:" + suffix;
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Building", "name": {"type": "Property", "value": "Eiffel Tower"},
                 "locatedAt": {"type": "Relationship", "object": "%s"}}""", id, city)).send(), 201);
        return id;
    }

    private JsonNode nextData() {
        return receiver.next(NotificationTest.WAIT_MS).json().path("data");
    }

    private static List<String> ids(JsonNode data) {
        List<String> ids = new ArrayList<>();
        data.forEach(e -> ids.add(e.path("id").asText()));
        return ids;
    }

    @Test
    void inline_puts_the_linked_entity_in_the_notified_relationship() {
        String tenant = Entities.tenant();
        List<String> place = cityInCountry(tenant, "n-inline");
        subscribe(tenant, "{\"join\": \"inline\"}");
        String b = building(tenant, "n-inline", place.get(0));
        JsonNode data = nextData();
        assertEquals(List.of(b), ids(data), data::toString);
        JsonNode rel = data.path(0).path("locatedAt");
        assertEquals(place.get(0), rel.path("object").asText(), data::toString);
        assertEquals(place.get(0), rel.path("entity").path("id").asText(), data::toString);
        assertEquals("Paris", rel.path("entity").path("name").path("value").asText(), data::toString);
        // joinLevel 1 (the default): the City's own relationship is not followed
        assertFalse(rel.path("entity").path("isInCountry").has("entity"), data::toString);
    }

    @Test
    void inline_with_key_values_makes_the_linked_entity_the_relationships_value() {
        String tenant = Entities.tenant();
        List<String> place = cityInCountry(tenant, "n-kv");
        subscribe(tenant, "{\"join\": \"inline\", \"joinLevel\": 2, \"format\": \"keyValues\"}");
        building(tenant, "n-kv", place.get(0));
        JsonNode city = nextData().path(0).path("locatedAt");
        assertEquals("Paris", city.path("name").asText(), city::toString);
        assertEquals("France", city.path("isInCountry").path("name").asText(), city::toString);
    }

    @Test
    void flat_adds_the_linked_entities_after_the_notified_one_as_far_as_join_level_reaches() {
        String tenant = Entities.tenant();
        List<String> place = cityInCountry(tenant, "n-flat");
        subscribe(tenant, "{\"join\": \"flat\"}");
        String one = building(tenant, "n-flat1", place.get(0));
        JsonNode data = nextData();
        assertEquals(List.of(one, place.get(0)), ids(data), data::toString);
        assertFalse(data.path(0).path("locatedAt").has("entity"), data::toString);

        String tenant2 = Entities.tenant();
        List<String> place2 = cityInCountry(tenant2, "n-flat2");
        subscribe(tenant2, "{\"join\": \"flat\", \"joinLevel\": 2}");
        String two = building(tenant2, "n-flat2", place2.get(0));
        assertEquals(List.of(two, place2.get(0), place2.get(1)), ids(nextData()));
    }

    @Test
    void a_cycle_of_relationships_ends_each_entity_notified_once() {
        String tenant = Entities.tenant();
        String a = "urn:ngsi-ld:Building:n-cycle-a";
        String other = "urn:ngsi-ld:Place:n-cycle-b";
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Place", "near": {"type": "Relationship", "object": "%s"}}""", other, a)).send(), 201);
        subscribe(tenant, "{\"join\": \"flat\", \"joinLevel\": 5}");
        Checks.status(api.post("/entities").tenant(tenant).json(Json.obj("""
                {"id": "%s", "type": "Building", "near": {"type": "Relationship", "object": "%s"}}""", a, other)).send(), 201);
        assertEquals(List.of(a, other), ids(nextData()));
    }

    @Test
    void without_join_the_notification_carries_the_notified_entity_alone() {
        String tenant = Entities.tenant();
        List<String> place = cityInCountry(tenant, "n-none");
        subscribe(tenant, "{\"join\": \"@none\"}");
        String b = building(tenant, "n-none", place.get(0));
        JsonNode data = nextData();
        assertEquals(List.of(b), ids(data));
        assertFalse(data.path(0).path("locatedAt").has("entity"), data::toString);
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"join\": \"sideways\"}", "{\"join\": 1}", "{\"join\": \"flat\", \"joinLevel\": 0}",
            "{\"join\": \"flat\", \"joinLevel\": \"2\"}", "{\"join\": \"flat\", \"joinLevel\": 1.5}"})
    void a_join_that_is_not_inline_flat_or_none_or_a_level_that_is_no_positive_integer_is_400(String notification) {
        Checks.problem(api.post("/subscriptions").tenant(Entities.tenant()).json(subscription(notification)).send(), 400,
                "BadRequestData");
    }
}
