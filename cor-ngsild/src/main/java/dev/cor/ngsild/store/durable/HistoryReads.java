package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;

/**
 * A temporal read over a copy of one series' index and tail: the chunks whose range of the
 * query's time can hold an instance of its window are read (the tail's are in the heap), the
 * instances ordered by that time (then as recorded), and the first {@code limit} - or with
 * {@code lastN}, the last - kept. The chunks are read in the order that can contribute first
 * (for lastN, the latest) and the read stops at the first chunk that cannot change the answer.
 * Stateless; any thread, outside every lock.
 */
final class HistoryReads {
    private HistoryReads() {
    }

    private record Keyed(long time, long n, TemporalInstance instance) {
    }

    private static final Comparator<Keyed> ORDER = Comparator.comparingLong(Keyed::time).thenComparingLong(Keyed::n);

    static List<TemporalInstance> select(DurableTemporalStore store, EntityHistory.ChunkState[] chunks,
            List<TemporalInstance> tail, InstanceQuery q, int limit) {
        TimeProperty p = q.property();
        boolean last = q.lastN() > 0;
        int k = last ? Math.min(q.lastN(), limit) : limit;
        if (k == Integer.MAX_VALUE) {
            return all(store, chunks, tail, q);
        }
        // the kept ones: for the last k, a min-heap (its head the first to go); for the first k, a max-heap
        PriorityQueue<Keyed> kept = new PriorityQueue<>(last ? ORDER : ORDER.reversed());
        for (TemporalInstance i : tail) {
            offer(kept, i, q, k);
        }
        List<EntityHistory.ChunkState> candidates = new ArrayList<>();
        for (EntityHistory.ChunkState c : chunks) {
            HistoryFormat.Ranges r = c.ranges();
            if (r.count() > 0 && (q.unbounded() || (r.max(p) != TemporalInstance.NO_TIME && r.max(p) >= q.from()
                    && r.min(p) < q.to()))) {
                candidates.add(c);
            }
        }
        EntityHistory.ChunkState[] order = candidates.toArray(new EntityHistory.ChunkState[0]);
        if (last) {
            Arrays.sort(order, (a, b) -> Long.compare(b.ranges().max(p), a.ranges().max(p)));
        } else {
            Arrays.sort(order, (a, b) -> Long.compare(a.ranges().min(p), b.ranges().min(p)));
        }
        for (EntityHistory.ChunkState c : order) {
            if (kept.size() >= k) {
                long edge = kept.peek().time();
                if (last ? c.ranges().max(p) < edge : c.ranges().min(p) > edge) {
                    break; // nothing in it, nor in the chunks after it, comes before what is kept
                }
            }
            List<TemporalInstance> content = c.pending();
            if (content == null) {
                try {
                    content = store.readChunk(c.ref());
                } catch (IOException e) {
                    continue; // retention deleted its segment since the copy: it is gone
                }
            }
            for (TemporalInstance i : content) {
                offer(kept, i, q, k);
            }
        }
        Keyed[] out = kept.toArray(new Keyed[0]);
        Arrays.sort(out, ORDER);
        List<TemporalInstance> result = new ArrayList<>(out.length);
        for (Keyed x : out) {
            result.add(x.instance());
        }
        return result;
    }

    /**
     * Every instance of the window, without a bound: no heap to keep the first or last k, the
     * chunks read in order of their least time (so the sort at the end mostly finds runs in order).
     */
    private static List<TemporalInstance> all(DurableTemporalStore store, EntityHistory.ChunkState[] chunks,
            List<TemporalInstance> tail, InstanceQuery q) {
        TimeProperty p = q.property();
        List<EntityHistory.ChunkState> order = new ArrayList<>();
        for (EntityHistory.ChunkState c : chunks) {
            HistoryFormat.Ranges r = c.ranges();
            if (r.count() > 0 && (q.unbounded() || (r.max(p) != TemporalInstance.NO_TIME && r.max(p) >= q.from()
                    && r.min(p) < q.to()))) {
                order.add(c);
            }
        }
        order.sort((a, b) -> Long.compare(a.ranges().min(p), b.ranges().min(p)));
        List<Keyed> kept = new ArrayList<>();
        for (EntityHistory.ChunkState c : order) {
            List<TemporalInstance> content = c.pending();
            if (content == null) {
                try {
                    content = store.readChunk(c.ref());
                } catch (IOException e) {
                    continue; // retention deleted its segment since the copy: it is gone
                }
            }
            for (TemporalInstance i : content) {
                if (q.admits(i)) {
                    kept.add(new Keyed(i.time(p), HistoryFormat.number(i.instanceId()), i));
                }
            }
        }
        for (TemporalInstance i : tail) {
            if (q.admits(i)) {
                kept.add(new Keyed(i.time(p), HistoryFormat.number(i.instanceId()), i));
            }
        }
        kept.sort(ORDER);
        List<TemporalInstance> result = new ArrayList<>(kept.size());
        for (Keyed x : kept) {
            result.add(x.instance());
        }
        return result;
    }

    private static void offer(PriorityQueue<Keyed> kept, TemporalInstance i, InstanceQuery q, int k) {
        if (!q.admits(i)) {
            return;
        }
        kept.add(new Keyed(i.time(q.property()), HistoryFormat.number(i.instanceId()), i));
        if (kept.size() > k) {
            kept.poll();
        }
    }
}
