package dev.cor.ngsild.store.postgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One PostgreSQL cluster for the whole test JVM, started on first use and stopped when the JVM
 * ends, and a fresh database in it for each store a test asks for: what the black-box suites run
 * over when they run against the PostgreSQL store ({@code -Dcor.test.store=postgres}). Any thread.
 */
public final class SharedPostgres {
    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static PostgresCluster cluster;

    private SharedPostgres() {
    }

    /** The store's name the suites are asked to run over ({@code cor.test.store}): {@code postgres}, or {@code null}. */
    public static boolean asked() {
        return "postgres".equals(System.getProperty("cor.test.store"));
    }

    private static synchronized PostgresCluster cluster() {
        if (cluster == null) {
            try {
                Path dir = Files.createTempDirectory("cor-shared-pg");
                PostgresCluster c = PostgresCluster.start(dir);
                Runtime.getRuntime().addShutdownHook(new Thread(c::close, "cor-shared-pg-stop"));
                cluster = c;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        return cluster;
    }

    /** An entity store (the package's, without the launcher's follower) over a fresh database, and how to end it. */
    public record Opened(dev.cor.ngsild.store.EntityStore store, AutoCloseable close) {
    }

    /** An entity store over a fresh database, migrated, keeping its history in PostgreSQL when {@code history}. */
    public static Opened open(boolean history) {
        PgDatabase db = database(16);
        try {
            return new Opened(PgStores.open(db, history), db::close);
        } catch (SQLException e) {
            db.close();
            throw new IllegalStateException("the test database could not be migrated", e);
        }
    }

    /**
     * A fresh, empty database of the shared cluster ({@code poolPerLoop} connections per loop, waits
     * and statements of 10 s); the caller migrates it and closes it.
     */
    static PgDatabase database(int poolPerLoop) {
        return database(poolPerLoop, 10_000, 10_000);
    }

    /** As {@link #database(int)}, with a test's own wait for a connection and statement deadline. */
    static PgDatabase database(int poolPerLoop, long waitMs, long statementTimeoutMs) {
        try {
            String uri = cluster().createDatabase("cor_shared_" + DATABASES.incrementAndGet());
            PgAddress a = PgAddress.parse(uri);
            return new PgDatabase(a.jdbcUrl("127.0.0.1"), a.user(), null, poolPerLoop, waitMs, statementTimeoutMs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A store over a new, empty database of the shared cluster; the caller closes it. */
    public static PostgresEntityStore newStore() {
        try {
            String uri = cluster().createDatabase("cor_shared_" + DATABASES.incrementAndGet());
            return PostgresEntityStore.builder(uri).poolPerLoop(16).open();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot open a store over the shared cluster: " + e.getMessage(), e);
        }
    }
}
