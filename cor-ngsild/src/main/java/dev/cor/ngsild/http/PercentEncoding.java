package dev.cor.ngsild.http;

import java.nio.charset.StandardCharsets;

/**
 * Percent-encoding (RFC 3986 § 2.1) as the broker reads and writes it - the one place: a path
 * segment is decoded by {@link #decode} ({@code +} stays a plus, as RFC 3986 has it in a path), a
 * query parameter by {@link #decodeQuery} ({@code +} is a space, as form encoding has it: what
 * Python's and Java's encoders, HTML forms and URLSearchParams send), and what the broker writes - a
 * forward's path and parameters, a page link - is encoded by {@link #encode}, which escapes a plus.
 * UTF-8 throughout, by code point. Stateless; any thread.
 */
final class PercentEncoding {
    private PercentEncoding() {
    }

    /**
     * {@code s} with every byte of its UTF-8 form escaped but RFC 3986's unreserved characters and
     * {@code :} (which ids are full of): safe in a path segment, a query value and a Link header's
     * URI reference alike.
     */
    static String encode(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (byte by : s.getBytes(StandardCharsets.UTF_8)) {
            int c = by & 0xFF;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                    || c == '_' || c == '~' || c == ':') {
                b.append((char) c);
            } else {
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
            }
        }
        return b.toString();
    }

    /**
     * A query parameter's name or value: {@code +} is a space (application/x-www-form-urlencoded),
     * a plus arrives as {@code %2B}; then as {@link #decode}.
     */
    static String decodeQuery(String s) {
        return decode(s.indexOf('+') < 0 ? s : s.replace('+', ' '));
    }

    /** {@code s} with its {@code %XX} escapes decoded as UTF-8; {@code null} when one is malformed. */
    static String decode(String s) {
        if (s.indexOf('%') < 0) {
            return s;
        }
        byte[] out = new byte[s.length() * 3];
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= s.length()) {
                    return null;
                }
                int hi = Character.digit(s.charAt(i + 1), 16);
                int lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return null;
                }
                out[n++] = (byte) (hi * 16 + lo);
                i += 2;
            } else {
                byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                if (Character.isHighSurrogate(c) && i + 1 < s.length()) {
                    b = s.substring(i, i + 2).getBytes(StandardCharsets.UTF_8);
                    i++;
                }
                System.arraycopy(b, 0, out, n, b.length);
                n += b.length;
            }
        }
        return new String(out, 0, n, StandardCharsets.UTF_8);
    }
}
