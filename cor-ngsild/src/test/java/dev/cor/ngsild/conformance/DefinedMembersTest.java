package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * A subscription, a csourceSubscription and a registration hold the members V1.8 defines (§ 5.2.12
 * and its nested data types, § 5.2.9's fixed parts) and nothing else: an undefined member - a typo,
 * V1.3's {@code expires} - is 400 BadRequestData naming it, on create and on update, and nothing is
 * stored; every defined member, and everything the ETSI suite sends, is still taken. A registration's
 * own other members are Context Source Properties (§ 5.2.9, TP 037_10).
 */
class DefinedMembersTest extends ConformanceTest {

    private static String future() {
        return Instant.now().plus(30, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** A subscription with every member of § 5.2.12 a subscriber may write together, at every level. */
    private static ObjectNode everyMember(String id) {
        return Json.obj("""
                {"id": "%s", "type": "Subscription", "subscriptionName": "all", "description": "every member",
                 "entities": [{"type": "Vehicle", "id": "urn:ngsi-ld:Vehicle:A1", "idPattern": ".*"}],
                 "notificationTrigger": ["attributeUpdated"], "watchedAttributes": ["speed"],
                 "q": "speed>50", "geoQ": {"georel": "near;maxDistance==10", "geometry": "Point", "coordinates": [1, 2],
                                          "geoproperty": "location"},
                 "csf": "p==1", "isActive": true, "expiresAt": "%s", "throttling": 5,
                 "temporalQ": {"timerel": "after", "timeAt": "2020-01-01T00:00:00Z", "endTimeAt": "2030-01-01T00:00:00Z",
                               "timeproperty": "observedAt"},
                 "scopeQ": "/Madrid", "lang": "en", "datasetId": ["@none"], "splitEntities": false, "jsonldContext": "%s",
                 "status": "expired", "createdAt": "2020-01-01T00:00:00Z", "modifiedAt": "2020-01-01T00:00:00Z",
                 "deletedAt": "2020-01-01T00:00:00Z",
                 "notification": {"pick": ["speed"], "omit": ["brandName"], "sysAttrs": false, "format": "normalized",
                                  "showChanges": false, "join": "flat", "joinLevel": 1,
                                  "status": "failed", "timesSent": 9, "timesFailed": 9,
                                  "lastNotification": "2020-01-01T00:00:00Z", "lastSuccess": "2020-01-01T00:00:00Z",
                                  "lastFailure": "2020-01-01T00:00:00Z",
                                  "endpoint": {"uri": "http://127.0.0.1:9/notify", "accept": "application/json",
                                               "timeout": 1000, "cooldown": 1000,
                                               "receiverInfo": [{"key": "X-Info", "value": "a"}],
                                               "notifierInfo": [{"key": "X-Note", "value": "b"}]}},
                 "@context": "%s"}""", id, future(), model, model);
    }

    /** The object of {@code sub} at {@code level} (a dotted path; {@code []} takes an array's first item). */
    private static ObjectNode at(ObjectNode sub, String level) {
        JsonNode n = sub;
        if (!level.isEmpty()) {
            for (String step : level.split("\\.")) {
                n = step.endsWith("[]") ? n.get(step.substring(0, step.length() - 2)).get(0) : n.get(step);
            }
        }
        return (ObjectNode) n;
    }

    private static Answer subscribe(String resource, ObjectNode sub) {
        return api.post("/" + resource).ldJson(sub).send();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "entities[]", "geoQ", "temporalQ", "notification", "notification.endpoint",
        "notification.endpoint.receiverInfo[]", "notification.endpoint.notifierInfo[]"})
    void every_defined_member_is_taken_and_an_undefined_one_at_that_level_is_400_naming_it(String level) {
        for (String resource : new String[] {"subscriptions", "csourceSubscriptions"}) {
            String id = SubscriptionResourceTest.subscriptionId();
            Checks.status(subscribe(resource, everyMember(id)), 201);
            JsonNode kept = Checks.okJson(api.get("/" + resource + "/" + id).link(model).send());
            assertFalse(kept.has("deletedAt"), () -> "a common member the broker keeps (§ 5.2.2) is ignored: " + kept);
            String other = SubscriptionResourceTest.subscriptionId();
            ObjectNode sub = everyMember(other);
            at(sub, level).put("bogusMember", 1);
            Checks.badData(subscribe(resource, sub), "'bogusMember'");
            Checks.problem(api.get("/" + resource + "/" + other).send(), 404, "ResourceNotFound");
        }
    }

    @Test
    void v1_3s_expires_and_name_are_refused_naming_todays_members_on_create_and_on_update_and_nothing_changes() {
        for (String resource : new String[] {"subscriptions", "csourceSubscriptions"}) {
            String id = SubscriptionResourceTest.subscriptionId();
            ObjectNode sub = SubscriptionResourceTest.vehicles(id);
            sub.put("expires", future());
            JsonNode p = Checks.badData(subscribe(resource, sub), "'expires'");
            assertTrue(p.path("detail").asText().contains("expiresAt"), p::toString);
            Checks.problem(api.get("/" + resource + "/" + id).send(), 404, "ResourceNotFound");

            sub.remove("expires");
            sub.put("name", "V1.3's subscriptionName");
            p = Checks.badData(subscribe(resource, sub), "'name'");
            assertTrue(p.path("detail").asText().contains("subscriptionName"), p::toString);
            sub.remove("name");
            Checks.status(subscribe(resource, sub), 201);
            Checks.badData(api.patch("/" + resource + "/" + id).json(Json.obj("{\"expires\": \"%s\"}", future())).link(model)
                    .send(), "'expires'");
            Checks.badData(api.patch("/" + resource + "/" + id).json(Json.obj("""
                    {"notification": {"format": "normalized", "endpoint": {"uri": "http://127.0.0.1:9/x", "bogus": 1}}}"""))
                    .link(model).send(), "'bogus'");
            JsonNode s = Checks.okJson(api.get("/" + resource + "/" + id).link(model).send());
            assertFalse(s.has("expires") || s.has("expiresAt"), s::toString);
            assertEquals("keyValues", s.path("notification").path("format").asText(), "the refused update changed nothing: " + s);
            assertEquals("http://127.0.0.1:9/notify", s.path("notification").path("endpoint").path("uri").asText());
            // a fragment of defined members still updates
            Checks.noContent(api.patch("/" + resource + "/" + id).json(Json.obj("{\"expiresAt\": \"%s\"}", future())).link(model)
                    .send());
        }
    }

    @Test
    void the_brokers_own_stored_member_is_refused_from_a_subscriber() {
        String id = SubscriptionResourceTest.subscriptionId();
        ObjectNode sub = SubscriptionResourceTest.vehicles(id);
        sub.putArray("cor:remoteCopies").addObject().put("remoteId", "urn:x").put("registrationId", "urn:y");
        Checks.badData(subscribe("subscriptions", sub), "'cor:remoteCopies'");
        Checks.problem(api.get("/subscriptions/" + id).send(), 404, "ResourceNotFound");
    }

    @Test
    void a_registrations_fixed_parts_hold_only_their_members_and_its_own_members_are_context_source_properties() {
        String id = RegistrationResourceTest.registrationId();
        ObjectNode reg = RegistrationResourceTest.vehicles(id);
        reg.put("expires", future());
        JsonNode p = Checks.badData(RegistrationResourceTest.register(reg), "'expires'");
        assertTrue(p.path("detail").asText().contains("expiresAt"), p::toString);

        reg = RegistrationResourceTest.vehicles(id);
        reg.set("contextSourceInfo", Json.arr("[{\"key\": \"X-A\", \"value\": \"a\", \"bogusMember\": 1}]"));
        Checks.badData(RegistrationResourceTest.register(reg), "'bogusMember'");

        reg = RegistrationResourceTest.vehicles(id);
        reg.set("observationInterval", Json.obj("{\"startAt\": \"2020-01-01T00:00:00Z\", \"bogusMember\": 1}"));
        Checks.badData(RegistrationResourceTest.register(reg), "'bogusMember'");
        reg.remove("observationInterval");
        reg.set("managementInterval", Json.obj("{\"startAt\": \"2020-01-01T00:00:00Z\", \"end\": \"2021-01-01T00:00:00Z\"}"));
        Checks.badData(RegistrationResourceTest.register(reg), "'end'");
        Checks.problem(api.get(RegistrationResourceTest.path(id)).send(), 404, "ResourceNotFound");

        // every member of Table 5.2.9-1 this broker takes, and a Context Source Property of any other name
        reg = RegistrationResourceTest.vehicles(id);
        reg.put("registrationName", "r").put("description", "d").put("expiresAt", future()).put("mode", "inclusive")
                .put("tenant", "t").put("bogusMember", "a Context Source Property");
        reg.set("contextSourceInfo", Json.arr("[{\"key\": \"X-A\", \"value\": \"a\"}]"));
        reg.set("observationInterval", Json.obj("{\"startAt\": \"2020-01-01T00:00:00Z\", \"endAt\": \"2021-01-01T00:00:00Z\"}"));
        reg.set("managementInterval", Json.obj("{\"startAt\": \"2020-01-01T00:00:00Z\"}"));
        reg.set("management", Json.obj("{\"localOnly\": false, \"timeout\": 1000, \"cooldown\": 1000}"));
        ((ArrayNode) reg.putArray("operations")).add("federationOps");
        Checks.status(RegistrationResourceTest.register(reg), 201);
        JsonNode r = Checks.okJson(api.get(RegistrationResourceTest.path(id)).link(model).send());
        assertEquals("a Context Source Property", r.path("bogusMember").asText(), r::toString);

        Checks.badData(api.patch(RegistrationResourceTest.path(id)).json(Json.obj("{\"expires\": \"%s\"}", future())).link(model)
                .send(), "'expires'");
        Checks.badData(api.patch(RegistrationResourceTest.path(id)).json(Json.obj(
                "{\"contextSourceInfo\": [{\"key\": \"X-B\", \"value\": \"b\", \"bogusMember\": 1}]}")).link(model).send(),
                "'bogusMember'");
        r = Checks.okJson(api.get(RegistrationResourceTest.path(id)).link(model).send());
        assertEquals("X-A", r.path("contextSourceInfo").path(0).path("key").asText(), "the refused update changed nothing: " + r);
        assertFalse(r.has("expires"), r::toString);
    }
}
