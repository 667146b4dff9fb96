package dev.cor.ngsild.federation;

import java.nio.charset.StandardCharsets;

/**
 * Whether a source's answer, as bytes, is one entity that this broker may pass on unchanged: a
 * well-formed JSON text (RFC 8259, UTF-8) holding one object with {@code "id"} the id asked for,
 * a string or array {@code "type"}, and no {@code "@context"}. One pass, no allocation: a relay
 * through a chain of brokers checks every answer it passes on, and a Jackson parse, even one that
 * skips the values, spent most of a hop's time canonicalizing the names of the attributes it
 * skipped.
 *
 * <p>Names that repeat pass as they came (RFC 8259 § 4 asks only that they SHOULD be unique; the
 * last {@code id} or {@code type} is the one checked, as a parse keeps the last). It answers
 * {@code false} whenever it is not sure - a top-level member name written with
 * escapes, an id with escapes, nesting deeper than {@value #MAX_DEPTH} - and the caller then
 * parses the answer the ordinary way, which decides. Stateless; any thread.
 */
public final class EntityBytes {
    /** Deeper nesting is left to the ordinary parse (and its limits). */
    static final int MAX_DEPTH = 256;

    private static final byte[] ID = bytes("id");
    private static final byte[] TYPE = bytes("type");
    private static final byte[] CONTEXT = bytes("@context");
    /** The bytes a string holds as they are: ASCII, not a control character, a quote or a backslash. */
    private static final boolean[] PLAIN = new boolean[256];

    static {
        for (int c = 0x20; c < 0x80; c++) {
            PLAIN[c] = c != '"' && c != '\\';
        }
    }

    private EntityBytes() {
    }

    /** Whether {@code json} is one entity object of id {@code id}, with a type and no {@code @context}. */
    public static boolean isEntity(byte[] json, String id) {
        return new Scan(json).entity(bytes(id));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** One pass over one text; {@code -1} from any step means "not well-formed here". */
    private static final class Scan {
        private final byte[] b;

        Scan(byte[] b) {
            this.b = b;
        }

        boolean entity(byte[] id) {
            int i = ws(0);
            if (i >= b.length || b[i] != '{') {
                return false;
            }
            boolean idOk = false;
            boolean typeOk = false;
            i = ws(i + 1);
            if (i < b.length && b[i] == '}') {
                return false; // no id
            }
            while (true) {
                if (i >= b.length || b[i] != '"') {
                    return false;
                }
                int nameStart = i + 1;
                int nameEnd = string(i);
                if (nameEnd < 0 || has(nameStart, nameEnd - 1, (byte) '\\')) {
                    return false;
                }
                i = ws(nameEnd);
                if (i >= b.length || b[i] != ':') {
                    return false;
                }
                i = ws(i + 1);
                if (i >= b.length) {
                    return false;
                }
                int valueStart = i;
                i = value(i, 1);
                if (i < 0) {
                    return false;
                }
                if (is(nameStart, nameEnd - 1, ID)) {
                    idOk = b[valueStart] == '"' && is(valueStart + 1, i - 1, id);
                } else if (is(nameStart, nameEnd - 1, TYPE)) {
                    typeOk = b[valueStart] == '"' || b[valueStart] == '[';
                } else if (is(nameStart, nameEnd - 1, CONTEXT)) {
                    return false;
                }
                i = ws(i);
                if (i >= b.length) {
                    return false;
                }
                if (b[i] == '}') {
                    return idOk && typeOk && ws(i + 1) == b.length;
                }
                if (b[i] != ',') {
                    return false;
                }
                i = ws(i + 1);
            }
        }

        /** After the value at {@code i} (which is not whitespace), or -1. */
        private int value(int i, int depth) {
            switch (b[i]) {
                case '"':
                    return string(i);
                case '{':
                    return depth >= MAX_DEPTH ? -1 : object(i, depth + 1);
                case '[':
                    return depth >= MAX_DEPTH ? -1 : array(i, depth + 1);
                case 't':
                    return literal(i, "true");
                case 'f':
                    return literal(i, "false");
                case 'n':
                    return literal(i, "null");
                default:
                    return number(i);
            }
        }

        private int object(int i, int depth) {
            i = ws(i + 1);
            if (i < b.length && b[i] == '}') {
                return i + 1;
            }
            while (true) {
                if (i >= b.length || b[i] != '"') {
                    return -1;
                }
                i = ws(string(i));
                if (i <= 0 || i >= b.length || b[i] != ':') {
                    return -1;
                }
                i = ws(i + 1);
                if (i >= b.length || (i = value(i, depth)) < 0) {
                    return -1;
                }
                i = ws(i);
                if (i >= b.length) {
                    return -1;
                }
                if (b[i] == '}') {
                    return i + 1;
                }
                if (b[i] != ',') {
                    return -1;
                }
                i = ws(i + 1);
            }
        }

        private int array(int i, int depth) {
            i = ws(i + 1);
            if (i < b.length && b[i] == ']') {
                return i + 1;
            }
            while (true) {
                if (i >= b.length || (i = value(i, depth)) < 0) {
                    return -1;
                }
                i = ws(i);
                if (i >= b.length) {
                    return -1;
                }
                if (b[i] == ']') {
                    return i + 1;
                }
                if (b[i] != ',') {
                    return -1;
                }
                i = ws(i + 1);
            }
        }

        /** The string opening at {@code i}: after its closing quote, or -1 (escapes and UTF-8 checked). */
        private int string(int i) {
            i++;
            while (i < b.length) {
                while (i < b.length && PLAIN[b[i] & 0xFF]) {
                    i++; // the run of characters that need no look: most of every name and value
                }
                if (i >= b.length) {
                    return -1;
                }
                int c = b[i] & 0xFF;
                if (c == '"') {
                    return i + 1;
                }
                if (c < 0x20) {
                    return -1;
                }
                if (c == '\\') {
                    if (++i >= b.length) {
                        return -1;
                    }
                    switch (b[i]) {
                        case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> i++;
                        case 'u' -> {
                            if (i + 4 >= b.length) {
                                return -1;
                            }
                            for (int k = 1; k <= 4; k++) {
                                if (Character.digit(b[i + k], 16) < 0) {
                                    return -1;
                                }
                            }
                            i += 5;
                        }
                        default -> {
                            return -1;
                        }
                    }
                } else if (c < 0x80) {
                    i++;
                } else if ((i = utf8(i, c)) < 0) {
                    return -1;
                }
            }
            return -1;
        }

        /** After the UTF-8 sequence at {@code i} led by {@code c}, or -1 (RFC 3629: no overlong forms, no surrogates). */
        private int utf8(int i, int c) {
            int more;
            int lo = 0x80;
            int hi = 0xBF;
            if (c >= 0xC2 && c <= 0xDF) {
                more = 1;
            } else if (c >= 0xE0 && c <= 0xEF) {
                more = 2;
                if (c == 0xE0) {
                    lo = 0xA0;
                } else if (c == 0xED) {
                    hi = 0x9F;
                }
            } else if (c >= 0xF0 && c <= 0xF4) {
                more = 3;
                if (c == 0xF0) {
                    lo = 0x90;
                } else if (c == 0xF4) {
                    hi = 0x8F;
                }
            } else {
                return -1;
            }
            if (i + more >= b.length) {
                return -1;
            }
            int second = b[i + 1] & 0xFF;
            if (second < lo || second > hi) {
                return -1;
            }
            for (int k = 2; k <= more; k++) {
                int n = b[i + k] & 0xFF;
                if (n < 0x80 || n > 0xBF) {
                    return -1;
                }
            }
            return i + more + 1;
        }

        /** RFC 8259 § 6: {@code -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?} */
        private int number(int i) {
            if (b[i] == '-') {
                i++;
            }
            if (i >= b.length) {
                return -1;
            }
            if (b[i] == '0') {
                i++;
            } else if (b[i] >= '1' && b[i] <= '9') {
                i = digits(i);
            } else {
                return -1;
            }
            if (i < b.length && b[i] == '.') {
                int after = digits(i + 1);
                if (after == i + 1) {
                    return -1;
                }
                i = after;
            }
            if (i < b.length && (b[i] == 'e' || b[i] == 'E')) {
                i++;
                if (i < b.length && (b[i] == '+' || b[i] == '-')) {
                    i++;
                }
                int after = digits(i);
                if (after == i) {
                    return -1;
                }
                i = after;
            }
            return i;
        }

        private int digits(int i) {
            while (i < b.length && b[i] >= '0' && b[i] <= '9') {
                i++;
            }
            return i;
        }

        private int literal(int i, String word) {
            if (i + word.length() > b.length) {
                return -1;
            }
            for (int k = 0; k < word.length(); k++) {
                if (b[i + k] != word.charAt(k)) {
                    return -1;
                }
            }
            return i + word.length();
        }

        private int ws(int i) {
            if (i < 0) {
                return i;
            }
            while (i < b.length && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) {
                i++;
            }
            return i;
        }

        /** Whether the bytes from {@code from} to {@code to} (exclusive) are {@code want}. */
        private boolean is(int from, int to, byte[] want) {
            if (to - from != want.length) {
                return false;
            }
            for (int k = 0; k < want.length; k++) {
                if (b[from + k] != want[k]) {
                    return false;
                }
            }
            return true;
        }

        private boolean has(int from, int to, byte c) {
            for (int k = from; k < to; k++) {
                if (b[k] == c) {
                    return true;
                }
            }
            return false;
        }
    }
}
