package dev.cor.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;

import dev.cor.ngsild.store.postgres.PostgresEntityStore;

/**
 * The PostgreSQL store's flags ({@code --store postgres}): {@code --db URI} (libpq's form,
 * {@code postgresql://USER@HOST:PORT/DB}; never a password), {@code --dbPasswordFile FILE} (else
 * the environment's {@code COR_DB_PASSWORD}, else none), {@code --dbPoolPerLoop N} (connections
 * each loop keeps; the plain threads share as many) and {@code --dbTimeout MS} (a statement's
 * deadline, and a free connection's). Parsed with the other flags on the main thread; the
 * password is read when the store opens, and never printed.
 *
 * @param uri          {@code --db}, or {@code null}
 * @param passwordFile {@code --dbPasswordFile}, or {@code null}
 * @param poolPerLoop  connections per loop
 * @param timeoutMs    a statement's deadline, milliseconds
 */
record DatabaseFlags(String uri, String passwordFile, int poolPerLoop, int timeoutMs) {
    static final DatabaseFlags NONE = new DatabaseFlags(null, null, 8, 10_000);
    /** Where the password comes from when no file is named. */
    static final String PASSWORD_VARIABLE = "COR_DB_PASSWORD";

    /** The flags' lines of {@code --help}, indented as the others. */
    static final String USAGE = """
              --db URI            with --store postgres: the database, postgresql://USER@HOST:PORT/DB
                                  [?sslmode=require|verify-full|...]; the password is never part of it
              --dbPasswordFile FILE  the role's password, read from FILE (else from the environment's
                                  COR_DB_PASSWORD, else none: trust or peer authentication)
              --dbPoolPerLoop N   database connections each loop keeps (and the helper threads share);
                                  a request waits for a free one at most --dbTimeout (default 8)
              --dbTimeout MS      a statement's deadline in the database, and a free connection's
                                  (default 10000): past it the request answers 503""".indent(2);

    /** Whether {@code flag} is one of these. */
    static boolean takes(String flag) {
        return flag.equals("--db") || flag.equals("--dbPasswordFile") || flag.equals("--dbPoolPerLoop")
                || flag.equals("--dbTimeout");
    }

    /** These flags with {@code flag} set to {@code value}. */
    DatabaseFlags with(String flag, String value) {
        return switch (flag) {
            case "--db" -> {
                PostgresEntityStore.builder(value); // refuses a bad URI, or one with a password, now (without repeating it)
                yield new DatabaseFlags(value, passwordFile, poolPerLoop, timeoutMs);
            }
            case "--dbPasswordFile" -> new DatabaseFlags(uri, ServerOptions.nonEmpty(flag, value), poolPerLoop, timeoutMs);
            case "--dbPoolPerLoop" -> new DatabaseFlags(uri, passwordFile, number(flag, value, 1, 1_000), timeoutMs);
            case "--dbTimeout" -> new DatabaseFlags(uri, passwordFile, poolPerLoop, number(flag, value, 1, 3_600_000));
            default -> throw new IllegalArgumentException(flag);
        };
    }

    private static int number(String flag, String v, int min, int max) {
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException(flag + " takes a number from " + min + " to " + max + ", not " + v);
    }

    /** Checks that the flags go together with {@code store}; returns them. */
    DatabaseFlags checked(String store) {
        boolean postgres = store.equals("postgres");
        if (postgres && uri == null) {
            throw new IllegalArgumentException("--store postgres needs --db postgresql://USER@HOST:PORT/DB");
        }
        if (!postgres && (uri != null || passwordFile != null)) {
            throw new IllegalArgumentException("--db and --dbPasswordFile go with --store postgres");
        }
        return this;
    }

    /**
     * Opens the store: the password read (the file's first line, or the variable), the host
     * resolved, the schema made or migrated; its history kept as long as {@code temporal} says.
     *
     * @throws IllegalStateException the password file cannot be read, or the database cannot be
     *                               opened (its SQLState and the driver's reason; never the password)
     */
    PostgresEntityStore open(TemporalFlags temporal) {
        String password;
        if (passwordFile != null) {
            try {
                String text = Files.readString(Path.of(passwordFile), StandardCharsets.UTF_8);
                int eol = text.indexOf('\n');
                password = (eol >= 0 ? text.substring(0, eol) : text).stripTrailing();
            } catch (IOException e) {
                throw new IllegalStateException("--dbPasswordFile " + passwordFile + " cannot be read: " + e.getMessage(), e);
            }
        } else {
            password = System.getenv(PASSWORD_VARIABLE);
        }
        try {
            return PostgresEntityStore.builder(uri).password(password).poolPerLoop(poolPerLoop).waitMs(timeoutMs)
                    .statementTimeoutMs(timeoutMs).historyMaxAgeMs(temporal.maxAgeMs()).open();
        } catch (SQLException e) {
            throw new IllegalStateException("cannot open the database " + PostgresEntityStore.builder(uri) + " ("
                    + e.getSQLState() + "): " + e.getMessage(), e);
        }
    }
}
