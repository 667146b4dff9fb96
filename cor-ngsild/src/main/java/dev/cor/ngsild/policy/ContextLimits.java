package dev.cor.ngsild.policy;

import java.util.concurrent.TimeUnit;

/**
 * Bounds on the broker's {@code @context} service: how long downloaded contexts are kept, how
 * much heap each of its caches may hold (estimated retained bytes), how large a document or an
 * inline context may be. Immutable; {@link #defaults()} suit a broker serving many tenants' data
 * models, and {@link #builder()} changes some of them. Given to {@code CorNgsild.Builder.contextLimits}.
 *
 * @param ttlMs             how long a downloaded context is used before it is downloaded again (a server's Cache-Control may shorten it)
 * @param negativeTtlMs     how long a failed download is answered from memory before the URL is tried again
 * @param maxEntries        how many downloaded contexts are kept
 * @param maxBytes          how many bytes of heap the downloaded contexts may keep
 * @param maxDocumentBytes  the largest context document accepted (at most {@code maxBytes})
 * @param maxRedirects      how many redirects a download follows (0: none)
 * @param maxProcessed      how many processed contexts are kept
 * @param maxProcessedBytes how many bytes of heap the processed contexts may keep
 * @param maxImplicitBytes  how many bytes of heap the ImplicitlyCreated contexts nothing holds may keep (those a subscription or a registration relies on are not counted, and never evicted)
 * @param maxInlineBytes    the largest inline {@code @context} a request may write, in bytes of JSON
 * @param maxInlineTerms    how many term definitions an inline {@code @context} may have
 */
public record ContextLimits(long ttlMs, long negativeTtlMs, int maxEntries, long maxBytes, int maxDocumentBytes,
        int maxRedirects, int maxProcessed, long maxProcessedBytes, long maxImplicitBytes, int maxInlineBytes,
        int maxInlineTerms) {
    private static final ContextLimits DEFAULTS = new ContextLimits(TimeUnit.HOURS.toMillis(1), 10_000, 256, 64L << 20,
            4 << 20, 5, 1024, 64L << 20, 16L << 20, 1 << 20, 16_384);

    /** Checks every bound: each positive ({@code maxRedirects} may be 0), a document no larger than the cache. */
    public ContextLimits {
        positive("ttlMs", ttlMs);
        positive("negativeTtlMs", negativeTtlMs);
        positive("maxEntries", maxEntries);
        positive("maxBytes", maxBytes);
        positive("maxDocumentBytes", maxDocumentBytes);
        if (maxRedirects < 0) {
            throw new IllegalArgumentException("maxRedirects must be >= 0: " + maxRedirects);
        }
        positive("maxProcessed", maxProcessed);
        positive("maxProcessedBytes", maxProcessedBytes);
        positive("maxImplicitBytes", maxImplicitBytes);
        positive("maxInlineBytes", maxInlineBytes);
        positive("maxInlineTerms", maxInlineTerms);
        if (maxDocumentBytes > maxBytes) {
            throw new IllegalArgumentException("maxDocumentBytes " + maxDocumentBytes + " > maxBytes " + maxBytes);
        }
    }

    /**
     * 1 h TTL, 10 s for a failure; 256 documents and 64 MiB downloaded, 4 MiB a document, 5
     * redirects; 1 024 processed contexts and 64 MiB; 16 MiB of ImplicitlyCreated ones; inline
     * contexts up to 1 MiB (the HTTP server's default body bound) and 16 384 terms.
     */
    public static ContextLimits defaults() {
        return DEFAULTS;
    }

    /** A builder starting from {@link #defaults()}. */
    public static Builder builder() {
        return new Builder(DEFAULTS);
    }

    /** Changes some bounds of a {@link ContextLimits}; checked when built. Not thread-safe. */
    public static final class Builder {
        private long ttlMs;
        private long negativeTtlMs;
        private int maxEntries;
        private long maxBytes;
        private int maxDocumentBytes;
        private int maxRedirects;
        private int maxProcessed;
        private long maxProcessedBytes;
        private long maxImplicitBytes;
        private int maxInlineBytes;
        private int maxInlineTerms;

        private Builder(ContextLimits from) {
            ttlMs = from.ttlMs;
            negativeTtlMs = from.negativeTtlMs;
            maxEntries = from.maxEntries;
            maxBytes = from.maxBytes;
            maxDocumentBytes = from.maxDocumentBytes;
            maxRedirects = from.maxRedirects;
            maxProcessed = from.maxProcessed;
            maxProcessedBytes = from.maxProcessedBytes;
            maxImplicitBytes = from.maxImplicitBytes;
            maxInlineBytes = from.maxInlineBytes;
            maxInlineTerms = from.maxInlineTerms;
        }

        /** See {@link ContextLimits#ttlMs()}. */
        public Builder ttlMs(long ms) {
            this.ttlMs = ms;
            return this;
        }

        /** See {@link ContextLimits#negativeTtlMs()}. */
        public Builder negativeTtlMs(long ms) {
            this.negativeTtlMs = ms;
            return this;
        }

        /** See {@link ContextLimits#maxEntries()}. */
        public Builder maxEntries(int n) {
            this.maxEntries = n;
            return this;
        }

        /** See {@link ContextLimits#maxBytes()}. */
        public Builder maxBytes(long bytes) {
            this.maxBytes = bytes;
            return this;
        }

        /** See {@link ContextLimits#maxDocumentBytes()}. */
        public Builder maxDocumentBytes(int bytes) {
            this.maxDocumentBytes = bytes;
            return this;
        }

        /** See {@link ContextLimits#maxRedirects()}. */
        public Builder maxRedirects(int n) {
            this.maxRedirects = n;
            return this;
        }

        /** See {@link ContextLimits#maxProcessed()}. */
        public Builder maxProcessed(int n) {
            this.maxProcessed = n;
            return this;
        }

        /** See {@link ContextLimits#maxProcessedBytes()}. */
        public Builder maxProcessedBytes(long bytes) {
            this.maxProcessedBytes = bytes;
            return this;
        }

        /** See {@link ContextLimits#maxImplicitBytes()}. */
        public Builder maxImplicitBytes(long bytes) {
            this.maxImplicitBytes = bytes;
            return this;
        }

        /** See {@link ContextLimits#maxInlineBytes()}. */
        public Builder maxInlineBytes(int bytes) {
            this.maxInlineBytes = bytes;
            return this;
        }

        /** See {@link ContextLimits#maxInlineTerms()}. */
        public Builder maxInlineTerms(int n) {
            this.maxInlineTerms = n;
            return this;
        }

        /** The bounds; {@link IllegalArgumentException} when one is out of range. */
        public ContextLimits build() {
            return new ContextLimits(ttlMs, negativeTtlMs, maxEntries, maxBytes, maxDocumentBytes, maxRedirects,
                    maxProcessed, maxProcessedBytes, maxImplicitBytes, maxInlineBytes, maxInlineTerms);
        }
    }

    private static void positive(String name, long v) {
        if (v < 1) {
            throw new IllegalArgumentException(name + " must be >= 1: " + v);
        }
    }
}
