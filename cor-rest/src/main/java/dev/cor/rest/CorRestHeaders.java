package dev.cor.rest;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Header fields in arrival order, looked up case-insensitively (RFC 9110 § 5.1). A field may
 * occur more than once. Not thread-safe: it belongs to one request.
 */
public final class CorRestHeaders {
    private final ArrayList<String> names = new ArrayList<>(16);
    private final ArrayList<String> values = new ArrayList<>(16);

    public CorRestHeaders add(String name, String value) {
        names.add(name);
        values.add(value);
        return this;
    }

    /** Replaces every field of that name with one. */
    public CorRestHeaders set(String name, String value) {
        remove(name);
        return add(name, value);
    }

    public void remove(String name) {
        for (int i = names.size() - 1; i >= 0; i--) {
            if (names.get(i).equalsIgnoreCase(name)) {
                names.remove(i);
                values.remove(i);
            }
        }
    }

    /** The first value of the field, or {@code null}. */
    public String get(String name) {
        for (int i = 0, n = names.size(); i < n; i++) {
            if (names.get(i).equalsIgnoreCase(name)) {
                return values.get(i);
            }
        }
        return null;
    }

    public List<String> getAll(String name) {
        List<String> all = new ArrayList<>(2);
        for (int i = 0, n = names.size(); i < n; i++) {
            if (names.get(i).equalsIgnoreCase(name)) {
                all.add(values.get(i));
            }
        }
        return all;
    }

    public boolean contains(String name) {
        return get(name) != null;
    }

    /** Whether a comma-separated field holds {@code token} (case-insensitive), e.g. {@code Connection: close}. */
    public boolean hasToken(String name, String token) {
        for (int i = 0, n = names.size(); i < n; i++) {
            if (names.get(i).equalsIgnoreCase(name) && listHas(values.get(i), token)) {
                return true;
            }
        }
        return false;
    }

    /** Whether the comma-separated {@code list} holds {@code token}, without splitting it (a hot path: keep-alive). */
    private static boolean listHas(String list, String token) {
        int n = list.length();
        int start = 0;
        while (start <= n) {
            int comma = list.indexOf(',', start);
            int end = comma < 0 ? n : comma;
            int a = start;
            int b = end;
            while (a < b && list.charAt(a) <= ' ') {
                a++;
            }
            while (b > a && list.charAt(b - 1) <= ' ') {
                b--;
            }
            if (b - a == token.length() && list.regionMatches(true, a, token, 0, token.length())) {
                return true;
            }
            start = end + 1;
        }
        return false;
    }

    public int size() {
        return names.size();
    }

    public String name(int i) {
        return names.get(i);
    }

    public String value(int i) {
        return values.get(i);
    }

    public void clear() {
        names.clear();
        values.clear();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < names.size(); i++) {
            sb.append(names.get(i).toLowerCase(Locale.ROOT)).append(": ").append(values.get(i)).append('\n');
        }
        return sb.toString();
    }
}
