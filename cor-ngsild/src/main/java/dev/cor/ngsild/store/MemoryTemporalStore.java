package dev.cor.ngsild.store;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;

/**
 * The {@link TemporalStore} of the {@link MemoryEntityStore}: every instance in the heap, as long
 * as the process lives, within a {@link TemporalRetention} (by default
 * {@value TemporalRetention#MEMORY_DEFAULT_BYTES} bytes, as {@link #bytes()} counts them).
 * <p>
 * Per tenant a sorted map of entities; per entity a monitor that its writes take for the few
 * instructions of an append (never across a wait), and an immutable {@link Series} per attribute
 * that a write replaces whole - so a reader takes one volatile read and holds a consistent
 * history without a lock. An append copies the series' array once its capacity is reached
 * (doubling), so recording is amortized O(1). Every thread.
 */
public final class MemoryTemporalStore implements TemporalStore {
    /** What an instance costs beyond its value's text, counted as the heap it roughly takes. */
    static final int INSTANCE_OVERHEAD = 160;
    /**
     * An instance's share of its block's {@link ChunkSummary} (about 220 bytes for a block of
     * {@value #BLOCK}, estimated from the objects' layouts), so that the byte bound counts them too.
     */
    static final int SUMMARY_SHARE = 2;

    private final TemporalRetention retention;
    private final java.util.function.LongSupplier clock;
    private final ConcurrentHashMap<String, ConcurrentSkipListMap<String, History>> tenants = new ConcurrentHashMap<>();
    private final AtomicLong nextId = new AtomicLong(1);
    private final AtomicLong bytes = new AtomicLong();
    /** The appends in the order they were made, for the retention: the oldest are dropped first. */
    private final ConcurrentLinkedQueue<Appended> appended = new ConcurrentLinkedQueue<>();

    /** Keeps {@link TemporalRetention#MEMORY_DEFAULT_BYTES} of history, of any age. */
    public MemoryTemporalStore() {
        this(new TemporalRetention(Long.MAX_VALUE, TemporalRetention.MEMORY_DEFAULT_BYTES));
    }

    public MemoryTemporalStore(TemporalRetention retention) {
        this(retention, System::currentTimeMillis);
    }

    /** With {@code clock} as the time an instance is recorded at (what the retention's age counts from). */
    MemoryTemporalStore(TemporalRetention retention, java.util.function.LongSupplier clock) {
        this.retention = Objects.requireNonNull(retention, "retention");
        this.clock = clock;
    }

    /**
     * The appends to one series within one second of the first ({@link #GRANULE_MS}): which
     * series, when, how many instances. One per series and second rather than one per write, so
     * that a series written to thousands of times a second keeps a few objects for the retention,
     * not one per write. {@code count} and {@code closed} under the history's monitor.
     */
    private static final class Appended {
        final History history;
        final String attribute;
        final long recordedAt;
        int count;
        /** Taken by the retention: later appends open a new one. */
        boolean closed;

        Appended(History history, String attribute, long recordedAt, int count) {
            this.history = history;
            this.attribute = attribute;
            this.recordedAt = recordedAt;
            this.count = count;
        }
    }

    /** The retention's granule: appends to a series within this many milliseconds share one {@link Appended}. */
    private static final long GRANULE_MS = 1_000;

    /** How many instances a {@link Block} summarises: an hour of per-second data is 28 of them. */
    static final int BLOCK = 128;

    /**
     * A run of a series' instances, {@code items[start..end)}, and its {@link ChunkSummary}
     * ({@code null}: it cannot have one), which an aggregation takes instead of reading them.
     */
    record Block(int start, int end, ChunkSummary summary) {
        static Block of(TemporalInstance[] items, int start, int end) {
            return new Block(start, end, ChunkSummary.of(items, start, end));
        }
    }

    /**
     * One attribute's instances in the order recorded: {@code items[0..size)}; shared by the
     * series made from it by appends (which only write beyond {@code size}), replaced whole by
     * any other edit. {@code ordered}: every instance has an observedAt and they never go back in
     * recording order - what data recorded as it is observed gives -, so that a read by observedAt
     * finds its window by binary search instead of a scan.
     * <p>
     * {@code blocks[0..blockCount)}: the series cut in runs of {@link #BLOCK} instances, in order,
     * each with its summary; the instances after the last block are the tail, summarised when it
     * reaches {@link #BLOCK}. Shared by appends as {@code items} is. An edit keeps the blocks it does
     * not touch (moved when instances before them went) and summarises again those it touches,
     * so a summary is always its block's; used only when the series is {@code ordered}.
     */
    private record Series(TemporalInstance[] items, int size, boolean ordered, Block[] blocks, int blockCount) {
        Series(TemporalInstance[] items, int size, Block[] blocks, int blockCount) {
            this(items, size, ordered(items, size), blocks, blockCount);
        }

        /** A new series of one instance, with an array of its own. */
        static Series of(TemporalInstance first) {
            TemporalInstance[] a = new TemporalInstance[4];
            a[0] = first;
            return new Series(a, 1, first.observedAt() != TemporalInstance.NO_TIME, new Block[4], 0);
        }

        Series append(TemporalInstance i) {
            TemporalInstance[] a = items;
            if (size == a.length) {
                a = Arrays.copyOf(a, size * 2);
            }
            a[size] = i;
            Block[] b = blocks;
            int bc = blockCount;
            int tail = bc == 0 ? 0 : b[bc - 1].end();
            if (size + 1 - tail >= BLOCK) {
                if (bc == b.length) {
                    b = Arrays.copyOf(b, bc * 2);
                }
                b[bc++] = Block.of(a, tail, size + 1); // 128 instances summarised once, under the monitor: no wait
            }
            return new Series(a, size + 1, ordered && i.observedAt() != TemporalInstance.NO_TIME
                    && i.observedAt() >= a[size - 1].observedAt(), b, bc);
        }

        private static boolean ordered(TemporalInstance[] items, int size) {
            long last = Long.MIN_VALUE;
            for (int k = 0; k < size; k++) {
                long t = items[k].observedAt();
                if (t == TemporalInstance.NO_TIME || t < last) {
                    return false;
                }
                last = t;
            }
            return true;
        }
    }

    /** One entity's history: its head and its series, replaced whole under the monitor. */
    private static final class History {
        final String id;
        volatile TemporalEntity head;
        volatile Map<String, Series> series = Map.of();
        /** Per attribute, the retention's latest {@link Appended}, still open to appends (under the monitor). */
        Map<String, Appended> open;

        History(String id) {
            this.id = id;
        }
    }

    // ---------------------------------------------------------------- writes

    @Override
    public List<TemporalInstance> record(String tenant, String entityId, List<String> types, List<String> scopes,
            List<TemporalInstance> instances, long deletedAt) {
        History h = tenants.computeIfAbsent(tenant, k -> new ConcurrentSkipListMap<>())
                .computeIfAbsent(entityId, History::new);
        List<TemporalInstance> out = new ArrayList<>(instances.size());
        long now = clock.getAsLong();
        synchronized (h) {
            // copied once and published whole: never changed after the volatile write, so readers need no lock
            Map<String, Series> next = new HashMap<>(h.series);
            boolean newAttribute = false;
            long added = 0;
            if (h.open == null) {
                h.open = new HashMap<>(4);
            }
            for (TemporalInstance i : instances) {
                TemporalInstance r = i.withId(TemporalInstance.idOf(nextId.getAndIncrement()));
                Series was = next.get(r.attribute());
                newAttribute |= was == null;
                next.put(r.attribute(), was == null ? Series.of(r) : was.append(r));
                added += cost(r);
                Appended a = h.open.get(r.attribute());
                if (a != null && !a.closed && now - a.recordedAt < GRANULE_MS) {
                    a.count++;
                } else {
                    a = new Appended(h, r.attribute(), now, 1);
                    h.open.put(r.attribute(), a);
                    appended.add(a);
                }
                out.add(r);
            }
            h.series = next;
            h.head = head(h.head, entityId, types, scopes, newAttribute || h.head == null ? Set.copyOf(next.keySet())
                    : h.head.attributes(), now, deletedAt);
            bytes.addAndGet(added);
        }
        return out;
    }

    private static TemporalEntity head(TemporalEntity was, String id, List<String> types, List<String> scopes,
            Set<String> attributes, long now, long deletedAt) {
        if (was == null) {
            return new TemporalEntity(id, types == null ? List.of() : types, scopes == null ? List.of() : scopes, attributes,
                    now, now, deletedAt);
        }
        List<String> t = was.types();
        if (types != null && types != t && !types.equals(was.types().subList(0, Math.min(types.size(), was.types().size())))) {
            Set<String> all = new LinkedHashSet<>(types);
            all.addAll(was.types());
            t = List.copyOf(all);
        }
        return new TemporalEntity(id, t, scopes == null ? was.scopes() : scopes, attributes, was.createdAt(), now, deletedAt);
    }

    /** What {@code i} counts for in {@link #bytes()}: an estimate of its heap, cheap to compute. */
    static long cost(TemporalInstance i) {
        Attribute a = i.value();
        long c = INSTANCE_OVERHEAD + SUMMARY_SHARE;
        if (a.value().isTextual()) {
            c += 2L * a.value().textValue().length();
        } else if (a.value().isContainerNode()) {
            c += 48L * a.value().size() + 64;
        }
        return c + 200L * a.sub().size();
    }

    @Override
    public boolean deleteEntity(String tenant, String entityId) {
        ConcurrentSkipListMap<String, History> t = tenants.get(tenant);
        History h = t == null ? null : t.get(entityId);
        if (h == null) {
            return false;
        }
        synchronized (h) {
            if (!t.remove(entityId, h)) {
                return false;
            }
            for (Series s : h.series.values()) {
                for (int k = 0; k < s.size(); k++) {
                    bytes.addAndGet(-cost(s.items()[k]));
                }
            }
            h.series = Map.of(); // the retention's queue may still name it: it finds nothing
        }
        return true;
    }

    @Override
    public boolean deleteAttribute(String tenant, String entityId, String attribute, String datasetId, boolean all) {
        return edit(tenant, entityId, attribute, i -> all || Objects.equals(i.value().datasetId(), datasetId), null);
    }

    @Override
    public boolean modifyInstance(String tenant, String entityId, String attribute, String instanceId, Attribute value) {
        return edit(tenant, entityId, attribute, i -> i.instanceId().equals(instanceId),
                i -> i.modifiedTo(value));
    }

    @Override
    public boolean deleteInstance(String tenant, String entityId, String attribute, String instanceId) {
        return edit(tenant, entityId, attribute, i -> i.instanceId().equals(instanceId), null);
    }

    /**
     * Replaces ({@code replace}) or removes ({@code null}) the instances of one attribute that
     * {@code which} picks; whether there was one.
     */
    private boolean edit(String tenant, String entityId, String attribute, Predicate<TemporalInstance> which,
            java.util.function.UnaryOperator<TemporalInstance> replace) {
        ConcurrentSkipListMap<String, History> t = tenants.get(tenant);
        History h = t == null ? null : t.get(entityId);
        if (h == null) {
            return false;
        }
        synchronized (h) {
            Series s = h.series.get(attribute);
            if (s == null) {
                return false;
            }
            boolean hit = false;
            long delta = 0;
            TemporalInstance[] a = new TemporalInstance[s.items().length];
            int n = 0;
            // the blocks as the edit leaves them: moved to where their instances go, summarised again where hit
            Block[] old = s.blocks();
            Block[] blocks = new Block[Math.max(4, s.blockCount())];
            int bc = 0;
            int b = 0;
            int blockStart = 0;
            boolean blockHit = false;
            for (int k = 0; k < s.size(); k++) {
                if (b < s.blockCount() && k == old[b].start()) {
                    blockStart = n;
                    blockHit = false;
                }
                TemporalInstance i = s.items()[k];
                if (which.test(i)) {
                    hit = true;
                    blockHit = true;
                    delta -= cost(i);
                    if (replace != null) {
                        TemporalInstance r = replace.apply(i);
                        delta += cost(r);
                        a[n++] = r;
                    }
                } else {
                    a[n++] = i;
                }
                if (b < s.blockCount() && k + 1 == old[b].end()) {
                    if (n > blockStart) {
                        blocks[bc++] = blockHit ? Block.of(a, blockStart, n)
                                : blockStart == old[b].start() ? old[b] : new Block(blockStart, n, old[b].summary());
                    }
                    b++;
                }
            }
            if (!hit) {
                return false;
            }
            Map<String, Series> next = new HashMap<>(h.series);
            if (n == 0) {
                next.remove(attribute);
            } else {
                next.put(attribute, new Series(a, n, blocks, bc));
            }
            h.series = Map.copyOf(next);
            TemporalEntity was = h.head;
            h.head = new TemporalEntity(was.id(), was.types(), was.scopes(), next.keySet(), was.createdAt(),
                    System.currentTimeMillis(), was.deletedAt());
            bytes.addAndGet(delta);
            return true;
        }
    }

    // ---------------------------------------------------------------- reads

    @Override
    public TemporalEntity entity(String tenant, String entityId) {
        ConcurrentSkipListMap<String, History> t = tenants.get(tenant);
        History h = t == null ? null : t.get(entityId);
        return h == null ? null : h.head;
    }

    @Override
    public void entities(String tenant, boolean descending, Predicate<TemporalEntity> visitor) {
        ConcurrentSkipListMap<String, History> t = tenants.get(tenant);
        if (t == null) {
            return;
        }
        for (History h : descending ? t.descendingMap().values() : t.values()) {
            TemporalEntity head = h.head;
            if (head != null && !visitor.test(head)) {
                return;
            }
        }
    }

    @Override
    public List<TemporalInstance> instances(String tenant, String entityId, String attribute, InstanceQuery query, int limit) {
        ConcurrentSkipListMap<String, History> t = tenants.get(tenant);
        History h = t == null ? null : t.get(entityId);
        Series s = h == null ? null : h.series.get(attribute);
        if (s == null || limit <= 0) {
            return List.of();
        }
        if (s.ordered() && query.property() == TimeProperty.OBSERVED_AT) {
            return selectOrdered(s.items(), s.size(), query, limit);
        }
        return select(s.items(), s.size(), query, limit);
    }

    /**
     * The blocks' summaries where they serve: a series in observedAt order asked by observedAt
     * (without lastN) is the instances of its window before, between and after the blocks the
     * window holds whole, and those blocks' summaries, which a period that holds a block whole
     * takes instead of its 128 instances. Otherwise every instance of the window, as by default.
     */
    @Override
    public List<DatasetAggregate> aggregate(String tenant, String entityId, String attribute, InstanceQuery window,
            Set<String> datasetIds, dev.cor.ngsild.query.TemporalAggregation aggregation) {
        ConcurrentSkipListMap<String, History> t = tenants.get(tenant);
        History h = t == null ? null : t.get(entityId);
        Series s = h == null ? null : h.series.get(attribute);
        if (s == null) {
            return List.of();
        }
        if (!s.ordered() || window.property() != TimeProperty.OBSERVED_AT || window.lastN() > 0 || s.blockCount() == 0) {
            return TemporalStore.super.aggregate(tenant, entityId, attribute, window, datasetIds, aggregation);
        }
        TemporalInstance[] items = s.items();
        int lo = window.from() == Long.MIN_VALUE ? 0 : firstAtOrAfter(items, s.size(), window.from());
        int hi = window.to() == Long.MAX_VALUE ? s.size() : firstAtOrAfter(items, s.size(), window.to());
        List<TemporalInstance> all = Arrays.asList(items);
        AggregationGroups g = new AggregationGroups(window, datasetIds);
        int k = lo;
        for (int b = 0; b < s.blockCount(); b++) {
            Block x = s.blocks()[b];
            if (x.start() >= hi) {
                break;
            }
            if (x.summary() == null || x.start() < lo || x.end() > hi) {
                continue;
            }
            g.instances(all.subList(k, x.start()));
            g.summarised(x.summary(), () -> all.subList(x.start(), x.end()));
            k = x.end();
        }
        g.instances(all.subList(k, hi));
        return g.aggregate(aggregation);
    }

    /**
     * {@link #select} over instances that all have an observedAt, in non-decreasing order of it,
     * asked by observedAt: the window's bounds by binary search, then only the instances answered
     * (or, with a datasetId, those looked at to find them) are touched.
     */
    static List<TemporalInstance> selectOrdered(TemporalInstance[] items, int size, InstanceQuery q, int limit) {
        int lo = q.from() == Long.MIN_VALUE ? 0 : firstAtOrAfter(items, size, q.from());
        int hi = q.to() == Long.MAX_VALUE ? size : firstAtOrAfter(items, size, q.to());
        int keep = q.lastN() > 0 ? Math.min(q.lastN(), limit) : limit;
        if (lo >= hi || keep <= 0) {
            return new ArrayList<>(0);
        }
        if (q.datasetId() == null) {
            int n = Math.min(keep, hi - lo);
            int start = q.lastN() > 0 ? hi - n : lo;
            return new ArrayList<>(Arrays.asList(items).subList(start, start + n));
        }
        ArrayList<TemporalInstance> hit = new ArrayList<>(Math.min(keep, 64));
        if (q.lastN() > 0) {
            for (int k = hi - 1; k >= lo && hit.size() < keep; k--) {
                if (q.admits(items[k])) {
                    hit.add(items[k]);
                }
            }
            java.util.Collections.reverse(hit);
        } else {
            for (int k = lo; k < hi && hit.size() < keep; k++) {
                if (q.admits(items[k])) {
                    hit.add(items[k]);
                }
            }
        }
        return hit;
    }

    /** The first index of {@code items[0..size)} (ordered by observedAt) whose observedAt is at least {@code t}. */
    private static int firstAtOrAfter(TemporalInstance[] items, int size, long t) {
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (items[mid].observedAt() < t) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * The instances of {@code items[0..size)} that {@code q} asks for, ordered by its time (stable:
     * those of one time in the order recorded), at most {@code limit}: the first, or with lastN the
     * last. Shared by the stores that hold instances in recording order.
     */
    public static List<TemporalInstance> select(TemporalInstance[] items, int size, InstanceQuery q, int limit) {
        List<TemporalInstance> hit = new ArrayList<>();
        boolean sorted = true;
        long last = Long.MIN_VALUE;
        for (int k = 0; k < size; k++) {
            TemporalInstance i = items[k];
            if (q.admits(i)) {
                long time = i.time(q.property());
                sorted &= time >= last;
                last = Math.max(last, time);
                hit.add(i);
            }
        }
        if (!sorted) {
            TimeProperty p = q.property();
            hit.sort(Comparator.comparingLong(i -> i.time(p)));
        }
        int keep = q.lastN() > 0 ? Math.min(q.lastN(), limit) : limit;
        if (hit.size() <= keep) {
            return hit;
        }
        return q.lastN() > 0 ? new ArrayList<>(hit.subList(hit.size() - keep, hit.size())) : new ArrayList<>(hit.subList(0, keep));
    }

    @Override
    public boolean hasTenant(String tenant) {
        return tenants.containsKey(tenant);
    }

    @Override
    public int count(String tenant) {
        ConcurrentSkipListMap<String, History> t = tenants.get(tenant);
        return t == null ? 0 : t.size();
    }

    /** How many blocks of the series have a summary: what an aggregation may take instead of instances. */
    int summarised(String tenant, String entityId, String attribute) {
        ConcurrentSkipListMap<String, History> t = tenants.get(tenant);
        History h = t == null ? null : t.get(entityId);
        Series s = h == null ? null : h.series.get(attribute);
        int n = 0;
        for (int b = 0; s != null && b < s.blockCount(); b++) {
            n += s.blocks()[b].summary() != null ? 1 : 0;
        }
        return n;
    }

    /** Every second: an expiry here looks at the oldest appends only, and the heap is the bound. */
    @Override
    public long expireEveryMs() {
        return 1_000;
    }

    /** The bytes of history kept, as {@link #cost} counts them. */
    public long bytes() {
        return bytes.get();
    }

    // ---------------------------------------------------------------- retention

    @Override
    public long expire(long nowMs) {
        long cutoff = retention.maxAgeMs() == Long.MAX_VALUE ? Long.MIN_VALUE : nowMs - retention.maxAgeMs();
        long dropped = 0;
        while (true) {
            Appended a = appended.peek();
            if (a == null || (a.recordedAt + GRANULE_MS > cutoff && bytes.get() <= retention.maxBytes())) {
                return dropped;
            }
            appended.poll(); // by age only once its newest instance is older than the cutoff: never less kept
            dropped += dropOldest(a);
        }
    }

    /** Drops the {@code count} oldest instances of a series (fewer if edits removed some); how many. */
    private long dropOldest(Appended appended) {
        History h = appended.history;
        String attribute = appended.attribute;
        synchronized (h) {
            appended.closed = true;
            int count = appended.count;
            Series s = h.series.get(attribute);
            if (s == null) {
                return 0;
            }
            int n = Math.min(count, s.size());
            long freed = 0;
            for (int k = 0; k < n; k++) {
                freed += cost(s.items()[k]);
            }
            Map<String, Series> next = new HashMap<>(h.series);
            if (n == s.size()) {
                next.remove(attribute);
            } else {
                TemporalInstance[] a = Arrays.copyOfRange(s.items(), n, Math.max(s.size(), n + 4));
                // the blocks of what is kept, moved to the front; the one the cut goes through summarised again
                Block[] blocks = new Block[Math.max(4, s.blockCount())];
                int bc = 0;
                for (int b = 0; b < s.blockCount(); b++) {
                    Block x = s.blocks()[b];
                    if (x.end() <= n) {
                        continue;
                    }
                    blocks[bc++] = x.start() < n ? Block.of(a, 0, x.end() - n) : new Block(x.start() - n, x.end() - n, x.summary());
                }
                next.put(attribute, new Series(a, s.size() - n, s.ordered(), blocks, bc));
            }
            h.series = Map.copyOf(next);
            TemporalEntity was = h.head;
            if (was != null) {
                h.head = new TemporalEntity(was.id(), was.types(), was.scopes(), next.keySet(), was.createdAt(),
                        was.modifiedAt(), was.deletedAt());
            }
            bytes.addAndGet(-freed);
            return n;
        }
    }
}
