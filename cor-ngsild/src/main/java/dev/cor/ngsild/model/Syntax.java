package dev.cor.ngsild.model;

import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;

/**
 * The value spaces the information model checks: URIs (entity ids, datasetIds, relationship
 * objects), scopes (ETSI GS CIM 009 § 4.18), date-times (§ 4.8), names. Pure functions,
 * any thread.
 */
public final class Syntax {
    /** The NGSI-LD Null (§ 3.1): deletes what it is the value of in a patch. */
    public static final String NGSI_LD_NULL = "urn:ngsi-ld:null";

    private static final DateTimeFormatter DATE_TIME = DateTimeFormatter.ISO_LOCAL_DATE_TIME
            .withResolverStyle(ResolverStyle.STRICT);

    /** Which ASCII characters may appear unescaped after an IRI's scheme: visible ones but {@code "<>\^`{|}[]}. */
    private static final boolean[] IRI_ASCII = new boolean[0x80];

    static {
        for (int c = 0x21; c < 0x7F; c++) {
            IRI_ASCII[c] = "\"<>\\^`{|}[]".indexOf(c) < 0;
        }
    }

    private Syntax() {
    }

    /**
     * Whether {@code s} is a URI as NGSI-LD ids must be (§ 4.5.1): a scheme, a colon, and a
     * non-empty rest made of the characters RFC 3987 admits in an IRI - never whitespace, a
     * control or format character, a delimiter that cannot appear unescaped, a noncharacter or
     * a character that renders as nothing.
     */
    public static boolean isUri(String s) {
        int colon = s.indexOf(':');
        if (colon < 1 || colon == s.length() - 1) {
            return false;
        }
        char first = s.charAt(0);
        if (!isAsciiLetter(first)) {
            return false;
        }
        for (int i = 1; i < colon; i++) {
            char c = s.charAt(i);
            if (!(isAsciiLetter(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')) {
                return false;
            }
        }
        for (int i = colon + 1; i < s.length(); ) {
            int cp = s.codePointAt(i);
            if (!isIriChar(cp)) {
                return false;
            }
            i += Character.charCount(cp);
        }
        return true;
    }

    private static boolean isAsciiLetter(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    /** Whether a code point may appear (unescaped) after the scheme of an IRI. */
    private static boolean isIriChar(int cp) {
        if (cp < 0x80) {
            // brackets only delimit an IPv6 host (RFC 3986 § 3.2.2), which no NGSI-LD id needs
            return IRI_ASCII[cp];
        }
        if (invisible(cp)) {
            return false;
        }
        return switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.SPACE_SEPARATOR, Character.LINE_SEPARATOR,
                    Character.PARAGRAPH_SEPARATOR, Character.SURROGATE, Character.UNASSIGNED,
                    Character.PRIVATE_USE -> false;
            default -> true;
        };
    }

    /** Noncharacters, variation selectors and the letters that render as blank (Hangul fillers, the blank Braille cell). */
    private static boolean invisible(int cp) {
        return (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE
                || (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xE0100 && cp <= 0xE01EF)
                || (cp >= 0x180B && cp <= 0x180F)
                || cp == 0x115F || cp == 0x1160 || cp == 0x3164 || cp == 0xFFA0 || cp == 0x2800;
    }

    /**
     * Whether {@code s} is a scope (§ 4.18): {@code /} level ({@code /} level)*, each level a
     * letter followed by letters, digits or underscores; or a pattern form is not allowed here.
     */
    public static boolean isScope(String s) {
        if (s.length() < 2 || s.charAt(0) != '/') {
            return false;
        }
        int i = 0;
        while (i < s.length()) {
            if (s.charAt(i) != '/') {
                return false;
            }
            i++;
            if (i >= s.length()) {
                return false; // a trailing or empty level
            }
            int cp = s.codePointAt(i);
            if (!Character.isLetter(cp)) {
                return false;
            }
            i += Character.charCount(cp);
            while (i < s.length() && s.charAt(i) != '/') {
                cp = s.codePointAt(i);
                if (!(Character.isLetterOrDigit(cp) || cp == '_')) {
                    return false;
                }
                i += Character.charCount(cp);
            }
        }
        return true;
    }

    /** What {@link #epochMillis} answers for a text that is no DateTime. */
    public static final long NOT_A_DATE_TIME = Long.MIN_VALUE;

    /** Whether {@code s} is a UTC date-time as NGSI-LD's temporal properties are (§ 4.8): {@link #epochMillis}. */
    public static boolean isDateTime(String s) {
        return epochMillis(s) != NOT_A_DATE_TIME;
    }

    /**
     * {@code s} read as a UTC date-time (§ 4.8) - {@code YYYY-MM-DDThh:mm:ss[.fraction]Z}, seconds
     * present, {@code Z} and no other offset - in epoch milliseconds; {@link #NOT_A_DATE_TIME} when
     * it is none, or when it lies beyond what milliseconds since 1970 can hold (a year of ten
     * digits). The one reading of a DateTime: what passes it can be compared and stored without
     * failing later.
     */
    public static long epochMillis(String s) {
        if (s.length() < 20 || s.charAt(s.length() - 1) != 'Z') {
            return NOT_A_DATE_TIME;
        }
        long plain = plainMillis(s);
        if (plain != NOT_A_DATE_TIME) {
            return plain;
        }
        try {
            DATE_TIME.parse(s.substring(0, s.length() - 1));
            return java.time.Instant.parse(s).toEpochMilli(); // seconds required; beyond the long range: no DateTime
        } catch (DateTimeParseException | ArithmeticException e) {
            return NOT_A_DATE_TIME;
        }
    }

    /**
     * The plain form of a DateTime - {@code YYYY-MM-DDThh:mm:ss[.f]Z}, a year of four digits, one
     * to nine digits of fraction, a valid date, hour below 24, minute and second below 60 - read by
     * hand: what the formatters of {@link #epochMillis} give for it, at a small part of their cost
     * (a history read parses the observedAt of every instance it decodes). {@link #NOT_A_DATE_TIME}
     * for any other text, which the formatters then decide on.
     */
    private static long plainMillis(String s) {
        int n = s.length();
        if (n > 30 || s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != 'T' || s.charAt(13) != ':'
                || s.charAt(16) != ':') {
            return NOT_A_DATE_TIME;
        }
        int year = digits(s, 0, 4);
        int month = digits(s, 5, 2);
        int day = digits(s, 8, 2);
        int hour = digits(s, 11, 2);
        int minute = digits(s, 14, 2);
        int second = digits(s, 17, 2);
        if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59
                || second < 0 || second > 59) {
            return NOT_A_DATE_TIME;
        }
        int millis = 0;
        if (n > 20) {
            int fraction = n - 21; // between the '.' at 19 and the 'Z'
            if (s.charAt(19) != '.' || fraction < 1) {
                return NOT_A_DATE_TIME;
            }
            if (digits(s, 20, fraction) < 0) {
                return NOT_A_DATE_TIME;
            }
            millis = digits(s, 20, Math.min(3, fraction)); // truncated to milliseconds, as Instant.toEpochMilli does
            for (int k = fraction; k < 3; k++) {
                millis *= 10;
            }
        }
        if (day > 28 && day > java.time.YearMonth.of(year, month).lengthOfMonth()) {
            return NOT_A_DATE_TIME;
        }
        long days = java.time.LocalDate.of(year, month, day).toEpochDay();
        return ((days * 24 + hour) * 60 + minute) * 60_000L + second * 1000L + millis;
    }

    /** The number the {@code length} ASCII digits at {@code from} of {@code s} write, or -1 when one is none. */
    private static int digits(String s, int from, int length) {
        int v = 0;
        for (int k = from; k < from + length; k++) {
            char c = s.charAt(k);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    /**
     * Whether {@code s} may be an attribute name or an entity type as written in a request
     * (§ 4.6.2): a term - a letter, then letters, digits or underscores - or, with a colon, a
     * compact or absolute IRI.
     */
    public static boolean isName(String s) {
        if (s.isEmpty()) {
            return false;
        }
        if (s.indexOf(':') > 0) {
            return isUri(s);
        }
        int first = s.codePointAt(0);
        if (!Character.isLetter(first)) {
            return false;
        }
        for (int i = Character.charCount(first); i < s.length(); ) {
            int cp = s.codePointAt(i);
            if (!(Character.isLetterOrDigit(cp) || cp == '_')) {
                return false;
            }
            i += Character.charCount(cp);
        }
        return true;
    }

    /** Whether an expanded name or type is an absolute IRI (not a keyword, not a relative reference). */
    public static boolean isAbsoluteIri(String s) {
        return !s.startsWith("@") && isUri(s);
    }
}
