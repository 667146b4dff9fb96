package dev.cor.ngsild.ld;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A processed {@code @context}: the term definitions of a request's context followed by the
 * NGSI-LD core context, compiled once and shared by every request that names the same context.
 * It expands the terms a request uses (entity types, attribute names, vocab values) to IRIs as
 * JSON-LD 1.1 IRI expansion does, and compacts stored IRIs back for an answer as IRI compaction
 * does. Immutable and thread-safe (its memo of computed answers is a concurrent map).
 * <p>
 * What an answer says its context is comes with it: {@link #echo()} for {@code @context} in an
 * {@code application/ld+json} body, {@link #linkUrl()} for the {@code Link} header of an
 * {@code application/json} one.
 * <p>
 * A term of the context, and an IRI some term maps to, is answered by one hash look-up with no
 * allocation; anything else is computed once and remembered (up to {@link #MEMO_LIMIT} entries
 * per kind and {@link #MEMO_BYTES} in all, then computed each time): a client's names cannot grow
 * it without bound.
 */
public final class LdContext {
    /** How many computed answers of each kind (expansion, name, IRI) are remembered. */
    static final int MEMO_LIMIT = 8192;
    /** How many bytes of computed answers, of every kind, one context remembers at most. */
    static final int MEMO_BYTES = 32 << 10;
    /** The memo's stand-in for a {@code null} answer (compared by identity). */
    @SuppressWarnings("StringOperationCanBeSimplified")
    private static final String NULL = new String("<null>");

    final CompiledContext compiled;
    private final JsonNode echo;
    private final String linkUrl;
    private final boolean core;
    /** The stored and downloaded documents it was built from: it is valid while they all are. */
    final Source[] sources;
    /** iri → its compaction as an attribute name / with no value, for every IRI some term maps to. */
    private final Map<String, String> names;
    private final Map<String, String> iris;
    private final ConcurrentHashMap<String, String> expandMemo = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, String> nameMemo = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, String> iriMemo = new ConcurrentHashMap<>();
    /** The bytes its memos hold (an estimate; a race may pass {@link #MEMO_BYTES} by one entry per thread). */
    private final AtomicLong memoBytes = new AtomicLong();
    /** What it keeps, its memos at their bound included: what a cache that holds it counts. */
    private final long retainedBytes;
    /** Stands for this context where something outlives it (a rendered entity's key), so that nothing else holds it. */
    private final Object identity = new Object();
    /** When a request last used it (a second's precision): the processed contexts' least recently used go first. */
    volatile long lastUse;

    /** @param ownBytes what it keeps that no other context does ({@link RetainedSize}), its memos aside */
    LdContext(CompiledContext compiled, JsonNode echo, String linkUrl, boolean core, Source[] sources, long ownBytes) {
        this.compiled = compiled;
        this.echo = echo;
        this.linkUrl = linkUrl;
        this.core = core;
        this.sources = sources;
        this.names = compiled.names;
        this.iris = compiled.iris;
        this.retainedBytes = ownBytes + SELF + MEMO_BYTES;
    }

    /** Its own object, its three empty memos and its counters. */
    private static final long SELF = RetainedSize.object(12, 9) + 3 * RetainedSize.object(6, 20) + 2 * RetainedSize.object(0, 8);

    /**
     * The same compiled context with what another request named (its own echo and Link URL);
     * {@code ownBytes} counts that echo.
     */
    LdContext withOrigin(JsonNode echo, String linkUrl, Source[] sources, long ownBytes) {
        return new LdContext(compiled, echo, linkUrl, core, sources, ownBytes);
    }

    /** The same compiled context with another origin, for a test: its echo counted on its own. */
    LdContext withOrigin(JsonNode echo, String linkUrl, Source[] sources) {
        RetainedSize size = new RetainedSize();
        size.json(echo);
        return withOrigin(echo, linkUrl, sources, size.bytes());
    }

    /** What it keeps, in bytes, as {@link RetainedSize} estimates it, its memos counted at their bound. */
    long retainedBytes() {
        return retainedBytes;
    }

    /** A token that stands for this context and holds nothing of it: for what outlives a request (a rendered entity's key). */
    public Object identity() {
        return identity;
    }

    /**
     * Expands a term used as an entity type, an attribute name or a vocab value to its IRI
     * (JSON-LD IRI expansion with {@code vocab = true}). A keyword, or an alias of one ({@code id},
     * {@code type}), expands to the keyword. {@code null} when the term stands for nothing: it is
     * defined as {@code null} in the context, or it has the form of a keyword that is none
     * ({@code @foo}); JSON-LD drops such a member.
     */
    public String expand(String term) {
        TermDefinition d = compiled.terms.get(term);
        if (d != null) {
            return d.iri;
        }
        String m = expandMemo.get(term);
        if (m == null) {
            String r = compiled.expand(term);
            m = r == null ? NULL : r;
            remember(expandMemo, term, m);
        }
        return m == NULL ? null : m;
    }

    /**
     * Compacts the IRI of an attribute (or sub-attribute) name for an answer: JSON-LD IRI
     * compaction with {@code vocab = true} and, as the value, an attribute instance (a node
     * object) or an array of them. A term whose definition does not fit such a value (a
     * {@code @list} or {@code @language} container, a datatype, {@code @vocab} or {@code @json}
     * coercion) is not chosen; then a compact IRI, or the IRI itself.
     */
    public String compactName(String iri) {
        String r = names.get(iri);
        if (r != null) {
            return r;
        }
        return memo(nameMemo, iri, true);
    }

    /** Compacts an IRI that is an entity type or a vocab value (JSON-LD IRI compaction with {@code vocab = true}, no value). */
    public String compactIri(String iri) {
        String r = iris.get(iri);
        if (r != null) {
            return r;
        }
        return memo(iriMemo, iri, false);
    }

    private String memo(ConcurrentHashMap<String, String> memo, String iri, boolean nodeValue) {
        String m = memo.get(iri);
        if (m == null) {
            m = compiled.compact(iri, nodeValue);
            remember(memo, iri, m);
        }
        return m;
    }

    /** Keeps a computed answer while the memos are under their bounds. */
    private void remember(ConcurrentHashMap<String, String> memo, String key, String value) {
        if (memo.size() >= MEMO_LIMIT) {
            return;
        }
        long entry = 40 + RetainedSize.stringBytes(key) + (value == key || value == NULL ? 0 : RetainedSize.stringBytes(value));
        if (memoBytes.get() + entry > MEMO_BYTES) {
            return;
        }
        if (memo.putIfAbsent(key, value) == null) {
            memoBytes.addAndGet(entry);
        }
    }

    /**
     * The value of {@code @context} in an {@code application/ld+json} answer: the request's
     * context as the request gave it (the {@code Link} URL, or the body's {@code @context}); the
     * core context's URL when it gave none.
     */
    public JsonNode echo() {
        return echo;
    }

    /**
     * The URL of the {@code Link} header of an {@code application/json} answer: the request's
     * {@code Link} URL, or its body's {@code @context} when that is one URL; the core context's
     * URL when it gave none. {@code null} for a context given inline (an object, or several
     * entries): {@link LdContexts#linkUrlFor} hosts such a context to give it a URL.
     */
    public String linkUrl() {
        return linkUrl;
    }

    /** Whether this is the core context alone (the request named none, or only the core). */
    public boolean isCore() {
        return core;
    }

    /** Whether every document it was built from is still there and fresh at {@code now}. */
    boolean usable(long now) {
        for (Source s : sources) {
            if (!s.usable(now)) {
                return false;
            }
        }
        return true;
    }

    /** A request used it at {@code now} (kept to a second's precision: a write per request would bounce the cache line between loops). */
    void touch(long now) {
        if (now - lastUse >= 1000) {
            lastUse = now;
        }
    }

    /** Counts one request that used it on the documents it came from. */
    void used(long now) {
        for (Source s : sources) {
            s.used(now);
        }
    }

    @Override
    public String toString() {
        return "LdContext[" + echo + (core ? ", core" : "") + ", " + compiled.terms.size() + " terms]";
    }

    /** A document a processed context was built from: a downloaded one, a hosted one. */
    interface Source {
        /** Whether it may still be used at {@code now} (not removed, not expired). */
        boolean usable(long now);

        /** A request used it at {@code now}. */
        void used(long now);
    }
}
