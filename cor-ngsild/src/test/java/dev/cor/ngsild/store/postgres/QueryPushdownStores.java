package dev.cor.ngsild.store.postgres;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cor.ngsild.store.EntityStore;

/**
 * PostgreSQL-backed stores for the black-box query suites that run over them (the conformance
 * package's {@code Postgres*Test}): one cluster for the whole test run, started on the first call
 * and stopped as the JVM exits, and a fresh database per call, migrated to the whole schema - so
 * that each suite starts empty and the run pays for one {@code initdb}. Test code only; any
 * thread.
 */
public final class QueryPushdownStores {
    private static PostgresCluster cluster;
    private static Path dir;
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private QueryPushdownStores() {
    }

    /** A store over a new, empty database of the shared cluster (started now if it is not yet). */
    public static synchronized EntityStore fresh() throws IOException, InterruptedException, SQLException {
        if (cluster == null) {
            dir = Files.createTempDirectory("cor-query-pushdown");
            cluster = PostgresCluster.start(dir);
            Runtime.getRuntime().addShutdownHook(new Thread(QueryPushdownStores::stop, "cor-query-pushdown-stop"));
        }
        String name = "pushdown_" + DATABASES.incrementAndGet();
        String base = "jdbc:postgresql://127.0.0.1:" + cluster.port() + "/";
        PgDatabase admin = new PgDatabase(base + "postgres?sslmode=disable", "postgres", null, 1, 5_000, 30_000);
        try {
            admin.read(c -> {
                try (Statement st = c.createStatement()) {
                    st.execute("CREATE DATABASE " + name); // outside a transaction, as CREATE DATABASE must be
                }
                return null;
            });
        } finally {
            admin.close();
        }
        PgDatabase db = new PgDatabase(base + name + "?sslmode=disable", "postgres", null, 8, 5_000, 10_000);
        db.inTransaction(c -> PgSchema.MIGRATIONS.migrate(c));
        return new PgEntityStore(db);
    }

    private static synchronized void stop() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                // a temporary directory left behind: the system's to clean
            }
        }
    }
}
