package dev.cor.rest;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/** Query-string look-ups. */
final class CorRestQuery {
    private CorRestQuery() {
    }

    static String param(String query, String name) {
        if (query == null || query.isEmpty()) {
            return null;
        }
        int i = 0;
        int n = query.length();
        while (i <= n) {
            int amp = query.indexOf('&', i);
            if (amp < 0) {
                amp = n;
            }
            int eq = query.indexOf('=', i);
            int keyEnd = eq >= 0 && eq < amp ? eq : amp;
            if (decode(query.substring(i, keyEnd)).equals(name)) {
                return keyEnd == amp ? "" : decode(query.substring(keyEnd + 1, amp));
            }
            i = amp + 1;
        }
        return null;
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s;
        }
    }
}
