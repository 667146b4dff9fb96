package dev.cor.ngsild.store;

import dev.cor.ngsild.model.Entity;

/**
 * What a writer has the store do with a change inside the entity's critical section, after the
 * change is applied and before the next write of the same entity can begin: where everything a
 * write causes that others observe in order - a subscription's notice, a history instance - takes
 * its place in that order. Two writes of one entity are observed in the order they were applied,
 * each with the record the other left, whichever loops or workers made them.
 * <p>
 * Called at most once per write, by the thread that makes it, and only when the change changed
 * something ({@code before != after}). It must not wait, block or yield, take a lock that can be
 * held across a yield, or write to the store (design rule 1): it only takes the change's place in
 * an order (an append to a lock-free queue); whatever takes longer is done later, outside, in that
 * order. It must not throw: the write stands whatever it does, and the store logs what it threw.
 */
@FunctionalInterface
public interface WriteObserver {
    /** Observes nothing. */
    WriteObserver NONE = (before, after) -> { };

    /**
     * @param before the record before the write ({@code null}: there was none)
     * @param after  the record the write left ({@code null}: it deleted the entity)
     */
    void applied(Entity before, Entity after);
}
