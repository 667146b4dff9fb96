package dev.cor.ngsild.store.postgres;

import java.sql.SQLException;

/**
 * Opens the stores of one database: its schema brought up to date ({@link PgSchema}), then the
 * entity store, with its history when asked. Until the package has its public builder, what the
 * tests and a launcher use; a plain thread (the migration waits for the database).
 */
final class PgStores {
    private PgStores() {
    }

    /** The entity store over {@code db}, alone on it, keeping history in PostgreSQL when {@code history}. */
    static PgEntityStore open(PgDatabase db, boolean history) throws SQLException {
        db.inTransaction(PgSchema.MIGRATIONS::migrate);
        PgTemporalStore temporal = history ? new PgTemporalStore(db) : null;
        if (temporal != null) {
            temporal.reloadTenants();
        }
        PgEntityStore store = new PgEntityStore(db, null, temporal);
        store.reloadTenants();
        return store;
    }
}
