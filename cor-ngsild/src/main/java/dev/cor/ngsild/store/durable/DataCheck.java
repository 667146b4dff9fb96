package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cor.ngsild.ld.HostedContext;
import dev.cor.ngsild.store.MemoryEntityStore;
import dev.cor.ngsild.store.RegistrationKeeper;
import dev.cor.ngsild.store.SubscriptionKeeper;

/**
 * Verifies a data directory without starting a broker ({@code cor-server.jar --check-data DIR}):
 * reads it exactly as the recovery at start does - every header, frame, CRC, sequence number and
 * record decoded and applied to a throwaway memory store - but changes nothing. Its verdict is
 * the start's: {@link Report#ok()} when a broker would start on it (a torn tail is named, with
 * what the start would truncate), else the damage, with the same file and offset the start names.
 */
public final class DataCheck {
    private DataCheck() {
    }

    /** What the check found: the lines to print, and whether a broker would start. */
    public record Report(boolean ok, List<String> lines) {
    }

    /** Checks {@code dir} on the real file system; never throws for what it finds, the report says it. */
    public static Report run(Path dir) {
        return run(dir, DataFiles.system());
    }

    /** Checks {@code dir} through {@code files} (a test's layer). */
    public static Report run(Path dir, DataFiles files) {
        List<String> lines = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            lines.add(dir + ": no such directory");
            return new Report(false, lines);
        }
        MemoryEntityStore memory = new MemoryEntityStore();
        Map<String, HostedContext> contexts = new LinkedHashMap<>();
        Map<String, SubscriptionKeeper.Kept> subscriptions = new LinkedHashMap<>();
        Map<String, RegistrationKeeper.Kept> registrations = new LinkedHashMap<>();
        Map<String, SubscriptionKeeper.Kept> csourceSubscriptions = new LinkedHashMap<>();
        Recovery.Outcome r;
        DurableTemporalStore history;
        try {
            history = DurableTemporalStore.open(dir, files, dev.cor.ngsild.store.TemporalRetention.FOREVER, 64L << 20,
                    Long.MAX_VALUE, false);
            r = new Recovery(dir, files, new DurableEntityStore.Apply(memory, contexts, subscriptions, registrations,
                    csourceSubscriptions, history), false).run();
            history.recovered();
        } catch (DataDamagedException e) {
            lines.add("DAMAGED: " + e.getMessage());
            lines.add("the broker refuses to start on " + dir + " (doc/storage.md, \"When the data is damaged\")");
            return new Report(false, lines);
        } catch (IOException | RuntimeException e) {
            lines.add("UNREADABLE: " + dir + ": " + e);
            return new Report(false, lines);
        }
        lines.add(dir + ": format version " + Format.VERSION);
        if (r.snapshot != null) {
            lines.add(r.snapshot.getFileName() + ": holds the records up to " + r.snapshotSeq + ": " + r.snapshotTenants
                    + " tenant(s), " + r.snapshotEntities + " entities, " + r.snapshotContexts + " hosted @context(s), "
                    + r.snapshotSubscriptions + " subscription(s), " + r.snapshotRegistrations + " registration(s), "
                    + r.snapshotCsourceSubscriptions + " subscription(s) to registrations");
        } else {
            lines.add("no snapshot");
        }
        for (Path p : r.segments) {
            lines.add(p.getFileName() + (r.coveredSegments.contains(p) ? ": held by the snapshot (the start deletes it)" : ""));
        }
        lines.addAll(r.notes);
        long[] census = history.census();
        lines.add(HistoryFormat.DIRECTORY + "/: " + history.files.sizes.size() + " history segment(s), " + census[0]
                + " chunk(s) holding " + census[1] + " instance(s), and " + census[2]
                + " instance(s) only in the journal (the start writes them)");
        lines.addAll(history.notes);
        long entities = 0;
        for (String t : memory.tenants()) {
            entities += memory.count(t);
        }
        lines.add("OK: " + r.replayed + " journal record(s) after the snapshot, the last one " + r.lastSeq()
                + "; a broker starts with " + memory.tenants().size() + " tenant(s), " + entities + " entities, "
                + contexts.size() + " hosted @context(s), " + subscriptions.size() + " subscription(s), "
                + registrations.size() + " registration(s), " + csourceSubscriptions.size() + " subscription(s) to registrations");
        return new Report(true, lines);
    }
}
