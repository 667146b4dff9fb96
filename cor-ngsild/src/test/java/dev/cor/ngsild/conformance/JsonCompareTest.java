package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The comparison the conformance tests judge answers with ({@link Json#assertSame}): what it lets
 * pass and what it catches. No broker: a fault here would make every other test lie.
 */
class JsonCompareTest {

    private static void same(String expected, String actual) {
        Json.assertSame(Json.parse(expected), Json.parse(actual));
    }

    private static void differ(String expected, String actual) {
        Executable e = () -> same(expected, actual);
        assertThrows(AssertionError.class, e, () -> expected + " must not pass for " + actual);
    }

    @Test
    @DisplayName("equal documents pass; a missing, extra or different member fails")
    void members() {
        same("{\"a\": 1, \"b\": {\"c\": \"x\"}}", "{\"b\": {\"c\": \"x\"}, \"a\": 1}");
        differ("{\"a\": 1, \"b\": 2}", "{\"a\": 1}");
        differ("{\"a\": 1}", "{\"a\": 1, \"b\": 2}");
        differ("{\"a\": {\"c\": \"x\"}}", "{\"a\": {\"c\": \"y\"}}");
        differ("{\"a\": \"1\"}", "{\"a\": 1}");
        differ("{\"a\": null}", "{\"a\": \"null\"}");
    }

    @Test
    @DisplayName("numbers compare by value")
    void numbers() {
        same("{\"a\": 55}", "{\"a\": 55.0}");
        differ("{\"a\": 55}", "{\"a\": 55.5}");
    }

    @Test
    @DisplayName("arrays are ordered, except attribute instances (by datasetId) and entity types and scopes")
    void arrays() {
        differ("{\"valueList\": [1, 2]}", "{\"valueList\": [2, 1]}");
        same("{\"type\": [\"A\", \"B\"]}", "{\"type\": [\"B\", \"A\"]}");
        differ("{\"type\": [\"A\", \"B\"]}", "{\"type\": [\"A\", \"C\"]}");
        differ("{\"type\": [\"A\", \"B\"]}", "{\"type\": [\"A\", \"B\", \"B\"]}");
        same("{\"scope\": [\"/a\", \"/b\"]}", "{\"scope\": [\"/b\", \"/a\"]}");
        String one = "{\"type\": \"Property\", \"value\": 1}";
        String two = "{\"type\": \"Property\", \"value\": 2, \"datasetId\": \"urn:d:2\"}";
        same("{\"s\": [" + one + ", " + two + "]}", "{\"s\": [" + two + ", " + one + "]}");
        differ("{\"s\": [" + one + ", " + two + "]}", "{\"s\": [" + one + "]}");
        differ("{\"s\": [" + one + ", " + two + "]}",
                "{\"s\": [{\"type\": \"Property\", \"value\": 3}, " + two + "]}");
        differ("{\"objectList\": [{\"object\": \"urn:a\"}, {\"object\": \"urn:b\"}]}",
                "{\"objectList\": [{\"object\": \"urn:b\"}, {\"object\": \"urn:a\"}]}");
    }

    @Test
    @DisplayName("DateTimes compare as instants; ANY_DATE_TIME wants a UTC DateTime to be there")
    void dateTimes() {
        same("{\"observedAt\": \"2020-09-09T16:40:00.000Z\"}", "{\"observedAt\": \"2020-09-09T16:40:00Z\"}");
        differ("{\"observedAt\": \"2020-09-09T16:40:00Z\"}", "{\"observedAt\": \"2020-09-09T16:40:01Z\"}");
        same("{\"createdAt\": \"" + Json.ANY_DATE_TIME + "\"}", "{\"createdAt\": \"2024-01-01T00:00:00.123Z\"}");
        differ("{\"createdAt\": \"" + Json.ANY_DATE_TIME + "\"}", "{\"createdAt\": \"2024-01-01T00:00:00+01:00\"}");
        differ("{\"createdAt\": \"" + Json.ANY_DATE_TIME + "\"}", "{}");
        differ("{}", "{\"createdAt\": \"2024-01-01T00:00:00Z\"}");
    }

    @Test
    @DisplayName("@context: a string equals a one-element array; CORE accepts any core context URL alone")
    void context() {
        same("{\"@context\": \"http://x/c\"}", "{\"@context\": [\"http://x/c\"]}");
        differ("{\"@context\": \"http://x/c\"}", "{\"@context\": [\"http://x/c\", \"" + Ngsi.CORE_CONTEXT + "\"]}");
        same("{\"@context\": \"" + Json.CORE + "\"}", "{\"@context\": \"" + Ngsi.CORE_CONTEXT + "\"}");
        same("{\"@context\": \"" + Json.CORE + "\"}",
                "{\"@context\": [\"https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.6.jsonld\"]}");
        differ("{\"@context\": \"" + Json.CORE + "\"}", "{\"@context\": \"http://x/c\"}");
    }
}
