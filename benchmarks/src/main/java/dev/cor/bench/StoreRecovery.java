package dev.cor.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;

import javax.management.ObjectName;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.examples.gateway.BenchEntities;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.ngsild.store.MemoryEntityStore;
import dev.cor.ngsild.store.durable.DurableEntityStore;
import dev.cor.ngsild.store.durable.FsyncPolicy;
import dev.cor.rest.CorRestJson;

/**
 * The stores with many entities - each like the bench's small one (an id, a type, a text
 * property; SHAPE {@code small}, the default) or its 20-attribute one ({@code attrs20}), under
 * its own id, read through the broker's own parser with the core context as a create would:
 * <ul>
 * <li>{@code load DIR N [SHAPE]}: writes N of them to a new data directory of the durable store,
 * waits until the journal has written them all, and ends the process without closing the store
 * (no snapshot: the journal alone, as a crash leaves it);</li>
 * <li>{@code recover DIR [histogram]}: opens the directory - timed - and says how much heap the
 * recovered store holds per entity (the used heap after full collections, before and after) and
 * the process's resident memory; then closes it, which takes a snapshot for the next run;</li>
 * <li>{@code memory N [SHAPE] [histogram]}: creates N of them in a {@link MemoryEntityStore} (the
 * records as the parser builds them, not as a recovery decodes them) and says the heap it holds
 * per entity.</li>
 * </ul>
 * {@code histogram} adds the classes that hold most of that heap, in bytes per entity (the live
 * objects of the whole process, so with the JDK's own).
 * Run as {@code java -jar benchmarks.jar storeRecovery load|recover|memory ...}.
 */
final class StoreRecovery {
    private StoreRecovery() {
    }

    static void run(String[] args) throws Exception {
        String what = args[0];
        boolean histogram = args[args.length - 1].equals("histogram");
        switch (what) {
            case "load" -> load(Path.of(args[1]), Integer.parseInt(args[2]), args.length > 3 ? args[3] : "small");
            case "memory" -> memory(Integer.parseInt(args[1]),
                    args.length > 2 && !args[2].equals("histogram") ? args[2] : "small", histogram);
            default -> recover(Path.of(args[1]), histogram);
        }
    }

    /** Entity {@code i} of a shape, as a create would read it: a fresh JSON tree, through the parser. */
    private static Entity entity(EntityParser parser, String shape, int i) throws IOException {
        byte[] text = switch (shape) {
            case "small" -> BenchEntities.SMALL;
            case "attrs20" -> BenchEntities.ATTRS20;
            default -> throw new IllegalArgumentException("no shape " + shape + ": small or attrs20");
        };
        ObjectNode json = (ObjectNode) CorRestJson.mapper().readTree(text);
        json.put("id", "urn:ngsi-ld:Bench:" + shape + "-" + i);
        return EntityEditor.create(parser.entity(json, true, EntityParser.Mode.WHOLE), System.currentTimeMillis());
    }

    private static EntityParser parser() {
        LdContext core = LdContexts.builder().build().core();
        return new EntityParser(core, NgsildLimits.defaults());
    }

    private static void memory(int n, String shape, boolean histogram) throws Exception {
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        EntityParser parser = parser();
        entity(parser, shape, -1); // the parser's and the model's classes loaded before the first measure
        long heapBefore = SuspendedMemory.usedAfterGc(mem);
        MemoryEntityStore store = new MemoryEntityStore();
        for (int i = 0; i < n; i++) {
            Entity e = entity(parser, shape, i);
            store.write("", e.id(), current -> e);
        }
        long heapAfter = SuspendedMemory.usedAfterGc(mem);
        System.out.printf("memory store, %d %s entities: heap held %.1f MiB, %d bytes per entity%n", store.count(""),
                shape, (heapAfter - heapBefore) / 1048576.0, (heapAfter - heapBefore) / Math.max(1, n));
        if (histogram) {
            histogram(n);
        }
    }

    /** The classes holding most of the live heap, in bytes per entity (jcmd's GC.class_histogram). */
    private static void histogram(long n) throws Exception {
        String text = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
        System.out.printf("%12s %12s  %s%n", "bytes/entity", "count/entity", "class");
        text.lines().filter(l -> l.matches("\\s*\\d+:.*")).limit(25).forEach(l -> {
            String[] f = l.trim().split("\\s+");
            System.out.printf("%12.1f %12.2f  %s%n", Long.parseLong(f[2]) / (double) n, Long.parseLong(f[1]) / (double) n, f[3]);
        });
    }

    private static void load(Path dir, int n, String shape) throws Exception {
        if (Files.exists(dir)) {
            throw new IllegalStateException(dir + " exists: load writes a new data directory");
        }
        EntityParser parser = parser();
        // interval: sync() waits until every record is written (not forced: the load is not what is measured)
        DurableEntityStore store = DurableEntityStore.builder(dir).fsync(FsyncPolicy.interval(1000))
                .snapshotBytes(1L << 40).open();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            Entity e = entity(parser, shape, i);
            store.write("", e.id(), current -> e);
            if (i % 10_000 == 9_999) {
                store.sync();
            }
        }
        store.sync();
        System.out.printf("loaded %d entities in %.1f s: %s%n", n, (System.nanoTime() - t0) / 1e9, sizes(dir));
        Runtime.getRuntime().halt(0); // no close: the journal alone, as a crash leaves it
    }

    private static void recover(Path dir, boolean histogram) throws Exception {
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
        if (histogram) {
            histogram(n);
        }
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
