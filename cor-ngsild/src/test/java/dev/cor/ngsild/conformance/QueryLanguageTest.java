package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.TreeSet;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * The NGSI-LD query language (4.9) on Query Entities (5.7.2, 6.4.3.2): one case per operator,
 * value kind and path form, over three entities of a type no other test uses; errors point at
 * the character. ETSI: TP 019_09_* (q), and the cases of 4.9's examples.
 */
class QueryLanguageTest extends ConformanceTest {
    private static String type;
    private static List<String> ids;

    @BeforeAll
    static void entities() {
        type = Entities.uniqueName("Tower");
        String e1 = Entities.id(type);
        String e2 = Entities.id(type);
        String e3 = Entities.id(type);
        ids = List.of(e1, e2, e3);
        createPlain(Json.obj("""
                {"id": "%s", "type": "%s",
                 "name": {"type": "Property", "value": "Eiffel Tower"},
                 "level": {"type": "Property", "value": 4, "unitCode": "C62", "observedAt": "2020-09-09T16:40:00Z"},
                 "almostFull": {"type": "Property", "value": false},
                 "locatedIn": {"type": "Relationship", "object": "urn:ngsi-ld:City:Paris"},
                 "tags": {"type": "Property", "value": ["a", "b"]},
                 "address": {"type": "Property", "value": {"city": "Paris", "street": {"no": 5}}},
                 "born": {"type": "Property", "value": "2020-01-01T10:00:00Z"},
                 "label": {"type": "LanguageProperty", "languageMap": {"en": "red", "fr": "rouge"}},
                 "category": {"type": "VocabProperty", "vocab": "commercial"},
                 "sensor": {"type": "Property", "value": 40,
                            "rawdata": {"type": "Property", "value": {"pm": 40}}}}""", e1, type));
        createPlain(Json.obj("""
                {"id": "%s", "type": "%s",
                 "name": {"type": "Property", "value": "Pisa Tower"},
                 "level": {"type": "Property", "value": 6},
                 "almostFull": {"type": "Property", "value": false},
                 "locatedIn": {"type": "Relationship", "object": "urn:ngsi-ld:City:Pisa"},
                 "tags": {"type": "Property", "value": ["c"]},
                 "address": {"type": "Property", "value": {"city": "Pisa"}},
                 "born": {"type": "Property", "value": "2021-06-01T00:00:00Z"},
                 "label": {"type": "LanguageProperty", "languageMap": {"en": "black"}}}""", e2, type));
        createPlain(Json.obj("""
                {"id": "%s", "type": "%s",
                 "name": {"type": "Property", "value": "Big Ben"},
                 "level": {"type": "Property", "value": 9},
                 "almostFull": {"type": "Property", "value": true},
                 "address": {"type": "Property", "value": {"city": "London"}}}""", e3, type));
    }

    /** The ids (as 1, 2, 3 of the fixture) GET /entities?type=T&q=... lists. */
    private static String matches(String q) {
        JsonNode list = Checks.okJson(api.get("/entities").query("type", type).query("q", q).query("limit", "100").send(),
                Json.CORE);
        TreeSet<Integer> out = new TreeSet<>();
        for (JsonNode e : list) {
            int i = ids.indexOf(e.path("id").asText());
            assertTrue(i >= 0, () -> "an entity of the fixture: " + e);
            assertTrue(out.add(i + 1), () -> "each entity once: " + list);
        }
        return out.isEmpty() ? "-" : String.join(",", out.stream().map(String::valueOf).toList());
    }

    @ParameterizedTest(name = "q={0} -> {1}")
    @CsvSource(delimiter = '\t', value = {
        "name==\"Eiffel Tower\"\t1",
        "level==4\t1",
        "level!=4\t2,3",
        "level>4\t2,3",
        "level>=6\t2,3",
        "level<6\t1",
        "level<=6\t1,2",
        "almostFull==true\t3",
        "almostFull!=true\t1,2",
        "level==\"4\"\t-"})
    @DisplayName("4.9 TP 019_09_01/06/07: == != > >= < <= on numbers, strings and booleans; a value of another type never equals")
    void comparisons(String q, String expected) {
        assertEquals(expected, matches(q), q);
    }

    @ParameterizedTest(name = "q={0} -> {1}")
    @CsvSource(delimiter = '\t', value = {
        "level==4..6\t1,2",
        "level!=4..6\t3",
        "level==4,9\t1,3",
        "level!=4,9\t2",
        "name==\"Big Ben\",\"Pisa Tower\"\t2,3",
        "born==2020-01-01T00:00:00Z..2020-12-31T00:00:00Z\t1"})
    @DisplayName("4.9: ranges a..b (both ends included) and value lists a,b,c with == and !=")
    void rangesAndLists(String q, String expected) {
        assertEquals(expected, matches(q), q);
    }

    @ParameterizedTest(name = "q={0} -> {1}")
    @CsvSource(delimiter = '\t', value = {
        "name~=\"^P\"\t2",
        "name~=\"Tower$\"\t1,2",
        "name!~=\"Tower\"\t3",
        "name!~=\"^Eiffel\"\t2,3",
        "level!~=\"4\"\t-",
        "nickname!~=\"x\"\t-",
        "level~=\"4\"\t-"})
    @DisplayName("4.9 TP 019_28_05: ~= and !~= match a pattern against strings only (!~= is false on a number or a missing target)")
    void patterns(String q, String expected) {
        assertEquals(expected, matches(q), q);
    }

    @ParameterizedTest(name = "q={0} -> {1}")
    @CsvSource(delimiter = '\t', value = {
        "locatedIn==urn:ngsi-ld:City:Pisa\t2",
        "locatedIn==\"urn:ngsi-ld:City:Paris\"\t1",
        "locatedIn!=urn:ngsi-ld:City:Pisa\t1",
        "locatedIn==urn:ngsi-ld:City:Pisa,urn:ngsi-ld:City:Paris\t1,2",
        "locatedIn>urn:ngsi-ld:City:A\t-"})
    @DisplayName("4.9 TP 019_09_08..10: a Relationship's object compares with == and != (quoted or not), never orders")
    void relationships(String q, String expected) {
        assertEquals(expected, matches(q), q);
    }

    @ParameterizedTest(name = "q={0} -> {1}")
    @CsvSource(delimiter = '\t', value = {
        "locatedIn\t1,2",
        "!locatedIn\t3",
        "sensor.rawdata\t1",
        "address[street.no]\t1"})
    @DisplayName("4.9 example 0/5: an attribute path alone asks for its existence; !path for its absence")
    void existence(String q, String expected) {
        assertEquals(expected, matches(q), q);
    }

    @ParameterizedTest(name = "q={0} -> {1}")
    @CsvSource(delimiter = '\t', value = {
        "address[city]==\"London\"\t3",
        "address[street.no]==5\t1",
        "sensor.rawdata[pm]==40\t1",
        "tags==\"b\"\t1",
        "tags!=\"b\"\t2",
        "label[en]==\"red\"\t1",
        "label[*]==\"rouge\"\t1",
        "label==\"black\"\t2",
        "label[en]==\"rouge\"\t-",
        "label[*]!=\"red\"\t2",
        "label[en]!=\"red\"\t2"})
    @DisplayName("4.9 examples 9/10 TP 019_29_*: [member.path] enters a compound value, a.b a sub-attribute; arrays and"
            + " language maps ([*]!= holds when no language has the value)")
    void paths(String q, String expected) {
        assertEquals(expected, matches(q), q);
    }

    @ParameterizedTest(name = "q={0} -> {1}")
    @CsvSource(delimiter = '\t', value = {
        "level.observedAt>=2020-01-01T00:00:00Z\t1",
        "level.observedAt<2020-01-01T00:00:00Z\t-",
        "level.unitCode==\"C62\"\t1",
        "born>2020-06-01T00:00:00Z\t2",
        "born<2021-06-01T00:00:00.001Z\t1,2",
        "level.modifiedAt>2000-01-01T00:00:00Z\t1,2,3",
        "modifiedAt>2000-01-01T00:00:00Z\t1,2,3"})
    @DisplayName("4.9 example 8: metadata (observedAt, unitCode, createdAt/modifiedAt) and DateTime values compare in time")
    void metadataAndTime(String q, String expected) {
        assertEquals(expected, matches(q), q);
    }

    @ParameterizedTest(name = "q={0} -> {1}")
    @CsvSource(delimiter = '\t', value = {
        "(name==\"Pisa Tower\"|name==\"Eiffel Tower\");almostFull==false\t1,2",
        "name==\"Pisa Tower\"|almostFull==false\t1,2",
        "name==\"Pisa Tower\";almostFull==false\t2",
        "level==4|level==9;almostFull==true\t1,3",
        "(level==4|level==9);almostFull==true\t3",
        "((level>4;level<7)|level==4);locatedIn\t1,2"})
    @DisplayName("4.9 TP 019_09_02..05, examples 6/7: ; binds tighter than |, parentheses group and nest")
    void logic(String q, String expected) {
        assertEquals(expected, matches(q), q);
    }

    @Test
    @DisplayName("4.9 example 12 TP 019_29_12/13: expandValues=category expands q's value as a vocab term; without it the"
            + " literal never equals the stored IRI")
    void expandValues() {
        assertEquals("-", matches("category==commercial"));
        JsonNode list = Checks.okJson(api.get("/entities").query("type", type).query("q", "category==commercial")
                .query("expandValues", "category").send(), Json.CORE);
        assertEquals(1, list.size(), list::toString);
        assertEquals(ids.get(0), list.get(0).path("id").asText());
        assertEquals("1", matches("category==\"" + defaultIri("commercial") + "\""), "the full IRI matches as written");
    }

    @Test
    @DisplayName("4.9 examples 13/14 TP 019_29_08..10: rel{path} reads the path on the entity the relationship names;"
            + " rel{Type:path} only on one of that type; links nest")
    void linkedEntities() {
        String source = Entities.uniqueName("Station");
        String target = Entities.uniqueName("Device");
        String owner = Entities.id("Person");
        String device = Entities.id(target);
        String station = Entities.id(source);
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Person\", \"name\": {\"type\": \"Property\", \"value\": \"Bob\"}}", owner));
        createPlain(Json.obj("""
                {"id": "%s", "type": "%s", "humidity": {"type": "Property", "value": 40},
                 "owner": {"type": "Relationship", "object": "%s"}}""", device, target, owner));
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"sensor\": {\"type\": \"Relationship\", \"object\": \"%s\"}}",
                station, source, device));
        for (String[] kase : new String[][] {{"sensor{humidity}==40", station}, {"sensor{humidity}>40", "-"},
                {"sensor{" + target + ":humidity}==40", station}, {"sensor{Vehicle:humidity}==40", "-"},
                {"sensor{owner{name}}==\"Bob\"", station}, {"sensor{humidity}", station}}) {
            JsonNode list = Checks.okJson(api.get("/entities").query("type", source).query("q", kase[0]).send(), Json.CORE);
            assertEquals(kase[1], list.isEmpty() ? "-" : list.get(0).path("id").asText(), kase[0]);
        }
        Checks.badData(api.get("/entities").query("type", source).query("q", "sensor{humidity==40").send(), "character 16");
    }

    @Test
    @DisplayName("4.9 TP 019_09: q alone bounds a query (no type needed); its count is NGSILD-Results-Count")
    void qAlone() {
        String name = Entities.uniqueName("uniqueLabel");
        String id = Entities.id("Thing");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"Thing\", \"%s\": {\"type\": \"Property\", \"value\": 1}}", id, name));
        Answer a = api.get("/entities").query("q", name + "==1").query("count", "true").send();
        JsonNode list = Checks.okJson(a, Json.CORE);
        assertEquals(1, list.size(), () -> "one match: " + list);
        assertEquals(id, list.get(0).path("id").asText());
        assertEquals("1", a.header("NGSILD-Results-Count"));
    }

    @Test
    @DisplayName("4.9, 5.5.7: names in q are expanded with the request's @context (Link)")
    void termsExpandWithContext() {
        String id = createdVehicle();
        Answer with = api.get("/entities").query("type", "Vehicle").query("q", "speed>=0").query("limit", "1000")
                .link(model).send();
        assertTrue(Checks.okJson(with, model).toString().contains(id), () -> "speed under the model context: " + with);
        Answer without = api.get("/entities").query("type", modelIri("Vehicle")).query("q", "speed>=0")
                .query("limit", "1000").send();
        assertFalse(Checks.okJson(without, Json.CORE).toString().contains(id),
                () -> "speed under the core context is another attribute: " + without);
    }

    @ParameterizedTest(name = "q={0}: {1}")
    @CsvSource(delimiter = '\t', value = {
        "level==\tcharacter 8",
        "level=4\tcharacter 6",
        "(level==4\tcharacter 10",
        "level==4)\tcharacter 9",
        "==4\tcharacter 1",
        "name==\"abc\tcharacter 7",
        "level==1..true\tcharacter 8",
        "level>1,2\tcharacter 7",
        "level>true\tcharacter 7",
        "level>4..5\tcharacter 7",
        "level==4;\tcharacter 10",
        "level!4\tcharacter 6",
        "name~=\"(\"\tcharacter"})
    @DisplayName("4.9, 6.3.2: an invalid q is 400 BadRequestData whose detail points at the character")
    void errorsPointAtTheCharacter(String q, String where) {
        Checks.badData(api.get("/entities").query("type", type).query("q", q).send(), where);
    }

    @ParameterizedTest(name = "q={0}: {1}")
    @CsvSource(delimiter = '\t', value = {
        "level>>>4\tcharacter 7",
        "level>>4\tcharacter 7",
        "level===1\tcharacter 8",
        "level>=>4\tcharacter 8",
        "level<<4\tcharacter 7",
        "level<=<4\tcharacter 8",
        "level<>4\tcharacter 7",
        "level!==4\tcharacter 8",
        "level==!4\tcharacter 8",
        "level==~4\tcharacter 8",
        "level==>4\tcharacter 8",
        "level> >4\tcharacter 8",
        "level==4..>5\tcharacter 11",
        "level==4,=5\tcharacter 10",
        "level==(4)\tcharacter 8",
        "name==a>b\tcharacter 8",
        "name==a{b}\tcharacter 8",
        "level==4abc\tcharacter 8",
        "level==+4\tcharacter 8",
        "level==.5\tcharacter 8"})
    @DisplayName("4.9: where the grammar wants a value (Number, quoted string, date, time, true, false, URI), an operator's"
            + " character or anything no value holds is 400 BadRequestData naming the character - never a 200 of a text"
            + " value nobody wrote")
    void aValueIsOneOfTheGrammarsForms(String q, String where) {
        JsonNode p = Checks.badData(api.get("/entities").query("type", type).query("q", q).send(), where);
        assertTrue(p.path("detail").asText().contains("'" + q.charAt(Integer.parseInt(where.trim().substring(10)) - 1)),
                () -> "the detail names the character: " + p);
    }

    @ParameterizedTest(name = "q={0} -> {1}")
    @CsvSource(delimiter = '\t', value = {
        "level==-4\t-",
        "name==Eiffel-Tower\t-",
        "locatedIn==urn:ngsi-ld:City:Paris\t1",
        "level.observedAt==2020-09-09T16:40:00Z\t1",
        "name~=\">>=\"\t-",
        "name~=>>\t-",
        "name==\">>4\"\t-"})
    @DisplayName("4.9: numbers, words, URIs and dates stay unquoted; a pattern (after ~=) or a quoted string may hold any"
            + " character")
    void unquotedValuesAndPatternsThatStayAccepted(String q, String expected) {
        assertEquals(expected, matches(q), q);
    }

    @ParameterizedTest(name = "scopeQ={0}: {1}")
    @CsvSource(delimiter = '\t', value = {
        "/a//b\tcharacter 4",
        "/a;;/b\tcharacter 4",
        "/a,\tcharacter 4",
        "/a|\tcharacter 4",
        "/a#\tcharacter 2",
        "/#/a\tcharacter 3",
        "/a/+#\tcharacter 4",
        "(/a\tcharacter 4",
        "/a)\tcharacter 3",
        "()\tcharacter 2",
        "/a==/b\tcharacter 2",
        "/a>>/b\tcharacter 2",
        "/a;|/b\tcharacter 4",
        "/a /b\tcharacter 2",
        "/\tcharacter 2",
        "a\tcharacter 1"})
    @DisplayName("4.19: an invalid scopeQ is 400 BadRequestData naming the character")
    void scopeQErrorsPointAtTheCharacter(String scopeQ, String where) {
        Checks.badData(api.get("/entities").query("type", type).query("scopeQ", scopeQ).send(), where);
    }

    @Test
    @DisplayName("4.9: a pattern that backtracks without bound is stopped: 403 TooComplexQuery, never a hang")
    void patternCostIsBounded() {
        String t = Entities.uniqueName("Evil");
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"name\": {\"type\": \"Property\", \"value\": \"%s\"}}",
                Entities.id(t), t, "a".repeat(40) + "!"));
        Checks.problem(api.get("/entities").query("type", t).query("q", "name~=\"(.*a){12}$\"").send(), 403, "TooComplexQuery");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '\t', value = {
        "{\"type\": \"Query\", \"entities\": [{\"type\": \"T\"}], \"attrs\": []}\tattrs",
        "{\"type\": \"Query\", \"entities\": []}\tentities",
        "{\"type\": \"Query\", \"entities\": [{\"type\": \"T\"}], \"q\": 42}\tq",
        "{\"type\": \"Query\", \"entities\": [{\"type\": \"T\"}], \"joinLevel\": 0}\tjoinLevel",
        "{\"type\": \"Query\", \"entities\": [{\"type\": \"T\"}], \"temporalQ\": {\"timerel\": \"after\"}}\ttemporalQ",
        "{\"type\": \"NotQuery\", \"entities\": [{\"type\": \"T\"}]}\tQuery"})
    @DisplayName("5.2.23 TP 019_32_04..09: an invalid Query body is 400 BadRequestData naming the member")
    void invalidQueryBody(String body, String member) {
        Checks.badData(api.post("/entityOperations/query").json(Json.parse(body)).send(), member);
    }

    @Test
    @DisplayName("6.4.3.2 TP 019_26_02: type=* with local=false contradicts itself: 400 BadRequestData")
    void wildcardNotLocal() {
        Checks.badData(api.get("/entities").query("type", "*").query("local", "false").send(), "local");
    }

    @Test
    @DisplayName("6.4.3.2 TP 019_26_01: type=* lists entities of every type")
    void wildcardType() {
        Answer a = api.get("/entities").query("type", "*").query("q", "level==9").query("limit", "1000").send();
        assertTrue(Checks.okJson(a, Json.CORE).toString().contains(ids.get(2)), a::toString);
    }

    @Test
    @DisplayName("5.7.2.4 TP 019_27_01/02: geometryProperty outside a GeoJSON answer is 400 BadRequestData")
    void geometryPropertyNeedsGeoJson() {
        Checks.badData(api.get("/entities").query("type", type).query("geometryProperty", "location").send(),
                "geometryProperty");
        Checks.status(api.get("/entities").query("type", type).query("geometryProperty", "location")
                .accept("application/geo+json").send(), 200);
    }

    @Test
    @DisplayName("5.7.6 TP 019_02_*: POST /entityOperations/query takes q in the Query body")
    void postQueryTakesQ() {
        Answer a = api.post("/entityOperations/query").json(Json.obj("""
                {"type": "Query", "entities": [{"type": "%s"}], "q": "level>=6"}""", type)).send();
        JsonNode list = Checks.okJson(a, Json.CORE);
        TreeSet<String> got = new TreeSet<>();
        list.forEach(e -> got.add(e.path("id").asText()));
        assertEquals(new TreeSet<>(List.of(ids.get(1), ids.get(2))), got);
    }
}
