package dev.cor.ngsild.store;

import java.util.ArrayList;
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
 * instructions of an append (never across a wait), and per attribute an immutable
 * {@link PackedSeries} that a write replaces - so a reader takes one volatile read and holds a
 * consistent history of the attribute without a lock. A series keeps its instances packed in
 * blocks of {@value PackedSeries#BLOCK}, so that the heap a long history takes is a few arrays for
 * the collector, not an object graph per instance; recording is amortized O(1). Every thread.
 */
public final class MemoryTemporalStore implements TemporalStore {
    /** What an instance in a series' tail costs beyond its value's text, counted as the heap it roughly takes. */
    static final int INSTANCE_OVERHEAD = 160;

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

    /**
     * One entity's history: its head, and per attribute a {@link Slot} - the map replaced whole when
     * an attribute comes or goes, a slot's series when one of its instances does; all under the
     * monitor.
     */
    private static final class History {
        final String id;
        volatile TemporalEntity head;
        volatile Map<String, Slot> series = Map.of();
        /** Per attribute, the retention's latest {@link Appended}, still open to appends (under the monitor). */
        Map<String, Appended> open;

        History(String id) {
            this.id = id;
        }
    }

    /** Where one attribute's series is published: replaced under the history's monitor, read without a lock. */
    private static final class Slot {
        volatile PackedSeries series;

        Slot(PackedSeries series) {
            this.series = series;
        }
    }

    /** The series of one attribute of an entity's history, or {@code null}. */
    private PackedSeries series(String tenant, String entityId, String attribute) {
        ConcurrentSkipListMap<String, History> t = tenants.get(tenant);
        History h = t == null ? null : t.get(entityId);
        Slot slot = h == null ? null : h.series.get(attribute);
        return slot == null ? null : slot.series;
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
            Map<String, Slot> slots = h.series;
            Map<String, Slot> grown = null; // a new map only when an attribute is new: a write does not copy the others
            long added = 0;
            if (h.open == null) {
                h.open = new HashMap<>(4);
            }
            for (TemporalInstance i : instances) {
                TemporalInstance r = i.withId(TemporalInstance.idOf(nextId.getAndIncrement()));
                Slot slot = (grown != null ? grown : slots).get(r.attribute());
                if (slot == null) {
                    if (grown == null) {
                        grown = new HashMap<>(slots);
                    }
                    PackedSeries s = PackedSeries.of(r);
                    grown.put(r.attribute(), new Slot(s));
                    added += s.bytes;
                } else {
                    PackedSeries was = slot.series;
                    PackedSeries s = was.append(r);
                    slot.series = s;
                    added += s.bytes - was.bytes;
                }
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
            if (grown != null) {
                h.series = Map.copyOf(grown);
            }
            h.head = head(h.head, entityId, types, scopes, grown != null || h.head == null ? h.series.keySet()
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
        long c = INSTANCE_OVERHEAD;
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
            for (Slot s : h.series.values()) {
                bytes.addAndGet(-s.series.bytes);
            }
            h.series = Map.of(); // the retention's queue may still name it: it finds nothing
        }
        return true;
    }

    @Override
    public boolean deleteAttribute(String tenant, String entityId, String attribute, String datasetId, boolean all) {
        // a block summarised as all of one other datasetId is passed over undecoded
        return edit(tenant, entityId, attribute, i -> all || Objects.equals(i.value().datasetId(), datasetId), null,
                b -> all || b.summary() == null || b.summary().mixed() || Objects.equals(b.summary().datasetId(), datasetId));
    }

    @Override
    public boolean modifyInstance(String tenant, String entityId, String attribute, String instanceId, Attribute value) {
        long n = TemporalInstance.numberOf(instanceId);
        return edit(tenant, entityId, attribute, i -> i.instanceId().equals(instanceId), i -> i.modifiedTo(value),
                b -> n < 0 || b.mayHold(n));
    }

    @Override
    public boolean deleteInstance(String tenant, String entityId, String attribute, String instanceId) {
        long n = TemporalInstance.numberOf(instanceId);
        return edit(tenant, entityId, attribute, i -> i.instanceId().equals(instanceId), null, b -> n < 0 || b.mayHold(n));
    }

    /**
     * Replaces ({@code replace}) or removes ({@code null}) the instances of one attribute that
     * {@code which} picks, looking only in the blocks {@code mayHit} allows; whether there was one.
     */
    private boolean edit(String tenant, String entityId, String attribute, Predicate<TemporalInstance> which,
            java.util.function.UnaryOperator<TemporalInstance> replace, Predicate<PackedSeries.Block> mayHit) {
        ConcurrentSkipListMap<String, History> t = tenants.get(tenant);
        History h = t == null ? null : t.get(entityId);
        if (h == null) {
            return false;
        }
        synchronized (h) {
            Slot slot = h.series.get(attribute);
            if (slot == null) {
                return false;
            }
            PackedSeries was = slot.series;
            PackedSeries s = was.edit(which, replace, mayHit);
            if (s == was) {
                return false;
            }
            if (s == null) {
                Map<String, Slot> next = new HashMap<>(h.series);
                next.remove(attribute);
                h.series = Map.copyOf(next);
            } else {
                slot.series = s;
            }
            TemporalEntity head = h.head;
            h.head = new TemporalEntity(head.id(), head.types(), head.scopes(), h.series.keySet(), head.createdAt(),
                    System.currentTimeMillis(), head.deletedAt());
            bytes.addAndGet((s == null ? 0 : s.bytes) - was.bytes);
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
        PackedSeries s = series(tenant, entityId, attribute);
        if (s == null || limit <= 0) {
            return List.of();
        }
        return s.instances(query, limit);
    }

    /**
     * The blocks' summaries where they serve ({@link PackedSeries#aggregate}); otherwise every
     * instance of the window, as by default.
     */
    @Override
    public List<DatasetAggregate> aggregate(String tenant, String entityId, String attribute, InstanceQuery window,
            Set<String> datasetIds, dev.cor.ngsild.query.TemporalAggregation aggregation) {
        PackedSeries s = series(tenant, entityId, attribute);
        if (s == null) {
            return List.of();
        }
        List<DatasetAggregate> a = s.aggregate(window, datasetIds, aggregation);
        return a != null ? a : TemporalStore.super.aggregate(tenant, entityId, attribute, window, datasetIds, aggregation);
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
    public java.util.Set<String> tenants() {
        return java.util.Set.copyOf(tenants.keySet());
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
        PackedSeries s = series(tenant, entityId, attribute);
        return s == null ? 0 : s.summarised();
    }

    /** {@link #bytes()} counted again from every series: what it must be (for the tests). */
    long recount() {
        long n = 0;
        for (ConcurrentSkipListMap<String, History> t : tenants.values()) {
            for (History h : t.values()) {
                for (Slot slot : h.series.values()) {
                    n += slot.series.recount();
                }
            }
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
            Slot slot = h.series.get(attribute);
            if (slot == null) {
                return 0;
            }
            PackedSeries s = slot.series;
            int n = Math.min(count, s.size());
            if (n == s.size()) {
                Map<String, Slot> next = new HashMap<>(h.series);
                next.remove(attribute);
                h.series = Map.copyOf(next);
                bytes.addAndGet(-s.bytes);
            } else {
                PackedSeries kept = s.dropOldest(n);
                slot.series = kept;
                bytes.addAndGet(kept.bytes - s.bytes);
            }
            TemporalEntity was = h.head;
            if (was != null) {
                h.head = new TemporalEntity(was.id(), was.types(), was.scopes(), h.series.keySet(), was.createdAt(),
                        was.modifiedAt(), was.deletedAt());
            }
            return n;
        }
    }
}
