package dev.cor.ngsild.ld;

import java.util.List;
import java.util.Objects;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.api.NgsiLdException;

/**
 * What a request names as its {@code @context} (ETSI GS CIM 009 § 6.3.5), before it is resolved:
 * nothing (the core context), the URL of a JSON-LD {@code Link} header, or the {@code @context}
 * member of an {@code application/ld+json} body (a URL, an object, or an array of both).
 * Immutable; equal refs resolve to the same {@link LdContext}.
 */
public final class ContextRef {
    /** The link relation of a JSON-LD context {@code Link} header (JSON-LD 1.1 § 6.1). */
    public static final String LINK_REL = "http://www.w3.org/ns/json-ld#context";

    private static final ContextRef NONE = new ContextRef(null, null);

    private final String linkUrl;
    private final JsonNode body;

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
     * The context named by a request's {@code Link} header fields: the one link whose
     * {@code rel} is {@link #LINK_REL}, or {@link #none()}.
     *
     * @throws NgsiLdException BadRequestData when several such links are given or one is malformed
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
        return o instanceof ContextRef r && Objects.equals(linkUrl, r.linkUrl) && Objects.equals(body, r.body);
    }

    @Override
    public int hashCode() {
        return Objects.hash(linkUrl, body);
    }

    @Override
    public String toString() {
        return linkUrl != null ? "<" + linkUrl + ">" : body != null ? body.toString() : "(core)";
    }

    /** Splits a {@code Link} field value into its links, on the commas outside {@code <>} and quotes. */
    private static List<String> splitLinks(String value) {
        java.util.ArrayList<String> links = new java.util.ArrayList<>(1);
        boolean inAngle = false;
        boolean inQuote = false;
        int start = 0;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' && !inAngle) {
                inQuote = !inQuote;
            } else if (!inQuote && c == '<') {
                inAngle = true;
            } else if (!inQuote && c == '>') {
                inAngle = false;
            } else if (c == ',' && !inAngle && !inQuote) {
                links.add(value.substring(start, i));
                start = i + 1;
            }
        }
        links.add(value.substring(start));
        return links;
    }

    /** The URL of one link if its {@code rel} is the JSON-LD context relation, else {@code null}. */
    private static String contextUrl(String link) {
        String l = link.trim();
        if (l.isEmpty()) {
            return null;
        }
        int open = l.indexOf('<');
        int close = l.indexOf('>', open + 1);
        if (open != 0 || close < 0) {
            throw NgsiLdException.badData("a Link header that is not <URL>; rel=...: " + l);
        }
        String url = l.substring(1, close).trim();
        boolean contextRel = false;
        for (String param : l.substring(close + 1).split(";")) {
            String p = param.trim();
            int eq = p.indexOf('=');
            if (eq < 0) {
                continue;
            }
            String name = p.substring(0, eq).trim();
            String v = p.substring(eq + 1).trim();
            if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
                v = v.substring(1, v.length() - 1);
            }
            if (name.equalsIgnoreCase("rel")) {
                for (String rel : v.split("\\s+")) {
                    if (rel.equals(LINK_REL)) {
                        contextRel = true;
                    }
                }
            }
        }
        if (!contextRel) {
            return null;
        }
        if (url.isEmpty()) {
            throw NgsiLdException.badData("a JSON-LD context Link header with an empty URL");
        }
        return url;
    }
}
