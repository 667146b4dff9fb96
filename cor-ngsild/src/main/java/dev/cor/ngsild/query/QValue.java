package dev.cor.ngsild.query;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.format.DateTimeParseException;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A literal of q: a number, a boolean, or a text (a quoted string, or an unquoted URI or word)
 * that may also read as a date-time, a date or a time (§ 4.6.3) - then it compares temporally
 * with a target that reads the same way. Immutable.
 */
final class QValue {
    enum Kind { NUMBER, BOOLEAN, TEXT }

    /** How a text reads as a time, if it does. */
    enum Temporal { NONE, DATE_TIME, DATE, TIME }

    final Kind kind;
    final double number;
    final boolean bool;
    final String text;
    /** The text expanded as a vocab term (compared instead of the text for an attribute of expandValues). */
    final String expanded;
    final boolean quoted;
    final Temporal temporal;
    private final Comparable<Object> time;

    private QValue(Kind kind, double number, boolean bool, String text, String expanded, boolean quoted) {
        this.kind = kind;
        this.number = number;
        this.bool = bool;
        this.text = text;
        this.expanded = expanded;
        this.quoted = quoted;
        Temporal t = Temporal.NONE;
        Comparable<Object> c = null;
        if (text != null) {
            for (Temporal k : new Temporal[] {Temporal.DATE_TIME, Temporal.DATE, Temporal.TIME}) {
                c = parse(k, text);
                if (c != null) {
                    t = k;
                    break;
                }
            }
        }
        this.temporal = t;
        this.time = c;
    }

    static QValue number(double n) {
        return new QValue(Kind.NUMBER, n, false, null, null, false);
    }

    static QValue bool(boolean b) {
        return new QValue(Kind.BOOLEAN, 0, b, null, null, false);
    }

    static QValue text(String s, String expanded, boolean quoted) {
        return new QValue(Kind.TEXT, 0, false, s, expanded, quoted);
    }

    /** Whether two values can bound one range. */
    boolean sameKind(QValue o) {
        return kind == o.kind && (kind != Kind.TEXT || temporal == o.temporal);
    }

    /**
     * The order of {@code target} against this value, or {@code null} when they are of different
     * data types (which then neither equal nor order: § 4.9).
     *
     * @param vocab the attribute is one of expandValues: compare with the expanded text
     */
    Integer compare(JsonNode target, boolean vocab) {
        switch (kind) {
            case NUMBER -> {
                return target.isNumber() ? Integer.valueOf(Double.compare(target.asDouble(), number)) : null;
            }
            case BOOLEAN -> {
                return target.isBoolean() ? Integer.valueOf(Boolean.compare(target.booleanValue(), bool)) : null;
            }
            default -> {
                String s = text(target);
                if (s == null) {
                    return null;
                }
                if (vocab) {
                    return s.compareTo(expanded);
                }
                if (temporal != Temporal.NONE) {
                    Comparable<Object> t = parse(temporal, s);
                    if (t != null) {
                        return Integer.signum(t.compareTo(time));
                    }
                    if (!quoted) {
                        return null; // an unquoted date compares with dates only
                    }
                }
                return Integer.signum(s.compareTo(text));
            }
        }
    }

    /** A target's text: a string, or the {@code @value} of a typed value ({@code {"@type": "DateTime", ...}}). */
    static String text(JsonNode t) {
        if (t.isTextual()) {
            return t.textValue();
        }
        if (t.isObject()) {
            JsonNode v = t.get("@value");
            return v != null && v.isTextual() ? v.textValue() : null;
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    private static Comparable<Object> parse(Temporal k, String s) {
        if (s.length() < 5 || s.length() > 40 || s.charAt(0) < '0' || s.charAt(0) > '9') {
            return null;
        }
        try {
            return (Comparable<Object>) (Comparable<?>) switch (k) {
                case DATE_TIME -> s.indexOf('T') > 0 ? Instant.parse(s) : null;
                case DATE -> s.length() == 10 ? LocalDate.parse(s) : null;
                case TIME -> s.charAt(2) == ':' ? (s.endsWith("Z") ? OffsetTime.parse(s).toLocalTime() : LocalTime.parse(s))
                        : null;
                case NONE -> null;
            };
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    @Override
    public String toString() {
        return switch (kind) {
            case NUMBER -> Double.toString(number);
            case BOOLEAN -> Boolean.toString(bool);
            case TEXT -> quoted ? '"' + text + '"' : text;
        };
    }
}
