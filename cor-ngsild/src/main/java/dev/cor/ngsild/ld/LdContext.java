package dev.cor.ngsild.ld;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A processed {@code @context}: the term definitions of a request's context followed by the
 * NGSI-LD core context, compiled once and shared by every request that names the same context.
 * It expands the terms a request uses (entity types, attribute names, vocab values) to IRIs, as
 * JSON-LD 1.1 IRI expansion does, and compacts stored IRIs back for an answer, as IRI compaction
 * does. Immutable and thread-safe.
 * <p>
 * What an answer says its context is comes with it: {@link #echo()} for {@code @context} in an
 * {@code application/ld+json} body, {@link #linkUrl()} for the {@code Link} header of an
 * {@code application/json} one.
 */
public final class LdContext {
    private final Map<String, String> terms;
    private final Map<String, String> reverse;
    private final String vocab;
    private final JsonNode echo;
    private final String linkUrl;
    private final boolean core;

    LdContext(Map<String, String> terms, String vocab, JsonNode echo, String linkUrl, boolean core) {
        this.terms = terms;
        this.vocab = vocab;
        this.echo = echo;
        this.linkUrl = linkUrl;
        this.core = core;
        Map<String, String> r = new HashMap<>();
        for (Map.Entry<String, String> e : terms.entrySet()) {
            r.merge(e.getValue(), e.getKey(), (a, b) -> a.length() <= b.length() && a.compareTo(b) <= 0 ? a : b);
        }
        this.reverse = r;
    }

    /**
     * Expands a term used as an entity type, an attribute name or a vocab value to its IRI
     * (JSON-LD IRI expansion with {@code vocab = true}).
     */
    public String expand(String term) {
        String iri = terms.get(term);
        if (iri != null) {
            return iri;
        }
        int colon = term.indexOf(':');
        if (colon > 0) {
            String prefix = term.substring(0, colon);
            String suffix = term.substring(colon + 1);
            if (suffix.startsWith("//")) {
                return term;
            }
            String p = terms.get(prefix);
            if (p != null) {
                return p + suffix;
            }
            return term;
        }
        return vocab != null ? vocab + term : term;
    }

    /** Compacts the IRI of an attribute (or sub-attribute) name for an answer. */
    public String compactName(String iri) {
        return compactIri(iri);
    }

    /** Compacts an IRI that is an entity type or a vocab value for an answer. */
    public String compactIri(String iri) {
        String term = reverse.get(iri);
        if (term != null) {
            return term;
        }
        if (vocab != null && iri.startsWith(vocab) && iri.length() > vocab.length()) {
            String suffix = iri.substring(vocab.length());
            if (!terms.containsKey(suffix)) {
                return suffix;
            }
        }
        return iri;
    }

    /** The value of {@code @context} in an {@code application/ld+json} answer. */
    public JsonNode echo() {
        return echo;
    }

    /** The URL of the {@code Link} header of an {@code application/json} answer; {@code null} for a context given inline. */
    public String linkUrl() {
        return linkUrl;
    }

    /** Whether this is the core context alone. */
    public boolean isCore() {
        return core;
    }

    /** Adds the simple term definitions of one context object to {@code terms}; returns its {@code @vocab} or {@code vocab}. */
    static String define(JsonNode context, Map<String, String> terms, String vocab) {
        Iterator<Map.Entry<String, JsonNode>> it = context.properties().iterator();
        Map<String, String> raw = new HashMap<>();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            String key = e.getKey();
            JsonNode def = e.getValue();
            if (key.equals("@vocab") && def.isTextual()) {
                vocab = def.asText();
            } else if (!key.startsWith("@")) {
                if (def.isTextual()) {
                    raw.put(key, def.asText());
                } else if (def.isObject() && def.path("@id").isTextual()) {
                    raw.put(key, def.get("@id").asText());
                }
            }
        }
        for (Map.Entry<String, String> e : raw.entrySet()) {
            String v = e.getValue();
            int colon = v.indexOf(':');
            if (colon > 0 && !v.substring(colon + 1).startsWith("//")) {
                String prefix = raw.containsKey(v.substring(0, colon)) ? raw.get(v.substring(0, colon)) : terms.get(v.substring(0, colon));
                if (prefix != null) {
                    v = prefix + v.substring(colon + 1);
                }
            }
            terms.put(e.getKey(), v);
        }
        return vocab;
    }
}
