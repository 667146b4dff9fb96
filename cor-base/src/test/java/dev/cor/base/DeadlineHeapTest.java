package dev.cor.base;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * The loop's deadline heap against a plain sorted list: whatever mix of adds, re-adds (a deadline
 * moved while armed) and removals from anywhere, the due entries come out in time order, each
 * once, and nothing is lost. Seeded: a failure repeats.
 */
class DeadlineHeapTest {
    private static final class Entry extends Deadline {
        final int id;

        Entry(int id) {
            this.id = id;
        }

        @Override
        void expire() {
        }

        @Override
        public String toString() {
            return "#" + id + "@" + when;
        }
    }

    @Test
    void randomAddsMovesAndRemovalsFromAnywhereKeepTheTimeOrderAndLoseNothing() {
        for (long seed = 1; seed <= 50; seed++) {
            Random r = new Random(seed);
            DeadlineHeap heap = new DeadlineHeap();
            List<Entry> all = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                all.add(new Entry(i));
            }
            List<Entry> armed = new ArrayList<>();
            for (int step = 0; step < 2_000; step++) {
                Entry e = all.get(r.nextInt(all.size()));
                int op = r.nextInt(3);
                if (op < 2) {
                    heap.add(e, r.nextInt(10_000)); // armed already: moved, never twice in the heap
                    if (!armed.contains(e)) {
                        armed.add(e);
                    }
                } else {
                    heap.remove(e);
                    armed.remove(e);
                    assertFalse(e.armed(), "removed but still armed: " + e);
                }
                assertEquals(armed.size(), heap.size(), "seed " + seed + " step " + step);
            }
            armed.sort(Comparator.comparingLong(x -> x.when));
            long now = 5_000;
            List<Long> due = new ArrayList<>();
            Deadline d;
            while ((d = heap.pollDue(now)) != null) {
                assertFalse(d.armed());
                due.add(d.when);
            }
            List<Long> expectedDue = armed.stream().filter(x -> x.when <= now).map(x -> x.when).toList();
            assertEquals(expectedDue, due, "seed " + seed + ": the due entries, in time order");
            assertTrue(heap.nextWhen() > now, "seed " + seed + ": an entry due now stayed behind");
            List<Long> rest = new ArrayList<>();
            Deadline any;
            while ((any = heap.pollAny()) != null) {
                rest.add(any.when);
            }
            rest.sort(null);
            assertEquals(armed.stream().filter(x -> x.when > now).map(x -> x.when).toList(), rest, "seed " + seed);
            assertEquals(0, heap.size());
            assertEquals(Long.MAX_VALUE, heap.nextWhen());
            assertNull(heap.pollDue(Long.MAX_VALUE));
        }
    }
}
