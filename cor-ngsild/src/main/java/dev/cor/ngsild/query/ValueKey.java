package dev.cor.ngsild.query;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;

/**
 * A value as a value index orders it: a boolean, a number, a date-time (to the millisecond) or
 * a text, in that order of kinds, then by value. The keys of an attribute ({@link #forEach}) are
 * what q's terms compare of it - each instance's value, each item of an array value, each
 * language of a LanguageProperty, a typed value's {@code @value}, a relationship's objects - so
 * that the keys a {@link ValueLookup} selects bound every entity a term can match (a superset:
 * a date-time text is keyed both as a text and as its instant; the entities are tested after).
 * Immutable; any thread.
 */
public final class ValueKey implements Comparable<ValueKey> {
    /** The kinds, in index order. */
    public static final byte BOOLEAN = 0, NUMBER = 1, TIME = 2, TEXT = 3;

    private final byte kind;
    /** A number; a boolean as 0 or 1; a time as epoch milliseconds. */
    private final double number;
    /** A text, or {@code null}: past every text (the top of the TEXT kind). */
    private final String text;

    private ValueKey(byte kind, double number, String text) {
        this.kind = kind;
        this.number = number;
        this.text = text;
    }

    static ValueKey number(double n) {
        return new ValueKey(NUMBER, n, null);
    }

    static ValueKey bool(boolean b) {
        return new ValueKey(BOOLEAN, b ? 1 : 0, null);
    }

    static ValueKey time(long epochMillis) {
        return new ValueKey(TIME, epochMillis, null);
    }

    static ValueKey text(String s) {
        return new ValueKey(TEXT, 0, s);
    }

    /** The lowest key of a kind. */
    static ValueKey lowest(byte kind) {
        return kind == TEXT ? new ValueKey(TEXT, 0, "") : new ValueKey(kind, Double.NEGATIVE_INFINITY, null);
    }

    /** The highest key of a kind (above every value of it). */
    static ValueKey highest(byte kind) {
        return new ValueKey(kind, Double.POSITIVE_INFINITY, null);
    }

    /** Its kind: {@link #BOOLEAN}, {@link #NUMBER}, {@link #TIME} or {@link #TEXT}. */
    public byte kind() {
        return kind;
    }

    @Override
    public int compareTo(ValueKey o) {
        if (kind != o.kind) {
            return Byte.compare(kind, o.kind);
        }
        if (kind != TEXT) {
            return Double.compare(number, o.number);
        }
        if (text == null || o.text == null) {
            return text == o.text ? 0 : text == null ? 1 : -1;
        }
        return text.compareTo(o.text);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ValueKey k && compareTo(k) == 0;
    }

    @Override
    public int hashCode() {
        return kind == TEXT ? (text == null ? -1 : text.hashCode()) : Double.hashCode(number) * 31 + kind;
    }

    /**
     * The key as bytes whose unsigned lexicographic order is {@link #compareTo}'s, for an index
     * outside the heap that orders bytes (a database's B-tree on {@code bytea}): the kind's byte,
     * then a number's IEEE 754 bits turned to sort unsigned as {@link Double#compare} sorts, or a
     * text's UTF-16 code units each in UTF-8's form (CESU-8: code-unit order, as
     * {@link String#compareTo}, where UTF-8 would sort a supplementary character above U+FFFF's
     * neighbours differently); the top of the texts is the byte 0xFF, which no text's form holds.
     */
    public byte[] bytes() {
        if (kind != TEXT) {
            long bits = Double.doubleToLongBits(number);
            bits ^= (bits >> 63) | Long.MIN_VALUE; // a negative's bits all flipped, a positive's sign flipped
            byte[] out = new byte[9];
            out[0] = kind;
            for (int i = 0; i < 8; i++) {
                out[1 + i] = (byte) (bits >>> (56 - 8 * i));
            }
            return out;
        }
        if (text == null) {
            return new byte[] {kind, (byte) 0xFF};
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(1 + text.length());
        out.write(kind);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                out.write(c);
            } else if (c < 0x800) {
                out.write(0xC0 | c >> 6);
                out.write(0x80 | c & 0x3F);
            } else {
                out.write(0xE0 | c >> 12);
                out.write(0x80 | c >> 6 & 0x3F);
                out.write(0x80 | c & 0x3F);
            }
        }
        return out.toByteArray();
    }

    /** Heap bytes of a key beyond the text it shares with the value it came from. */
    public static final int BYTES = 32;

    /**
     * Gives every key of the attribute's instances' values - those of its top level, which the
     * terms without sub-attribute, metadata or member path read - once per instance and item
     * (a key may come more than once).
     */
    public static void forEach(AttributeList attribute, Consumer<ValueKey> out) {
        for (Attribute a : attribute.instances()) {
            JsonNode v = a.value();
            if (a.kind() == AttributeKind.LANGUAGE_PROPERTY && v.isObject()) {
                for (Map.Entry<String, JsonNode> e : v.properties()) {
                    items(e.getValue(), out);
                }
            } else {
                items(v, out);
            }
        }
    }

    /** A value, or each item of an array value (q's terms look one level into arrays). */
    private static void items(JsonNode v, Consumer<ValueKey> out) {
        if (v.isArray()) {
            for (JsonNode item : v) {
                one(item, out);
            }
        } else {
            one(v, out);
        }
    }

    private static void one(JsonNode v, Consumer<ValueKey> out) {
        if (v.isNumber()) {
            out.accept(number(v.asDouble()));
        } else if (v.isBoolean()) {
            out.accept(bool(v.booleanValue()));
        } else {
            String s = QValue.text(v);
            if (s != null) {
                out.accept(text(s));
                long t = instantMillis(s);
                if (t != Long.MIN_VALUE) {
                    out.accept(time(t));
                }
            }
        }
    }

    /**
     * The epoch millisecond (rounded down) of a text that reads as a date-time the way q reads
     * one ({@link QValue}), or {@link Long#MIN_VALUE}.
     */
    static long instantMillis(String s) {
        if (s.length() < 5 || s.length() > 40 || s.charAt(0) < '0' || s.charAt(0) > '9' || s.indexOf('T') <= 0) {
            return Long.MIN_VALUE;
        }
        try {
            Instant i = Instant.parse(s);
            return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1000L), i.getNano() / 1_000_000);
        } catch (DateTimeParseException | ArithmeticException e) {
            return Long.MIN_VALUE;
        }
    }

    @Override
    public String toString() {
        return switch (kind) {
            case BOOLEAN -> number == 1 ? "true" : "false";
            case NUMBER -> Double.toString(number);
            case TIME -> "time:" + (long) number;
            default -> text == null ? "text:max" : '"' + text + '"';
        };
    }
}
