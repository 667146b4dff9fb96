package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cor.ngsild.error.NgsiLdException;

/**
 * A request's query parameters, percent-decoded ({@code +} stays a plus: an idPattern or a q
 * expression may hold one), in order. A parameter given twice is an InvalidRequest, as is one
 * the operation does not take (§ 6.3.20).
 */
final class QueryParams {
    private final Map<String, String> values;

    private QueryParams(Map<String, String> values) {
        this.values = values;
    }

    static QueryParams parse(String query, Operation op) {
        Map<String, String> values = new LinkedHashMap<>();
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String name = PercentEncoding.decodeQuery(eq < 0 ? pair : pair.substring(0, eq));
                String value = PercentEncoding.decodeQuery(eq < 0 ? "" : pair.substring(eq + 1));
                if (name == null || value == null) {
                    throw NgsiLdException.invalid("the query parameter " + pair + " has a malformed %-escape");
                }
                if (!op.takes(name)) {
                    throw NgsiLdException.invalid("unknown query parameter '" + name + "' for " + op.metricName());
                }
                if (values.put(name, value) != null) {
                    throw NgsiLdException.invalid("the query parameter '" + name + "' is given twice");
                }
            }
        }
        return new QueryParams(values);
    }

    /** These parameters and {@code name=value} (replacing one of that name): a POST query's body members. */
    QueryParams with(String name, String value) {
        Map<String, String> v = new LinkedHashMap<>(values);
        v.put(name, value);
        return new QueryParams(v);
    }

    /** These parameters without {@code name}. */
    QueryParams without(String name) {
        if (!values.containsKey(name)) {
            return this;
        }
        Map<String, String> v = new LinkedHashMap<>(values);
        v.remove(name);
        return new QueryParams(v);
    }

    /** The parameters as a map (unmodifiable), for the parts of the API that take one. */
    Map<String, String> asMap() {
        return java.util.Collections.unmodifiableMap(values);
    }

    String get(String name) {
        return values.get(name);
    }

    boolean has(String name) {
        return values.containsKey(name);
    }

    /** A comma-separated list parameter, its items trimmed; empty when absent. */
    List<String> list(String name) {
        String v = values.get(name);
        List<String> out = new ArrayList<>();
        if (v != null) {
            for (String item : v.split(",")) {
                String t = item.trim();
                if (!t.isEmpty()) {
                    out.add(t);
                }
            }
        }
        return out;
    }

    /** A boolean parameter ({@code true}/{@code false}); {@code dflt} when absent. */
    boolean bool(String name, boolean dflt) {
        String v = values.get(name);
        if (v == null) {
            return dflt;
        }
        return switch (v) {
            case "true" -> true;
            case "false" -> false;
            default -> throw NgsiLdException.badData("the query parameter '" + name + "' is true or false, not '" + v + "'");
        };
    }

    /** A non-negative integer parameter; {@code dflt} when absent. */
    int integer(String name, int dflt) {
        String v = values.get(name);
        if (v == null) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v);
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw NgsiLdException.badData("the query parameter '" + name + "' is a non-negative integer, not '" + v + "'");
        }
    }

    /**
     * {@code options} of a resource that is no entity - a subscription, a registration, the
     * subscriptions to them: whether it asks for {@code sysAttrs}, the system-generated
     * {@code createdAt} and {@code modifiedAt} (§ 6.3.11, § 5.10.1.4). The representation options
     * mean nothing here and pass; any other is a 400.
     */
    boolean sysAttrsOption() {
        boolean sysAttrs = false;
        for (String o : list("options")) {
            switch (o) {
                case "sysAttrs" -> sysAttrs = true;
                case "keyValues", "concise", "normalized", "count" -> { }
                default -> throw NgsiLdException.badData("options: '" + o + "' is not an option here (sysAttrs)");
            }
        }
        return sysAttrs;
    }
}
