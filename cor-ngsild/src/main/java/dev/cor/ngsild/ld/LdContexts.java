package dev.cor.ngsild.ld;


import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.policy.ContextLimits;
import dev.cor.rest.client.CorRestClient;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The broker's {@code @context} service: resolves what a request names ({@link ContextRef}) to a
 * processed {@link LdContext} - the request's context followed by the built-in NGSI-LD core
 * context (ETSI GS CIM 009 § 4.4: the core is always processed last, wherever the request names
 * it) - and keeps what it needs for that: the processed contexts (a bounded cache keyed by
 * {@link ContextRef}), the downloaded documents ({@link ContextDocuments}: TTL, bounds, negative
 * cache, one download per URL whoever needs it), and the contexts it hosts
 * ({@link StoredContexts}, served by {@link JsonldContextsApi}).
 * <p>
 * Who calls what, and where:
 * <ul>
 * <li>{@link #cached} and {@link #needsDownload} on a loop thread, for any request: they never
 * download, never wait and never throw;</li>
 * <li>{@link #resolve} inside the request's coroutine (a download yields) or on a worker (it
 * blocks, with the deadline): it may download, and throws the request's error.</li>
 * </ul>
 * Thread-safe: every loop and worker shares one. No lock is held across anything that waits.
 */
public final class LdContexts implements MeterBinder {
    private static final System.Logger LOG = System.getLogger(LdContexts.class.getName());
    private final ContextDocuments documents;
    private final StoredContexts stored;
    private final InstantSource clock;
    private final long timeoutMs;
    private final int maxProcessed;
    private final long maxProcessedBytes;
    private final long maxImplicitBytes;
    private final int maxInlineBytes;
    private final int maxInlineTerms;
    private final CompiledContext.TermOrder order;
    /** The core's {@code @context} object, processed after every request's context. */
    private final JsonNode coreLocal;
    private final CompiledContext coreCompiled;
    private final LdContext core;
    /** Every published core URL, as a {@code Link}: the core context, echoing that URL. */
    private final Map<String, LdContext> coreLinks;
    /** The core's objects, kept anyway: not counted in what a processed context keeps. */
    private final Set<Object> coreShared;
    private final ConcurrentHashMap<ContextRef, LdContext> processed = new ConcurrentHashMap<>();
    /** The bytes the processed contexts keep ({@link LdContext#retainedBytes()}). */
    private final AtomicLong processedBytes = new AtomicLong();
    /** One eviction of each cache at a time; a request that finds one running leaves it the work. */
    private final AtomicBoolean evictingProcessed = new AtomicBoolean();
    private final AtomicBoolean evictingImplicit = new AtomicBoolean();
    private final java.util.List<ContextHolders> holders = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The bytes of the ImplicitlyCreated contexts held at the last eviction: they do not count against the bound. */
    private volatile long pinnedImplicitBytes;
    /** When each URL's unusable context was last logged: a client that names it again and again logs it once a while. */
    private final ConcurrentHashMap<String, Long> reported = new ConcurrentHashMap<>();
    private final long reportEveryMs;
    private final int maxReported;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();

    private LdContexts(Builder b) {
        this.clock = b.clock;
        this.timeoutMs = b.timeoutMs;
        this.maxProcessed = b.limits.maxProcessed();
        this.maxProcessedBytes = b.limits.maxProcessedBytes();
        this.maxImplicitBytes = b.limits.maxImplicitBytes();
        this.maxInlineBytes = b.limits.maxInlineBytes();
        this.maxInlineTerms = b.limits.maxInlineTerms();
        this.order = b.order;
        this.reportEveryMs = b.limits.negativeTtlMs();
        this.maxReported = b.limits.maxEntries();
        this.stored = new StoredContexts(b.keeper);
        this.documents = new ContextDocuments(b.client, b.clock, b.limits.ttlMs(), b.limits.negativeTtlMs(), b.limits.maxEntries(), b.limits.maxBytes(),
                b.limits.maxDocumentBytes(), b.limits.maxRedirects());
        this.coreLocal = CoreContext.document().get("@context");
        ActiveContext active = new ContextProcessor(url -> {
            throw new IllegalStateException("the core context names no remote context");
        }, this::report).process(new ActiveContext(null), coreLocal, null);
        this.coreCompiled = new CompiledContext(active, order);
        RetainedSize coreSize = new RetainedSize();
        coreSize.json(coreLocal);
        coreCompiled.addTo(coreSize);
        this.coreShared = coreSize.seen();
        this.core = new LdContext(coreCompiled, TextNode.valueOf(CoreContext.URL), CoreContext.URL, true, new LdContext.Source[0],
                coreSize.bytes());
        Map<String, LdContext> links = new HashMap<>();
        for (String url : CoreContext.URLS) {
            links.put(url, url.equals(CoreContext.URL) ? core : core.withOrigin(TextNode.valueOf(url), url, new LdContext.Source[0], 0));
        }
        this.coreLinks = Map.copyOf(links);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The core context alone: what a request that names none uses. */
    public LdContext core() {
        return core;
    }

    /**
     * The processed context of {@code ref} if it can be had without a download, else
     * {@code null}: the request must be allowed to wait ({@link #needsDownload}), or its context is
     * invalid or unavailable, which {@link #resolve} then says at once. Never waits, never throws.
     */
    public LdContext cached(ContextRef ref) {
        LdContext c = fast(ref);
        if (c != null) {
            return c;
        }
        long now = clock.millis();
        c = usableProcessed(ref, now);
        if (c == null) {
            try {
                c = build(ref, documents::cachedOnly);
            } catch (ContextDocuments.NotCached | NgsiLdException e) {
                return null;
            }
            remember(ref, c);
        }
        used(c, now, false);
        return c;
    }

    /**
     * Whether resolving {@code ref} would have to download something that is not cached - neither
     * as a document nor as a recent failure: the API's "can this request wait?". Never waits,
     * never throws.
     */
    public boolean needsDownload(ContextRef ref) {
        if (fast(ref) != null || usableProcessed(ref, clock.millis()) != null) {
            return false;
        }
        try {
            remember(ref, build(ref, documents::cachedOnly));
            return false;
        } catch (ContextDocuments.NotCached e) {
            return true;
        } catch (NgsiLdException e) {
            return false;
        }
    }

    /**
     * The processed context of {@code ref}, downloading what is not cached yet - inside a
     * coroutine the download yields, on a worker it blocks; two requests that need the same
     * document share one download.
     *
     * @param timeoutMs how long the documents may take to arrive
     * @throws NgsiLdException LdContextNotAvailable, one answer naming the URL the request gave,
     *                         when a context it names by URL cannot be had within {@code timeoutMs}
     *                         or used (an error, too large, not JSON, no {@code @context} member,
     *                         invalid, or naming another that is one of those: the reason is logged,
     *                         never answered); BadRequestData when what the request wrote itself is
     *                         invalid (an invalid term definition, a protected term redefined, a
     *                         scoped context)
     */
    public LdContext resolve(ContextRef ref, long timeoutMs) {
        LdContext c = fast(ref);
        if (c != null) {
            return c;
        }
        long now = clock.millis();
        c = usableProcessed(ref, now);
        if (c != null) {
            used(c, now, false);
            return c;
        }
        prefetch(ref);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, timeoutMs));
        boolean[] waited = {false};
        try {
            c = build(ref, url -> documents.get(url, deadline, waited));
        } finally {
            if (waited[0]) {
                misses.increment(); // a miss whatever came of the download
            }
        }
        remember(ref, c);
        used(c, clock.millis(), waited[0]);
        return c;
    }

    /** {@link #resolve(ContextRef, long)} with the service's own timeout. */
    public LdContext resolve(ContextRef ref) {
        return resolve(ref, timeoutMs);
    }

    /**
     * The URL of {@code context} for the {@code Link} header of an {@code application/json}
     * answer or notification: its {@link LdContext#linkUrl()}, or - for a context that was given
     * inline - the URL of an ImplicitlyCreated context the broker hosts for it (ETSI GS CIM 009
     * § 5.13.1), made the first time and reused for the same context of the same tenant. That URL
     * is where {@link JsonldContextsApi} serves it ({@code origin}{@value StoredContexts#PATH}{@code id}),
     * to whoever follows the {@code Link}, with no tenant header.
     *
     * @param origin the broker's origin as the client reached it, {@code http://host:port} (no path)
     * @param tenant the request's tenant, {@code null} for the default one
     */
    public String linkUrlFor(LdContext context, String origin, String tenant) {
        StoredContexts.Stored gone = gone(context);
        if (context.linkUrl() != null && gone == null) {
            return context.linkUrl();
        }
        // given inline, or named by the URL of a context this broker no longer serves (a Hosted one
        // deleted, an ImplicitlyCreated one from before a restart): an ImplicitlyCreated one with its content
        return implicitUrl(gone != null ? gone.context : context.echo(), origin, tenant);
    }

    /**
     * The {@code @context} an {@code application/ld+json} body made with {@code context} carries:
     * its {@link LdContext#echo()}, unless that is the URL of a context this broker no longer serves
     * ({@link #gone}) - then the URL {@link #linkUrlFor} gives, which dereferences.
     */
    public JsonNode bodyContextFor(LdContext context, String origin, String tenant) {
        StoredContexts.Stored gone = gone(context);
        return gone == null ? context.echo() : TextNode.valueOf(implicitUrl(gone.context, origin, tenant));
    }

    /** The URL of the ImplicitlyCreated context of {@code tenant} holding {@code value}, made if there is none. */
    private String implicitUrl(JsonNode value, String origin, String tenant) {
        boolean[] made = {false};
        StoredContexts.Stored s = stored.implicitFor(tenant, value, clock.millis(), made);
        if (made[0] && stored.implicitBytes() > maxImplicitBytes + pinnedImplicitBytes) {
            evictImplicit();
        }
        return urlOf(s, origin);
    }

    /**
     * The stored context {@code context}'s {@link LdContext#linkUrl()} names if this broker no
     * longer serves it - a Hosted one deleted since, or one from before a restart that is not here
     * (its kept copy, {@link #restore}) - else {@code null} (also when it has no linkUrl).
     */
    private static StoredContexts.Stored gone(LdContext context) {
        for (LdContext.Source src : context.sources) {
            if (src instanceof StoredContexts.Named n && n.stored().removed && n.url().equals(context.linkUrl())) {
                return n.stored();
            }
        }
        return null;
    }

    /**
     * Registers what keeps contexts beyond a request (the subscriptions, the registrations): the
     * ImplicitlyCreated contexts they rely on are never evicted, and a stored context they use is
     * not deleted. Called when the broker is built.
     */
    public void holders(ContextHolders h) {
        holders.add(Objects.requireNonNull(h, "holders"));
    }

    /**
     * The stored contexts the holders rely on: those their contexts were built from (a URL they
     * named), and the ImplicitlyCreated ones that give their inline contexts a URL ({@link #linkUrlFor}).
     */
    Set<StoredContexts.Stored> held() {
        Set<StoredContexts.Stored> out = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (ContextHolders h : holders) {
            h.forEach((tenant, c) -> {
                for (LdContext.Source s : c.sources) {
                    if (s instanceof StoredContexts.Named n) {
                        out.add(n.stored());
                    }
                }
                StoredContexts.Stored gone = gone(c);
                if (c.linkUrl() == null || gone != null) {
                    StoredContexts.Stored st = stored.implicitOf(tenant, gone != null ? gone.context : c.echo());
                    if (st != null) {
                        out.add(st);
                    }
                }
            });
        }
        return out;
    }

    /**
     * Evicts the least recently used ImplicitlyCreated contexts that nothing holds until those
     * weigh three quarters of the bound; those held do not count against it (they live as long as
     * what holds them, which a client created and deletes).
     */
    private void evictImplicit() {
        if (!evictingImplicit.compareAndSet(false, true)) {
            return;
        }
        try {
            Set<StoredContexts.Stored> held = held();
            long pinned = 0;
            for (StoredContexts.Stored s : stored.implicitOnes()) {
                if (held.contains(s)) {
                    pinned += s.weight;
                }
            }
            stored.evictImplicit(held, maxImplicitBytes * 3 / 4);
            pinnedImplicitBytes = pinned;
        } finally {
            evictingImplicit.set(false);
        }
    }

    /** The document of the hosted (or implicitly created) context with local id {@code id}, {@code {"@context": ...}}; {@code null} if none. */
    public JsonNode hostedDocument(String id) {
        StoredContexts.Stored s = stored.get(id);
        return s == null ? null : StoredContexts.document(s.context);
    }

    /** A remote {@code @context} document as it was downloaded: the URL asked for, the one it came from after redirects, its {@code @context}. */
    public record RemoteDocument(String url, String documentUrl, JsonNode context) {
    }

    /**
     * The documents {@code context} was built from, as they were when it was: the downloaded ones
     * and the ones this broker stores (a Hosted context, an ImplicitlyCreated one), each under the
     * URL the request named it by. What a store keeps with a subscription or a registration so that
     * {@link #restore} needs neither the network nor a stored context that may be gone by then
     * (an ImplicitlyCreated one is not kept, a Hosted one can be deleted).
     */
    public List<RemoteDocument> remoteDocuments(LdContext context) {
        List<RemoteDocument> out = new ArrayList<>(context.sources.length);
        for (LdContext.Source s : context.sources) {
            if (s instanceof ContextDocuments.Doc d) {
                out.add(new RemoteDocument(d.url, d.documentUrl, d.context));
            } else if (s instanceof StoredContexts.Named n) {
                out.add(new RemoteDocument(n.url(), n.url(), n.stored().context));
            }
        }
        return out;
    }

    /**
     * The context a request named as {@code echo} ({@link LdContext#echo()}), processed again
     * without the network: a context this broker still stores comes from there (so that it stays
     * held); any other document from {@code kept} (as it was when the context was made; the cache
     * is not touched), else from the cache. For a store's recovery: it never downloads, never waits.
     *
     * @throws NgsiLdException when a document it names is neither kept nor at hand, or it is invalid
     */
    public LdContext restore(JsonNode echo, List<RemoteDocument> kept) {
        Map<String, RemoteDocument> byUrl = new HashMap<>();
        for (RemoteDocument d : kept) {
            byUrl.put(d.url(), d);
        }
        ContextRef ref = echo.isTextual() ? ContextRef.link(echo.asText()) : ContextRef.body(echo);
        LdContext c = fast(ref);
        if (c != null) {
            return c;
        }
        try {
            return build(ref, new DocSource() {
                @Override
                public ContextDocuments.Doc load(String url) {
                    RemoteDocument d = byUrl.get(url);
                    if (d == null) {
                        return documents.cachedOnly(url);
                    }
                    // never expires: it is what the subscription was made with, not a cache entry
                    return new ContextDocuments.Doc(d.url(), null, d.context(), d.documentUrl(), 0, clock.millis(), Long.MAX_VALUE);
                }

                @Override
                public StoredContexts.Stored gone(String url) {
                    // the kept copy of a context this broker served and serves no more: it is
                    // processed as that, and the Link made with it names one that dereferences
                    RemoteDocument d = byUrl.get(url);
                    if (d == null || !url.contains(StoredContexts.PATH)) {
                        return null;
                    }
                    StoredContexts.Stored s = new StoredContexts.Stored(url.substring(url.indexOf(StoredContexts.PATH)
                            + StoredContexts.PATH.length()), null, StoredContexts.Kind.IMPLICITLY_CREATED, d.context(), clock.millis());
                    s.removed = true;
                    return s;
                }
            }, false); // acknowledged with it: no bound of today's refuses it
        } catch (ContextDocuments.NotCached e) {
            throw new NgsiLdException(ErrorType.LD_CONTEXT_NOT_AVAILABLE, "a document of the @context " + echo
                    + " was not kept and is not at hand without a download");
        }
    }

    /** The bytes the processed contexts keep, as estimated ({@link RetainedSize}). */
    public long processedBytes() {
        return processedBytes.get();
    }

    /** The bytes the ImplicitlyCreated contexts keep, as estimated. */
    public long implicitBytes() {
        return stored.implicitBytes();
    }

    /** The bytes the downloaded documents keep, as estimated. */
    public long documentBytes() {
        return documents.bytes();
    }

    /**
     * Registers the {@code @context} cache's meters in {@code registry}: counters and gauges read
     * from the cache's own counters when the registry is scraped (nothing more on a request).
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        counter(registry, "cor.ngsild.context.cache.hits", "Requests whose @context named remote documents, all of them found cached.",
                hits);
        counter(registry, "cor.ngsild.context.cache.misses",
                "Requests that had to wait for a @context download (theirs or another request's).", misses);
        counter(registry, "cor.ngsild.context.downloads", "@context downloads started.", documents.downloads);
        counter(registry, "cor.ngsild.context.download.failures", "@context downloads that failed or brought no valid context.",
                documents.downloadFailures);
        counter(registry, "cor.ngsild.context.negative.hits", "Look-ups answered from the negative cache, with no new download.",
                documents.negativeHits);
        counter(registry, "cor.ngsild.context.evictions", "@context documents evicted by the cache's bounds.", documents.evictions);
        gauge(registry, "cor.ngsild.context.cache.entries", "@context documents cached.", null, documents::entries);
        gauge(registry, "cor.ngsild.context.cache.bytes", "Heap bytes the @context documents cached keep (estimated).", "bytes",
                documents::bytes);
        gauge(registry, "cor.ngsild.context.negative.entries", "URLs in the negative cache.", null, documents::negativeEntries);
        gauge(registry, "cor.ngsild.context.processed", "Processed @contexts kept.", null, processed::size);
        gauge(registry, "cor.ngsild.context.processed.bytes", "Heap bytes the processed @contexts keep (estimated).", "bytes",
                processedBytes::get);
        gauge(registry, "cor.ngsild.context.implicit", "ImplicitlyCreated @contexts.", null, stored::implicitCount);
        gauge(registry, "cor.ngsild.context.implicit.bytes", "Heap bytes the ImplicitlyCreated @contexts keep (estimated).", "bytes",
                stored::implicitBytes);
    }

    private void counter(MeterRegistry registry, String name, String help, LongAdder n) {
        FunctionCounter.builder(name, n, LongAdder::sum).description(help).register(registry);
    }

    private void gauge(MeterRegistry registry, String name, String help, String unit, Supplier<Number> value) {
        Gauge.builder(name, value).description(help).baseUnit(unit).strongReference(true).register(registry);
    }

    /** The counters, for tests and tools: hits, misses, downloads, failures, entries, bytes. */
    public Stats stats() {
        return new Stats(hits.sum(), misses.sum(), documents.downloads.sum(), documents.downloadFailures.sum(),
                documents.entries(), documents.bytes());
    }

    /** A snapshot of the cache's counters. */
    public record Stats(long hits, long misses, long downloads, long failures, int entries, long bytes) {
    }

    // ---------------------------------------------------------------- for JsonldContextsApi

    ContextDocuments documents() {
        return documents;
    }

    StoredContexts stored() {
        return stored;
    }

    InstantSource clock() {
        return clock;
    }

    long timeoutMs() {
        return timeoutMs;
    }

    /** The URL of a stored context: {@code origin}{@value StoredContexts#PATH}{@code id}, where {@link JsonldContextsApi} serves it. */
    static String urlOf(StoredContexts.Stored s, String origin) {
        return origin + StoredContexts.PATH + s.id;
    }

    /**
     * Checks a context a client wants hosted as far as it can without a download: its shape
     * (a URL, an object, null, or an array of those), and all of it if everything it names is at
     * hand.
     *
     * @throws NgsiLdException BadRequestData when it is invalid
     */
    void validate(JsonNode context) {
        try {
            build(ContextRef.body(context), documents::cachedOnly, false);
        } catch (ContextDocuments.NotCached e) {
            // the rest is checked when a request uses it
        }
    }

    /**
     * A request's {@code @context} is a URL, an object, null or an array of those (JSON-LD 1.1
     * § 4.1.2 step 5.3): checked before anything is downloaded for it.
     */
    private static void checkShape(JsonNode context) {
        for (JsonNode item : context.isArray() ? context : List.of(context)) {
            if (!(item.isTextual() || item.isObject() || item.isNull())) {
                throw ContextProcessor.invalid("invalid local context", "a @context entry must be a URL, an object or null, not " + item);
            }
        }
    }

    /** Forgets every processed context built from a document removed or replaced since (it is gone from them anyway). */
    void forgetProcessed() {
        long now = clock.millis();
        for (Map.Entry<ContextRef, LdContext> e : processed.entrySet()) {
            if (!e.getValue().usable(now)) {
                drop(e.getKey(), e.getValue());
            }
        }
    }

    // ---------------------------------------------------------------- inside

    /** The contexts that need no processing at all: none named, or a core URL in a {@code Link}. */
    private LdContext fast(ContextRef ref) {
        if (ref.isNone()) {
            return core;
        }
        String link = ref.linkUrl();
        return link != null ? coreLinks.get(link) : null;
    }

    private LdContext usableProcessed(ContextRef ref, long now) {
        LdContext c = processed.get(ref);
        if (c == null) {
            return null;
        }
        if (c.usable(now)) {
            return c;
        }
        drop(ref, c);
        return null;
    }

    private void drop(ContextRef ref, LdContext c) {
        if (processed.remove(ref, c)) {
            processedBytes.addAndGet(-c.retainedBytes());
        }
    }

    /**
     * Keeps {@code c} for the next request that names {@code ref}, within the bounds: in bytes
     * ({@link LdContext#retainedBytes()}) and in entries, the least recently used out first, down
     * to three quarters of the bound so that evictions are rare. What is dropped is processed
     * again when next needed, from the cached documents.
     */
    private void remember(ContextRef ref, LdContext c) {
        // the key outlives the request: its own copy of a body's tree (the echo is one already)
        LdContext old = processed.put(ref.body() == null ? ref : ContextRef.body(c.echo()), c);
        processedBytes.addAndGet(c.retainedBytes() - (old == null ? 0 : old.retainedBytes()));
        c.touch(clock.millis());
        if ((processedBytes.get() > maxProcessedBytes || processed.size() > maxProcessed)
                && evictingProcessed.compareAndSet(false, true)) {
            try {
                java.util.List<Map.Entry<ContextRef, LdContext>> all = new ArrayList<>(processed.entrySet());
                all.sort((a, b) -> Long.compare(a.getValue().lastUse, b.getValue().lastUse));
                for (Map.Entry<ContextRef, LdContext> e : all) {
                    if (processedBytes.get() <= maxProcessedBytes * 3 / 4 && processed.size() <= maxProcessed * 3 / 4) {
                        break;
                    }
                    if (e.getValue() != c) {
                        drop(e.getKey(), e.getValue());
                    }
                }
            } finally {
                evictingProcessed.set(false);
            }
        }
    }

    /** Counts a request that used {@code c}: on its documents, and as a hit unless it waited for one (a miss, counted already). */
    private void used(LdContext c, long now, boolean waited) {
        c.touch(now);
        if (c.sources.length == 0) {
            return;
        }
        c.used(now);
        if (!waited) {
            hits.increment();
        }
    }

    /**
     * Logs why the context a request named as {@code url} could not be used (the request was
     * answered the one LdContextNotAvailable of {@link ContextDocuments#unavailable}): once per URL
     * in a negative cache's time, as a failed download is.
     */
    private void report(String url, String why) {
        long now = clock.millis();
        Long last = reported.get(url);
        if (last != null && now - last < reportEveryMs) {
            return;
        }
        reported.put(url, now);
        if (reported.size() > maxReported) {
            reported.values().removeIf(t -> now - t >= reportEveryMs);
            Iterator<String> it = reported.keySet().iterator();
            while (reported.size() > maxReported && it.hasNext()) {
                it.next();
                it.remove();
            }
        }
        LOG.log(System.Logger.Level.WARNING, "the @context {0} was answered as not available: {1}", url, why);
    }

    /** Starts the downloads of the URLs a request names at its top level, so that they run at once. */
    private void prefetch(ContextRef ref) {
        JsonNode body = ref.body();
        if (body == null) {
            if (stored.byUrl(ref.linkUrl()) == null && !CoreContext.isCoreUrl(ref.linkUrl())) {
                documents.prefetch(ref.linkUrl());
            }
            return;
        }
        if (body.isArray()) {
            for (JsonNode item : body) {
                if (item.isTextual() && Iris.isAbsoluteIri(item.asText()) && !CoreContext.isCoreUrl(item.asText())
                        && stored.byUrl(item.asText()) == null) {
                    documents.prefetch(item.asText());
                }
            }
        }
    }

    /** Where {@link #build} takes a downloaded document from: the cache alone, or the cache and a download. */
    private interface DocSource {
        ContextDocuments.Doc load(String url);

        /** A context this broker served at {@code url} and serves no more, as a source; {@code null}: none. */
        default StoredContexts.Stored gone(String url) {
            return null;
        }
    }

    /** Processes what {@code ref} names, then the core; stored contexts come from here, the rest from {@code docs}. */
    private LdContext build(ContextRef ref, DocSource docs) {
        return build(ref, docs, true);
    }

    /** {@code inline}: a request's own inline context, held to the bounds of {@link #checkInline}. */
    private LdContext build(ContextRef ref, DocSource docs, boolean inline) {
        List<LdContext.Source> sources = new ArrayList<>(2);
        ContextProcessor p = new ContextProcessor(url -> {
            if (CoreContext.isCoreUrl(url)) {
                // only an @import gets here (a core URL as a context is skipped): the core is processed last, once
                return new ContextProcessor.Remote(JsonNodeFactory.instance.objectNode(), url);
            }
            StoredContexts.Stored s = stored.byUrl(url);
            if (s == null) {
                s = docs.gone(url);
            }
            if (s != null) {
                sources.add(new StoredContexts.Named(url, s));
                return new ContextProcessor.Remote(s.context, url);
            }
            ContextDocuments.Doc d = docs.load(url);
            sources.add(d);
            return new ContextProcessor.Remote(d.context, d.documentUrl);
        }, this::report);
        JsonNode local = ref.linkUrl() != null ? TextNode.valueOf(ref.linkUrl()) : ref.body();
        checkShape(local);
        if (inline && ref.body() != null) {
            checkInline(local);
        }
        ActiveContext user = p.process(new ActiveContext(null), local, null);
        boolean onlyCore = user.terms.isEmpty() && user.vocab == null && user.base == null && user.defaultLanguage == null
                && user.defaultDirection == null;
        // shared by every request that names the same context: a copy, whatever becomes of this request's tree
        JsonNode echo = ref.linkUrl() != null ? TextNode.valueOf(ref.linkUrl()) : ref.body().deepCopy();
        String link = ref.linkUrl() != null ? ref.linkUrl() : singleUrl(ref.body());
        LdContext.Source[] src = sources.toArray(new LdContext.Source[0]);
        // what it keeps beyond the core's: its echo, its sources, its entry in the processed contexts
        RetainedSize size = new RetainedSize(coreShared);
        size.json(echo);
        size.string(link);
        size.array(src.length);
        size.add(RetainedSize.object(2, 4) + 40);
        if (onlyCore) {
            return core.withOrigin(echo, link, src, size.bytes());
        }
        ActiveContext withCore = p.process(user, coreLocal, null);
        CompiledContext compiled = new CompiledContext(withCore, order, coreCompiled);
        compiled.addTo(size);
        return new LdContext(compiled, echo, link, false, src, size.bytes());
    }

    /**
     * A context a request writes inline is bounded: at most {@code maxInlineBytes} of JSON and
     * {@code maxInlineTerms} term definitions, checked before it is processed.
     *
     * @throws NgsiLdException PayloadTooLarge (413) naming the bound it passes
     */
    private void checkInline(JsonNode local) {
        int terms = 0;
        for (JsonNode item : local.isArray() ? local : List.of(local)) {
            if (item.isObject()) {
                for (Iterator<String> names = item.fieldNames(); names.hasNext();) {
                    if (!names.next().startsWith("@")) {
                        terms++;
                    }
                }
            }
        }
        if (terms > maxInlineTerms) {
            throw new NgsiLdException(ErrorType.PAYLOAD_TOO_LARGE, "the inline @context defines " + terms
                    + " terms, over the limit of " + maxInlineTerms + " (a larger one can be hosted: POST /jsonldContexts)");
        }
        long length = jsonLength(local, maxInlineBytes + 1L);
        if (length > maxInlineBytes) {
            throw new NgsiLdException(ErrorType.PAYLOAD_TOO_LARGE, "the inline @context is over the limit of " + maxInlineBytes
                    + " bytes of JSON (a larger one can be hosted: POST /jsonldContexts)");
        }
    }

    /** About how long {@code n} is as JSON text (its strings in UTF-16 units), counted no further than {@code stop}. */
    private static long jsonLength(JsonNode n, long stop) {
        if (n.isTextual()) {
            return n.textValue().length() + 2;
        }
        if (!n.isContainerNode()) {
            return n.toString().length();
        }
        long length = 2;
        if (n.isObject()) {
            for (Map.Entry<String, JsonNode> e : n.properties()) {
                length += e.getKey().length() + 4 + jsonLength(e.getValue(), stop - length);
                if (length > stop) {
                    return length;
                }
            }
        } else {
            for (JsonNode item : n) {
                length += 1 + jsonLength(item, stop - length);
                if (length > stop) {
                    return length;
                }
            }
        }
        return length;
    }

    /** The one URL a body's {@code @context} is, if it is one ({@code "url"} or {@code ["url"]}). */
    private static String singleUrl(JsonNode body) {
        if (body.isTextual()) {
            return body.asText();
        }
        if (body.isArray() && body.size() == 1 && body.get(0).isTextual()) {
            return body.get(0).asText();
        }
        return null;
    }

    /** Builds the context service; every setting has a default. */
    public static final class Builder {
        private CorRestClient client;
        private long timeoutMs = 5_000;
        private InstantSource clock = InstantSource.system();
        private ContextLimits limits = ContextLimits.defaults();
        private CompiledContext.TermOrder order = CompiledContext.TermOrder.SHORTEST_FIRST;
        private ContextKeeper keeper;

        private Builder() {
        }

        /** Where the Hosted contexts are kept beyond the process (default: nowhere, they live as long as it). */
        public Builder keeper(ContextKeeper keeper) {
            this.keeper = Objects.requireNonNull(keeper, "keeper");
            return this;
        }

        /** The client remote contexts are downloaded with (its own deadlines bound each download). */
        public Builder client(CorRestClient client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /** How long a request waits for the downloads of its context before LdContextNotAvailable (default 5 000 ms). */
        public Builder timeoutMs(long ms) {
            this.timeoutMs = positive("timeoutMs", ms);
            return this;
        }

        /** The clock of the TTLs and the negative cache (a test sets its own). */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** The bounds of the caches and of what one request may bring (default: {@link ContextLimits#defaults()}). */
        public Builder limits(ContextLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /** Tie-breaking as Titanium does it, for the oracle tests only. */
        Builder termOrder(CompiledContext.TermOrder order) {
            this.order = Objects.requireNonNull(order, "order");
            return this;
        }

        public LdContexts build() {
            return new LdContexts(this);
        }

        private static long positive(String name, long v) {
            if (v < 1) {
                throw new IllegalArgumentException(name + " must be >= 1: " + v);
            }
            return v;
        }
    }
}
