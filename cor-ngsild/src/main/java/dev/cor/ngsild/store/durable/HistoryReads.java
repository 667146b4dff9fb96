package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;

import dev.cor.ngsild.query.TemporalAggregation;
import dev.cor.ngsild.store.AggregationGroups;
import dev.cor.ngsild.store.ChunkSummary;
import dev.cor.ngsild.store.DatasetAggregate;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * A temporal read over a copy of one series' index and tail: the chunks whose range of the
 * query's time can hold an instance of its window are read (the tail's are in the heap), the
 * instances ordered by that time (then as recorded), and the first {@code limit} - or with
 * {@code lastN}, the last - kept. The chunks are read in the order that can contribute first
 * (for lastN, the latest) and the read stops at the first chunk that cannot change the answer.
 * Of a chunk read from disk only the instances its window may admit are decoded
 * ({@link DurableTemporalStore#readChunk(EntityHistory.ChunkRef, InstanceQuery)}).
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
        EntityHistory.ChunkState[] order = inWindow(chunks, q, p).toArray(new EntityHistory.ChunkState[0]);
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
            for (TemporalInstance i : content(store, c, q)) {
                offer(kept, i, q, k);
            }
        }
        return inOrder(new ArrayList<>(kept));
    }

    /**
     * Every instance of the window, without a bound: no heap to keep the first or last k, the
     * chunks read in order of their least time (so the sort at the end mostly finds runs in order).
     */
    private static List<TemporalInstance> all(DurableTemporalStore store, EntityHistory.ChunkState[] chunks,
            List<TemporalInstance> tail, InstanceQuery q) {
        TimeProperty p = q.property();
        List<EntityHistory.ChunkState> order = inWindow(chunks, q, p);
        order.sort((a, b) -> Long.compare(a.ranges().min(p), b.ranges().min(p)));
        List<Keyed> kept = new ArrayList<>();
        for (EntityHistory.ChunkState c : order) {
            admitted(kept, content(store, c, q), q);
        }
        admitted(kept, tail, q);
        return inOrder(kept);
    }

    /** The chunks whose range of {@code p} can hold an instance of {@code q}'s window (not empty ones). */
    private static List<EntityHistory.ChunkState> inWindow(EntityHistory.ChunkState[] chunks, InstanceQuery q, TimeProperty p) {
        List<EntityHistory.ChunkState> in = new ArrayList<>();
        for (EntityHistory.ChunkState c : chunks) {
            HistoryFormat.Ranges r = c.ranges();
            if (r.count() > 0 && (q.unbounded() || (r.max(p) != TemporalInstance.NO_TIME && r.max(p) >= q.from()
                    && r.min(p) < q.to()))) {
                in.add(c);
            }
        }
        return in;
    }

    /** Adds to {@code kept} those of {@code instances} that {@code q} admits, keyed by its time and their number. */
    private static void admitted(List<Keyed> kept, List<TemporalInstance> instances, InstanceQuery q) {
        for (TemporalInstance i : instances) {
            if (q.admits(i)) {
                kept.add(new Keyed(i.time(q.property()), HistoryFormat.number(i.instanceId()), i));
            }
        }
    }

    /** The instances of {@code kept} in read order: by time, then as recorded. */
    private static List<TemporalInstance> inOrder(List<Keyed> kept) {
        kept.sort(ORDER);
        List<TemporalInstance> result = new ArrayList<>(kept.size());
        for (Keyed x : kept) {
            result.add(x.instance());
        }
        return result;
    }

    /**
     * One series' aggregation (§ 4.5.19) over {@code q} (by observedAt, without lastN): a chunk is
     * taken as its summary when it has one, lies whole in the window and no other instance comes
     * between its own in the order a read gives (observedAt, then number) - so that the
     * aggregation sees what reading every instance gives, in the same order, without reading it
     * unless a period cuts it. Every other instance of the window is read as {@link #all} reads
     * them, and takes its place before, between or after those chunks.
     */
    static List<DatasetAggregate> aggregate(DurableTemporalStore store, EntityHistory.ChunkState[] chunks,
            List<TemporalInstance> tail, InstanceQuery q, Set<String> datasetIds, TemporalAggregation aggregation) {
        TimeProperty p = TimeProperty.OBSERVED_AT;
        List<EntityHistory.ChunkState> order = inWindow(chunks, q, p);
        order.sort((a, b) -> Long.compare(a.ranges().min(p), b.ranges().min(p)));
        int n = order.size();
        boolean[] whole = wholeChunks(order, tail, q);
        List<Keyed> read = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            if (!whole[k]) {
                admitted(read, content(store, order.get(k), InstanceQuery.ALL), q);
            }
        }
        admitted(read, tail, q);
        read.sort(ORDER);
        AggregationGroups g = new AggregationGroups(q, datasetIds);
        List<TemporalInstance> pending = new ArrayList<>();
        int at = 0;
        for (int k = 0; k < n; k++) {
            if (!whole[k]) {
                continue;
            }
            EntityHistory.ChunkState c = order.get(k);
            ChunkSummary s = c.summary();
            for (; at < read.size() && ORDER.compare(read.get(at), new Keyed(s.first(), c.minN(), null)) < 0; at++) {
                pending.add(read.get(at).instance());
            }
            g.instances(pending);
            pending.clear();
            g.summarised(s, () -> inTimeOrder(content(store, c, InstanceQuery.ALL)), () -> {
                if (c.pending() != null) {
                    return null; // in the heap: as cheap whole
                }
                try {
                    List<TemporalInstance> l = readNumbers(store, c.ref(), s.datasetId());
                    return l == null ? null : inTimeOrder(l);
                } catch (IOException e) {
                    return List.of(); // retention deleted its segment since the copy: it is gone
                }
            });
        }
        for (; at < read.size(); at++) {
            pending.add(read.get(at).instance());
        }
        g.instances(pending);
        return g.aggregate(aggregation);
    }

    /**
     * Which of {@code order} (the candidate chunks by least observedAt) an aggregation may take
     * whole: a summary, its observedAt range inside the window, and no instance of another chunk or
     * of the tail between its own - before it means an earlier time, or its first time with a
     * lower number; after it, a later time, or its last time with a higher number. Prefix maxima
     * and suffix minima make it one pass each way.
     */
    private static boolean[] wholeChunks(List<EntityHistory.ChunkState> order, List<TemporalInstance> tail, InstanceQuery q) {
        int n = order.size();
        boolean[] whole = new boolean[n];
        long[] tailTimes = new long[tail.size()];
        for (int k = 0; k < tailTimes.length; k++) {
            tailTimes[k] = tail.get(k).observedAt(); // newer than every chunk: after it at its last time
        }
        Arrays.sort(tailTimes);
        long[] sufMin = new long[n + 1];
        long[] sufMinN = new long[n + 1];
        sufMin[n] = Long.MAX_VALUE;
        sufMinN[n] = Long.MAX_VALUE;
        for (int k = n - 1; k >= 0; k--) {
            HistoryFormat.Ranges r = order.get(k).ranges();
            long min = r.minObserved();
            sufMin[k] = Math.min(min, sufMin[k + 1]);
            sufMinN[k] = min < sufMin[k + 1] ? order.get(k).minN()
                    : min == sufMin[k + 1] ? Math.min(order.get(k).minN(), sufMinN[k + 1]) : sufMinN[k + 1];
        }
        long preMax = Long.MIN_VALUE;
        long preMaxN = Long.MIN_VALUE;
        for (int k = 0; k < n; k++) {
            EntityHistory.ChunkState c = order.get(k);
            ChunkSummary s = c.summary();
            long min = c.ranges().minObserved();
            long max = c.ranges().maxObserved();
            if (s != null && min != TemporalInstance.NO_TIME && min >= q.from() && max < q.to()
                    && (preMax < min || (preMax == min && preMaxN < c.minN()))
                    && (sufMin[k + 1] > max || (sufMin[k + 1] == max && sufMinN[k + 1] > c.maxN()))) {
                int t = Arrays.binarySearch(tailTimes, min);
                int from = t >= 0 ? t : -t - 1;
                while (from > 0 && tailTimes[from - 1] == min) {
                    from--;
                }
                whole[k] = from == tailTimes.length || tailTimes[from] >= max && (tailTimes[from] > min || min == max);
            }
            if (max > preMax) {
                preMax = max;
                preMaxN = c.maxN();
            } else if (max == preMax) {
                preMaxN = Math.max(preMaxN, c.maxN());
            }
        }
        return whole;
    }

    /**
     * The instances of a written chunk as its numbers give them ({@link HistoryFormat#readNumbers}),
     * without decoding their attributes; {@code null} when its frame has none. Any thread.
     */
    static List<TemporalInstance> readNumbers(DurableTemporalStore store, EntityHistory.ChunkRef ref, String datasetId)
            throws IOException {
        ByteSource in = store.files.read(ref.segment(), ref.offset(), ref.length());
        EntityCodec codec = new EntityCodec();
        try {
            HistoryFormat.ChunkHeader h = HistoryFormat.readChunkHeader(in, ref.length(), in.u8(), codec);
            return h.numbersLength() == 0 ? null
                    : HistoryFormat.readNumbers(in.at(h.numbersAt(), h.numbersLength()), h.attribute(), datasetId);
        } catch (ByteSource.Malformed e) {
            throw new DataDamagedException(store.files.dir().resolve(HistoryFormat.segmentName(ref.segment())), ref.offset(),
                    "a history chunk that does not decode: " + e.getMessage());
        }
    }

    /** {@code l} (in number order) sorted by observedAt; stable: those of one time by number. */
    private static List<TemporalInstance> inTimeOrder(List<TemporalInstance> l) {
        List<TemporalInstance> out = new ArrayList<>(l);
        out.sort(Comparator.comparingLong(TemporalInstance::observedAt));
        return out;
    }

    /**
     * A chunk's instances: in the heap, or read - of a written one, those {@code window} may admit
     * ({@link InstanceQuery#ALL}: all); none when retention deleted its segment since the copy.
     */
    private static List<TemporalInstance> content(DurableTemporalStore store, EntityHistory.ChunkState c,
            InstanceQuery window) {
        if (c.pending() != null) {
            return c.pending();
        }
        try {
            return store.readChunk(c.ref(), window);
        } catch (IOException e) {
            return List.of(); // it is gone
        }
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
