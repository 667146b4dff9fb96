package dev.cor.server;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import dev.cor.ngsild.store.StoreCopy;
import dev.cor.ngsild.store.durable.DurableEntityStore;
import dev.cor.ngsild.store.postgres.PostgresEntityStore;

/**
 * The one-shot modes that move a broker's data between a data directory and the PostgreSQL
 * database {@code --db} ({@link StoreCopy}): {@code --import DIR} loads the data directory DIR
 * into the database, which must hold nothing; {@code --export DIR} writes the database into DIR,
 * a new data directory (missing, or an empty directory). Each prints what it copied and exits 0,
 * or says why not and exits 1. No broker may run over either meanwhile: the data directory is
 * locked while it is read or written, a database is not (a broker over it would be seen as what
 * it holds, or race the copy). Parsed with the other flags; run by {@link CorServerMain} instead
 * of a broker.
 *
 * @param importDir {@code --import}, or {@code null}
 * @param exportDir {@code --export}, or {@code null}
 */
record DataTransfer(String importDir, String exportDir) {
    static final DataTransfer NONE = new DataTransfer(null, null);
    /** Exit status of a transfer refused or failed. */
    static final int FAILED = 1;

    /** The flags' lines of {@code --help}, indented as the others. */
    static final String USAGE = """
              --import DIR        with --store postgres --db URI: load the data directory DIR into the
                                  database, which must be empty, print what was copied and exit (0; 1
                                  when refused or failed); no broker may run over either meanwhile
              --export DIR        with --store postgres --db URI: write the database into DIR, a new
                                  data directory (missing or empty), print what was copied and exit""".indent(2);

    /** Whether {@code flag} is one of these. */
    static boolean takes(String flag) {
        return flag.equals("--import") || flag.equals("--export");
    }

    /** These flags with {@code flag} set to {@code value}. */
    DataTransfer with(String flag, String value) {
        return switch (flag) {
            case "--import" -> new DataTransfer(ServerOptions.nonEmpty(flag, value), exportDir);
            case "--export" -> new DataTransfer(importDir, ServerOptions.nonEmpty(flag, value));
            default -> throw new IllegalArgumentException(flag);
        };
    }

    /** Whether one of the modes was asked for. */
    boolean asked() {
        return importDir != null || exportDir != null;
    }

    /** Checks that the flags go together with {@code store} and {@code --check-data}; returns them. */
    DataTransfer checked(String store, String checkData) {
        if (!asked()) {
            return this;
        }
        if (importDir != null && exportDir != null) {
            throw new IllegalArgumentException("--import and --export go one at a time");
        }
        if (checkData != null) {
            throw new IllegalArgumentException("--check-data goes without --import and --export");
        }
        if (!store.equals("postgres")) {
            throw new IllegalArgumentException((importDir != null ? "--import" : "--export")
                    + " goes with --store postgres --db URI: the database the data is copied into or out of");
        }
        return this;
    }

    /** Runs the mode asked for; returns the exit status. */
    int run(DatabaseFlags db, PrintStream out, PrintStream err) {
        return importDir != null ? load(Path.of(importDir), db, out, err) : unload(Path.of(exportDir), db, out, err);
    }

    private static int load(Path dir, DatabaseFlags db, PrintStream out, PrintStream err) {
        String where = "--import " + dir;
        if (!Files.isDirectory(dir)) {
            err.println("cor-server: " + where + ": no such directory");
            return FAILED;
        }
        if (isEmpty(dir, err, where)) {
            err.println("cor-server: " + where + ": the directory is empty, not a data directory: nothing to import");
            return FAILED;
        }
        try (DurableEntityStore from = DurableEntityStore.builder(dir).open(); PostgresEntityStore to = db.open(TemporalFlags.DEFAULT)) {
            return copied(from, to, where, "the database holds a part of the copy: empty it (drop and create it) before"
                    + " trying again", out, err);
        } catch (RuntimeException e) { // the directory damaged or in use, the database cannot be reached
            err.println("cor-server: " + where + ": " + e.getMessage());
            return FAILED;
        }
    }

    private static int unload(Path dir, DatabaseFlags db, PrintStream out, PrintStream err) {
        String where = "--export " + dir;
        if (Files.exists(dir) && !(Files.isDirectory(dir) && isEmpty(dir, err, where))) {
            err.println("cor-server: " + where + ": it exists and is not an empty directory: the export makes a new data"
                    + " directory");
            return FAILED;
        }
        try (PostgresEntityStore from = db.open(TemporalFlags.DEFAULT); DurableEntityStore to = DurableEntityStore.builder(dir).open()) {
            return copied(from, to, where, "remove " + dir + ", which holds a part of the copy, before trying again",
                    out, err);
        } catch (RuntimeException e) {
            err.println("cor-server: " + where + ": " + e.getMessage());
            return FAILED;
        }
    }

    /** Copies, and says what was copied, or why not (and what to do with a part of a copy). */
    private static int copied(dev.cor.ngsild.store.EntityStore from, dev.cor.ngsild.store.EntityStore to, String where,
            String partial, PrintStream out, PrintStream err) {
        try {
            StoreCopy.Counts c = StoreCopy.copy(from, to);
            out.println("cor-server: " + where + ": copied " + c);
            return 0;
        } catch (StoreCopy.Refused e) {
            err.println("cor-server: " + where + ": refused: " + e.getMessage());
            return FAILED;
        } catch (RuntimeException e) {
            err.println("cor-server: " + where + ": failed (" + e.getMessage() + "); " + partial);
            return FAILED;
        }
    }

    /** Whether the directory holds no file; a directory that cannot be listed counts as not empty. */
    private static boolean isEmpty(Path dir, PrintStream err, String where) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.findAny().isEmpty();
        } catch (IOException e) {
            err.println("cor-server: " + where + ": " + dir + " cannot be listed: " + e.getMessage());
            return false;
        }
    }
}
