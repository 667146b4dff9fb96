package dev.cor.ngsild.subscription;

import java.util.List;

import dev.cor.ngsild.model.Entity;

/**
 * One notification waiting in its subscription's queue: the records it reports, taken when the
 * write happened (the entity as the write left it; the one before, for {@code showChanges}).
 * Immutable; rendered only when it is sent, after the write's answer went out.
 */
record Notice(List<Change> data) {
    /**
     * @param entity  the record to report (for a deletion, the last one)
     * @param before  the record before the write ({@code null}: none, or not asked for)
     * @param deleted whether the write deleted the entity
     */
    record Change(Entity entity, Entity before, boolean deleted) {
    }
}
