package dev.cor.ngsild.ld;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;

import dev.cor.ngsild.api.ErrorType;
import dev.cor.ngsild.api.NgsiLdException;
import dev.cor.rest.client.CorRestClient;

/**
 * The broker's {@code @context} service: resolves what a request names ({@link ContextRef}) to a
 * processed {@link LdContext}. The core context is built in; remote contexts are downloaded
 * through the {@link CorRestClient} - yielding inside a coroutine, blocking on a worker - and
 * cached. {@link #cached} answers without waiting (the request's "can this wait?"),
 * {@link #resolve} may wait for a download. Thread-safe: every loop and worker shares one.
 */
public final class LdContexts {
    private final LdContext core;
    private final Map<ContextRef, LdContext> processed = new ConcurrentHashMap<>();
    private final Map<String, JsonNode> documents = new ConcurrentHashMap<>();
    private final CorRestClient client;

    private LdContexts(Builder b) {
        this.client = b.client;
        Map<String, String> terms = new HashMap<>();
        String vocab = LdContext.define(CoreContext.document().get("@context"), terms, null);
        this.core = new LdContext(Map.copyOf(terms), vocab, TextNode.valueOf(CoreContext.URL), CoreContext.URL, true);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The core context alone: what a request that names none uses. */
    public LdContext core() {
        return core;
    }

    /**
     * The processed context of {@code ref} if it can be had without waiting (nothing to
     * download), else {@code null}: the request must be allowed to wait.
     */
    public LdContext cached(ContextRef ref) {
        if (ref.isNone() || (ref.linkUrl() != null && CoreContext.isCoreUrl(ref.linkUrl()))) {
            return core;
        }
        return processed.get(ref);
    }

    /**
     * The processed context of {@code ref}, downloading what is not cached yet (inside a
     * coroutine the download yields; elsewhere it blocks).
     *
     * @throws NgsiLdException LdContextNotAvailable when a remote context cannot be had within
     *                         {@code timeoutMs}; BadRequestData when a context is invalid
     */
    public LdContext resolve(ContextRef ref, long timeoutMs) {
        LdContext c = cached(ref);
        if (c != null) {
            return c;
        }
        JsonNode given = ref.linkUrl() != null ? TextNode.valueOf(ref.linkUrl()) : ref.body();
        Map<String, String> terms = new HashMap<>();
        String vocab = define(given, terms, null, 0);
        vocab = LdContext.define(CoreContext.document().get("@context"), terms, vocab);
        LdContext made = new LdContext(Map.copyOf(terms), vocab, given, ref.linkUrl(), false);
        processed.put(ref, made);
        return made;
    }

    private String define(JsonNode ctx, Map<String, String> terms, String vocab, int depth) {
        if (depth > 10) {
            throw NgsiLdException.badData("@context nests remote contexts deeper than 10");
        }
        if (ctx.isArray()) {
            for (JsonNode part : ctx) {
                vocab = define(part, terms, vocab, depth);
            }
            return vocab;
        }
        if (ctx.isObject()) {
            return LdContext.define(ctx, terms, vocab);
        }
        if (ctx.isTextual()) {
            String url = ctx.asText();
            if (CoreContext.isCoreUrl(url)) {
                return LdContext.define(CoreContext.document().get("@context"), terms, vocab);
            }
            JsonNode doc = documents.get(url);
            if (doc == null) {
                doc = download(url);
                documents.put(url, doc);
            }
            return define(doc, terms, vocab, depth + 1);
        }
        throw NgsiLdException.badData("an @context holds URLs and objects, not " + ctx);
    }

    private JsonNode download(String url) {
        dev.cor.rest.client.CorRestClientResponse r;
        try {
            r = client.send(dev.cor.rest.client.CorRestClientRequest.builder("GET", url)
                    .header("Accept", "application/ld+json, application/json").build());
        } catch (RuntimeException | dev.cor.rest.client.CorRestClientException e) {
            throw new NgsiLdException(ErrorType.LD_CONTEXT_NOT_AVAILABLE, "the @context " + url + " cannot be downloaded: " + e.getMessage());
        }
        if (r.status() != 200) {
            throw new NgsiLdException(ErrorType.LD_CONTEXT_NOT_AVAILABLE, "the @context " + url + " answered " + r.status());
        }
        JsonNode doc;
        try {
            doc = dev.cor.rest.CorRestJson.mapper().readTree(r.body());
        } catch (java.io.IOException e) {
            throw NgsiLdException.badData("the @context " + url + " is not JSON");
        }
        if (doc == null || !doc.has("@context")) {
            throw NgsiLdException.badData("the @context " + url + " has no @context member");
        }
        return doc.get("@context");
    }

    /**
     * Whether resolving {@code ref} would download something (a context neither cached nor known
     * to be broken): the request must then be allowed to wait. Never blocks.
     */
    public boolean needsDownload(ContextRef ref) {
        return cached(ref) == null && uncached(ref.linkUrl() != null ? TextNode.valueOf(ref.linkUrl()) : ref.body());
    }

    private boolean uncached(JsonNode ctx) {
        if (ctx.isTextual()) {
            return !CoreContext.isCoreUrl(ctx.asText()) && !documents.containsKey(ctx.asText());
        }
        if (ctx.isArray()) {
            for (JsonNode part : ctx) {
                if (uncached(part)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The URL of the {@code Link} header of an {@code application/json} answer in {@code ctx}: the
     * URL the request named, the core context's, or - for a context given inline - the URL under
     * which this broker serves it ({@code baseUrl} is this broker as the client reached it).
     */
    public String linkUrl(LdContext ctx, String baseUrl) {
        return ctx.linkUrl() != null ? ctx.linkUrl() : CoreContext.URL;
    }

    /** Builds the context service. */
    public static final class Builder {
        private CorRestClient client;
        private long timeoutMs = 5_000;

        private Builder() {
        }

        /** The client remote contexts are downloaded with. */
        public Builder client(CorRestClient client) {
            this.client = client;
            return this;
        }

        /** How long a download may take before the request is answered LdContextNotAvailable. */
        public Builder timeoutMs(long ms) {
            this.timeoutMs = ms;
            return this;
        }

        public LdContexts build() {
            return new LdContexts(this);
        }
    }
}
