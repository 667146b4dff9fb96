package dev.cor.server;

import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

import dev.cor.rest.CorRest;

/**
 * One loop's access-log line, written into a buffer it reuses: time (ISO-8601, UTC,
 * milliseconds), tenant, method, request target, status, microseconds and body bytes, and the
 * handler's note when it left one ({@code CorRest.note}, a query that scanned) - as text
 * separated by spaces, or as one JSON object. No allocation but the time's date part, once a
 * second. Its loop's thread only.
 * <p>
 * What a header or the target carries is the client's: it is bounded (the target to
 * {@value #MAX_TARGET} bytes, the tenant to {@value #MAX_TENANT}, then {@code ...}), and every
 * byte outside visible ASCII, and {@code "}, {@code \} and {@code %} themselves, is written as
 * {@code %XX} - so a line is one line, a field one field, and JSON needs no other escape. The
 * value of an {@code access_token} query parameter (RFC 6750 § 2.3) is written as {@code -};
 * no other header than the tenant is read.
 */
final class AccessLine {
    static final int MAX_TARGET = 1024;
    static final int MAX_TENANT = 128;
    private static final int MAX_LINE = 2048;
    private static final DateTimeFormatter SECOND = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.");
    private static final byte[] HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);
    private static final String TOKEN_PARAM = "access_token=";

    private final boolean json;
    private final byte[] line = new byte[MAX_LINE];
    private int at;
    private long second = Long.MIN_VALUE;
    private final byte[] secondText = new byte[20];

    AccessLine(boolean json) {
        this.json = json;
    }

    byte[] bytes() {
        return line;
    }

    /** Writes the line of {@code exchange} (with its newline); returns its length. */
    int format(CorRest exchange, long bodyBytes, long nanos, long epochMillis) {
        at = 0;
        String tenant = exchange.headers().get("NGSILD-Tenant");
        if (json) {
            ascii("{\"time\":\"");
            time(epochMillis);
            ascii("\",\"tenant\":");
            if (tenant == null) {
                ascii("null");
            } else {
                put('"');
                safe(tenant, MAX_TENANT);
                put('"');
            }
            ascii(",\"method\":\"");
            safe(exchange.method(), MAX_TENANT);
            ascii("\",\"target\":\"");
            target(exchange);
            ascii("\",\"status\":");
            number(exchange.status());
            ascii(",\"micros\":");
            number(nanos / 1000);
            ascii(",\"bytes\":");
            number(bodyBytes);
            if (exchange.note() != null) {
                ascii(",\"note\":\"");
                safe(exchange.note(), MAX_TENANT);
                put('"');
            }
            put('}');
        } else {
            time(epochMillis);
            put(' ');
            if (tenant == null || tenant.isEmpty()) {
                put('-');
            } else {
                safe(tenant, MAX_TENANT);
            }
            put(' ');
            safe(exchange.method(), MAX_TENANT);
            put(' ');
            target(exchange);
            put(' ');
            number(exchange.status());
            put(' ');
            number(nanos / 1000);
            put(' ');
            number(bodyBytes);
            if (exchange.note() != null) {
                put(' ');
                safe(exchange.note(), MAX_TENANT);
            }
        }
        put('\n');
        return at;
    }

    private void time(long epochMillis) {
        long s = Math.floorDiv(epochMillis, 1000);
        if (s != second) {
            second = s;
            byte[] t = SECOND.format(LocalDateTime.ofEpochSecond(s, 0, ZoneOffset.UTC)).getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(t, 0, secondText, 0, secondText.length);
        }
        System.arraycopy(secondText, 0, line, at, secondText.length);
        at += secondText.length;
        int ms = (int) Math.floorMod(epochMillis, 1000);
        put((char) ('0' + ms / 100));
        put((char) ('0' + ms / 10 % 10));
        put((char) ('0' + ms % 10));
        put('Z');
    }

    /** The path, then the query with the values of access_token left out, within {@link #MAX_TARGET} bytes together. */
    private void target(CorRest exchange) {
        int end = at + MAX_TARGET;
        if (!safe(exchange.path(), 0, exchange.path().length(), end)) {
            return;
        }
        String q = exchange.query();
        if (q == null) {
            return;
        }
        put('?');
        for (int from = 0; from <= q.length(); ) {
            int amp = q.indexOf('&', from);
            int to = amp < 0 ? q.length() : amp;
            boolean whole;
            if (q.startsWith(TOKEN_PARAM, from)) {
                whole = safe(TOKEN_PARAM, 0, TOKEN_PARAM.length(), end) && safe("-", 0, 1, end);
            } else {
                whole = safe(q, from, to, end);
            }
            if (!whole || amp < 0) {
                return;
            }
            put('&');
            from = amp + 1;
        }
    }

    private void safe(String s, int max) {
        safe(s, 0, s.length(), at + max);
    }

    /** {@code s[from, to)} escaped, up to {@code end}; past it {@code ...} and false. */
    private boolean safe(String s, int from, int to, int end) {
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            boolean plain = c > 0x20 && c < 0x7F && c != '"' && c != '\\' && c != '%';
            if (at + (plain ? 1 : 3) > end) {
                ascii("...");
                return false;
            }
            if (plain) {
                put(c);
            } else {
                int b = c > 0xFF ? '?' : c;
                put('%');
                line[at++] = HEX[b >> 4];
                line[at++] = HEX[b & 0xF];
            }
        }
        return true;
    }

    private void number(long n) {
        if (n < 0) {
            put('-');
            n = -n;
        }
        int start = at;
        do {
            line[at++] = (byte) ('0' + n % 10);
            n /= 10;
        } while (n > 0);
        for (int i = start, j = at - 1; i < j; i++, j--) {
            byte t = line[i];
            line[i] = line[j];
            line[j] = t;
        }
    }

    private void ascii(String s) {
        for (int i = 0; i < s.length(); i++) {
            line[at++] = (byte) s.charAt(i);
        }
    }

    private void put(char c) {
        line[at++] = (byte) c;
    }
}
