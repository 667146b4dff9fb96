package dev.cor.ngsild.store;

import dev.cor.ngsild.model.Entity;

/**
 * What one write did to one entity: the record before and after it ({@code null} for none).
 * Both are immutable snapshots.
 */
public record EntityWrite(Entity before, Entity after) {
    /** Whether the write made the entity (there was none before). */
    public boolean created() {
        return before == null && after != null;
    }

    /** Whether the write removed the entity. */
    public boolean deleted() {
        return before != null && after == null;
    }
}
