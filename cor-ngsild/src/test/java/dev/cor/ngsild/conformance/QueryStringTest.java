package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.conformance.NotificationReceiver.Received;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * How the broker reads a query string (§ 6.3.2 with RFC 3986 § 3.4 and the form encoding of the
 * WHATWG URL standard): a {@code +} in a query parameter is a space, as the clients that
 * form-encode send it (Python's requests - and with it the ETSI test suite -, Java's URLEncoder,
 * URLSearchParams); a plus is {@code %2B}. A path keeps its pluses. A q written in a body (a
 * Subscription's, § 5.2.12; a Query's, § 5.2.23) that holds a percent-escape is read as the same q
 * in a URL would be.
 */
class QueryStringTest extends ConformanceTest {
    private static String type;
    private static String eiffel;
    private static String plusId;

    @BeforeAll
    static void entities() {
        type = Entities.uniqueName("Plus");
        eiffel = Entities.id(type);
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"name\": {\"type\": \"Property\", \"value\": \"Eiffel Tower\"},"
                + " \"location\": {\"type\": \"GeoProperty\", \"value\": {\"type\": \"Point\", \"coordinates\": [13.3986, 52.5547]}}}",
                eiffel, type));
        plusId = "urn:ngsi-ld:" + type + ":a+b";
        // its Location escapes the plus (%2B), so not createPlain, which compares the Location with the id
        Checks.status(api.post("/entities").json(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"name\": {\"type\": \"Property\","
                + " \"value\": \"a+b\"}}", plusId, type)).send(), 201);
    }

    private static List<String> ids(Answer a) {
        List<String> out = new ArrayList<>();
        for (JsonNode e : Checks.okJson(a, Json.CORE)) {
            out.add(e.path("id").asText());
        }
        out.sort(null);
        return out;
    }

    @Test
    @DisplayName("6.3.2: a + in a q value is a space - name==\"Eiffel+Tower\" finds the Eiffel Tower")
    void aPlusInAQueryValueIsASpace() {
        assertEquals(List.of(eiffel), ids(api.get("/entities").rawQuery("type=" + type + "&q=name==%22Eiffel+Tower%22").send()));
    }

    @Test
    @DisplayName("6.3.2: %2B is a plus - name==\"a%2Bb\" finds the value a+b, and a+b (a space) does not")
    void anEscapedPlusIsAPlus() {
        assertEquals(List.of(plusId), ids(api.get("/entities").rawQuery("type=" + type + "&q=name==%22a%2Bb%22").send()));
        assertEquals(List.of(), ids(api.get("/entities").rawQuery("type=" + type + "&q=name==%22a+b%22").send()));
    }

    @Test
    @DisplayName("6.3.2: coordinates=[13.3986,+52.5547], a form-encoded space after the comma, is a point")
    void aPlusInCoordinatesIsASpace() {
        Answer a = api.get("/entities").rawQuery("type=" + type + "&georel=near;maxDistance==10&geometry=Point"
                + "&coordinates=%5B13.3986,+52.5547%5D").send();
        assertEquals(List.of(eiffel), ids(a));
    }

    @Test
    @DisplayName("6.3.2: an id with a plus is asked for with %2B in a query (a bare + is a space: no id, 400), and as it is in a path")
    void anIdWithAPlus() {
        assertEquals(List.of(plusId), ids(api.get("/entities").rawQuery("type=" + type + "&id=urn:ngsi-ld:" + type + ":a%2Bb").send()));
        // a bare plus is a space, and an id with a space is no URI
        Answer spaced = api.get("/entities").rawQuery("type=" + type + "&id=urn:ngsi-ld:" + type + ":a+b").send();
        assertEquals(400, spaced.status(), spaced.toString());
        Answer byPath = api.get("/entities/urn:ngsi-ld:" + type + ":a+b").send();
        assertEquals(200, byPath.status(), byPath.toString());
        assertEquals(plusId, byPath.json().path("id").asText());
    }

    /** The ids a POST query (§ 5.7.2 by 6.23.3.1) of entities of this class's type with {@code q} finds. */
    private static List<String> queriedWith(String q) {
        return ids(api.post("/entityOperations/query").json(Json.obj("{\"type\": \"Query\", \"entities\": [{\"type\": \"%s\"}]}",
                type).put("q", q)).send());
    }

    @Test
    @DisplayName("5.2.23, 4.9: a Query body's q with a percent-escape reads as in a URL - name==\"Eiffel%20Tower\" finds the Eiffel Tower")
    void aQueryBodysEscapedQ() {
        assertEquals(List.of(eiffel), queriedWith("name==\"Eiffel%20Tower\""));
        assertEquals(List.of(eiffel), queriedWith("name==%22Eiffel%20Tower%22"));
    }

    @Test
    @DisplayName("5.2.23, 4.9: a % that starts no escape is the character itself - name==\"100%\" finds the value 100%")
    void aLonePercentIsItself() {
        String hundred = Entities.id(type);
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"name\": {\"type\": \"Property\", \"value\": \"100%%\"}}",
                hundred, type));
        assertEquals(List.of(hundred), queriedWith("name==\"100%\""));
    }

    @Test
    @DisplayName("5.7.4, 4.9: a temporal Query body's q with a percent-escape reads as in a URL")
    void aTemporalQueryBodysEscapedQ() {
        Answer a = api.post("/temporal/entityOperations/query").json(Json.obj("""
                {"type": "Query", "entities": [{"type": "%s"}], "q": "name==\\"Eiffel%%20Tower\\"",
                 "temporalQ": {"timerel": "after", "timeAt": "2000-01-01T00:00:00Z", "timeproperty": "modifiedAt"}}""", type)).send();
        assertEquals(List.of(eiffel), ids(a));
    }

    @Test
    @DisplayName("TP 046_05 (5.8.6, 5.2.12, 4.9): a subscription's q name==\"Eiffel%20Tower\" notifies the Eiffel Tower's changes, not another's")
    void aSubscriptionsEscapedQ() {
        try (NotificationReceiver receiver = NotificationReceiver.start()) {
            Checks.status(api.post("/subscriptions").json(Json.obj("""
                    {"id": "%s", "type": "Subscription", "entities": [{"type": "%s"}], "watchedAttributes": ["level"],
                     "q": "name==\\"Eiffel%%20Tower\\"", "notification": {"endpoint": {"uri": "%s"}}}""",
                    Entities.id("Subscription"), type, receiver.url())).send(), 201);
            for (String id : List.of(plusId, eiffel)) { // a+b does not match: the Eiffel Tower's change is the next one
                Checks.noContent(api.post("/entities/" + id + "/attrs").json(Json.obj("{\"level\": {\"type\": \"Property\", \"value\": 5}}")).send());
            }
            Received r = receiver.next(NotificationTest.WAIT_MS);
            JsonNode data = r.json().path("data");
            assertEquals(1, data.size(), data::toString);
            assertEquals(eiffel, data.path(0).path("id").asText(), data::toString);
        }
    }
}
