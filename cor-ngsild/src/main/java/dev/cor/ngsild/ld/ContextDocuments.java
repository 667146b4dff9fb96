package dev.cor.ngsild.ld;

import java.io.IOException;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.base.CorCo;
import dev.cor.base.CorCoCancelledException;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTimeoutException;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.rest.CorRestJson;
import dev.cor.rest.client.CorRestClient;
import dev.cor.rest.client.CorRestClientException;
import dev.cor.rest.client.CorRestClientRequest;
import dev.cor.rest.client.CorRestClientResponse;

/**
 * The cache of remote {@code @context} documents (the "Cached" kind of ETSI GS CIM 009 § 5.13.1):
 * what was downloaded, for how long it is good (a TTL, shortened by the server's
 * {@code Cache-Control}), bounded in entries and bytes (least recently used out first); what
 * failed, for a short while (the negative cache: a broken URL is not fetched per request, and a
 * failure is never kept as a document); and what is being downloaded.
 * <p>
 * <b>A download's owner is the request.</b> The first request that needs a URL starts its
 * download - inside a coroutine as a child coroutine of the same loop, so that it runs on while
 * the requests wait with their own deadlines; on a worker in the worker itself. Every other
 * request that needs the URL meanwhile joins that download: a coroutine parks until the download
 * wakes it ({@link CorCo#wake()} from whichever thread finished it goes through its loop's
 * inbox), a worker blocks on it with its deadline. Nothing here says "cyclic": cycles are a
 * property of one request's processing ({@link ContextProcessor}), never of who downloads what.
 * No lock is held anywhere: concurrent maps and one {@link CompletableFuture} per download.
 * <p>
 * Thread-safe: every loop and worker shares one.
 */
final class ContextDocuments {
    static final String ACCEPT = "application/ld+json, application/json";
    private static final System.Logger LOG = System.getLogger(ContextDocuments.class.getName());

    /** A downloaded document: its {@code @context} member, where it came from, until when it is good. */
    static final class Doc implements LdContext.Source {
        final String url;
        final String localId;
        final JsonNode context;
        /** The URL it was finally read from (after redirects): what its relative references resolve against. */
        final String documentUrl;
        /** Its size as downloaded. */
        final int bytes;
        /** What it keeps on the heap ({@link RetainedSize}): what the cache's byte bound counts. */
        final long weight;
        final long createdAt;
        final long expiresAt;
        final LongAdder uses = new LongAdder();
        volatile long lastUsage;
        volatile boolean removed;

        Doc(String url, String localId, JsonNode context, String documentUrl, int bytes, long createdAt, long expiresAt) {
            this.url = url;
            this.localId = localId;
            this.context = context;
            this.documentUrl = documentUrl;
            this.bytes = bytes;
            RetainedSize size = new RetainedSize();
            size.add(RetainedSize.object(4, 29) + RetainedSize.object(0, 8)); // itself and its counter
            size.string(url);
            size.string(localId);
            size.string(documentUrl);
            size.json(context);
            this.weight = size.bytes();
            this.createdAt = createdAt;
            this.expiresAt = expiresAt;
            this.lastUsage = createdAt;
        }

        @Override
        public boolean usable(long now) {
            return !removed && now < expiresAt;
        }

        @Override
        public void used(long now) {
            uses.increment();
            // a write per request would bounce the cache line between loops: a second's precision is enough for LRU
            if (now - lastUsage >= 1000) {
                lastUsage = now;
            }
        }
    }

    /** A failure kept for a short while, answered again without a new download. */
    record Failure(NgsiLdException error, long expiresAt) {
    }

    /** One download in flight, joined by every request that needs the URL meanwhile. */
    static final class Download {
        final String url;
        final CompletableFuture<Doc> result = new CompletableFuture<>();

        Download(String url) {
            this.url = url;
        }
    }

    /** Thrown by {@link #cachedOnly}: the URL is neither cached nor known broken - it must be downloaded. */
    static final class NotCached extends RuntimeException {
        private static final long serialVersionUID = 1L;
        static final NotCached INSTANCE = new NotCached();

        private NotCached() {
            super("not cached", null, false, false);
        }
    }

    private final CorRestClient client;
    private final InstantSource clock;
    private final long ttlMs;
    private final long negativeTtlMs;
    private final int maxEntries;
    private final long maxBytes;
    private final int maxDocumentBytes;
    private final int maxRedirects;

    private final ConcurrentHashMap<String, Doc> docs = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Failure> failures = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Download> inflight = new ConcurrentHashMap<>();
    private final AtomicLong bytes = new AtomicLong();
    final LongAdder downloads = new LongAdder();
    final LongAdder downloadFailures = new LongAdder();
    final LongAdder negativeHits = new LongAdder();
    final LongAdder evictions = new LongAdder();

    ContextDocuments(CorRestClient client, InstantSource clock, long ttlMs, long negativeTtlMs, int maxEntries, long maxBytes,
            int maxDocumentBytes, int maxRedirects) {
        new ContextDownloadEvent().isEnabled(); // JFR takes the event class in here, not on a loop at the first download
        this.client = client;
        this.clock = clock;
        this.ttlMs = ttlMs;
        this.negativeTtlMs = negativeTtlMs;
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
        this.maxDocumentBytes = maxDocumentBytes;
        this.maxRedirects = maxRedirects;
    }

    // ---------------------------------------------------------------- looking, never waiting

    /**
     * The document of {@code url} if it is cached and fresh; a failure kept for it is thrown; else
     * {@link NotCached}. A probe: a request probes before it resolves, so only {@link #get} - the
     * look-up that answers it - counts a negative hit, once per request.
     */
    Doc cachedOnly(String url) {
        return cachedOnly(url, false);
    }

    private Doc cachedOnly(String url, boolean countNegativeHit) {
        long now = clock.millis();
        Doc d = docs.get(url);
        if (d != null && d.usable(now)) {
            return d;
        }
        Failure f = failures.get(url);
        if (f != null && now < f.expiresAt) {
            if (countNegativeHit) {
                negativeHits.increment();
            }
            throw f.error;
        }
        throw NotCached.INSTANCE;
    }

    /** The document cached for {@code url} or its local id, fresh or not; {@code null} if none. */
    Doc find(String urlOrLocalId) {
        Doc d = docs.get(urlOrLocalId);
        if (d != null) {
            return d;
        }
        for (Doc x : docs.values()) {
            if (x.localId.equals(urlOrLocalId)) {
                return x;
            }
        }
        return null;
    }

    List<Doc> all() {
        return new ArrayList<>(docs.values());
    }

    int entries() {
        return docs.size();
    }

    long bytes() {
        return bytes.get();
    }

    int negativeEntries() {
        return failures.size();
    }

    // ---------------------------------------------------------------- getting, maybe waiting

    /**
     * The document of {@code url}, downloading it - or joining the download another request
     * started - if it is not cached. Inside a coroutine the wait yields; on another thread it
     * blocks; on a loop thread outside a coroutine it never waits (a stale copy is used if there
     * is one, else LdContextNotAvailable).
     *
     * @param deadline the {@link System#nanoTime()} by which the document must be here
     * @param waited   set to {@code true} when a download had to be waited for
     * @throws NgsiLdException LdContextNotAvailable (it cannot be had in time), BadRequestData (it is not a context)
     */
    Doc get(String url, long deadline, boolean[] waited) {
        try {
            return cachedOnly(url, true);
        } catch (NotCached e) {
            // a download it is
        }
        if (CorCoLoop.current() != null && CorCo.current() == null) {
            // The caller checked needsDownload() on this loop, and the document has expired or been
            // evicted since: a loop never waits, so a stale copy is better than no answer.
            Doc stale = docs.get(url);
            if (stale != null) {
                return stale;
            }
            throw unavailable(url, "it is not cached and a request running on the loop thread may not wait for its download");
        }
        waited[0] = true;
        return await(join(url), deadline);
    }

    /** Starts the download of {@code url} if nothing has it yet (cached, known broken, in flight); never waits. */
    void prefetch(String url) {
        if (CorCo.current() == null) {
            return; // only a coroutine can start a download without waiting for it
        }
        long now = clock.millis();
        Doc d = docs.get(url);
        Failure f = failures.get(url);
        if ((d != null && d.usable(now)) || (f != null && now < f.expiresAt) || inflight.containsKey(url)) {
            return;
        }
        join(url);
    }

    /**
     * Downloads {@code url} again, whatever is cached (ETSI GS CIM 009 § 5.13.5 "reload"): the new
     * document replaces the old one only if it is good; a failure leaves the old one in place.
     */
    Doc reload(String url, long deadline) {
        Download dl = new Download(url);
        Download running = inflight.putIfAbsent(url, dl);
        if (running != null) {
            return await(running, deadline);
        }
        start(dl, false);
        return await(dl, deadline);
    }

    /** Removes the document of {@code url} (or of that local id). */
    boolean remove(String urlOrLocalId) {
        Doc d = find(urlOrLocalId);
        if (d == null || !docs.remove(d.url, d)) {
            return false;
        }
        d.removed = true;
        bytes.addAndGet(-d.weight);
        return true;
    }

    private Download join(String url) {
        Download running = inflight.get(url);
        if (running != null) {
            return running;
        }
        Download mine = new Download(url);
        running = inflight.putIfAbsent(url, mine);
        if (running != null) {
            return running;
        }
        // a download may have ended between the look-up and the claim
        Doc d = docs.get(url);
        if (d != null && d.usable(clock.millis())) {
            inflight.remove(url, mine);
            mine.result.complete(d);
            return mine;
        }
        start(mine, true);
        return mine;
    }

    /**
     * Runs {@code dl}: inside a coroutine as a child coroutine of its loop (so it goes on while its
     * requests wait with their own deadlines, and after one of them gave up); elsewhere, or if the
     * loop refuses a child, right here.
     */
    private void start(Download dl, boolean negativeCache) {
        downloads.increment();
        if (CorCo.current() != null) {
            CorCo child = CorCo.start(() -> {
                run(dl, negativeCache);
                return null;
            }, null);
            if (child != null) {
                return;
            }
        }
        run(dl, negativeCache);
    }

    private void run(Download dl, boolean negativeCache) {
        ContextDownloadEvent event = new ContextDownloadEvent();
        event.begin();
        event.url = dl.url;
        event.outcome = "ok";
        try {
            Doc d = fetch(dl.url);
            event.bytes = d.bytes;
            insert(d);
            dl.result.complete(d);
        } catch (NgsiLdException e) {
            String why = reasonOf(e) != null ? reasonOf(e).getMessage() : e.detail();
            event.outcome = why;
            downloadFailures.increment();
            if (negativeCache) {
                remember(dl.url, e);
            }
            // once per download: the negative cache keeps a broken URL from being tried (and logged) per request;
            // the reason is the operator's, the requests get the one answer of unavailable()
            LOG.log(System.Logger.Level.WARNING, "the @context {0} is not available: {1} (answered for {2} ms without a new"
                    + " download)", dl.url, why, negativeCache ? negativeTtlMs : 0);
            dl.result.completeExceptionally(e);
        } catch (CorCoCancelledException e) {
            event.outcome = "cancelled: the broker is stopping";
            dl.result.completeExceptionally(unavailable(dl.url, "the broker is stopping"));
            throw e;
        } catch (RuntimeException | Error e) {
            event.outcome = e.toString();
            downloadFailures.increment();
            LOG.log(System.Logger.Level.ERROR, "the download of the @context " + dl.url + " failed unexpectedly", e);
            dl.result.completeExceptionally(unavailable(dl.url, "its download failed unexpectedly: " + e));
        } finally {
            inflight.remove(dl.url, dl);
            event.commit(); // a no-op unless a recording enables it
        }
    }

    /** Waits for {@code dl} until {@code deadline}: parked in a coroutine, blocked elsewhere ({@link CorCo#await}). */
    private Doc await(Download dl, long deadline) {
        try {
            return CorCo.await(dl.result, Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime() + 999_999)));
        } catch (CorCoTimeoutException e) {
            throw timeout(dl.url, deadline);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unavailable(dl.url, "the wait for its download was interrupted");
        } catch (Exception e) {
            throw rethrow(e);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    // ---------------------------------------------------------------- the download itself

    private Doc fetch(String url) {
        if (client == null) {
            throw unavailable(url, "the broker has no HTTP client to download it with");
        }
        String current = url;
        for (int hop = 0;; hop++) {
            if (!(current.startsWith("http://") || current.startsWith("https://"))) {
                throw unavailable(url, "it is not an http(s) URL" + (current.equals(url) ? "" : " (redirected to " + current + ")"));
            }
            CorRestClientRequest request;
            try {
                request = CorRestClientRequest.builder("GET", current).header("Accept", ACCEPT).build();
            } catch (IllegalArgumentException e) {
                throw unavailable(url, "it is not a URL the broker can fetch: " + e.getMessage());
            }
            CorRestClientResponse response;
            try {
                response = client.send(request);
            } catch (CorRestClientException e) {
                String why = describe(e) + (current.equals(url) ? "" : " (redirected to " + current + ")");
                if (e.kind() == CorRestClientException.Kind.DENIED || e.tlsFailure() != null) {
                    // what the operator decided (the policy) or can fix (a trust, a certificate) is said;
                    // the policy's refusal is one text, whether the URL or a redirect led there
                    throw unavailable(url, why, e.reason("its server", 0));
                }
                throw unavailable(url, why);
            }
            int status = response.status();
            if (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
                String location = response.header("Location");
                if (location == null) {
                    throw unavailable(url, "it answered " + status + " with no Location");
                }
                if (hop >= maxRedirects) {
                    throw unavailable(url, "it redirected more than " + maxRedirects + " times");
                }
                String next = Iris.resolve(current, location.trim());
                if (next == null) {
                    throw unavailable(url, "it redirected to \"" + location + "\", which is not a URL");
                }
                current = next;
                continue;
            }
            if (status < 200 || status > 299) {
                throw unavailable(url, "it answered " + status + (response.reason().isEmpty() ? "" : " " + response.reason()));
            }
            byte[] body = response.body();
            if (body.length > maxDocumentBytes) {
                throw unavailable(url, "it is " + body.length + " bytes, over the limit of " + maxDocumentBytes);
            }
            JsonNode doc;
            try {
                doc = CorRestJson.mapper().readTree(body);
            } catch (IOException e) {
                throw unavailable(url, "it is not JSON: " + firstLine(e.getMessage()));
            }
            if (doc == null || !doc.isObject() || !doc.has("@context")) {
                throw unavailable(url, "it is not a JSON-LD context: it has no top-level @context member");
            }
            long now = clock.millis();
            return new Doc(url, newLocalId(), doc.get("@context"), current, body.length, now, now + freshness(response));
        }
    }

    /** How long a response may be used: the TTL, or less if its {@code Cache-Control} says so (RFC 9111 § 5.2.2). */
    private long freshness(CorRestClientResponse response) {
        String cc = response.header("Cache-Control");
        if (cc == null) {
            return ttlMs;
        }
        long maxAge = -1;
        long sMaxAge = -1;
        for (String directive : cc.toLowerCase(Locale.ROOT).split(",")) {
            String d = directive.trim();
            if (d.equals("no-store") || d.equals("no-cache") || d.equals("private")) {
                return 0;
            }
            if (d.startsWith("max-age=")) {
                maxAge = seconds(d.substring(8));
            } else if (d.startsWith("s-maxage=")) {
                sMaxAge = seconds(d.substring(9));
            }
        }
        long age = sMaxAge >= 0 ? sMaxAge : maxAge; // a shared cache takes s-maxage first
        return age >= 0 ? Math.min(ttlMs, age * 1000) : ttlMs;
    }

    private static long seconds(String s) {
        try {
            return Math.max(0, Long.parseLong(s.replace("\"", "").trim()));
        } catch (NumberFormatException e) {
            return 0; // an unreadable freshness is no freshness (RFC 9111 § 4.2.1)
        }
    }

    private void insert(Doc d) {
        Doc old = docs.put(d.url, d);
        bytes.addAndGet(d.weight);
        if (old != null) {
            old.removed = true;
            bytes.addAndGet(-old.weight);
        }
        failures.remove(d.url);
        evict();
    }

    /** Evicts the least recently used documents (expired ones first) while over a bound. */
    private void evict() {
        while (docs.size() > maxEntries || bytes.get() > maxBytes) {
            long now = clock.millis();
            Doc victim = null;
            for (Doc x : docs.values()) {
                if (victim == null || (!x.usable(now) && victim.usable(now))
                        || (x.usable(now) == victim.usable(now) && x.lastUsage < victim.lastUsage)) {
                    victim = x;
                }
            }
            if (victim == null) {
                return;
            }
            if (docs.remove(victim.url, victim)) {
                victim.removed = true;
                bytes.addAndGet(-victim.weight);
                evictions.increment();
            }
        }
    }

    private void remember(String url, NgsiLdException e) {
        long now = clock.millis();
        failures.put(url, new Failure(e, now + negativeTtlMs));
        if (failures.size() > maxEntries) {
            failures.values().removeIf(f -> f.expiresAt <= now);
            var it = failures.keySet().iterator();
            while (failures.size() > maxEntries && it.hasNext()) {
                it.next();
                it.remove();
            }
        }
    }

    static String newLocalId() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return new UUID((r.nextLong() & ~0xF000L) | 0x4000L, (r.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L).toString();
    }

    /**
     * The one answer for a context that cannot be had or used - it could not be downloaded (refused,
     * no answer in time, not a 2xx, too large) or is no valid JSON-LD context (not JSON, no
     * {@code @context}, invalid): LdContextNotAvailable with the same detail, naming {@code url}
     * alone. Telling these apart, or quoting what was fetched, would hand any client what the
     * broker can reach and read (the first token of a private document, which ports answer). The
     * reason, {@code why}, rides along for the operator's log ({@link #reasonOf}) and is never
     * answered.
     */
    static NgsiLdException unavailable(String url, String why) {
        return unavailable(url, why, "it cannot be downloaded, or it is not a valid JSON-LD context (the broker's log says which)");
    }

    /**
     * {@link #unavailable(String, String)} whose answer says {@code said}: the outbound policy's
     * refusal, or which TLS check failed - the client's words, never the peer's.
     */
    static NgsiLdException unavailable(String url, String why, String said) {
        return new NgsiLdException(ErrorType.LD_CONTEXT_NOT_AVAILABLE, "the @context " + url + " is not available: " + said,
                new Reason(url, why));
    }

    /** The reason {@link #unavailable} kept with {@code e}, or {@code null} when it is another error. */
    static Reason reasonOf(NgsiLdException e) {
        return e.getCause() instanceof Reason r ? r : null;
    }

    /** Why the context at {@code url} was unavailable: carried for the operator's log only, never answered. */
    static final class Reason extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String url;

        Reason(String url, String why) {
            super(why, null, false, false);
            this.url = url;
        }
    }

    private static NgsiLdException timeout(String url, long deadline) {
        return unavailable(url, "its download did not end in time");
    }

    /** Why a download failed, for the log. */
    private static String describe(CorRestClientException e) {
        return switch (e.kind()) {
            case TIMEOUT -> "its server did not answer in time (" + e.getMessage() + ")";
            case REFUSED -> "its server refused the connection (" + e.getMessage() + ")";
            case RESOLVE -> "its host name does not resolve (" + e.getMessage() + ")";
            case TOO_LARGE -> "it is over the size limit (" + e.getMessage() + ")";
            default -> e.getMessage();
        };
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
