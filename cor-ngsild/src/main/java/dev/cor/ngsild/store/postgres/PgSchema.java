package dev.cor.ngsild.store.postgres;

import java.util.List;


/**
 * The whole schema, in the order its parts were added: each part owns its migrations (the class
 * that reads and writes those tables), and this list numbers them. A new part, or a change of an
 * existing one, is a new migration at the end - never an edit of one a database may have applied.
 */
final class PgSchema {
    /** Every migration, numbered 1, 2, 3... */
    static final PgMigrations MIGRATIONS = new PgMigrations(List.of(
            PgEntityStore.MIGRATIONS.get(0),
            PgKeepers.MIGRATION,
            PgEntityColumns.MIGRATION,
            PgTemporalStore.MIGRATIONS.get(0)));

    private PgSchema() {
    }
}
