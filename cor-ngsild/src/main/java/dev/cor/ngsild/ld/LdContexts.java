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

    private LdContexts(Builder b) {
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
        if (ref.linkUrl() != null) {
            throw new NgsiLdException(ErrorType.LD_CONTEXT_NOT_AVAILABLE, "the @context " + ref.linkUrl() + " cannot be downloaded");
        }
        JsonNode body = ref.body();
        Map<String, String> terms = new HashMap<>(coreTerms());
        String vocab = null;
        for (JsonNode part : body.isArray() ? body : java.util.List.of(body)) {
            if (part.isObject()) {
                vocab = LdContext.define(part, terms, vocab);
            } else if (!(part.isTextual() && CoreContext.isCoreUrl(part.asText()))) {
                throw new NgsiLdException(ErrorType.LD_CONTEXT_NOT_AVAILABLE, "the @context " + part + " cannot be downloaded");
            }
        }
        Map<String, String> withCore = new HashMap<>(terms);
        String coreVocab = LdContext.define(CoreContext.document().get("@context"), withCore, vocab);
        LdContext made = new LdContext(Map.copyOf(withCore), coreVocab, body, null, false);
        processed.put(ref, made);
        return made;
    }

    /**
     * Whether resolving {@code ref} would download something (a context neither cached nor known
     * to be broken): the request must then be allowed to wait. Never blocks.
     */
    public boolean needsDownload(ContextRef ref) {
        return cached(ref) == null && ref.linkUrl() != null;
    }

    /**
     * The URL of the {@code Link} header of an {@code application/json} answer in {@code ctx}: the
     * URL the request named, the core context's, or - for a context given inline - the URL under
     * which this broker serves it ({@code baseUrl} is this broker as the client reached it).
     */
    public String linkUrl(LdContext ctx, String baseUrl) {
        return ctx.linkUrl() != null ? ctx.linkUrl() : CoreContext.URL;
    }

    private Map<String, String> coreTerms() {
        return Map.of();
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
