package dev.cor.ngsild.subscription;

import java.util.List;
import java.util.Map;

import dev.cor.ngsild.model.AttributeList;
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
     * @param deletedAttributes the attributes the write deleted that the notification reports
     *                          (attributeDeleted), with the record they were last in; empty for none
     */
    record Change(Entity entity, Entity before, boolean deleted, Map<String, AttributeList> deletedAttributes) {
        Change(Entity entity, Entity before, boolean deleted) {
            this(entity, before, deleted, Map.of());
        }
    }
}
