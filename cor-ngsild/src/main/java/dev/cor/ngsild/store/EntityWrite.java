package dev.cor.ngsild.store;

import dev.cor.ngsild.model.Entity;

/**
 * What one write did to one entity: the record before and after it ({@code null} for none).
 * Both are immutable snapshots.
 */
public record EntityWrite(Entity before, Entity after) {
    public boolean created() {
        return before == null && after != null;
    }

    public boolean deleted() {
        return before != null && after == null;
    }
}
