package dev.cor.ngsild.store;

import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.function.Consumer;

import dev.cor.ngsild.model.Entity;

/**
 * The in-memory store (corDB): per tenant, a map of id to the current immutable record, and
 * indexes by id order and by type. A write swaps the record in one short critical section
 * ({@link ConcurrentHashMap#compute}) and updates the indexes inside it; readers take whatever
 * record they find and never lock. Nothing inside a critical section waits.
 */
public final class MemoryEntityStore implements EntityStore {
    private final Map<String, TenantData> tenants = new ConcurrentHashMap<>();

    public MemoryEntityStore() {
        tenants.put(DEFAULT_TENANT, new TenantData());
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
    public EntityWrite write(String tenant, String id, EntityChange change) {
        TenantData t = tenants.computeIfAbsent(tenant, k -> new TenantData());
        Entity[] before = new Entity[1];
        Entity after = t.entities.compute(id, (k, current) -> {
            before[0] = current;
            Entity next = change.apply(current);
            if (next != null && !next.id().equals(id)) {
                throw new IllegalStateException("a change of " + id + " returned entity " + next.id());
            }
            t.index(current, next);
            return next;
        });
        return new EntityWrite(before[0], after);
    }

    @Override
    public void forEach(String tenant, String type, Consumer<Entity> visitor) {
        TenantData t = tenants.get(tenant);
        if (t == null) {
            return;
        }
        NavigableSet<String> ids = type == null ? t.ids : t.byType.get(type);
        if (ids == null) {
            return;
        }
        for (String id : ids) {
            Entity e = t.entities.get(id);
            if (e != null && (type == null || e.types().contains(type))) {
                visitor.accept(e);
            }
        }
    }

    @Override
    public int count(String tenant) {
        TenantData t = tenants.get(tenant);
        return t == null ? 0 : t.entities.size();
    }

    /** One tenant's entities and indexes. The indexes change only inside the entity map's compute for that id. */
    private static final class TenantData {
        final ConcurrentHashMap<String, Entity> entities = new ConcurrentHashMap<>();
        final NavigableSet<String> ids = new ConcurrentSkipListSet<>();
        final Map<String, NavigableSet<String>> byType = new ConcurrentHashMap<>();

        /** Moves the id's index entries from {@code before} to {@code after}; inside the compute for that id. */
        void index(Entity before, Entity after) {
            if (before != null) {
                for (String type : before.types()) {
                    if (after == null || !after.types().contains(type)) {
                        NavigableSet<String> s = byType.get(type);
                        if (s != null) {
                            s.remove(before.id());
                        }
                    }
                }
                if (after == null) {
                    ids.remove(before.id());
                }
            }
            if (after != null) {
                ids.add(after.id());
                for (String type : after.types()) {
                    byType.computeIfAbsent(type, k -> new ConcurrentSkipListSet<>()).add(after.id());
                }
            }
        }
    }
}
