package dev.cor.ngsild.store;

import dev.cor.ngsild.model.Entity;

/**
 * A change to one entity, computed by the store inside its critical section for that id: from
 * the current record ({@code null} when there is none) to the next one ({@code null} to delete
 * it). It must not wait, block or yield (design rule 1): it only builds the new record. Throwing
 * leaves the entity as it was; the exception reaches the writer.
 */
@FunctionalInterface
public interface EntityChange {
    Entity apply(Entity current);
}
