package dev.cor.ngsild.store;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.ValueLookup;

/**
 * The in-memory store (corDB): per tenant, a map of id to the current immutable record, and
 * indexes - ids in order, ids by type and by attribute (each ordered, with its size), and a
 * {@link SpatialGrid} per GeoProperty, and value indexes ({@link ValueIndexSettings}). A write swaps the record in one short critical section
 * ({@link ConcurrentHashMap#compute}) and updates the indexes inside it; readers take whatever
 * record they find and never lock. Nothing inside a critical section waits. The writer's
 * {@link WriteObserver} is called inside it, after the change.
 */
public final class MemoryEntityStore implements EntityStore {
    private static final System.Logger LOG = System.getLogger(MemoryEntityStore.class.getName());
    private final Map<String, TenantData> tenants = new ConcurrentHashMap<>();
    private final MemoryTemporalStore temporal;
    private final ValueIndexes values;

    /** An empty store with the default tenant, its history within the memory default retention. */
    public MemoryEntityStore() {
        this(new TemporalRetention(Long.MAX_VALUE, TemporalRetention.MEMORY_DEFAULT_BYTES));
    }

    /** An empty store with the default tenant, keeping as much history as {@code retention} says. */
    public MemoryEntityStore(TemporalRetention retention) {
        this(retention, ValueIndexSettings.defaults());
    }

    /** An empty store with the default tenant, its history within {@code retention}, its value indexes as {@code values} says. */
    public MemoryEntityStore(TemporalRetention retention, ValueIndexSettings values) {
        this.values = new ValueIndexes(values);
        tenants.put(DEFAULT_TENANT, new TenantData(this.values.new Tenant()));
        this.temporal = new MemoryTemporalStore(retention);
    }

    /** The value indexes' meters: their heap, those built, those dropped for the bound. */
    @Override
    public Optional<MeterBinder> meters() {
        return Optional.of(this::bindValueIndexes);
    }

    /** Binds the value indexes' meters (a store that holds this one binds them with its own). */
    public void bindValueIndexes(MeterRegistry registry) {
        Gauge.builder("cor.store.value.index.bytes", values, ValueIndexes::bytes).baseUnit("bytes")
                .description("Heap the value indexes take, estimated (bounded by --valueIndexMaxBytes).").register(registry);
        FunctionCounter.builder("cor.store.value.index.built", values, ValueIndexes::built)
                .description("Value indexes built in the background for the queries that needed them.").register(registry);
        FunctionCounter.builder("cor.store.value.index.dropped", values, ValueIndexes::dropped)
                .description("Value indexes dropped because they would have passed the bound.").register(registry);
    }

    /** Its history, in the heap as the entities are. */
    @Override
    public Optional<TemporalStore> temporal() {
        return Optional.of(temporal);
    }

    @Override
    public boolean blocks() {
        return false;
    }

    @Override
    public boolean hasTenant(String tenant) {
        return tenants.containsKey(tenant);
    }

    @Override
    public Set<String> tenants() {
        return Set.copyOf(tenants.keySet());
    }

    @Override
    public Entity get(String tenant, String id) {
        TenantData t = tenants.get(tenant);
        return t == null ? null : t.entities.get(id);
    }

    @Override
    public EntityWrite write(String tenant, String id, EntityChange change, WriteObserver observer) {
        TenantData t = tenants.computeIfAbsent(tenant, k -> new TenantData(values.new Tenant()));
        Entity[] before = new Entity[1];
        RuntimeException[] unobserved = new RuntimeException[1];
        Entity after = t.entities.compute(id, (k, current) -> {
            before[0] = current;
            Entity next = change.apply(current);
            if (next != null && !next.id().equals(id)) {
                throw new IllegalStateException("a change of " + id + " returned entity " + next.id());
            }
            t.index(id, current, next);
            if (next != current) {
                try {
                    observer.applied(current, next);
                } catch (RuntimeException e) {
                    unobserved[0] = e; // the change is made (and journaled): what the observer throws cannot undo it
                }
            }
            return next;
        });
        if (unobserved[0] != null) {
            // logged outside the section: a logger's handler takes a lock
            LOG.log(System.Logger.Level.WARNING, "cor-store: observing the write of " + id + " failed", unobserved[0]);
        }
        return new EntityWrite(before[0], after);
    }

    @Override
    public void forEach(String tenant, String type, Consumer<Entity> visitor) {
        scan(tenant, type == null ? Index.ALL : Index.TYPE, type, e -> {
            visitor.accept(e);
            return true;
        });
    }

    @Override
    public void scan(String tenant, Index index, String key, Predicate<Entity> visitor) {
        TenantData t = tenants.get(tenant);
        if (t == null) {
            return;
        }
        NavigableSet<String> ids = switch (index) {
            case ALL -> t.ids;
            case TYPE -> t.byType.getOrDefault(key, Ordered.EMPTY).ids;
            case ATTRIBUTE -> t.byAttribute.getOrDefault(key, Ordered.EMPTY).ids;
        };
        for (String id : ids) {
            Entity e = t.entities.get(id);
            // the index and the record are read apart: check the record is still in the index's set
            if (e != null && switch (index) {
                case ALL -> true;
                case TYPE -> e.types().contains(key);
                case ATTRIBUTE -> e.attributes().containsKey(key);
            } && !visitor.test(e)) {
                return;
            }
        }
    }

    @Override
    public int size(String tenant, Index index, String key) {
        TenantData t = tenants.get(tenant);
        if (t == null) {
            return 0;
        }
        return switch (index) {
            case ALL -> t.entities.size();
            case TYPE -> t.byType.getOrDefault(key, Ordered.EMPTY).size.get();
            case ATTRIBUTE -> t.byAttribute.getOrDefault(key, Ordered.EMPTY).size.get();
        };
    }

    @Override
    public List<String> idsWithValues(String tenant, ValueLookup lookup, int max) {
        TenantData t = tenants.get(tenant);
        if (t == null) {
            return null;
        }
        return t.values.ids(lookup, max, size(tenant, Index.ATTRIBUTE, lookup.attribute()), (ix, vt) -> fill(t, ix));
    }

    /** Adds every holder of the index's attribute to it, each inside its critical section; the builder's thread. */
    private static void fill(TenantData t, ValueIndex ix) {
        for (String id : t.byAttribute.getOrDefault(ix.attribute, Ordered.EMPTY).ids) {
            if (ix.state == ValueIndex.State.DROPPED) {
                return;
            }
            if (Thread.currentThread().isInterrupted()) {
                throw new IllegalStateException("the store is closing");
            }
            t.entities.computeIfPresent(id, (k, e) -> {
                t.values.fill(ix, id, e);
                return e;
            });
        }
    }

    @Override
    public Collection<String> idsInBox(String tenant, String geoproperty, double minLon, double minLat, double maxLon,
            double maxLat) {
        TenantData t = tenants.get(tenant);
        SpatialGrid g = t == null ? null : t.grids.get(geoproperty);
        return g == null ? List.of() : g.search(minLon, minLat, maxLon, maxLat);
    }

    @Override
    public int sizeInBox(String tenant, String geoproperty, double minLon, double minLat, double maxLon, double maxLat) {
        TenantData t = tenants.get(tenant);
        SpatialGrid g = t == null ? null : t.grids.get(geoproperty);
        return g == null ? 0 : g.estimate(minLon, minLat, maxLon, maxLat);
    }

    @Override
    public Set<String> keys(String tenant, Index index) {
        TenantData t = tenants.get(tenant);
        if (t == null || index == Index.ALL) {
            return Set.of();
        }
        Set<String> out = new java.util.HashSet<>();
        (index == Index.TYPE ? t.byType : t.byAttribute).forEach((k, o) -> {
            if (o.size.get() > 0) {
                out.add(k);
            }
        });
        return out;
    }

    @Override
    public int count(String tenant) {
        TenantData t = tenants.get(tenant);
        return t == null ? 0 : t.entities.size();
    }

    /** An ordered set of ids with its size (a skip list's own size() walks it). */
    private static final class Ordered {
        static final Ordered EMPTY = new Ordered();
        final NavigableSet<String> ids = new ConcurrentSkipListSet<>();
        final AtomicInteger size = new AtomicInteger();

        void add(String id) {
            if (ids.add(id)) {
                size.incrementAndGet();
            }
        }

        void remove(String id) {
            if (ids.remove(id)) {
                size.decrementAndGet();
            }
        }
    }

    /** One tenant's entities and indexes. The indexes change only inside the entity map's compute for that id. */
    private static final class TenantData {
        final ConcurrentHashMap<String, Entity> entities = new ConcurrentHashMap<>();
        final NavigableSet<String> ids = new ConcurrentSkipListSet<>();
        final Map<String, Ordered> byType = new ConcurrentHashMap<>();
        final Map<String, Ordered> byAttribute = new ConcurrentHashMap<>();
        final Map<String, SpatialGrid> grids = new ConcurrentHashMap<>();
        final ValueIndexes.Tenant values;

        TenantData(ValueIndexes.Tenant values) {
            this.values = values;
        }

        /** Moves the id's index entries from {@code before} to {@code after}; inside the compute for that id. */
        void index(String id, Entity before, Entity after) {
            if (before == after) {
                return;
            }
            if (before != null) {
                for (String type : before.types()) {
                    if (after == null || !after.types().contains(type)) {
                        byType.getOrDefault(type, Ordered.EMPTY).remove(id);
                    }
                }
                for (String a : before.attributes().keySet()) {
                    if (after == null || !after.attributes().containsKey(a)) {
                        byAttribute.getOrDefault(a, Ordered.EMPTY).remove(id);
                    }
                }
                if (after == null) {
                    ids.remove(id);
                }
            }
            if (after != null) {
                ids.add(id);
                for (String type : after.types()) {
                    byType.computeIfAbsent(type, k -> new Ordered()).add(id);
                }
                for (String a : after.attributes().keySet()) {
                    byAttribute.computeIfAbsent(a, k -> new Ordered()).add(id);
                }
            }
            spatial(id, before, after);
            // after the attribute sets: an index being built sees the id there, or the id sees the index
            values.update(id, before, after);
        }

        /** Re-places the id in the grid of each GeoProperty whose geometries changed. */
        private void spatial(String id, Entity before, Entity after) {
            if (before != null) {
                for (Map.Entry<String, AttributeList> a : before.attributes().entrySet()) {
                    List<JsonNode> old = geometries(a.getValue());
                    List<JsonNode> now = after == null ? List.of() : geometries(after.attributes().get(a.getKey()));
                    if (!old.equals(now)) {
                        grids.computeIfAbsent(a.getKey(), k -> new SpatialGrid()).update(id, old, List.of());
                    }
                }
            }
            if (after != null) {
                for (Map.Entry<String, AttributeList> a : after.attributes().entrySet()) {
                    List<JsonNode> now = geometries(a.getValue());
                    if (now.isEmpty()) {
                        continue;
                    }
                    List<JsonNode> old = before == null ? List.of() : geometries(before.attributes().get(a.getKey()));
                    if (!old.equals(now)) {
                        grids.computeIfAbsent(a.getKey(), k -> new SpatialGrid()).update(id, List.of(), now);
                    }
                }
            }
        }

        private static List<JsonNode> geometries(AttributeList l) {
            if (l == null) {
                return List.of();
            }
            List<JsonNode> out = null;
            for (Attribute i : l.instances()) {
                if (i.kind() == AttributeKind.GEO_PROPERTY) {
                    if (out == null) {
                        out = new ArrayList<>(1);
                    }
                    out.add(i.value());
                }
            }
            return out == null ? List.of() : out;
        }
    }
}
