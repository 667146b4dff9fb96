package dev.cor.ngsild.store;

import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

import dev.cor.ngsild.model.TemporalInstance;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The temporal side of a store (ETSI GS CIM 009 § 4.5.7, § 5.6.11-5.6.16, § 5.7.3-5.7.4): per
 * tenant, per entity, per attribute, the instances the broker recorded - those of every write of
 * the current state, and those a client provided through the temporal API. An
 * {@link EntityStore} offers one ({@link EntityStore#temporal()}) when it keeps history; a
 * durable store keeps it with the same guarantee as its current state, a database-backed one in
 * its tables.
 * <p>
 * <b>Threads.</b> Every loop and worker. The writes ({@link #record} and the edits) of one entity
 * are applied one after the other, in the order they were called, and the instances they record
 * take their place in that order; they must not wait (design rule 1) - a write of the current
 * state records inside the entity's critical section ({@link WriteObserver}) - and a store whose
 * writes must be made durable does it in {@link EntityStore#sync()}, which the writer calls after,
 * as for the current state. Reads never wait for writers: they see an entity's history before or
 * after a write, never a part of one. Reads may read from disk; a store says whether they can be
 * slow ({@link #readsWait()}) so that the API runs them as coroutines.
 */
public interface TemporalStore {
    /**
     * Records {@code instances} - each without an id, which the store gives - as the latest of the
     * entity's history, in the order given, with {@code types} and {@code scopes} as what the
     * entity is now ({@code null}: unchanged; a first record without types is refused by the
     * caller). {@code deletedAt}, unless {@link TemporalInstance#NO_TIME}, says the entity was
     * deleted then (its attributes' deletion instances are among {@code instances}); a later
     * record makes it exist again.
     *
     * @return the instances as recorded, with their ids, in the order given
     * @throws StoreUnavailableException the store cannot take a write now (nothing is recorded)
     */
    List<TemporalInstance> record(String tenant, String entityId, List<String> types, List<String> scopes,
            List<TemporalInstance> instances, long deletedAt);

    /** The entity's temporal head, or {@code null} when the tenant holds no history of it. */
    TemporalEntity entity(String tenant, String entityId);

    /**
     * Visits the heads of the tenant's entities in id order until {@code visitor} answers
     * {@code false}; nothing happens for a tenant without history. The visitor must not write.
     */
    default void entities(String tenant, Predicate<TemporalEntity> visitor) {
        entities(tenant, false, visitor);
    }

    /**
     * As {@link #entities(String, Predicate)}, in descending id order when {@code descending}
     * (a temporal query's {@code orderBy=id;desc}, which pages from the end without collecting).
     */
    void entities(String tenant, boolean descending, Predicate<TemporalEntity> visitor);

    /**
     * The instances of one attribute of one entity that {@code query} asks for, ordered by its time
     * (the oldest first); empty when there are none. At most {@code limit} of them: the first
     * {@code limit} in that order, or with {@link InstanceQuery#lastN}, the last.
     */
    List<TemporalInstance> instances(String tenant, String entityId, String attribute, InstanceQuery query, int limit);

    /**
     * Whether {@code window} (its time and datasetId, not its lastN) holds an instance of one
     * attribute of one entity that records no deletion: what a temporal query's attrs test reads
     * of an attribute. A store that can tell from what it keeps in the heap says so without
     * reading its instances. Default: the first instances of the window, read.
     */
    default boolean shows(String tenant, String entityId, String attribute, InstanceQuery window) {
        List<TemporalInstance> first = instances(tenant, entityId, attribute, window, 1);
        if (first.isEmpty()) {
            return false;
        }
        if (!first.get(0).deleted()) {
            return true;
        }
        for (TemporalInstance i : instances(tenant, entityId, attribute, window, Integer.MAX_VALUE)) {
            if (!i.deleted()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The aggregated representation (§ 4.5.19) of one attribute of one entity over
     * {@code window}: per datasetId (those of {@code datasetIds}, {@link InstanceQuery#DEFAULT_DATASET}
     * for the default instances; {@code null}: all), in the order they first appear, the periods of
     * {@code aggregation} over its instances; empty when the window holds none. A store that keeps
     * summaries of its chunks ({@link ChunkSummary}) hands them to the aggregation, which takes a
     * summary where a period holds the chunk whole - the answer is the one the instances give.
     * Default: every instance of the window read, as {@link #instances} answers them.
     */
    default List<DatasetAggregate> aggregate(String tenant, String entityId, String attribute, InstanceQuery window,
            java.util.Set<String> datasetIds, dev.cor.ngsild.query.TemporalAggregation aggregation) {
        AggregationGroups g = new AggregationGroups(window, datasetIds);
        g.instances(instances(tenant, entityId, attribute, window, Integer.MAX_VALUE));
        return g.aggregate(aggregation);
    }

    /**
     * Deletes the entity's whole temporal evolution (§ 5.6.13).
     *
     * @return whether there was one
     */
    boolean deleteEntity(String tenant, String entityId);

    /**
     * Deletes instances of one attribute (§ 5.6.14): those of {@code datasetId} ({@code null}: the
     * default instances), or with {@code all}, every one.
     *
     * @return whether there was one to delete
     */
    boolean deleteAttribute(String tenant, String entityId, String attribute, String datasetId, boolean all);

    /**
     * Replaces one instance (§ 5.6.15) with {@code value} ({@link TemporalInstance#modifiedTo}): its
     * id, deletedAt and createdAt are kept; its modifiedAt is {@code value}'s.
     *
     * @return whether the instance was there
     */
    boolean modifyInstance(String tenant, String entityId, String attribute, String instanceId,
            dev.cor.ngsild.model.Attribute value);

    /**
     * Deletes one instance (§ 5.6.16).
     *
     * @return whether the instance was there
     */
    boolean deleteInstance(String tenant, String entityId, String attribute, String instanceId);

    /**
     * The tenants that have had history recorded ({@link #hasTenant}), in no order: a tenant the
     * temporal API made holds history and no entity, so the entity store's tenants do not name it.
     * What a copy of a store ({@link StoreCopy}) walks. Default: refused - a store that cannot list
     * them cannot be copied, rather than copied without some of its history.
     */
    default java.util.Set<String> tenants() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not list its tenants");
    }

    /** Whether the tenant has had history recorded (it stays a tenant when its evolutions are deleted). */
    boolean hasTenant(String tenant);

    /** How many entities of the tenant have a history. */
    int count(String tenant);

    /**
     * Drops what the retention no longer keeps: instances recorded before {@code nowMs} minus the
     * age kept, and the oldest while the history is over its byte bound. Called now and then by the
     * broker, on a thread that may wait; returns how many instances it dropped.
     */
    long expire(long nowMs);

    /**
     * How often the broker calls {@link #expire}, milliseconds: a store whose expiry is cheap
     * keeps closer to its bound by being asked often. Default: every 10 s.
     */
    default long expireEveryMs() {
        return 10_000;
    }

    /** Whether a read can wait on a disk (the API then runs temporal reads as coroutines). Default: no. */
    default boolean readsWait() {
        return false;
    }

    /** The store's own meters, bound by the broker as it is built. Default: none. */
    default Optional<MeterBinder> meters() {
        return Optional.empty();
    }
}
