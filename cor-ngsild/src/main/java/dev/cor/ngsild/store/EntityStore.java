package dev.cor.ngsild.store;

import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;

import dev.cor.ngsild.ld.ContextKeeper;
import dev.cor.ngsild.model.Entity;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Where the broker keeps entities, per tenant. The store is the one part that every loop and
 * worker shares: readers never wait for writers and hold immutable records; a write to one entity
 * is atomic ({@link #write}). Implementations: {@link MemoryEntityStore}; a durable one and a
 * database-backed one can come behind the same interface.
 * <p>
 * A method may wait (a journal's fsync, a database round trip) only through the runtime's one
 * wait - yielding inside a coroutine - and only outside any critical section; a store whose calls
 * block a thread says so with {@link #blocks()}, and its requests then take the worker hop.
 * A store that cannot take a write (its disk is failing) throws {@link StoreUnavailableException}
 * from {@link #write} before it changes anything; reads go on.
 */
public interface EntityStore {
    /** The tenant of a request without an {@code NGSILD-Tenant} header. */
    String DEFAULT_TENANT = "";

    /** Whether calls block the calling thread (a blocking driver): requests then never run as coroutines. */
    boolean blocks();

    /** Whether the tenant exists: the default one always does; another once something was written to it. */
    boolean hasTenant(String tenant);

    /**
     * {@link #hasTenant}, asking the store itself when its memory says no: a store that several
     * brokers share may hold a tenant another broker made a moment ago. May wait (called in a
     * coroutine or on a worker). Default: {@link #hasTenant}.
     */
    default boolean hasTenantNow(String tenant) {
        return hasTenant(tenant);
    }

    /** The tenants that exist, the default one included. */
    Set<String> tenants();

    /**
     * Makes {@code tenant} exist, holding nothing, as a first write to it would: what a copy of a
     * store ({@link StoreCopy}) calls for each tenant, so that one whose entities were all deleted
     * - it stays a tenant - is one in the copy too. Nothing happens when it exists. May wait.
     * Default: a write that changes nothing, which makes the tenant in a store that makes it with
     * any write (the memory and durable ones); a store that makes it only with a change overrides it.
     */
    default void createTenant(String tenant) {
        write(tenant, "", current -> current);
    }

    /** The current record of an entity, or {@code null} (no such entity, or no such tenant). */
    Entity get(String tenant, String id);

    /**
     * Applies {@code change} to one entity atomically, creating the tenant if needed: concurrent
     * writes to the same id are applied one after the other, each to the record the previous one
     * left. Readers see the record before or after, never a mix.
     */
    default EntityWrite write(String tenant, String id, EntityChange change) {
        return write(tenant, id, change, WriteObserver.NONE);
    }

    /**
     * {@link #write(String, String, EntityChange)}, and when the change changed the record,
     * {@code observer} is called inside the same critical section, after the change and before
     * the next write of that id - so what it records is in the order of the writes. A store with
     * a journal appends the write's record inside that section too.
     */
    EntityWrite write(String tenant, String id, EntityChange change, WriteObserver observer);

    /**
     * Visits the tenant's entities in id order ({@code type}: only those of that expanded type,
     * {@code null}: all), each a consistent snapshot; nothing happens for a tenant that does not
     * exist. The visitor must not write to the store.
     */
    void forEach(String tenant, String type, Consumer<Entity> visitor);

    /** How many entities the tenant holds. */
    int count(String tenant);

    /** Which ordered set of ids a {@link #scan} walks: all, one type's, or one attribute's holders. */
    enum Index { ALL, TYPE, ATTRIBUTE }

    /**
     * Visits, in id order, the entities of {@code index} ({@code key}: the expanded type or
     * attribute name; ignored for ALL) until {@code visitor} answers {@code false}; each is a
     * consistent snapshot, and an entity written meanwhile is seen before or after the write. The
     * visitor must not write to the store. This default walks {@link #forEach} and filters.
     */
    default void scan(String tenant, Index index, String key, Predicate<Entity> visitor) {
        boolean[] stop = {false};
        forEach(tenant, index == Index.TYPE ? key : null, e -> {
            if (!stop[0] && (index != Index.ATTRIBUTE || e.attributes().containsKey(key))) {
                stop[0] = !visitor.test(e);
            }
        });
    }

    /** How many entities {@link #scan} of that index would visit (an estimate while writes go on). */
    default int size(String tenant, Index index, String key) {
        int[] n = {0};
        scan(tenant, index, key, e -> {
            n[0]++;
            return true;
        });
        return n[0];
    }

    /**
     * The ids, in id order and each once, of the entities with a value of {@code lookup}'s
     * attribute in one of its ranges (a superset of a q term's matches: the caller tests each),
     * when a value index holds at most {@code max} entries in those ranges (an entity may have
     * several: array items, instances); {@code null} otherwise - the store keeps no ready index
     * of that attribute, or more would be read - and the caller takes another way. Reads at most
     * {@code max + 1} entries. A store may start building an index when asked. This default
     * keeps none.
     */
    default java.util.List<String> idsWithValues(String tenant, dev.cor.ngsild.query.ValueLookup lookup, int max) {
        return null;
    }

    /**
     * The ids of entities whose GeoProperty {@code geoproperty} may intersect the box (a superset:
     * the caller tests each), each once, in no order; {@code null} when the store keeps no
     * spatial index (the caller then scans).
     */
    default Collection<String> idsInBox(String tenant, String geoproperty, double minLon, double minLat, double maxLon,
            double maxLat) {
        return null;
    }

    /**
     * How many ids {@link #idsInBox} would give, cheaply estimated, or {@link Integer#MAX_VALUE}
     * when the store keeps no spatial index.
     */
    default int sizeInBox(String tenant, String geoproperty, double minLon, double minLat, double maxLon, double maxLat) {
        return Integer.MAX_VALUE;
    }

    /**
     * The keys of an index that hold at least one entity of the tenant: its types (TYPE) or
     * attribute names (ATTRIBUTE), expanded, in no particular order. This default walks every
     * entity.
     */
    default Set<String> keys(String tenant, Index index) {
        Set<String> out = new java.util.HashSet<>();
        forEach(tenant, null, e -> {
            if (index == Index.TYPE) {
                out.addAll(e.types());
            } else if (index == Index.ATTRIBUTE) {
                out.addAll(e.attributes().keySet());
            }
        });
        return out;
    }

    /**
     * Whether a read waits for the store (a database's round trip): the API then lets every
     * request that touches the store wait - it runs as a coroutine of its loop, or on a worker -
     * and never calls the store on a loop outside a coroutine, except {@link #hasTenant} and
     * {@link #tenants}, which such a store answers from memory. Default: no.
     */
    default boolean readsWait() {
        return false;
    }

    /**
     * Whether the store can serve now ({@code /health/ready}): a database-backed one is not while
     * its database cannot be reached. Never waits. Default: yes.
     */
    default boolean ready() {
        return true;
    }

    /**
     * Whether the answer to a write must wait for the store ({@link #sync}): a journal that
     * confirms an append or an fsync. The API then lets every write request wait - it runs as a
     * coroutine of its loop, or on a worker - and runs the others inline. Default: no.
     */
    default boolean writesWait() {
        return false;
    }

    /**
     * Waits until every write this store has applied so far - those of the calling request among
     * them - is durable, as its policy defines it; the API calls it after a write, outside any
     * critical section, before the answer goes out. Inside a coroutine the wait yields; on any
     * other thread it blocks, with the store's deadline; on a loop thread outside a coroutine it
     * refuses ({@link IllegalStateException}): a loop never blocks. Default: nothing to wait for.
     *
     * @throws StoreUnavailableException the writes could not be made durable in time (the disk is
     *                                   failing, or too slow): the request is answered 503
     */
    default void sync() {
    }

    /**
     * Where the broker keeps its subscriptions beyond the process, when this store keeps them (a
     * durable store does): asked once, as the broker is built. Default: empty, they live as long
     * as the process.
     */
    default Optional<SubscriptionKeeper> subscriptionKeeper() {
        return Optional.empty();
    }

    /** Where the broker keeps its context source registrations beyond the process; as {@link #subscriptionKeeper()}. */
    default Optional<RegistrationKeeper> registrationKeeper() {
        return Optional.empty();
    }

    /** Where the broker keeps its Hosted {@code @context}s beyond the process; as {@link #subscriptionKeeper()}. */
    default Optional<ContextKeeper> contextKeeper() {
        return Optional.empty();
    }

    /**
     * The store's temporal side - the history of every entity ({@link TemporalStore}) - when it
     * keeps one; the broker records every write's instances in it, inside the write's critical
     * section. Default: empty, the broker keeps no history (the temporal API answers 501).
     */
    default Optional<TemporalStore> temporal() {
        return Optional.empty();
    }

    /**
     * The store's own meters (a durable store's journal), bound by the broker to its registry as
     * it is built. Default: empty, none.
     */
    default Optional<MeterBinder> meters() {
        return Optional.empty();
    }
}
