package dev.cor.ngsild.store.durable;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;

import dev.cor.ngsild.store.ChunkSummary;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.store.TemporalEntity;
import dev.cor.ngsild.model.TemporalInstance;

/**
 * One entity's history in the heap: its head (types, scopes, times), and per attribute a series -
 * the sparse index of its chunks ({@link ChunkState}: where the newest version lies on disk, or its
 * content while it waits for the history writer) and the tail of recent instances. Every field is
 * guarded by this object's monitor, held only for short in-heap work (no I/O, no wait): by the
 * writers of the entity, the history writer installing what it wrote, and readers copying what
 * they read. {@link DurableTemporalStore} drives it.
 */
final class EntityHistory {
    /** Where the newest written version of a chunk lies. Immutable. */
    record ChunkRef(long segment, long offset, int length) {
    }

    /**
     * One chunk: its number, the instance numbers it covers, its version (the last journal record
     * of the entity its content reflects), its ranges, where it is written, its content while
     * that is newer than the written one ({@code null} once written), and the summary of that
     * content an aggregation takes instead of reading it ({@code null}: none - it cannot have one,
     * or it was written before chunks carried one). Immutable: a change makes a new one, with
     * the summary of its new content.
     */
    record ChunkState(long id, long minN, long maxN, long version, HistoryFormat.Ranges ranges, ChunkRef ref,
            List<TemporalInstance> pending, ChunkSummary summary) {
    }

    /** A chunk's content as an edit read it, with the version it read. */
    record Loaded(long version, List<TemporalInstance> content) {
    }

    /** One attribute's history. Guarded by the entity's monitor. */
    static final class Series {
        final String attribute;
        final ArrayList<ChunkState> chunks = new ArrayList<>();
        ArrayList<TemporalInstance> tail = new ArrayList<>();
        long tailBytes;
        /** The greatest instance number sealed into a chunk: a replayed instance up to it is in the segments. */
        long sealedMaxN;

        Series(String attribute) {
            this.attribute = attribute;
        }

        boolean empty() {
            if (!tail.isEmpty()) {
                return false;
            }
            for (ChunkState c : chunks) {
                if (c.ranges().count() > 0) {
                    return false;
                }
            }
            return true;
        }

        int indexOf(long chunkId) {
            int lo = 0;
            int hi = chunks.size() - 1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                long id = chunks.get(mid).id();
                if (id < chunkId) {
                    lo = mid + 1;
                } else if (id > chunkId) {
                    hi = mid - 1;
                } else {
                    return mid;
                }
            }
            return -1;
        }
    }

    final String tenant;
    final String id;
    /** Taken out of its tenant's map: a writer that locked it looks the entity up again. */
    boolean removed;
    /** Whether it has a head: recorded, and not deleted since. */
    boolean exists;
    List<String> types = List.of();
    List<String> scopes = List.of();
    long createdAt;
    long modifiedAt;
    long deletedAt = TemporalInstance.NO_TIME;
    /** The last journal record applied to it. */
    long lastSeq;
    /** The version of the head read from the segments: a replayed record up to it leaves the head alone. */
    long headVersion;
    /** The greatest version of a frame of it the history writer wrote. */
    long writtenVersion;
    final TreeMap<String, Series> series = new TreeMap<>();
    private TemporalEntity cached;

    EntityHistory(String tenant, String id) {
        this.tenant = tenant;
        this.id = id;
    }

    HistoryFormat.Head head() {
        return new HistoryFormat.Head(types, scopes, createdAt, modifiedAt, deletedAt);
    }

    void head(HistoryFormat.Head h, long version) {
        types = h.types();
        scopes = h.scopes();
        createdAt = h.createdAt();
        modifiedAt = h.modifiedAt();
        deletedAt = h.deletedAt();
        exists = true;
        headVersion = version;
        lastSeq = Math.max(lastSeq, version);
        cached = null;
    }

    /** Its temporal head, or {@code null} when it has none. */
    TemporalEntity temporalEntity() {
        if (!exists) {
            return null;
        }
        if (cached == null) {
            Set<String> attrs = new HashSet<>();
            for (Series s : series.values()) {
                if (!s.empty()) {
                    attrs.add(s.attribute);
                }
            }
            cached = new TemporalEntity(id, types, scopes, attrs, createdAt, modifiedAt, deletedAt);
        }
        return cached;
    }

    /** Whether nothing of it is left: no head, no instance, no chunk waiting to be written. */
    boolean gone() {
        if (exists) {
            return false;
        }
        for (Series s : series.values()) {
            if (!s.tail.isEmpty() || !s.chunks.isEmpty()) {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- records

    /**
     * Applies recorded instances (journal record {@code seq}): the head, unless the segments hold
     * a newer one, and each instance not sealed yet to its series' tail, sealing a full tail.
     */
    void record(HistoryOp.Recorded op, long seq, DurableTemporalStore store) {
        if (seq > headVersion) {
            if (op.types() != null && !op.types().equals(types)) { // the same types: nothing to merge
                LinkedHashSet<String> t = new LinkedHashSet<>(op.types());
                t.addAll(types);
                types = List.copyOf(t);
            }
            if (op.scopes() != null) {
                scopes = op.scopes();
            }
            long at = time(op);
            if (!exists) {
                createdAt = at;
            }
            modifiedAt = Math.max(modifiedAt, at);
            deletedAt = op.deletedAt();
            exists = true;
        }
        lastSeq = Math.max(lastSeq, seq);
        cached = null;
        for (TemporalInstance i : op.instances()) {
            Series s = series.computeIfAbsent(i.attribute(), Series::new);
            long n = HistoryFormat.number(i.instanceId());
            if (n <= s.sealedMaxN) {
                continue; // replayed, and already in a chunk
            }
            long b = HistoryFormat.estimate(i);
            s.tail.add(i);
            s.tailBytes += b;
            store.tailHeap.addAndGet(b);
            if (s.tail.size() >= DurableTemporalStore.CHUNK_INSTANCES || s.tailBytes >= DurableTemporalStore.CHUNK_BYTES) {
                seal(s, store);
            }
        }
    }

    /** The time of a record: its latest instance's, or its deletion's, or now. */
    private static long time(HistoryOp.Recorded op) {
        long t = op.deletedAt();
        for (TemporalInstance i : op.instances()) {
            t = Math.max(t, Math.max(i.value().createdAt(), i.value().modifiedAt()));
        }
        return t == TemporalInstance.NO_TIME ? System.currentTimeMillis() : t;
    }

    /** Seals a series' tail into a chunk for the history writer. */
    void seal(Series s, DurableTemporalStore store) {
        if (s.tail.isEmpty()) {
            return;
        }
        List<TemporalInstance> content = List.copyOf(s.tail);
        long minN = HistoryFormat.number(content.getFirst().instanceId());
        long maxN = HistoryFormat.number(content.getLast().instanceId());
        ChunkState c = new ChunkState(store.nextChunk.getAndIncrement(), minN, maxN, lastSeq,
                HistoryFormat.Ranges.of(content, s.tailBytes), null, content, ChunkSummary.of(content));
        s.chunks.add(c);
        s.sealedMaxN = Math.max(s.sealedMaxN, maxN);
        store.tailHeap.addAndGet(-s.tailBytes);
        store.pendingHeap.addAndGet(s.tailBytes);
        s.tail = new ArrayList<>();
        s.tailBytes = 0;
        store.enqueue(new DurableTemporalStore.ChunkJob(this, s.attribute, c.id()));
    }

    // ---------------------------------------------------------------- edits

    /** The chunks an edit must read before it takes the lock: written ones whose content is not in the heap. */
    List<ChunkState> toRead(HistoryOp op, long filterSeq) {
        List<ChunkState> out = new ArrayList<>();
        String attribute = switch (op) {
            case HistoryOp.InstanceModified m -> m.attribute();
            case HistoryOp.InstanceDeleted d -> d.attribute();
            case HistoryOp.AttributeDeleted d when !d.all() -> d.attribute();
            default -> null;
        };
        Series s = attribute == null ? null : series.get(attribute);
        if (s == null) {
            return out;
        }
        long n = switch (op) {
            case HistoryOp.InstanceModified m -> m.n();
            case HistoryOp.InstanceDeleted d -> d.n();
            default -> -1;
        };
        for (ChunkState c : s.chunks) {
            if (c.pending() == null && c.version() < filterSeq && c.ranges().count() > 0
                    && (n < 0 || (c.minN() <= n && n <= c.maxN()))) {
                out.add(c);
            }
        }
        return out;
    }

    /**
     * Applies an edit: to the chunks whose version is below {@code filterSeq} (all of them but
     * in a replay) and to the tail. {@code loaded} holds the content read of the chunks
     * {@link #toRead} named, by chunk number and version; a chunk whose version changed since
     * makes it answer {@code null} (read again). When the edit changes something it takes its
     * journal record's number from {@code seq} first, then changes; it answers whether it did.
     */
    Boolean edit(HistoryOp op, long filterSeq, Map<Long, Loaded> loaded, LongSupplier seq,
            DurableTemporalStore store) {
        if (op instanceof HistoryOp.EntityDeleted) {
            boolean had = exists || !gone();
            if (!had) {
                return false;
            }
            long y = seq.getAsLong();
            boolean chunks = false;
            for (Series s : series.values()) {
                chunks |= dropSeries(s, filterSeq, store);
            }
            if (y > headVersion) {
                exists = false;
                types = List.of();
                scopes = List.of();
                createdAt = 0;
                modifiedAt = 0;
                deletedAt = TemporalInstance.NO_TIME;
            }
            lastSeq = Math.max(lastSeq, y);
            series.values().removeIf(s -> s.chunks.isEmpty() && s.tail.isEmpty() && !store.replaying());
            cached = null;
            if (chunks) {
                store.enqueue(new DurableTemporalStore.GoneJob(tenant, id, null, y));
            }
            return true;
        }
        String attribute;
        long n = -1;
        switch (op) {
            case HistoryOp.AttributeDeleted d -> attribute = d.attribute();
            case HistoryOp.InstanceModified m -> {
                attribute = m.attribute();
                n = m.n();
            }
            case HistoryOp.InstanceDeleted d -> {
                attribute = d.attribute();
                n = d.n();
            }
            default -> throw new IllegalArgumentException(op.toString());
        }
        Series s = series.get(attribute);
        if (s == null) {
            return false;
        }
        if (op instanceof HistoryOp.AttributeDeleted d && d.all()) {
            if (s.empty()) {
                return false;
            }
            boolean hadInstances = true;
            long y = seq.getAsLong();
            if (dropSeries(s, filterSeq, store)) {
                store.enqueue(new DurableTemporalStore.GoneJob(tenant, id, attribute, y));
            }
            lastSeq = Math.max(lastSeq, y);
            cached = null;
            return hadInstances;
        }
        // the new content of each chunk it changes, and of the tail
        Map<Integer, List<TemporalInstance>> changed = new TreeMap<>();
        for (int k = 0; k < s.chunks.size(); k++) {
            ChunkState c = s.chunks.get(k);
            if (c.version() >= filterSeq || c.ranges().count() == 0 || (n >= 0 && (n < c.minN() || n > c.maxN()))) {
                continue;
            }
            List<TemporalInstance> content = c.pending();
            if (content == null) {
                Loaded l = loaded.get(c.id());
                if (l == null || l.version() != c.version()) {
                    return null; // written or changed since it was read
                }
                content = l.content();
            }
            List<TemporalInstance> next = change(content, op);
            if (next != content) {
                changed.put(k, next);
            }
        }
        List<TemporalInstance> tail = change(s.tail, op);
        if (changed.isEmpty() && tail == s.tail) {
            return false;
        }
        long y = seq.getAsLong();
        lastSeq = Math.max(lastSeq, y);
        for (var e : changed.entrySet()) {
            ChunkState c = s.chunks.get(e.getKey());
            long bytes = estimate(e.getValue());
            if (c.pending() != null) {
                store.pendingHeap.addAndGet(-c.ranges().bytes());
            }
            store.pendingHeap.addAndGet(bytes);
            s.chunks.set(e.getKey(), new ChunkState(c.id(), c.minN(), c.maxN(), y, HistoryFormat.Ranges.of(e.getValue(), bytes),
                    c.ref(), e.getValue(), ChunkSummary.of(e.getValue())));
            store.enqueue(new DurableTemporalStore.ChunkJob(this, attribute, c.id()));
        }
        if (tail != s.tail) {
            store.tailHeap.addAndGet(-s.tailBytes);
            s.tail = new ArrayList<>(tail);
            s.tailBytes = estimate(tail);
            store.tailHeap.addAndGet(s.tailBytes);
        }
        cached = null;
        return true;
    }

    /** Drops a series' chunks below {@code filterSeq} and its tail; answers whether a chunk was written or on its way. */
    private boolean dropSeries(Series s, long filterSeq, DurableTemporalStore store) {
        boolean chunks = false;
        for (int k = s.chunks.size() - 1; k >= 0; k--) {
            ChunkState c = s.chunks.get(k);
            if (c.version() < filterSeq) {
                chunks = true;
                if (c.pending() != null) {
                    store.pendingHeap.addAndGet(-c.ranges().bytes());
                }
                s.chunks.remove(k);
            }
        }
        store.tailHeap.addAndGet(-s.tailBytes);
        s.tail = new ArrayList<>();
        s.tailBytes = 0;
        return chunks;
    }

    /** {@code content} after the edit, or {@code content} itself when the edit changes nothing in it. */
    private static List<TemporalInstance> change(List<TemporalInstance> content, HistoryOp op) {
        List<TemporalInstance> out = null;
        for (int i = 0; i < content.size(); i++) {
            TemporalInstance x = content.get(i);
            TemporalInstance y = switch (op) {
                case HistoryOp.InstanceDeleted d -> HistoryFormat.number(x.instanceId()) == d.n() ? null : x;
                case HistoryOp.InstanceModified m -> HistoryFormat.number(x.instanceId()) == m.n()
                        ? x.modifiedTo(m.value())
                        : x;
                case HistoryOp.AttributeDeleted d -> new InstanceQuery(dev.cor.ngsild.model.TimeProperty.OBSERVED_AT,
                        Long.MIN_VALUE, Long.MAX_VALUE, d.datasetId() == null ? InstanceQuery.DEFAULT_DATASET : d.datasetId(),
                        0).admits(x) ? null : x;
                default -> x;
            };
            if (y != x && out == null) {
                out = new ArrayList<>(content.subList(0, i));
            }
            if (out != null && y != null) {
                out.add(y);
            }
        }
        return out == null ? content : List.copyOf(out);
    }

    static long estimate(List<TemporalInstance> l) {
        long b = 0;
        for (TemporalInstance i : l) {
            b += HistoryFormat.estimate(i);
        }
        return b;
    }
}
