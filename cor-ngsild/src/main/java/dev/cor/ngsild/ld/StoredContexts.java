package dev.cor.ngsild.ld;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The {@code @context}s the broker hosts (ETSI GS CIM 009 § 5.13.1): "Hosted" ones a client added
 * ({@code POST /jsonldContexts}) and "ImplicitlyCreated" ones the broker made to give a URL to a
 * context that was given inline. Each belongs to the tenant it was created under, which alone
 * lists, serves and deletes it (§ 5.5.10). Its URL, though, is a URL like any other: a request of
 * any tenant that names it gets it, as it would get any context on the web, without a download.
 * With a {@link ContextKeeper}, the Hosted ones are kept beyond the process: each addition is
 * recorded before the context is visible, each removal after it is gone.
 * <p>
 * Lifetimes: a Hosted context lives until a client deletes it. An ImplicitlyCreated one is made by
 * whatever needed a URL for an inline context - a read's answer among them - so they are counted
 * in bytes ({@link #implicitBytes}) and {@link LdContexts} evicts the least recently used once
 * over its bound, except those a subscription or a registration relies on (it names their URL, or
 * its notifications and forwards link them): those live as long as it does. Thread-safe.
 */
final class StoredContexts {
    /** The kinds a stored context can be. */
    enum Kind {
        HOSTED("Hosted"), IMPLICITLY_CREATED("ImplicitlyCreated");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /**
     * A stored context as a processed context's source: with the URL the request named it by,
     * which a store keeps its document under ({@link LdContexts#remoteDocuments}).
     */
    record Named(String url, Stored stored) implements LdContext.Source {
        @Override
        public boolean usable(long now) {
            return stored.usable(now);
        }

        @Override
        public void used(long now) {
            stored.used(now);
        }
    }

    /** One stored context. */
    static final class Stored implements LdContext.Source {
        final String id;
        final String tenant;
        final Kind kind;
        /** The {@code @context} member's value. */
        final JsonNode context;
        final long createdAt;
        final LongAdder uses = new LongAdder();
        /** What it keeps on the heap, its entries in the maps included ({@link RetainedSize}). */
        final long weight;
        volatile long lastUsage;
        volatile boolean removed;

        Stored(String id, String tenant, Kind kind, JsonNode context, long createdAt) {
            this.id = id;
            this.tenant = tenant;
            this.kind = kind;
            this.context = context;
            this.createdAt = createdAt;
            this.lastUsage = createdAt;
            RetainedSize size = new RetainedSize();
            // itself, its counter, its entries in byId and implicit (the key record included)
            size.add(RetainedSize.object(5, 17) + RetainedSize.object(0, 8) + 2 * 40 + RetainedSize.object(2, 0));
            size.string(id);
            size.string(tenant);
            size.json(context);
            this.weight = size.bytes();
        }

        @Override
        public boolean usable(long now) {
            return !removed;
        }

        @Override
        public void used(long now) {
            uses.increment();
            if (now - lastUsage >= 1000) {
                lastUsage = now;
            }
        }
    }

    private record ImplicitKey(String tenant, JsonNode context) {
    }

    /** The document a stored context is served as: {@code {"@context": value}}. */
    static JsonNode document(JsonNode context) {
        com.fasterxml.jackson.databind.node.ObjectNode doc = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        doc.set("@context", context);
        return doc;
    }

    /** The path under which stored contexts are served, whatever the host. */
    static final String PATH = "/ngsi-ld/v1/jsonldContexts/";

    private final ConcurrentHashMap<String, Stored> byId = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<ImplicitKey, Stored> implicit = new ConcurrentHashMap<>();
    /** The bytes the ImplicitlyCreated ones keep. */
    private final AtomicLong implicitBytes = new AtomicLong();
    /** Where the Hosted contexts are kept beyond the process, or {@code null}. */
    private final ContextKeeper keeper;

    StoredContexts(ContextKeeper keeper) {
        this.keeper = keeper;
        if (keeper != null) {
            for (HostedContext c : keeper.attach(this::hosted)) {
                byId.put(c.id(), new Stored(c.id(), c.tenant(), Kind.HOSTED, c.context(), c.createdAt()));
            }
            // those other brokers over the same keeper add and remove: their ids are random, never this broker's
            keeper.followContexts(c -> byId.put(c.id(), new Stored(c.id(), c.tenant(), Kind.HOSTED, c.context(), c.createdAt())),
                    id -> {
                        Stored gone = byId.get(id);
                        if (gone != null && gone.kind == Kind.HOSTED) {
                            removeNow(gone);
                        }
                    });
        }
    }

    Stored host(String tenant, JsonNode context, long now) {
        Stored s = new Stored(ContextDocuments.newLocalId(), tenant, Kind.HOSTED, context, now);
        if (keeper == null) {
            byId.put(s.id, s);
        } else {
            keeper.host(new HostedContext(s.id, tenant, context, now), () -> byId.put(s.id, s));
        }
        return s;
    }

    /** The Hosted contexts now, as a keeper records them. */
    private List<HostedContext> hosted() {
        List<HostedContext> r = new ArrayList<>();
        for (Stored s : byId.values()) {
            if (s.kind == Kind.HOSTED) {
                r.add(new HostedContext(s.id, s.tenant, s.context, s.createdAt));
            }
        }
        return r;
    }

    /**
     * The ImplicitlyCreated context of {@code tenant} for {@code context}: the one made before for
     * the same value (now used again), or a new one; {@code made[0]} says which.
     */
    Stored implicitFor(String tenant, JsonNode context, long now, boolean[] made) {
        Stored s = implicit.compute(new ImplicitKey(tenant, context), (k, old) -> {
            if (old != null && !old.removed) {
                return old;
            }
            Stored fresh = new Stored(ContextDocuments.newLocalId(), tenant, Kind.IMPLICITLY_CREATED, context, now);
            byId.put(fresh.id, fresh);
            implicitBytes.addAndGet(fresh.weight);
            made[0] = true;
            return fresh;
        });
        s.used(now);
        return s;
    }

    /** The ImplicitlyCreated context of {@code tenant} for {@code context} if there is one; never makes one. */
    Stored implicitOf(String tenant, JsonNode context) {
        Stored s = implicit.get(new ImplicitKey(tenant, context));
        return s == null || s.removed ? null : s;
    }

    /** The bytes the ImplicitlyCreated contexts keep. */
    long implicitBytes() {
        return implicitBytes.get();
    }

    /** How many ImplicitlyCreated contexts there are. */
    int implicitCount() {
        return implicit.size();
    }

    /**
     * Removes the least recently used ImplicitlyCreated contexts that are not {@code pinned} until
     * those left that are not weigh at most {@code keepBytes}.
     */
    void evictImplicit(Set<Stored> pinned, long keepBytes) {
        List<Stored> candidates = new ArrayList<>();
        long unpinned = 0;
        for (Stored s : implicit.values()) {
            if (!pinned.contains(s)) {
                candidates.add(s);
                unpinned += s.weight;
            }
        }
        candidates.sort((a, b) -> Long.compare(a.lastUsage, b.lastUsage));
        for (Stored s : candidates) {
            if (unpinned <= keepBytes) {
                return;
            }
            if (removeNow(s)) {
                unpinned -= s.weight;
            }
        }
    }

    /** Every ImplicitlyCreated context now. */
    Collection<Stored> implicitOnes() {
        return implicit.values();
    }

    /** The stored context with this local id, any tenant's; {@code null} if none. */
    Stored get(String id) {
        return byId.get(id);
    }

    /** The stored context whose URL {@code url} is ({@code ...}{@value #PATH}{@code <id>}), any host; {@code null} if none. */
    Stored byUrl(String url) {
        int at = url.indexOf(PATH);
        if (at < 0) {
            return null;
        }
        String id = url.substring(at + PATH.length());
        int end = id.indexOf('?');
        return byId.get(end >= 0 ? id.substring(0, end) : id);
    }

    boolean remove(Stored s) {
        if (keeper != null && s.kind == Kind.HOSTED) {
            return keeper.remove(s.id, () -> removeNow(s));
        }
        return removeNow(s);
    }

    private boolean removeNow(Stored s) {
        if (!byId.remove(s.id, s)) {
            return false;
        }
        s.removed = true;
        if (s.kind == Kind.IMPLICITLY_CREATED && implicit.remove(new ImplicitKey(s.tenant, s.context), s)) {
            implicitBytes.addAndGet(-s.weight);
        }
        return true;
    }

    /** The contexts stored under {@code tenant}. */
    List<Stored> of(String tenant) {
        List<Stored> r = new ArrayList<>();
        for (Stored s : byId.values()) {
            if (Objects.equals(s.tenant, tenant)) {
                r.add(s);
            }
        }
        r.sort((a, b) -> Long.compare(a.createdAt, b.createdAt));
        return r;
    }
}
