package dev.cor.ngsild.federation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.Test;

/**
 * The relay's check of a source's answer ({@link EntityBytes}) against Jackson, strict, as the
 * oracle: what it passes, Jackson parses to the same verdict; what it refuses without doubt
 * (no escapes in play), Jackson refuses too. Thousands of single-byte mutations of a real
 * 20-attribute entity, and the RFC 3629 cases Jackson is lenient about.
 */
class EntityBytesTest {
    static final String ID = "urn:ngsi-ld:Bench:attrs20";
    static final ObjectMapper STRICT = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    static String entity() {
        StringBuilder b = new StringBuilder("{\"id\": \"" + ID + "\", \"type\": \"Bench\"");
        for (int i = 1; i <= 20; i++) {
            b.append(",\n  \"attr").append(i).append("\": {\"type\": \"Property\", \"value\": ")
                    .append(i % 3 == 0 ? "-12.5e-3" : i % 3 == 1 ? "\"t\\u00e9xt \\\"q\\\" caf\u00e9 \u20ac \ud83d\ude00\"" : "[true, false, null, 0, {}]")
                    .append(", \"observedAt\": \"2026-12-05T01:02:03.456Z\"}");
        }
        return b.append("}").toString();
    }

    /** Jackson's verdict: one object, the id, a string or array type, no @context, nothing after it. */
    static boolean oracle(byte[] json) {
        try {
            JsonNode n = STRICT.readTree(json);
            return n != null && n.isObject() && ID.equals(n.path("id").textValue())
                    && (n.path("type").isTextual() || n.path("type").isArray()) && !n.has("@context");
        } catch (java.io.IOException e) {
            return false;
        }
    }

    @Test
    void an_entity_is_one() {
        assertTrue(EntityBytes.isEntity(entity().getBytes(StandardCharsets.UTF_8), ID));
        assertTrue(EntityBytes.isEntity(("{\"type\":[\"A\",\"B\"],\"id\":\"" + ID + "\"}").getBytes(StandardCharsets.UTF_8), ID));
        assertTrue(EntityBytes.isEntity((" \r\n\t{\"id\":\"" + ID + "\",\"type\":\"A\"} \n").getBytes(StandardCharsets.UTF_8), ID));
    }

    @Test
    void what_is_not_the_entity_asked_for_is_refused() {
        for (String s : new String[] {
                "", "   ", "[]", "{}", "null", "\"x\"",
                "{\"id\":\"" + ID + "\"}", // no type
                "{\"type\":\"A\"}", // no id
                "{\"id\":\"urn:other\",\"type\":\"A\"}",
                "{\"id\":\"" + ID + "x\",\"type\":\"A\"}",
                "{\"id\":\"" + ID + "\",\"type\":3}",
                "{\"id\":\"" + ID + "\",\"type\":{}}",
                "{\"id\":[\"" + ID + "\"],\"type\":\"A\"}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"@context\":\"https://c\"}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\"} {}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\"}]",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\"",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":01}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":1.}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":.5}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":1e}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":+1}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":NaN}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":tru}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":\"a\\x\"}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":\"a\\u12G4\"}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":\"tab\there\"}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":[1,]}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":{\"a\" 1}}",
                "{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":{1:1}}",
                "{'id':'" + ID + "','type':'A'}",
        }) {
            byte[] json = s.getBytes(StandardCharsets.UTF_8);
            assertFalse(EntityBytes.isEntity(json, ID), s);
            assertFalse(oracle(json), "the oracle agrees: " + s);
        }
    }

    /** RFC 3629 § 4: overlong forms, surrogates, code points past U+10FFFF and cut sequences are not UTF-8. */
    @Test
    void strings_must_be_utf8() {
        int[][] bad = {{0xC0, 0xAF}, {0xE0, 0x80, 0xAF}, {0xED, 0xA0, 0x80}, {0xF4, 0x90, 0x80, 0x80}, {0xF5, 0x80, 0x80, 0x80},
                {0xFF}, {0x80}, {0xE2, 0x82}, {0xC3}};
        for (int[] seq : bad) {
            assertFalse(EntityBytes.isEntity(withValueBytes(seq), ID), java.util.Arrays.toString(seq));
        }
        int[][] good = {{0xC3, 0xA9}, {0xE2, 0x82, 0xAC}, {0xF0, 0x9F, 0x98, 0x80}, {0xEF, 0xBF, 0xBD}, {0xF4, 0x8F, 0xBF, 0xBF}};
        for (int[] seq : good) {
            byte[] json = withValueBytes(seq);
            assertTrue(EntityBytes.isEntity(json, ID), java.util.Arrays.toString(seq));
            assertTrue(oracle(json), java.util.Arrays.toString(seq));
        }
    }

    static byte[] withValueBytes(int[] seq) {
        byte[] head = ("{\"id\":\"" + ID + "\",\"type\":\"A\",\"n\":\"x").getBytes(StandardCharsets.UTF_8);
        byte[] tail = "y\"}".getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[head.length + seq.length + tail.length];
        System.arraycopy(head, 0, out, 0, head.length);
        for (int k = 0; k < seq.length; k++) {
            out[head.length + k] = (byte) seq[k];
        }
        System.arraycopy(tail, 0, out, head.length + seq.length, tail.length);
        return out;
    }

    /**
     * Every single-byte deletion, and thousands of random replacements and insertions of JSON's
     * own characters, in a 20-attribute entity: where the check says yes Jackson says yes, and
     * where no backslash is in play they say the same.
     */
    @Test
    void agrees_with_jackson_on_mutations_of_a_real_entity() {
        byte[] base = entity().getBytes(StandardCharsets.UTF_8);
        assertTrue(oracle(base));
        byte[] alphabet = "{}[]\":,.-+eE0123456789 tfnulrsa\\/\n".getBytes(StandardCharsets.US_ASCII);
        SplittableRandom rnd = new SplittableRandom(20261205);
        int yes = 0;
        int checked = 0;
        for (int pos = 0; pos < base.length; pos++) {
            byte[] m = new byte[base.length - 1];
            System.arraycopy(base, 0, m, 0, pos);
            System.arraycopy(base, pos + 1, m, pos, base.length - pos - 1);
            yes += agree(m, false) ? 1 : 0;
            checked++;
        }
        for (int n = 0; n < 20_000; n++) {
            int pos = rnd.nextInt(base.length);
            byte c = alphabet[rnd.nextInt(alphabet.length)];
            byte[] m;
            if (rnd.nextBoolean()) {
                m = base.clone();
                m[pos] = c;
            } else {
                m = new byte[base.length + 1];
                System.arraycopy(base, 0, m, 0, pos);
                m[pos] = c;
                System.arraycopy(base, pos, m, pos + 1, base.length - pos);
            }
            yes += agree(m, c == '\\') ? 1 : 0;
            checked++;
        }
        // the mutations must exercise both verdicts, or the agreement says little
        assertTrue(yes > 1_000 && checked - yes > 1_000, yes + " relayable of " + checked);
    }

    /** {@code escaped}: the mutation wrote a backslash, which may make a valid escape in a name the check does not decode. */
    private static boolean agree(byte[] m, boolean escaped) {
        boolean scan = EntityBytes.isEntity(m, ID);
        boolean jackson = oracle(m);
        if (scan) {
            assertTrue(jackson, () -> "passed what Jackson refuses: " + new String(m, StandardCharsets.UTF_8));
        } else if (!escaped) {
            assertFalse(jackson, () -> "refused what Jackson takes: " + new String(m, StandardCharsets.UTF_8));
        }
        return scan;
    }
}
