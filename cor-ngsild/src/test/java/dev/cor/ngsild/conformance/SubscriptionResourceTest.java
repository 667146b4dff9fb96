package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * The subscription resource (ETSI GS CIM 009 § 5.8, § 6.10-6.11; data type § 5.2.12): create,
 * retrieve, list, update and delete, and every way a subscription can be refused. ETSI TPs
 * 028 (create), 029 (update), 030 (retrieve), 031 (query), 032 (delete).
 */
class SubscriptionResourceTest extends ConformanceTest {

    static String subscriptionId() {
        return Entities.id("Subscription");
    }

    /** A subscription to Vehicles under the tests' model context, as application/ld+json. */
    static ObjectNode vehicles(String id) {
        return Json.obj("""
                {"id": "%s", "type": "Subscription",
                 "entities": [{"type": "Vehicle"}],
                 "watchedAttributes": ["speed"],
                 "notification": {"attributes": ["speed", "brandName"], "format": "keyValues",
                                  "endpoint": {"uri": "http://127.0.0.1:9/notify", "accept": "application/json"}},
                 "@context": "%s"}""", id, model);
    }

    static Answer createSub(ObjectNode sub) {
        return api.post("/subscriptions").ldJson(sub).send();
    }

    static String path(String id) {
        return "/subscriptions/" + id;
    }

    @Test
    void create_answers_201_with_its_location_and_retrieve_gives_it_back_compacted_028_01_030_01() {
        String id = subscriptionId();
        Answer a = createSub(vehicles(id));
        Checks.status(a, 201);
        assertEquals("/ngsi-ld/v1/subscriptions/" + id, a.header("Location"));
        JsonNode s = Checks.okJson(api.get(path(id)).link(model).send());
        assertEquals(id, s.path("id").asText());
        assertEquals("Subscription", s.path("type").asText());
        assertEquals("Vehicle", s.path("entities").path(0).path("type").asText());
        assertEquals(List.of("speed"), Json.texts(s.path("watchedAttributes")));
        assertEquals(List.of("speed", "brandName"), Json.texts(s.path("notification").path("attributes")));
        assertEquals("keyValues", s.path("notification").path("format").asText());
        assertEquals("active", s.path("status").asText());
        assertTrue(s.path("isActive").asBoolean());
        assertEquals(0, s.path("notification").path("timesSent").asInt());
    }

    @Test
    void retrieve_compacts_with_the_requests_context_names_stay_expanded_inside_029_05() {
        String id = subscriptionId();
        Checks.status(createSub(vehicles(id)), 201);
        // without the model context the names come back as the IRIs they expanded to
        JsonNode s = Checks.okJson(api.get(path(id)).send());
        assertEquals(modelIri("Vehicle"), s.path("entities").path(0).path("type").asText());
        assertEquals(List.of(modelIri("speed")), Json.texts(s.path("watchedAttributes")));
    }

    @Test
    void an_ld_json_retrieval_carries_the_context_in_the_body() {
        String id = subscriptionId();
        Checks.status(createSub(vehicles(id)), 201);
        Answer a = api.get(path(id)).link(model).accept(Ngsi.LD_JSON).send();
        JsonNode s = Checks.okLdJson(a, model);
        assertEquals("Vehicle", s.path("entities").path(0).path("type").asText());
    }

    @Test
    void a_subscription_without_id_gets_one() {
        ObjectNode sub = vehicles("x");
        sub.remove("id");
        Answer a = createSub(sub);
        Checks.status(a, 201);
        String location = a.header("Location");
        assertTrue(location.startsWith("/ngsi-ld/v1/subscriptions/urn:ngsi-ld:Subscription:"), location);
        Checks.okJson(api.get(location.substring("/ngsi-ld/v1".length())).send());
    }

    @Test
    void a_duplicate_id_is_409_already_exists_028_04() {
        String id = subscriptionId();
        Checks.status(createSub(vehicles(id)), 201);
        Checks.problem(createSub(vehicles(id)), 409, "AlreadyExists");
    }

    @ParameterizedTest
    @ValueSource(strings = {"not a uri", "", "urn"})
    void an_invalid_id_is_400_028_03(String id) {
        Checks.problem(createSub(vehicles(id)), 400, "BadRequestData");
    }

    @Test
    void invalid_json_is_invalid_request_and_an_empty_object_bad_data_028_02() {
        Checks.problem(api.post("/subscriptions").body(Ngsi.LD_JSON, "{\"type\": ").send(), 400, "InvalidRequest");
        Checks.problem(api.post("/subscriptions").ldJson(Json.obj("{\"@context\": \"%s\"}", model)).send(), 400, "BadRequestData");
    }

    /** Each case breaks one rule of § 5.2.12 / § 5.2.14 / § 5.2.22 / § 4.21; each is BadRequestData. */
    @ParameterizedTest
    @ValueSource(strings = {
        "{\"type\": \"Subscriptionx\"}",
        "{\"notification\": null}",
        "{\"entities\": []}",
        "{\"entities\": [{\"id\": \"urn:a:b\"}]}",
        "{\"entities\": [{\"type\": \"Vehicle\", \"idPattern\": \"[\"}]}",
        "{\"q\": \"speed>>4\"}",
        "{\"q\": \"speed===4\"}",
        "{\"scopeQ\": \"/a//b\"}",
        "{\"entities\": [{\"type\": \"Vehicle\", \"id\": \"no uri\"}]}",
        "{\"watchedAttributes\": []}",
        "{\"watchedAttributes\": [3]}",
        "{\"throttling\": -1}",
        "{\"throttling\": 0}",
        "{\"throttling\": \"5\"}",
        "{\"timeInterval\": 10}",
        "{\"watchedAttributes\": null, \"timeInterval\": 10, \"throttling\": 5}",
        "{\"notificationTrigger\": [\"entityMoved\"]}",
        "{\"notificationTrigger\": []}",
        "{\"expiresAt\": \"2001-01-01T00:00:00Z\"}",
        "{\"expiresAt\": \"tomorrow\"}",
        "{\"expiresAt\": \"+123456-01-01T10:00Z\"}",
        "{\"expiresAt\": \"+999999999-12-31T23:59:59Z\"}",
        "{\"expiresAt\": \"2099-01-01T00:00:00+01:00\"}",
        "{\"isActive\": \"yes\"}",
        "{\"lang\": 3}",
        "{\"datasetId\": [\"not a uri\"]}",
        "{\"datasetId\": []}",
        "{\"jsonldContext\": \"not a uri\"}",
        "{\"notification\": {\"endpoint\": {\"accept\": \"application/json\"}}}",
        "{\"notification\": {\"endpoint\": {\"uri\": \"not a uri\"}}}",
        "{\"notification\": {\"endpoint\": {\"uri\": \"ftp://x/y\"}}}",
        "{\"notification\": {\"endpoint\": {\"uri\": \"http://x/y\", \"accept\": \"text/plain\"}}}",
        "{\"notification\": {\"format\": \"pretty\", \"endpoint\": {\"uri\": \"http://x/y\"}}}",
        "{\"notification\": {\"format\": \"keyValues\", \"showChanges\": true, \"endpoint\": {\"uri\": \"http://x/y\"}}}",
        "{\"notification\": {\"sysAttrs\": \"true\", \"endpoint\": {\"uri\": \"http://x/y\"}}}",
        "{\"notification\": {\"endpoint\": {\"uri\": \"http://x/y\", \"receiverInfo\": [{\"key\": \"A\", \"value\": 3}]}}}",
        "{\"notification\": {\"endpoint\": {\"uri\": \"http://x/y\", \"receiverInfo\": [{\"value\": \"v\"}]}}}",
        "{\"notification\": {\"endpoint\": {\"uri\": \"http://x/y\", \"notifierInfo\": [{\"key\": \"MQTT-QoS\", \"value\": \"2\"}]}}}",
        "{\"notification\": {\"attributes\": [\"speed\"], \"pick\": [\"speed\"], \"endpoint\": {\"uri\": \"http://x/y\"}}}",
        "{\"notification\": {\"attributes\": [\"speed\"], \"omit\": [\"brandName\"], \"endpoint\": {\"uri\": \"http://x/y\"}}}",
        "{\"notification\": {\"pick\": [\"speed\"], \"omit\": [\"speed\"], \"endpoint\": {\"uri\": \"http://x/y\"}}}",
    })
    void an_invalid_member_is_400_bad_request_data_028_05_028_08_028_09_028_10_5811(String change) {
        ObjectNode sub = vehicles(subscriptionId());
        Json.parse(change).properties().forEach(m -> sub.set(m.getKey(), m.getValue()));
        if (change.contains("\"timeInterval\"")) {
            sub.remove("watchedAttributes");
            if (change.startsWith("{\"timeInterval\": 10}")) {
                sub.remove("entities"); // a periodic subscription names its entities
            }
        }
        Checks.problem(createSub(sub), 400, "BadRequestData");
    }

    @ParameterizedTest
    @ValueSource(strings = {"q", "geoQ", "scopeQ"})
    void q_geoQ_and_scopeQ_are_kept_and_given_back_5_2_12(String member) {
        String id = subscriptionId();
        ObjectNode sub = vehicles(id);
        if (member.equals("geoQ")) {
            sub.set("geoQ", Json.obj("{\"georel\": \"near;maxDistance==10\", \"geometry\": \"Point\", \"coordinates\": [1, 2]}"));
        } else {
            sub.put(member, member.equals("q") ? "speed>50" : "/Madrid");
        }
        Checks.status(createSub(sub), 201);
        JsonNode s = Checks.okJson(api.get(path(id)).link(model).send());
        assertEquals(sub.get(member), s.get(member), s::toString);
    }

    @ParameterizedTest
    @ValueSource(strings = {"q=speed>50|", "q=>50", "q=(speed>50", "q=speed==\"open", "scopeQ=Madrid",
            "q=brandName==%22Tesla%2", "q=brandName==%22Tesla%zz%22",
            "geoQ={\"georel\": \"near;maxDistance==10\", \"geometry\": \"Point\", \"coordinates\": [1]}",
            "geoQ={\"georel\": \"around\", \"geometry\": \"Point\", \"coordinates\": [1, 2]}"})
    void an_invalid_q_geoQ_or_scopeQ_is_400_and_nothing_is_created_028_02(String member) {
        String id = subscriptionId();
        ObjectNode sub = vehicles(id);
        String name = member.substring(0, member.indexOf('='));
        String value = member.substring(member.indexOf('=') + 1);
        if (name.equals("geoQ")) {
            sub.set(name, Json.obj(value));
        } else {
            sub.put(name, value);
        }
        Checks.problem(createSub(sub), 400, "BadRequestData");
        Checks.status(api.get(path(id)).send(), 404);
    }

    @Test
    void list_is_paginated_and_counted_031_01() {
        String tenant = Entities.tenant();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String id = "urn:ngsi-ld:Subscription:list" + i;
            ids.add(id);
            Checks.status(api.post("/subscriptions").tenant(tenant).ldJson(vehicles(id)).send(), 201);
        }
        Answer a = api.get("/subscriptions").tenant(tenant).query("limit", "2").query("offset", "1")
                .query("count", "true").link(model).send();
        JsonNode page = Checks.okJson(a);
        assertEquals("5", a.header("NGSILD-Results-Count"));
        assertEquals(2, page.size());
        assertEquals(ids.get(1), page.path(0).path("id").asText());
        assertEquals(ids.get(2), page.path(1).path("id").asText());
        assertEquals("Vehicle", page.path(0).path("entities").path(0).path("type").asText());
        Checks.problem(api.get("/subscriptions").tenant(Entities.tenant()).send(), 404, "NonexistentTenant");
    }

    /**
     * § 5.5.9, § 6.3.10: a listing links its previous and next pages, the request's parameters
     * with limit and offset moved, as the suite's 031_02 reads them (with an ld+json answer the
     * page links are the only Link).
     */
    @Test
    void a_page_of_the_listing_links_the_previous_and_the_next_page_031_02() {
        String tenant = Entities.tenant();
        for (int i = 0; i < 3; i++) {
            Checks.status(api.post("/subscriptions").tenant(tenant).ldJson(vehicles("urn:ngsi-ld:Subscription:page" + i)).send(), 201);
        }
        String prev = "</ngsi-ld/v1/subscriptions?limit=1&offset=0>;rel=\"prev\";type=\"application/ld+json\"";
        String next = "</ngsi-ld/v1/subscriptions?limit=1&offset=2>;rel=\"next\";type=\"application/ld+json\"";
        Answer middle = api.get("/subscriptions").tenant(tenant).query("limit", "1").query("offset", "1")
                .accept("application/ld+json").send();
        Checks.status(middle, 200);
        assertEquals(1, middle.json().size());
        assertEquals(List.of(prev, next), middle.headerValues("Link"));
        // The suite sends no Accept: the answer is application/json, and its page links still name ld+json.
        Answer plain = api.get("/subscriptions").tenant(tenant).query("limit", "1").query("offset", "1").send();
        assertEquals("application/json", plain.header("Content-Type"));
        assertEquals(List.of(prev, next),
                plain.headerValues("Link").stream().filter(l -> !l.contains("json-ld#context")).toList());
        Answer last = api.get("/subscriptions").tenant(tenant).query("limit", "1").query("offset", "2")
                .accept("application/ld+json").send();
        assertEquals(List.of(prev.replace("offset=0", "offset=1")), last.headerValues("Link"));
        Answer all = api.get("/subscriptions").tenant(tenant).query("limit", "15").accept("application/ld+json").send();
        Checks.status(all, 200);
        assertEquals(3, all.json().size());
        assertEquals(List.of(), all.headerValues("Link"));
    }

    /**
     * § 6.3.11: createdAt and modifiedAt are system-generated, given back with
     * {@code options=sysAttrs} only - retrieval and listing alike (the suite's 030_03 and 031_01
     * compare a retrieved subscription without them); another option is a 400.
     */
    @Test
    void created_and_modified_at_come_back_with_options_sysAttrs_only_6_3_11_030_03() {
        String tenant = Entities.tenant();
        String id = subscriptionId();
        Checks.status(api.post("/subscriptions").tenant(tenant).ldJson(vehicles(id)).send(), 201);
        JsonNode plain = Checks.okJson(api.get(path(id)).tenant(tenant).link(model).send());
        assertFalse(plain.has("createdAt") || plain.has("modifiedAt"), plain::toString);
        assertEquals("active", plain.path("status").asText());
        JsonNode sys = Checks.okJson(api.get(path(id)).tenant(tenant).query("options", "sysAttrs").link(model).send());
        assertTrue(sys.path("createdAt").asText().matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z"), sys::toString);
        assertEquals(sys.path("createdAt"), sys.path("modifiedAt"));
        JsonNode listed = Checks.okJson(api.get("/subscriptions").tenant(tenant).link(model).send());
        assertFalse(listed.path(0).has("createdAt"), listed::toString);
        JsonNode listedSys = Checks.okJson(api.get("/subscriptions").tenant(tenant).query("options", "sysAttrs").link(model).send());
        assertEquals(sys.path("createdAt"), listedSys.path(0).path("createdAt"));
        Checks.problem(api.get(path(id)).tenant(tenant).query("options", "nonsense").send(), 400, "BadRequestData");
    }

    @Test
    void subscriptions_belong_to_their_tenant() {
        String tenant = Entities.tenant();
        String id = subscriptionId();
        Checks.status(api.post("/subscriptions").tenant(tenant).ldJson(vehicles(id)).send(), 201);
        Checks.problem(api.get(path(id)).send(), 404, "ResourceNotFound");
        Checks.okJson(api.get(path(id)).tenant(tenant).send());
    }

    @Test
    void update_replaces_the_members_the_fragment_names_and_keeps_the_rest_029_06() {
        String id = subscriptionId();
        Checks.status(createSub(vehicles(id)), 201);
        Checks.noContent(api.patch(path(id)).ldJson(Json.obj("""
                {"isActive": false, "throttling": 5, "@context": "%s"}""", model)).send());
        JsonNode s = Checks.okJson(api.get(path(id)).link(model).send());
        assertFalse(s.path("isActive").asBoolean());
        assertEquals("paused", s.path("status").asText());
        assertEquals(5, s.path("throttling").asInt());
        assertEquals(List.of("speed"), Json.texts(s.path("watchedAttributes")), "the members the fragment left alone stay");
        // § 5.8.2.4 modifies the subscription as § 5.5.8 does: the value of a member the fragment
        // names replaces the subscription's whole - notification's members do not merge one by one
        Checks.noContent(api.patch(path(id)).json(Json.obj("""
                {"notification": {"format": "concise", "endpoint": {"uri": "http://127.0.0.1:9/other"}}}""")).send());
        s = Checks.okJson(api.get(path(id)).link(model).send());
        assertEquals("concise", s.path("notification").path("format").asText());
        assertEquals("http://127.0.0.1:9/other", s.path("notification").path("endpoint").path("uri").asText());
        assertTrue(s.path("notification").path("attributes").isMissingNode(), "the attributes went with the replaced member: " + s);
        assertTrue(s.path("notification").path("endpoint").path("accept").isMissingNode(), s::toString);
    }

    @Test
    void a_fragment_whose_notification_has_no_endpoint_is_400_and_changes_nothing_029_03() {
        String id = subscriptionId();
        Checks.status(createSub(vehicles(id)), 201);
        // NotificationParams without its mandatory endpoint (§ 5.2.14) does not meet § 5.2.12 (§ 5.8.2.4)
        Checks.problem(api.patch(path(id)).json(Json.obj("{\"notification\": {\"format\": \"keyValues\"}}")).send(),
                400, "BadRequestData");
        JsonNode s = Checks.okJson(api.get(path(id)).link(model).send());
        assertEquals("http://127.0.0.1:9/notify", s.path("notification").path("endpoint").path("uri").asText());
        assertEquals(List.of("speed", "brandName"), Json.texts(s.path("notification").path("attributes")));
    }

    @Test
    void update_expands_the_fragments_names_with_its_own_context_029_05() {
        String id = subscriptionId();
        Checks.status(createSub(vehicles(id)), 201);
        Checks.noContent(api.patch(path(id)).json(Json.obj("{\"watchedAttributes\": [\"brandName\"]}")).link(model).send());
        JsonNode s = Checks.okJson(api.get(path(id)).send());
        assertEquals(List.of(modelIri("brandName")), Json.texts(s.path("watchedAttributes")));
    }

    @Test
    void update_that_removes_a_mandatory_member_or_breaks_a_rule_is_400_and_changes_nothing_029_03_029_04() {
        String id = subscriptionId();
        Checks.status(createSub(vehicles(id)), 201);
        Checks.problem(api.patch(path(id)).json(Json.obj("{\"notification\": null}")).send(), 400, "BadRequestData");
        Checks.problem(api.patch(path(id)).json(Json.obj("{\"throttling\": -3}")).send(), 400, "BadRequestData");
        Checks.problem(api.patch(path(id)).json(Json.obj("{\"timeInterval\": 3}")).send(), 400, "BadRequestData");
        JsonNode s = Checks.okJson(api.get(path(id)).link(model).send());
        assertFalse(s.has("throttling"));
        assertEquals("keyValues", s.path("notification").path("format").asText());
    }

    @Test
    void update_delete_and_retrieve_of_an_unknown_or_invalid_id_029_02_030_02_032_02() {
        String unknown = subscriptionId();
        Checks.problem(api.patch(path(unknown)).json(Json.obj("{\"isActive\": false}")).send(), 404, "ResourceNotFound");
        Checks.problem(api.get(path(unknown)).send(), 404, "ResourceNotFound");
        Checks.problem(api.delete(path(unknown)).send(), 404, "ResourceNotFound");
        Checks.problem(api.get(path("invalid")).send(), 400, "BadRequestData");
        Checks.problem(api.delete(path("invalid")).send(), 400, "BadRequestData");
    }

    @Test
    void delete_removes_it_032_01() {
        String id = subscriptionId();
        Checks.status(createSub(vehicles(id)), 201);
        Checks.noContent(api.delete(path(id)).send());
        Checks.problem(api.get(path(id)).send(), 404, "ResourceNotFound");
        Checks.status(createSub(vehicles(id)), 201); // the id is free again
    }

    @Test
    void members_the_broker_keeps_are_ignored_when_given() {
        String id = subscriptionId();
        ObjectNode sub = vehicles(id);
        sub.put("status", "expired");
        ((ObjectNode) sub.get("notification")).put("timesSent", 99);
        Checks.status(createSub(sub), 201);
        JsonNode s = Checks.okJson(api.get(path(id)).send());
        assertEquals("active", s.path("status").asText());
        assertEquals(0, s.path("notification").path("timesSent").asInt());
    }

    @Test
    void a_wrong_verb_is_405_with_allow() {
        Answer a = api.put("/subscriptions/" + subscriptionId()).json(Json.obj("{}")).send();
        Checks.problemDetails(a, 405);
        assertEquals("GET, PATCH, DELETE", a.header("Allow"));
    }
}
