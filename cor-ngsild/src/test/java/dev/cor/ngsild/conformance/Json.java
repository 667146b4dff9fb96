package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * JSON for the conformance tests: parsing, building payloads from text, and comparing an answer
 * with what the spec says it must be. Stateless.
 * <p>
 * The comparison is exact except where JSON or NGSI-LD leave freedom: numbers compare by value
 * ({@code 55} = {@code 55.0}); DateTimes compare as instants; the instances of a multi-attribute
 * (an array of attribute objects) and the entity types and scopes compare as sets; {@code @context}
 * may be a string or a one-element array. {@code createdAt}/{@code modifiedAt} values are free, but
 * an expected {@link #ANY_DATE_TIME} requires the member to be there as a UTC DateTime, and a
 * member the expectation lacks must be absent.
 */
final class Json {
    /** Stands for "any UTC DateTime" in an expected document. */
    static final String ANY_DATE_TIME = "<any UTC DateTime>";
    /** Stands for "the NGSI-LD core context" as the value of an expected {@code @context}. */
    static final String CORE = "<the core context>";

    /** A DateTime as 4.6.3 wants it: UTC, the trailing {@code Z}. */
    static final Pattern DATE_TIME = Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z");
    /** Any published core context URL (the suite accepts every version, 0 or 1 element). */
    static final Pattern CORE_URL = Pattern.compile("https://uri\\.etsi\\.org/ngsi-ld/v1/ngsi-ld-core-context(-v\\d+\\.\\d+)?\\.jsonld");

    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final ObjectMapper COMPACT = new ObjectMapper();
    private static final Set<String> ATTRIBUTE_TYPES = Set.of("Property", "Relationship", "GeoProperty",
            "LanguageProperty", "ListProperty", "ListRelationship", "VocabProperty", "JsonProperty");
    private static final Set<String> TIME_MEMBERS = Set.of("observedAt", "createdAt", "modifiedAt", "deletedAt");
    private static final Set<String> SYS_ATTRS = Set.of("createdAt", "modifiedAt");

    private Json() {
    }

    static JsonNode parse(String text) {
        try {
            return COMPACT.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + text, e);
        }
    }

    /** A JSON object written as text, {@code %s} and friends filled from {@code args}. */
    static ObjectNode obj(String template, Object... args) {
        JsonNode n = parse(args.length == 0 ? template : template.formatted(args));
        if (!(n instanceof ObjectNode o)) {
            throw new IllegalArgumentException("not a JSON object: " + n);
        }
        return o;
    }

    /** A JSON array written as text. */
    static ArrayNode arr(String template, Object... args) {
        JsonNode n = parse(args.length == 0 ? template : template.formatted(args));
        if (!(n instanceof ArrayNode a)) {
            throw new IllegalArgumentException("not a JSON array: " + n);
        }
        return a;
    }

    static ArrayNode array(JsonNode... items) {
        ArrayNode a = COMPACT.createArrayNode();
        for (JsonNode i : items) {
            a.add(i);
        }
        return a;
    }

    static String write(JsonNode n) {
        try {
            return COMPACT.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String pretty(JsonNode n) {
        try {
            return MAPPER.writeValueAsString(n);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A deep copy of {@code n} without the top-level members {@code names}. */
    static ObjectNode without(JsonNode n, String... names) {
        ObjectNode c = n.deepCopy();
        c.remove(List.of(names));
        return c;
    }

    /** A deep copy of {@code n} with {@code name} set to {@code value} (a JsonNode, String, number or boolean). */
    static ObjectNode with(JsonNode n, String name, Object value) {
        ObjectNode c = n.deepCopy();
        c.set(name, value instanceof JsonNode j ? j : COMPACT.valueToTree(value));
        return c;
    }

    /** A deep copy of {@code n} without any {@code createdAt}/{@code modifiedAt}, at any depth. */
    static JsonNode withoutSysAttrs(JsonNode n) {
        JsonNode c = n.deepCopy();
        strip(c);
        return c;
    }

    private static void strip(JsonNode n) {
        if (n instanceof ObjectNode o) {
            o.remove(SYS_ATTRS);
            o.forEach(Json::strip);
        } else if (n instanceof ArrayNode a) {
            a.forEach(Json::strip);
        }
    }

    /** The members of an object, sorted: for messages and set comparisons. */
    static Set<String> names(JsonNode o) {
        Set<String> s = new TreeSet<>();
        o.fieldNames().forEachRemaining(s::add);
        return s;
    }

    /** The texts of an array (or the one text of a string), for set comparisons. */
    static List<String> texts(JsonNode n) {
        List<String> l = new ArrayList<>();
        if (n.isArray()) {
            n.forEach(e -> l.add(e.asText()));
        } else if (n.isTextual()) {
            l.add(n.asText());
        }
        return l;
    }

    /** Asserts {@code actual} is what {@code expected} says, by the rules of this class. */
    static void assertSame(JsonNode expected, JsonNode actual) {
        assertSame(expected, actual, "");
    }

    static void assertSame(JsonNode expected, JsonNode actual, String message) {
        List<String> diffs = new ArrayList<>();
        compare("$", null, expected, actual, diffs);
        if (!diffs.isEmpty()) {
            fail((message.isEmpty() ? "" : message + "\n") + String.join("\n", diffs)
                    + "\nexpected: " + pretty(expected) + "\nactual:   " + pretty(actual));
        }
    }

    /** Whether {@code actual} is what {@code expected} says, by the rules of this class. */
    static boolean matches(JsonNode expected, JsonNode actual) {
        List<String> diffs = new ArrayList<>();
        compare("$", null, expected, actual, diffs);
        return diffs.isEmpty();
    }

    /** Asserts {@code value} is a DateTime as 4.6.3 wants it. */
    static void assertDateTime(JsonNode value, String what) {
        if (value == null || !value.isTextual() || !DATE_TIME.matcher(value.asText()).matches()) {
            fail(what + " is not a UTC DateTime: " + value);
        }
    }

    private static void compare(String path, String key, JsonNode e, JsonNode a, List<String> diffs) {
        if (e.isTextual() && e.asText().equals(ANY_DATE_TIME)) {
            if (!a.isTextual() || !DATE_TIME.matcher(a.asText()).matches()) {
                diffs.add(path + ": expected a UTC DateTime, got " + a);
            }
            return;
        }
        if ("@context".equals(key)) {
            compareContext(path, e, a, diffs);
            return;
        }
        if (key != null && TIME_MEMBERS.contains(key) && e.isTextual() && a.isTextual()) {
            if (!sameInstant(e.asText(), a.asText())) {
                diffs.add(path + ": expected the instant " + e.asText() + ", got " + a.asText());
            }
            return;
        }
        if (e.isNumber() && a.isNumber()) {
            if (new BigDecimal(e.asText()).compareTo(new BigDecimal(a.asText())) != 0) {
                diffs.add(path + ": expected " + e + ", got " + a);
            }
            return;
        }
        if (e.isObject() && a.isObject()) {
            Set<String> missing = names(e);
            missing.removeAll(names(a));
            Set<String> extra = names(a);
            extra.removeAll(names(e));
            if (!missing.isEmpty()) {
                diffs.add(path + ": missing " + missing);
            }
            if (!extra.isEmpty()) {
                diffs.add(path + ": unexpected " + extra);
            }
            for (Iterator<String> it = e.fieldNames(); it.hasNext();) {
                String k = it.next();
                if (a.has(k)) {
                    compare(path + "." + k, k, e.get(k), a.get(k), diffs);
                }
            }
            return;
        }
        if (e.isArray() && a.isArray()) {
            if (("type".equals(key) || "scope".equals(key)) && allTexts(e) && allTexts(a)) {
                if (!new TreeSet<>(texts(e)).equals(new TreeSet<>(texts(a))) || e.size() != a.size()) {
                    diffs.add(path + ": expected the set " + e + ", got " + a);
                }
                return;
            }
            if (isInstances(e) && isInstances(a)) {
                compareInstances(path, e, a, diffs);
                return;
            }
            if (e.size() != a.size()) {
                diffs.add(path + ": expected " + e.size() + " items, got " + a.size());
                return;
            }
            for (int i = 0; i < e.size(); i++) {
                compare(path + "[" + i + "]", null, e.get(i), a.get(i), diffs);
            }
            return;
        }
        if (!e.equals(a)) {
            diffs.add(path + ": expected " + e + ", got " + a);
        }
    }

    private static void compareContext(String path, JsonNode e, JsonNode a, List<String> diffs) {
        JsonNode ea = e.isArray() ? e : array(e);
        JsonNode aa = a.isArray() ? a : array(a);
        if (ea.size() == 1 && ea.get(0).isTextual() && ea.get(0).asText().equals(CORE)) {
            if (aa.size() != 1 || !aa.get(0).isTextual() || !CORE_URL.matcher(aa.get(0).asText()).matches()) {
                diffs.add(path + ": expected the core context alone, got " + a);
            }
            return;
        }
        if (!ea.equals(aa)) {
            diffs.add(path + ": expected the @context " + e + ", got " + a);
        }
    }

    private static void compareInstances(String path, JsonNode e, JsonNode a, List<String> diffs) {
        if (e.size() != a.size()) {
            diffs.add(path + ": expected " + e.size() + " instances, got " + a.size());
            return;
        }
        for (JsonNode ei : e) {
            String ds = datasetId(ei);
            JsonNode match = null;
            for (JsonNode ai : a) {
                if (ds.equals(datasetId(ai))) {
                    match = ai;
                }
            }
            if (match == null) {
                diffs.add(path + ": no instance with datasetId " + ds);
            } else {
                compare(path + "[datasetId=" + ds + "]", null, ei, match, diffs);
            }
        }
    }

    private static String datasetId(JsonNode instance) {
        JsonNode d = instance.get("datasetId");
        return d == null ? "(default)" : d.asText();
    }

    private static boolean isInstances(JsonNode array) {
        if (array.isEmpty()) {
            return false;
        }
        for (JsonNode i : array) {
            if (!i.isObject() || !i.has("type") || !ATTRIBUTE_TYPES.contains(i.get("type").asText())) {
                return false;
            }
        }
        return true;
    }

    private static boolean allTexts(JsonNode array) {
        for (JsonNode i : array) {
            if (!i.isTextual()) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameInstant(String a, String b) {
        try {
            return Instant.parse(a).equals(Instant.parse(b));
        } catch (DateTimeParseException e) {
            return a.equals(b);
        }
    }
}
