package dev.cor.ngsild.ld;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.error.NgsiLdException;

/**
 * What a request names as its {@code @context} (ETSI GS CIM 009 § 6.3.5), before it is resolved:
 * nothing (the core context), the URL of a JSON-LD {@code Link} header, or the {@code @context}
 * member of an {@code application/ld+json} body (a URL, an object, or an array of both).
 * Immutable; equal refs resolve to the same {@link LdContext} (it is the key of the processed
 * contexts, so its hash is computed once).
 */
public final class ContextRef {
    /** The link relation of a JSON-LD context {@code Link} header (JSON-LD 1.1 § 6.1). */
    public static final String LINK_REL = "http://www.w3.org/ns/json-ld#context";

    private static final ContextRef NONE = new ContextRef(null, null);

    private final String linkUrl;
    private final JsonNode body;
    private int hash;

    private ContextRef(String linkUrl, JsonNode body) {
        this.linkUrl = linkUrl;
        this.body = body;
    }

    /** No context given: the core context alone. */
    public static ContextRef none() {
        return NONE;
    }

    /** The URL of a {@code Link} header. */
    public static ContextRef link(String url) {
        return new ContextRef(Objects.requireNonNull(url, "url"), null);
    }

    /** The {@code @context} member of a body: a string, an object or an array. */
    public static ContextRef body(JsonNode context) {
        return new ContextRef(null, Objects.requireNonNull(context, "context"));
    }

    /**
     * The context named by a request's {@code Link} header fields (RFC 8288): the one link whose
     * {@code rel} includes {@link #LINK_REL} (relation types compare case-insensitively; a
     * {@code rel} given twice counts once, the first), or {@link #none()}. Links of other
     * relations are ignored, malformed or not.
     *
     * @throws NgsiLdException BadRequestData when several JSON-LD context links are given
     *                         (JSON-LD 1.1 § 9.4.1, "multiple context link headers"), or one is
     *                         malformed
     */
    public static ContextRef fromLinkHeaders(List<String> values) {
        String found = null;
        for (String value : values) {
            for (String link : splitLinks(value)) {
                String url = contextUrl(link);
                if (url == null) {
                    continue;
                }
                if (found != null) {
                    throw NgsiLdException.badData("more than one JSON-LD context Link header: a request names one @context");
                }
                found = url;
            }
        }
        return found == null ? NONE : link(found);
    }

    public boolean isNone() {
        return linkUrl == null && body == null;
    }

    /** The URL of the {@code Link} header, or {@code null}. */
    public String linkUrl() {
        return linkUrl;
    }

    /** The body's {@code @context} value, or {@code null}. */
    public JsonNode body() {
        return body;
    }

    @Override
    public boolean equals(Object o) {
        return o == this || (o instanceof ContextRef r && hashCode() == r.hashCode() && Objects.equals(linkUrl, r.linkUrl)
                && Objects.equals(body, r.body));
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0) {
            h = Objects.hash(linkUrl, body);
            hash = h == 0 ? 1 : h;
            h = hash;
        }
        return h;
    }

    @Override
    public String toString() {
        return linkUrl != null ? "<" + linkUrl + ">" : body != null ? body.toString() : "(core)";
    }

    /** Splits a {@code Link} field value into its links, on the commas outside {@code <>} and quoted strings. */
    private static List<String> splitLinks(String value) {
        List<String> links = new ArrayList<>(1);
        boolean inAngle = false;
        boolean inQuote = false;
        int start = 0;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (inQuote) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inQuote = false;
                }
            } else if (inAngle) {
                if (c == '>') {
                    inAngle = false;
                }
            } else if (c == '"') {
                inQuote = true;
            } else if (c == '<') {
                inAngle = true;
            } else if (c == ',') {
                links.add(value.substring(start, i));
                start = i + 1;
            }
        }
        links.add(value.substring(start));
        return links;
    }

    /** The URL of one link if one of its {@code rel} values is the JSON-LD context relation, else {@code null}. */
    private static String contextUrl(String link) {
        String l = link.trim();
        if (l.isEmpty()) {
            return null;
        }
        int close = l.indexOf('>');
        if (l.charAt(0) != '<' || close < 0) {
            if (l.toLowerCase(Locale.ROOT).contains(LINK_REL)) {
                throw NgsiLdException.badData("a JSON-LD context Link header that is not <URL>; rel=\"" + LINK_REL + "\": " + l);
            }
            return null;
        }
        String url = l.substring(1, close).trim();
        String rel = null;
        for (String[] param : params(l.substring(close + 1))) {
            if (param[0].equalsIgnoreCase("rel") && rel == null) {
                rel = param[1];
            }
        }
        if (rel == null) {
            return null;
        }
        boolean contextRel = false;
        for (String r : rel.trim().split("\\s+")) {
            contextRel |= r.equalsIgnoreCase(LINK_REL);
        }
        if (!contextRel) {
            return null;
        }
        if (url.isEmpty()) {
            throw NgsiLdException.badData("a JSON-LD context Link header with an empty URL");
        }
        return url;
    }

    /** The {@code ; name=value} parameters after a link's {@code <URL>}, quoted values unquoted. */
    private static List<String[]> params(String s) {
        List<String[]> r = new ArrayList<>(2);
        int i = 0;
        int n = s.length();
        while (i < n) {
            int semi = s.indexOf(';', i);
            if (semi < 0) {
                break;
            }
            i = semi + 1;
            int eq = i;
            while (eq < n && s.charAt(eq) != '=' && s.charAt(eq) != ';') {
                eq++;
            }
            String name = s.substring(i, eq).trim();
            if (eq >= n || s.charAt(eq) == ';') {
                r.add(new String[] {name, ""});
                i = eq;
                continue;
            }
            int v = eq + 1;
            while (v < n && s.charAt(v) == ' ') {
                v++;
            }
            StringBuilder value = new StringBuilder();
            if (v < n && s.charAt(v) == '"') {
                v++;
                while (v < n && s.charAt(v) != '"') {
                    if (s.charAt(v) == '\\' && v + 1 < n) {
                        v++;
                    }
                    value.append(s.charAt(v++));
                }
                v++;
            } else {
                while (v < n && s.charAt(v) != ';') {
                    value.append(s.charAt(v++));
                }
            }
            r.add(new String[] {name, value.toString().trim()});
            i = v;
        }
        return r;
    }
}
