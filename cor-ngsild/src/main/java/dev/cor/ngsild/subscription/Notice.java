package dev.cor.ngsild.subscription;

import java.util.List;
import java.util.Map;

import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;

/**
 * One notification's worth of changes waiting in its subscription's queue: the records it
 * reports, taken when the write happened (the entity as the write left it; the one before, for
 * {@code showChanges}). Rendered after the write's answer went out - by the write's own
 * post-response phase when it gets there first, else by the sender - and the text kept
 * ({@link #rendered}): the work of a notification is done in the phase of the write that caused it.
 */
final class Notice {
    /**
     * @param entity  the record to report (for a deletion, the last one)
     * @param before  the record before the write ({@code null}: none, or not asked for)
     * @param deleted whether the write deleted the entity
     * @param deletedAttributes the attribute instances the write deleted that the notification
     *                          reports (attributeDeleted), by attribute - every instance of an
     *                          attribute it deleted whole, or those of the datasetIds it deleted
     *                          (§ 4.5.5) - as they were last; empty for none
     * @param deletedAt when the write deleted them, or the entity (epoch milliseconds; 0 for no deletion)
     */
    record Change(Entity entity, Entity before, boolean deleted, Map<String, AttributeList> deletedAttributes,
            long deletedAt) {
        Change(Entity entity, Entity before, boolean deleted) {
            this(entity, before, deleted, Map.of(), 0);
        }
    }

    private final List<Change> data;
    /**
     * A context source notification's (§ 5.3.2) trigger reason - newlyMatching, updated,
     * noLongerMatching - or {@code null} for a notification of entities.
     */
    final String triggerReason;
    /** The entities as notification data (JSON objects joined by commas), once rendered. */
    volatile String rendered;
    /** Set by the sender when it takes the notice: a phase that comes later need not render it. */
    volatile boolean taken;

    Notice(List<Change> data) {
        this.data = data;
        this.triggerReason = null;
    }

    /** A context source notification: its data (registrations) rendered already. */
    Notice(String rendered, String triggerReason) {
        this.data = List.of();
        this.rendered = rendered;
        this.triggerReason = triggerReason;
    }

    List<Change> data() {
        return data;
    }
}
