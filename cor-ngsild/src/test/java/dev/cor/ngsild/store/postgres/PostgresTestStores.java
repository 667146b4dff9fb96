package dev.cor.ngsild.store.postgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cor.ngsild.store.EntityStore;

/**
 * PostgreSQL stores for tests outside this package (the conformance suites) and inside it: one
 * throwaway cluster per JVM ({@link PostgresCluster}), started on first use and stopped by a
 * shutdown hook, and a fresh database per call ({@code cor_1}, {@code cor_2}...), so that each
 * caller starts empty. Any thread.
 */
public final class PostgresTestStores {
    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static PostgresCluster cluster;

    private PostgresTestStores() {
    }

    /** An entity store over a fresh database, and how to end it. */
    public record Opened(EntityStore store, AutoCloseable close) {
    }

    /** An entity store over a fresh database, migrated, keeping its history in PostgreSQL when {@code history}. */
    public static Opened open(boolean history) {
        PgDatabase db = database();
        try {
            return new Opened(PgStores.open(db, history), db::close);
        } catch (SQLException e) {
            db.close();
            throw new IllegalStateException("the test database could not be migrated", e);
        }
    }

    /**
     * A fresh, empty database of the shared cluster (16 connections per loop, waits and statements
     * of 10 s); the caller migrates it and closes it.
     */
    static PgDatabase database() {
        return database(16);
    }

    /** As {@link #database()}, with {@code poolPerLoop} connections per loop. */
    static PgDatabase database(int poolPerLoop) {
        PostgresCluster c = cluster();
        String name = "cor_" + DATABASES.incrementAndGet();
        PgDatabase admin = new PgDatabase(url(c, "postgres"), "postgres", null, 1, 10_000, 10_000);
        try {
            admin.read(conn -> {
                try (Statement st = conn.createStatement()) {
                    st.execute("CREATE DATABASE " + name);
                }
                return null;
            });
        } catch (SQLException e) {
            throw new IllegalStateException("the test database " + name + " could not be made", e);
        } finally {
            admin.close();
        }
        return new PgDatabase(url(c, name), "postgres", null, poolPerLoop, 10_000, 10_000);
    }

    private static String url(PostgresCluster c, String database) {
        return "jdbc:postgresql://127.0.0.1:" + c.port() + "/" + database + "?sslmode=disable";
    }

    private static synchronized PostgresCluster cluster() {
        if (cluster == null) {
            try {
                Path dir = Files.createTempDirectory("cor-pg-tests");
                PostgresCluster c = PostgresCluster.start(dir);
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    c.close();
                    delete(dir);
                }, "cor-pg-tests-stop"));
                cluster = c;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted starting PostgreSQL", e);
            }
        }
        return cluster;
    }

    private static void delete(Path dir) {
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory: the system cleans it
        }
    }
}
