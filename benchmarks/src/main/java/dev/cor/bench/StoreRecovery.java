package dev.cor.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.ngsild.store.durable.DurableEntityStore;
import dev.cor.ngsild.store.durable.FsyncPolicy;
import dev.cor.rest.CorRestJson;

/**
 * The durable store with many small entities - each like the bench's small one (an id, a type, a
 * text property), read through the broker's own parser with the core context as a create would:
 * <ul>
 * <li>{@code load DIR N}: writes N of them to a new data directory, waits until the journal has
 * written them all, and ends the process without closing the store (no snapshot: the journal
 * alone, as a crash leaves it);</li>
 * <li>{@code recover DIR}: opens the directory - timed - and says how much heap the recovered
 * store holds per entity (the used heap after full collections, before and after) and the
 * process's resident memory; then closes it, which takes a snapshot for the next run.</li>
 * </ul>
 * Run as {@code java -jar benchmarks.jar storeRecovery load|recover DIR [N]}.
 */
final class StoreRecovery {
    private StoreRecovery() {
    }

    static void run(String[] args) throws Exception {
        String what = args[0];
        Path dir = Path.of(args[1]);
        if (what.equals("load")) {
            load(dir, Integer.parseInt(args[2]));
        } else {
            recover(dir);
        }
    }

    private static void load(Path dir, int n) throws Exception {
        if (Files.exists(dir)) {
            throw new IllegalStateException(dir + " exists: load writes a new data directory");
        }
        LdContext core = LdContexts.builder().build().core();
        EntityParser parser = new EntityParser(core, NgsildLimits.defaults());
        // interval: sync() waits until every record is written (not forced: the load is not what is measured)
        DurableEntityStore store = DurableEntityStore.builder(dir).fsync(FsyncPolicy.interval(1000))
                .snapshotBytes(1L << 40).open();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            String id = "urn:ngsi-ld:Bench:small-" + i;
            JsonNode json = CorRestJson.mapper().readTree("{\"id\":\"" + id
                    + "\",\"type\":\"Bench\",\"name\":{\"type\":\"Property\",\"value\":\"small\"}}");
            Entity e = EntityEditor.create(parser.entity(json, true, EntityParser.Mode.WHOLE), System.currentTimeMillis());
            store.write("", id, current -> e);
            if (i % 10_000 == 9_999) {
                store.sync();
            }
        }
        store.sync();
        System.out.printf("loaded %d entities in %.1f s: %s%n", n, (System.nanoTime() - t0) / 1e9, sizes(dir));
        Runtime.getRuntime().halt(0); // no close: the journal alone, as a crash leaves it
    }

    private static void recover(Path dir) throws IOException {
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        String before = sizes(dir);
        long heapBefore = SuspendedMemory.usedAfterGc(mem);
        long t0 = System.nanoTime();
        DurableEntityStore store = DurableEntityStore.builder(dir).open();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        long heapAfter = SuspendedMemory.usedAfterGc(mem);
        long n = store.count("");
        System.out.printf("recovered %d entities in %d ms from %s (%s)%n", n, ms, before, store.recoverySummary());
        System.out.printf("heap held by the store: %.1f MiB, %d bytes per entity; process resident: %s%n",
                (heapAfter - heapBefore) / 1048576.0, (heapAfter - heapBefore) / Math.max(1, n), rss());
        long c0 = System.nanoTime();
        store.close();
        System.out.printf("closed (the last snapshot) in %d ms: %s%n", (System.nanoTime() - c0) / 1_000_000, sizes(dir));
    }

    private static String sizes(Path dir) throws IOException {
        long journal = 0;
        long snapshot = 0;
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                String name = p.getFileName().toString();
                if (name.startsWith("journal-")) {
                    journal += Files.size(p);
                } else if (name.startsWith("snapshot-")) {
                    snapshot += Files.size(p);
                }
            }
        }
        return String.format("journal %.1f MiB, snapshot %.1f MiB", journal / 1048576.0, snapshot / 1048576.0);
    }

    private static String rss() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return line.substring(6).trim();
            }
        }
        return "?";
    }
}
