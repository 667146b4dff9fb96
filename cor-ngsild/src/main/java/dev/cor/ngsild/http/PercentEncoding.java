package dev.cor.ngsild.http;

import java.nio.charset.StandardCharsets;

import dev.cor.ngsild.error.NgsiLdException;

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

    /**
     * A q written in a body - a Subscription's (§ 5.2.12), a Query's (§ 5.2.23) - read as the same q
     * in a URL is: when it holds a percent-escape ({@code %} and two hex digits) its escapes are
     * decoded, a malformed one being 400 BadRequestData; otherwise it is taken as written, so a
     * {@code %} that starts no escape is the character itself. V1.8 does not call a body's q
     * percent-encoded, but q is copied from URLs, and Orion-LD, Scorpio and Stellio read a body's q
     * so (the suite writes {@code name=="Eiffel%20Tower"} in 046_05's subscription, {@code %22} in
     * 5814_01_02's).
     */
    static String bodyQ(String q) {
        for (int i = q.indexOf('%'); i >= 0 && i + 2 < q.length(); i = q.indexOf('%', i + 1)) {
            if (Character.digit(q.charAt(i + 1), 16) >= 0 && Character.digit(q.charAt(i + 2), 16) >= 0) {
                String decoded = decode(q);
                if (decoded == null) {
                    throw NgsiLdException.badData("q holds a malformed percent-escape (%XX)");
                }
                return decoded;
            }
        }
        return q;
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
