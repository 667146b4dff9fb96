package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a deletion notifies (ETSI GS CIM 009 V1.8 § 5.8.6, Table 5.2.12-1 {@code notificationTrigger},
 * § 5.2.1 the NGSI-LD Null for deleted elements in notifications, § 4.5.5 multi-attributes): an
 * instance deleted by its datasetId is an attributeDeleted - not an attributeUpdated - and is shown
 * beside the instances left, as the NGSI-LD Null with its datasetId; with {@code sysAttrs} a deleted
 * attribute and a deleted entity carry createdAt, modifiedAt and deletedAt. The ETSI suite's
 * 046_22_05, _06, _07 and _13, with their data. Received by a real HTTP server.
 */
class DeletionNotificationTest extends ConformanceTest {
    private static final String FRENCH = "urn:ngsi-ld:Dataset:french-name";
    private NotificationReceiver receiver;

    @BeforeEach
    void receiver() {
        receiver = NotificationReceiver.start();
    }

    @AfterEach
    void closeReceiver() {
        receiver.close();
    }

    /** A subscription to entities of {@code type} with {@code extra}'s members, its notification with {@code notification}'s. */
    private void subscribe(String type, String extra, String notification) {
        ObjectNode sub = Json.obj("""
                {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}],
                 "notification": {"endpoint": {"uri": "%s"}}}""", Entities.id("Subscription"), type, receiver.url());
        Json.obj(extra).properties().forEach(m -> sub.set(m.getKey(), m.getValue()));
        Json.obj(notification).properties().forEach(m -> ((ObjectNode) sub.get("notification")).set(m.getKey(), m.getValue()));
        Checks.status(api.post("/subscriptions").json(sub).send(), 201);
    }

    /** The suite's building-multi-instances-attributes.jsonld, as {@code id} of {@code type}. */
    private static String multiInstanceBuilding(String type) {
        String id = Entities.id(type);
        createPlain(Json.obj("""
                {"id": "%s", "type": "%s",
                 "name": [{"type": "Property", "value": "Eiffel Tower"},
                          {"type": "Property", "value": "Tour Eiffel", "datasetId": "%s"},
                          {"type": "Property", "value": "Eiffelturm", "datasetId": "urn:ngsi-ld:Dataset:german-name"}],
                 "locatedAt": [{"type": "Relationship", "object": "urn:ngsi-ld:City:Paris"},
                               {"type": "Relationship", "object": "urn:ngsi-ld:Ville:Paris", "datasetId": "%s"},
                               {"type": "Relationship", "object": "urn:ngsi-ld:Ciudad:París",
                                "datasetId": "urn:ngsi-ld:Dataset:spanish-name"}]}""", id, type, FRENCH, FRENCH));
        return id;
    }

    /** The suite's building-simple-attributes.jsonld, as {@code id} of {@code type}. */
    private static String simpleBuilding(String type) {
        String id = Entities.id(type);
        createPlain(Json.obj("""
                {"id": "%s", "type": "%s",
                 "name": {"type": "Property", "value": "Eiffel Tower"},
                 "subCategory": {"type": "Property", "value": "tourism"},
                 "airQualityLevel": {"type": "Property", "value": 4, "unitCode": "C62",
                                     "observedAt": "2020-09-09T16:40:00.000Z"},
                 "almostFull": {"type": "Property", "value": false}}""", id, type));
        return id;
    }

    private JsonNode onlyEntity(String id) {
        return NotificationTest.nextIsOnly(receiver, id);
    }

    @Test
    void deleting_one_datasetId_notifies_attributeDeleted_with_that_instance_null_beside_the_others_046_22_06() {
        String type = Entities.uniqueName("Building");
        subscribe(type, "{\"watchedAttributes\": [\"name\"], \"notificationTrigger\": [\"attributeDeleted\"]}", "{}");
        String id = multiInstanceBuilding(type);
        Checks.noContent(api.delete("/entities/" + id + "/attrs/name?datasetId=" + FRENCH).send());
        // the suite's entity-deleted-name-attribute-instance-normalized.json (its "París" is mis-encoded there)
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "%s",
                 "name": [{"type": "Property", "value": "Eiffel Tower"},
                          {"type": "Property", "datasetId": "urn:ngsi-ld:Dataset:german-name", "value": "Eiffelturm"},
                          {"type": "Property", "datasetId": "%s", "value": "urn:ngsi-ld:null"}],
                 "locatedAt": [{"type": "Relationship", "object": "urn:ngsi-ld:City:Paris"},
                               {"type": "Relationship", "datasetId": "%s", "object": "urn:ngsi-ld:Ville:Paris"},
                               {"type": "Relationship", "datasetId": "urn:ngsi-ld:Dataset:spanish-name",
                                "object": "urn:ngsi-ld:Ciudad:París"}]}""", id, type, FRENCH, FRENCH), onlyEntity(id));
    }

    @Test
    void in_keyValues_the_deleted_instance_is_null_in_the_dataset_map_046_22_07() {
        String type = Entities.uniqueName("Building");
        subscribe(type, "{\"watchedAttributes\": [\"name\"], \"notificationTrigger\": [\"attributeDeleted\"]}",
                "{\"format\": \"keyValues\"}");
        String id = multiInstanceBuilding(type);
        Checks.noContent(api.delete("/entities/" + id + "/attrs/name?datasetId=" + FRENCH).send());
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "%s",
                 "name": {"dataset": {"urn:ngsi-ld:Dataset:german-name": "Eiffelturm", "@none": "Eiffel Tower",
                                      "%s": "urn:ngsi-ld:null"}},
                 "locatedAt": {"dataset": {"%s": "urn:ngsi-ld:Ville:Paris",
                                           "urn:ngsi-ld:Dataset:spanish-name": "urn:ngsi-ld:Ciudad:París",
                                           "@none": "urn:ngsi-ld:City:Paris"}}}""", id, type, FRENCH, FRENCH), onlyEntity(id));
    }

    @Test
    void one_instance_left_and_one_deleted_are_two_instances_in_either_form() {
        String type = Entities.uniqueName("Building");
        subscribe(type, "{\"notificationTrigger\": [\"attributeDeleted\"], \"watchedAttributes\": [\"name\"]}",
                "{\"attributes\": [\"name\"]}");
        subscribe(type, "{\"notificationTrigger\": [\"attributeDeleted\"], \"watchedAttributes\": [\"name\"]}",
                "{\"attributes\": [\"name\"], \"format\": \"keyValues\"}");
        String id = Entities.id(type);
        createPlain(Json.obj("""
                {"id": "%s", "type": "%s", "name": [{"type": "Property", "value": "Eiffel Tower"},
                                                     {"type": "Property", "value": "Tour Eiffel", "datasetId": "%s"}]}""",
                id, type, FRENCH));
        Checks.noContent(api.delete("/entities/" + id + "/attrs/name").send()); // the default instance
        JsonNode first = onlyEntity(id);
        JsonNode second = onlyEntity(id);
        JsonNode normalized = first.path("name").isArray() ? first : second;
        JsonNode keyValues = first.path("name").isArray() ? second : first;
        Json.assertSame(Json.arr("""
                [{"type": "Property", "value": "Tour Eiffel", "datasetId": "%s"},
                 {"type": "Property", "value": "urn:ngsi-ld:null"}]""", FRENCH), normalized.path("name"));
        Json.assertSame(Json.obj("{\"dataset\": {\"%s\": \"Tour Eiffel\", \"@none\": \"urn:ngsi-ld:null\"}}", FRENCH),
                keyValues.path("name"));
    }

    @Test
    void deleteAll_deletes_the_attribute_one_null_for_it_046_22_08() {
        String type = Entities.uniqueName("Building");
        subscribe(type, "{\"notificationTrigger\": [\"attributeDeleted\"]}", "{\"attributes\": [\"name\"]}");
        subscribe(type, "{\"notificationTrigger\": [\"attributeDeleted\"]}",
                "{\"attributes\": [\"name\"], \"format\": \"keyValues\"}");
        String id = multiInstanceBuilding(type);
        Checks.noContent(api.delete("/entities/" + id + "/attrs/name?deleteAll=true").send());
        JsonNode first = onlyEntity(id).path("name");
        JsonNode second = onlyEntity(id).path("name");
        JsonNode normalized = first.isObject() ? first : second;
        Json.assertSame(Json.obj("{\"type\": \"Property\", \"value\": \"urn:ngsi-ld:null\"}"), normalized);
        assertEquals("urn:ngsi-ld:null", (first.isObject() ? second : first).asText());
    }

    @Test
    void deleting_an_instance_is_no_update() {
        String type = Entities.uniqueName("Building");
        subscribe(type, "{\"notificationTrigger\": [\"attributeUpdated\"]}", "{\"attributes\": [\"name\"]}");
        String id = multiInstanceBuilding(type);
        Checks.noContent(api.delete("/entities/" + id + "/attrs/name?datasetId=" + FRENCH).send());
        Checks.noContent(api.patch("/entities/" + id + "/attrs")
                .json(Json.obj("{\"name\": {\"type\": \"Property\", \"value\": \"La tour\"}}")).send());
        // the barrier: had the deletion notified, its notification would have come first
        JsonNode name = onlyEntity(id).path("name");
        assertEquals(2, name.size(), name::toString);
        assertEquals("La tour", name.findValuesAsText("value").stream().filter(v -> !v.equals("Eiffelturm")).findFirst()
                .orElseThrow(), () -> "the update's notification is the first: " + name);
    }

    @Test
    void with_sysAttrs_a_deleted_attribute_says_when_it_was_deleted_046_22_05() {
        String type = Entities.uniqueName("Building");
        subscribe(type, "{\"watchedAttributes\": [\"name\"], \"notificationTrigger\": [\"attributeDeleted\"]}",
                "{\"sysAttrs\": true}");
        String id = simpleBuilding(type);
        Checks.noContent(api.delete("/entities/" + id + "/attrs/name").send());
        JsonNode e = onlyEntity(id);
        Json.assertSame(Json.obj("""
                {"type": "Property", "value": "urn:ngsi-ld:null",
                 "createdAt": "%s", "modifiedAt": "%s", "deletedAt": "%s"}""",
                Json.ANY_DATE_TIME, Json.ANY_DATE_TIME, Json.ANY_DATE_TIME), e.path("name"));
        assertEquals(e.path("modifiedAt").asText(), e.path("name").path("deletedAt").asText(),
                "deleted by the write that last modified the entity");
    }

    @Test
    void with_sysAttrs_a_deleted_entity_has_its_times_and_its_attributes_theirs_046_22_13() {
        String type = Entities.uniqueName("Building");
        subscribe(type, "{\"watchedAttributes\": [\"name\"], \"notificationTrigger\": [\"attributeDeleted\"]}",
                "{\"sysAttrs\": true}");
        String id = simpleBuilding(type);
        Checks.noContent(api.delete("/entities/" + id).send());
        // the suite's entity-deleted-name-attribute-on-entity-deleted-normalized-sysAttrs.json
        String t = Json.ANY_DATE_TIME;
        JsonNode e = onlyEntity(id);
        Json.assertSame(Json.obj("""
                {"id": "%s", "type": "%s", "createdAt": "%s", "modifiedAt": "%s", "deletedAt": "%s",
                 "name": {"type": "Property", "value": "urn:ngsi-ld:null",
                          "createdAt": "%s", "modifiedAt": "%s", "deletedAt": "%s"}}""", id, type, t, t, t, t, t, t), e);
        assertEquals(e.path("deletedAt").asText(), e.path("name").path("deletedAt").asText());
    }
}
