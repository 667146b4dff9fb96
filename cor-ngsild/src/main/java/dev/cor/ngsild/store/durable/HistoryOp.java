package dev.cor.ngsild.store.durable;

import java.util.List;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.TemporalInstance;

/**
 * One change of an entity's history as the journal keeps it (record types 12 to 16,
 * {@code doc/storage.md}, "History"): what {@link DurableTemporalStore} appends inside the
 * entity's lock, and what the recovery replays. Immutable; any thread.
 */
sealed interface HistoryOp {
    /** The tenant the entity is in. */
    String tenant();

    /** The entity's id. */
    String entityId();

    /** The journal's record type of this change. */
    int type();

    /**
     * Instances recorded (type 12), numbered {@code firstN}, {@code firstN + 1}, ... in the order
     * given (their ids are {@link TemporalInstance#idOf} of those numbers).
     */
    record Recorded(String tenant, String entityId, List<String> types, List<String> scopes, long deletedAt,
            long firstN, List<TemporalInstance> instances) implements HistoryOp {
        @Override
        public int type() {
            return Format.HISTORY_RECORD;
        }
    }

    /** The entity's whole history deleted (type 13). */
    record EntityDeleted(String tenant, String entityId) implements HistoryOp {
        @Override
        public int type() {
            return Format.HISTORY_ENTITY_DELETE;
        }
    }

    /** One attribute's instances deleted (type 14): of {@code datasetId} ({@code null}: the default ones), or all. */
    record AttributeDeleted(String tenant, String entityId, String attribute, String datasetId, boolean all)
            implements HistoryOp {
        @Override
        public int type() {
            return Format.HISTORY_ATTRIBUTE_DELETE;
        }
    }

    /** Instance number {@code n} replaced by {@code value} (type 15). */
    record InstanceModified(String tenant, String entityId, String attribute, long n, Attribute value)
            implements HistoryOp {
        @Override
        public int type() {
            return Format.HISTORY_INSTANCE_MODIFY;
        }
    }

    /** Instance number {@code n} deleted (type 16). */
    record InstanceDeleted(String tenant, String entityId, String attribute, long n) implements HistoryOp {
        @Override
        public int type() {
            return Format.HISTORY_INSTANCE_DELETE;
        }
    }
}
