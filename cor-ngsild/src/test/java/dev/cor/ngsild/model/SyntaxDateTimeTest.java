package dev.cor.ngsild.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * {@link Syntax#epochMillis}, the one reading of a DateTime (ETSI GS CIM 009 V1.8 § 4.8), reads
 * its plain form by hand: it must answer what the JDK's strict ISO formatters answer, for every
 * text - valid or not, near each edge of a field.
 */
class SyntaxDateTimeTest {
    /** What the formatters answer: the reading the hand-written one must agree with. */
    private static long byTheFormatters(String s) {
        if (s.length() < 20 || s.charAt(s.length() - 1) != 'Z') {
            return Syntax.NOT_A_DATE_TIME;
        }
        try {
            DateTimeFormatter.ISO_LOCAL_DATE_TIME.withResolverStyle(ResolverStyle.STRICT).parse(s.substring(0, s.length() - 1));
            return Instant.parse(s).toEpochMilli();
        } catch (DateTimeParseException | ArithmeticException e) {
            return Syntax.NOT_A_DATE_TIME;
        }
    }

    @Test
    void thePlainFormReadsAsTheFormattersReadIt() {
        List<String> texts = new ArrayList<>(List.of("2026-01-02T00:00:00Z", "2026-01-02T00:09:00.000Z", "1970-01-01T00:00:00Z",
                "1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.9999999Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
                "2024-02-29T12:00:00Z", "2023-02-29T12:00:00Z", "1900-02-29T00:00:00Z", "2000-02-29T00:00:00Z",
                "2026-04-31T00:00:00Z", "2026-04-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z",
                "2026-01-00T00:00:00Z", "2026-01-32T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z",
                "2026-01-01T23:59:60Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00.1Z", "2026-01-01T00:00:00.12Z",
                "2026-01-01T00:00:00.1234567890Z", "2026-01-01T00:00:00,5Z", "2026-01-01 00:00:00Z", "2026-1-01T00:00:00Z",
                "+2026-01-01T00:00:00Z", "12026-01-01T00:00:00Z", "2026-01-01T00:00Z", "2026-01-01T00:00:00+00:00",
                "2026-01-01T00:00:00.5+01:00Z", "2026-01-01T0a:00:00Z", "2026-01-01T00:00:00z", "2026-0\u0661-01T00:00:00Z",
                "-0001-01-01T00:00:00Z"));
        Random rnd = new Random(11);
        for (int k = 0; k < 20_000; k++) {
            String y = String.format("%04d", rnd.nextInt(3) == 0 ? rnd.nextInt(10_000) : 1960 + rnd.nextInt(80));
            String s = y + "-" + two(rnd.nextInt(14)) + "-" + two(rnd.nextInt(33)) + "T" + two(rnd.nextInt(26)) + ":"
                    + two(rnd.nextInt(62)) + ":" + two(rnd.nextInt(62));
            int f = rnd.nextInt(12) - 1;
            if (f >= 0) {
                StringBuilder b = new StringBuilder(s).append('.');
                for (int d = 0; d < f; d++) {
                    b.append((char) ('0' + rnd.nextInt(10)));
                }
                s = b.toString();
            }
            texts.add(s + "Z");
        }
        for (String s : texts) {
            assertEquals(byTheFormatters(s), Syntax.epochMillis(s), s);
        }
    }

    private static String two(int v) {
        return v < 10 ? "0" + v : Integer.toString(v);
    }
}
