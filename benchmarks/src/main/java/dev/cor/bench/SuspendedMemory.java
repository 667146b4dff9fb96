package dev.cor.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;

/**
 * Heap bytes a suspended coroutine costs: 10 000 coroutines suspended at once, at a shallow stack
 * and at a 50-frame one, measured from the used heap after full collections before and after.
 * Run as {@code java -jar benchmarks.jar memory}.
 */
final class SuspendedMemory {
    private static final int COUNT = 10_000;

    private SuspendedMemory() {
    }

    static void run() {
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        CorCoLoop loop = CorCoLoop.builder().name("memory").coroutineCap(COUNT).poolMax(0).watchdogMs(0).build().attach();
        System.out.printf("%-28s %12s%n", "suspended coroutines", "bytes each");
        for (int depth : new int[] {0, 50}) {
            for (int round = 0; round < 2; round++) { // the first round warms up
                long before = usedAfterGc(mem);
                CorCo[] cos = new CorCo[COUNT];
                for (int i = 0; i < COUNT; i++) {
                    cos[i] = CorCo.start(() -> descendThenYield(depth));
                }
                long after = usedAfterGc(mem);
                for (CorCo co : cos) {
                    co.resume();
                }
                if (round == 1) {
                    System.out.printf("%-28s %12d%n", COUNT + " at " + depth + " extra frames", (after - before) / COUNT);
                }
            }
        }
        loop.stop();
        loop.runOnce(0);
    }

    private static int descendThenYield(int depth) {
        if (depth == 0) {
            CorCo.yield();
            return 0;
        }
        return descendThenYield(depth - 1) + 1;
    }

    /** The used heap after full collections: the least of four (also StoreRecovery's). */
    static long usedAfterGc(MemoryMXBean mem) {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            used = Math.min(used, mem.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
