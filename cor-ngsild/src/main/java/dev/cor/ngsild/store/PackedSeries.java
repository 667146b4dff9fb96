package dev.cor.ngsild.store;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.query.TemporalAggregation;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * One attribute's instances in the {@link MemoryTemporalStore}, in the order recorded: sealed
 * {@link Block}s of {@value #BLOCK} instances packed in one byte array each (the durable store's
 * attribute form, {@link EntityCodec}), then a tail of at most {@value #BLOCK} instances as
 * objects. A million instances are then some 8 000 arrays rather than five million objects, so
 * that a heap full of history costs the collector little to trace - with every instance an object
 * graph, each recorded instance survived into the old generation and was copied on its way, and
 * recording cost half again the write it recorded.
 * <p>
 * Immutable as its readers see it: an append returns a new series that shares the arrays (it only
 * writes beyond the old series' {@code tailSize} and {@code blockCount}), any other change builds
 * what it touches anew. Positions are counted since the series began ({@link #base} is the first
 * kept), so that dropping the oldest instances leaves the other blocks as they are. Made and
 * changed under the owning history's monitor; read by any thread without a lock.
 */
final class PackedSeries {
    /** How many instances a block holds when sealed: an hour of per-second data is 28 of them. */
    static final int BLOCK = 128;
    /** What a block counts for beyond its packed bytes: its objects, its observedAt array's header, its summary. */
    static final int BLOCK_OVERHEAD = 320;

    /**
     * A run of instances, positions {@code [start, end)}, packed: per instance {@code u8} flags (1:
     * a deletion, 2: an id {@link TemporalInstance#idOf} did not give), the id's number
     * ({@code varlong}) or the id ({@code string}), the {@code zigzag} deletedAt with flag 1, then
     * the attribute ({@link EntityCodec#writeAttribute}). {@code observed}: each instance's
     * observedAt, so that a window is found without decoding; {@code ranges}: the least and
     * greatest of each {@link TimeProperty} (in its order), so that a read passes over a block
     * none of whose instances can be in its window; {@code minN}, {@code maxN}: the least and
     * greatest id number (-1 when an id is none of the store's), so that an edit of one instance
     * decodes one block. Immutable.
     */
    record Block(long start, long end, byte[] packed, long[] observed, long[] ranges, long minN, long maxN, ChunkSummary summary) {
        long bytes() {
            return packed.length + 8L * observed.length + BLOCK_OVERHEAD;
        }

        /** Whether an instance of this block may be in {@code q}'s window (not counting its datasetId). */
        boolean mayAdmit(InstanceQuery q) {
            if (q.unbounded()) {
                return true;
            }
            int p = q.property().ordinal();
            return ranges[2 * p + 1] >= q.from() && ranges[2 * p] < q.to();
        }

        /** Whether the instance numbered {@code n} may be in this block. */
        boolean mayHold(long n) {
            return minN < 0 || (n >= minN && n <= maxN);
        }

        int size() {
            return (int) (end - start);
        }
    }

    /** The blocks of a series too short to have one: most attributes of most entities. */
    private static final Block[] NO_BLOCKS = new Block[0];

    final String attribute;
    private final Block[] blocks;
    private final int blockCount;
    /** The position of the first instance kept. */
    private final long base;
    private final TemporalInstance[] tail;
    private final int tailSize;
    /** Every instance has an observedAt and they never go back in recording order: a window by observedAt is a binary search. */
    final boolean ordered;
    /** What the series counts for in the store's bound: its blocks' bytes and its tail's {@link MemoryTemporalStore#cost}. */
    final long bytes;

    private PackedSeries(String attribute, Block[] blocks, int blockCount, long base, TemporalInstance[] tail, int tailSize,
            boolean ordered, long bytes) {
        this.attribute = attribute;
        this.blocks = blocks;
        this.blockCount = blockCount;
        this.base = base;
        this.tail = tail;
        this.tailSize = tailSize;
        this.ordered = ordered;
        this.bytes = bytes;
    }

    /** A series of one instance. */
    static PackedSeries of(TemporalInstance first) {
        TemporalInstance[] t = new TemporalInstance[4];
        t[0] = first;
        return new PackedSeries(first.attribute(), NO_BLOCKS, 0, 0, t, 1, first.observedAt() != TemporalInstance.NO_TIME,
                MemoryTemporalStore.cost(first));
    }

    int size() {
        return (int) (end() - base);
    }

    private long sealedEnd() {
        return blockCount == 0 ? base : blocks[blockCount - 1].end();
    }

    private long end() {
        return sealedEnd() + tailSize;
    }

    /** This series with {@code i} after its last instance; the tail sealed into a block when it is full. */
    PackedSeries append(TemporalInstance i) {
        boolean stillOrdered = ordered && i.observedAt() != TemporalInstance.NO_TIME && i.observedAt() >= lastObservedAt();
        long b = bytes + MemoryTemporalStore.cost(i);
        TemporalInstance[] t = tail;
        if (tailSize == t.length) {
            t = Arrays.copyOf(t, Math.min(BLOCK, tailSize * 2));
        }
        t[tailSize] = i;
        if (tailSize + 1 < BLOCK) {
            return new PackedSeries(attribute, blocks, blockCount, base, t, tailSize + 1, stillOrdered, b);
        }
        Block sealed = seal(t, 0, BLOCK, sealedEnd()); // 128 instances packed once, under the monitor: no wait
        for (int k = 0; k < BLOCK; k++) {
            b -= MemoryTemporalStore.cost(t[k]);
        }
        Block[] bl = blocks;
        if (blockCount == bl.length) {
            bl = Arrays.copyOf(bl, Math.max(4, blockCount * 2));
        }
        bl[blockCount] = sealed;
        return new PackedSeries(attribute, bl, blockCount + 1, base, new TemporalInstance[8], 0, stillOrdered, b + sealed.bytes());
    }

    private long lastObservedAt() {
        if (tailSize > 0) {
            return tail[tailSize - 1].observedAt();
        }
        Block last = blocks[blockCount - 1];
        return last.observed()[last.size() - 1];
    }

    // ---------------------------------------------------------------- reads

    /** The instances at positions {@code [from, to)} of this series' kept ones, in order. */
    List<TemporalInstance> slice(long from, long to) {
        ArrayList<TemporalInstance> out = new ArrayList<>((int) Math.max(0, to - from));
        long sealedEnd = sealedEnd();
        if (from < sealedEnd && from < to) {
            for (int b = blockAt(from); b < blockCount && blocks[b].start() < to; b++) {
                Block x = blocks[b];
                decode(x, (int) (Math.max(from, x.start()) - x.start()), (int) (Math.min(to, x.end()) - x.start()), out);
            }
        }
        for (long p = Math.max(from, sealedEnd); p < to; p++) {
            out.add(tail[(int) (p - sealedEnd)]);
        }
        return out;
    }

    /** Every instance, in order. */
    List<TemporalInstance> all() {
        return slice(base, end());
    }

    /** The index of the block holding position {@code p} (within the sealed ones). */
    private int blockAt(long p) {
        int lo = 0;
        int hi = blockCount - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (blocks[mid].start() <= p) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** In an {@link #ordered} series, the first position whose observedAt is at least {@code t} (the end: none). */
    private long firstAtOrAfter(long t) {
        int lo = 0;
        int hi = blockCount;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            long[] o = blocks[mid].observed();
            if (o[o.length - 1] < t) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (lo < blockCount) {
            long[] o = blocks[lo].observed();
            int a = 0;
            int z = o.length;
            while (a < z) {
                int mid = (a + z) >>> 1;
                if (o[mid] < t) {
                    a = mid + 1;
                } else {
                    z = mid;
                }
            }
            return blocks[lo].start() + a;
        }
        int a = 0;
        int z = tailSize;
        while (a < z) {
            int mid = (a + z) >>> 1;
            if (tail[mid].observedAt() < t) {
                a = mid + 1;
            } else {
                z = mid;
            }
        }
        return sealedEnd() + a;
    }

    /**
     * The instances {@code q} asks for, ordered by its time (stable), at most {@code limit}: the
     * first, or with lastN the last ({@link MemoryTemporalStore#select}). An {@link #ordered}
     * series asked by observedAt finds its window by binary search and decodes what it answers
     * (with a datasetId, what it looks at to find them); otherwise the blocks that may hold an
     * instance of the window are decoded and scanned.
     */
    List<TemporalInstance> instances(InstanceQuery q, int limit) {
        if (!ordered || q.property() != TimeProperty.OBSERVED_AT) {
            ArrayList<TemporalInstance> candidates = new ArrayList<>();
            for (int b = 0; b < blockCount; b++) {
                if (blocks[b].mayAdmit(q)) {
                    decode(blocks[b], 0, blocks[b].size(), candidates);
                }
            }
            candidates.addAll(Arrays.asList(tail).subList(0, tailSize));
            return MemoryTemporalStore.select(candidates.toArray(new TemporalInstance[0]), candidates.size(), q, limit);
        }
        long lo = q.from() == Long.MIN_VALUE ? base : firstAtOrAfter(q.from());
        long hi = q.to() == Long.MAX_VALUE ? end() : firstAtOrAfter(q.to());
        int keep = q.lastN() > 0 ? Math.min(q.lastN(), limit) : limit;
        if (lo >= hi || keep <= 0) {
            return new ArrayList<>(0);
        }
        if (q.datasetId() == null) {
            long n = Math.min(keep, hi - lo);
            long start = q.lastN() > 0 ? hi - n : lo;
            return slice(start, start + n);
        }
        ArrayList<TemporalInstance> hit = new ArrayList<>(Math.min(keep, 64));
        if (q.lastN() > 0) { // a block at a time from the window's end
            for (long to = hi; to > lo && hit.size() < keep; to -= BLOCK) {
                List<TemporalInstance> part = slice(Math.max(lo, to - BLOCK), to);
                for (int k = part.size() - 1; k >= 0 && hit.size() < keep; k--) {
                    if (q.admits(part.get(k))) {
                        hit.add(part.get(k));
                    }
                }
            }
            java.util.Collections.reverse(hit);
        } else {
            for (long from = lo; from < hi && hit.size() < keep; from += BLOCK) {
                for (TemporalInstance i : slice(from, Math.min(hi, from + BLOCK))) {
                    if (hit.size() < keep && q.admits(i)) {
                        hit.add(i);
                    }
                }
            }
        }
        return hit;
    }

    /**
     * The aggregation of an {@link #ordered} series asked by observedAt without lastN: the
     * instances of the window before, between and after the blocks it holds whole, and those
     * blocks' summaries, which a period that holds a block whole takes instead of its instances.
     * {@code null} when the series or the query is not such (the caller aggregates the instances).
     */
    List<DatasetAggregate> aggregate(InstanceQuery window, Set<String> datasetIds, TemporalAggregation aggregation) {
        if (!ordered || window.property() != TimeProperty.OBSERVED_AT || window.lastN() > 0 || blockCount == 0) {
            return null;
        }
        long lo = window.from() == Long.MIN_VALUE ? base : firstAtOrAfter(window.from());
        long hi = window.to() == Long.MAX_VALUE ? end() : firstAtOrAfter(window.to());
        AggregationGroups g = new AggregationGroups(window, datasetIds);
        long k = lo;
        for (int b = lo >= sealedEnd() ? blockCount : blockAt(lo); b < blockCount; b++) {
            Block x = blocks[b];
            if (x.start() >= hi) {
                break;
            }
            if (x.summary() == null || x.start() < lo || x.end() > hi) {
                continue;
            }
            g.instances(slice(k, x.start()));
            g.summarised(x.summary(), () -> slice(x.start(), x.end()));
            k = x.end();
        }
        g.instances(slice(k, hi));
        return g.aggregate(aggregation);
    }

    /** {@link #bytes} counted again from the blocks and the tail: what it must be (for the tests). */
    long recount() {
        long n = 0;
        for (int b = 0; b < blockCount; b++) {
            n += blocks[b].bytes();
        }
        for (int k = 0; k < tailSize; k++) {
            n += MemoryTemporalStore.cost(tail[k]);
        }
        return n;
    }

    /** How many blocks have a summary: what an aggregation may take instead of instances. */
    int summarised() {
        int n = 0;
        for (int b = 0; b < blockCount; b++) {
            n += blocks[b].summary() != null ? 1 : 0;
        }
        return n;
    }

    // ---------------------------------------------------------------- changes

    /**
     * This series with the instances {@code which} picks replaced ({@code replace}) or removed
     * ({@code null}); {@code this} when it picks none, {@code null} when none is left. A block
     * {@code mayHit} rules out is kept undecoded; a block where nothing was picked is kept as it
     * was; a block where something was is packed again.
     */
    PackedSeries edit(Predicate<TemporalInstance> which, UnaryOperator<TemporalInstance> replace, Predicate<Block> mayHit) {
        List<Object> parts = new ArrayList<>(); // a kept Block, or a List of instances to seal anew
        boolean hit = false;
        for (int b = 0; b < blockCount; b++) {
            Block x = blocks[b];
            if (!mayHit.test(x)) {
                parts.add(x);
                continue;
            }
            List<TemporalInstance> in = new ArrayList<>(x.size());
            decode(x, 0, x.size(), in);
            List<TemporalInstance> out = edited(in, which, replace);
            hit |= out != in;
            parts.add(out == in ? x : out);
        }
        List<TemporalInstance> t = Arrays.asList(tail).subList(0, tailSize);
        List<TemporalInstance> tailOut = edited(t, which, replace);
        hit |= tailOut != t;
        if (!hit) {
            return this;
        }
        Block[] bl = new Block[Math.max(4, blockCount)];
        int bc = 0;
        long p = base;
        long bytes = 0;
        for (Object part : parts) {
            Block x;
            if (part instanceof Block kept) {
                x = kept.start() == p ? kept : new Block(p, p + kept.size(), kept.packed(), kept.observed(), kept.ranges(),
                        kept.minN(), kept.maxN(), kept.summary());
            } else {
                @SuppressWarnings("unchecked")
                List<TemporalInstance> l = (List<TemporalInstance>) part;
                if (l.isEmpty()) {
                    continue;
                }
                x = seal(l.toArray(new TemporalInstance[0]), 0, l.size(), p);
            }
            bl[bc++] = x;
            bytes += x.bytes();
            p = x.end();
        }
        if (bc == 0 && tailOut.isEmpty()) {
            return null;
        }
        TemporalInstance[] nt = tailOut.toArray(new TemporalInstance[Math.max(4, tailOut.size())]);
        for (TemporalInstance i : tailOut) {
            bytes += MemoryTemporalStore.cost(i);
        }
        return new PackedSeries(attribute, bl, bc, base, nt, tailOut.size(), ordered(bl, bc, nt, tailOut.size()), bytes);
    }

    /** {@code in} edited, or {@code in} itself when {@code which} picks none of it. */
    private static List<TemporalInstance> edited(List<TemporalInstance> in, Predicate<TemporalInstance> which,
            UnaryOperator<TemporalInstance> replace) {
        List<TemporalInstance> out = null;
        for (int k = 0; k < in.size(); k++) {
            TemporalInstance i = in.get(k);
            if (which.test(i)) {
                if (out == null) {
                    out = new ArrayList<>(in.subList(0, k));
                }
                if (replace != null) {
                    out.add(replace.apply(i));
                }
            } else if (out != null) {
                out.add(i);
            }
        }
        return out == null ? in : out;
    }

    /** Whether every instance of these blocks and tail has an observedAt, none before the one recorded before it. */
    private static boolean ordered(Block[] blocks, int blockCount, TemporalInstance[] tail, int tailSize) {
        long last = Long.MIN_VALUE;
        for (int b = 0; b < blockCount; b++) {
            for (long t : blocks[b].observed()) {
                if (t == TemporalInstance.NO_TIME || t < last) {
                    return false;
                }
                last = t;
            }
        }
        for (int k = 0; k < tailSize; k++) {
            long t = tail[k].observedAt();
            if (t == TemporalInstance.NO_TIME || t < last) {
                return false;
            }
            last = t;
        }
        return true;
    }

    /**
     * This series without its {@code n} oldest instances ({@code 0 < n < size()}): the blocks
     * wholly older dropped, the one the cut goes through packed again from the cut, the others
     * kept as they are.
     */
    PackedSeries dropOldest(int n) {
        long cut = base + n;
        long sealedEnd = sealedEnd();
        int first = 0;
        while (first < blockCount && blocks[first].end() <= cut) {
            first++;
        }
        long bytes = this.bytes;
        for (int b = 0; b < first; b++) {
            bytes -= blocks[b].bytes();
        }
        Block[] bl = new Block[Math.max(4, blockCount - first + 1)];
        int bc = 0;
        for (int b = first; b < blockCount; b++) {
            Block x = blocks[b];
            if (x.start() < cut) {
                List<TemporalInstance> kept = new ArrayList<>(x.size());
                decode(x, (int) (cut - x.start()), x.size(), kept);
                Block again = seal(kept.toArray(new TemporalInstance[0]), 0, kept.size(), cut);
                bytes += again.bytes() - x.bytes();
                x = again;
            }
            bl[bc++] = x;
        }
        TemporalInstance[] t = tail;
        int ts = tailSize;
        if (cut > sealedEnd) {
            int gone = (int) (cut - sealedEnd);
            for (int k = 0; k < gone; k++) {
                bytes -= MemoryTemporalStore.cost(tail[k]);
            }
            t = Arrays.copyOfRange(tail, gone, gone + Math.max(4, tailSize - gone));
            ts = tailSize - gone;
        }
        return new PackedSeries(attribute, bl, bc, cut, t, ts, ordered, bytes);
    }

    // ---------------------------------------------------------------- the packed form

    /** {@code items[from..to)} packed as the block of positions from {@code start}. */
    static Block seal(TemporalInstance[] items, int from, int to, long start) {
        ByteSink out = new ByteSink(48 * (to - from));
        EntityCodec codec = new EntityCodec();
        long[] observed = new long[to - from];
        long[] ranges = new long[8];
        for (int p = 0; p < 4; p++) {
            ranges[2 * p] = Long.MAX_VALUE;
            ranges[2 * p + 1] = Long.MIN_VALUE;
        }
        long minN = Long.MAX_VALUE;
        long maxN = Long.MIN_VALUE;
        TimeProperty[] props = TimeProperty.values();
        for (int k = from; k < to; k++) {
            TemporalInstance i = items[k];
            long n = TemporalInstance.numberOf(i.instanceId());
            out.u8((i.deleted() ? 1 : 0) | (n < 0 ? 2 : 0));
            if (n < 0) {
                out.nullableString(i.instanceId());
                minN = -1;
            } else {
                out.varlong(n);
                if (minN >= 0) {
                    minN = Math.min(minN, n);
                }
                maxN = Math.max(maxN, n);
            }
            if (i.deleted()) {
                out.zigzag(i.deletedAt());
            }
            codec.writeAttribute(out, i.value());
            observed[k - from] = i.observedAt();
            for (int p = 0; p < 4; p++) {
                long t = i.time(props[p]);
                ranges[2 * p] = Math.min(ranges[2 * p], t);
                ranges[2 * p + 1] = Math.max(ranges[2 * p + 1], t);
            }
        }
        return new Block(start, start + to - from, Arrays.copyOf(out.array(), out.position()), observed, ranges, minN, maxN,
                ChunkSummary.of(items, from, to));
    }

    /** Adds the instances {@code [from, to)} of block {@code x} (indexes within it) to {@code out}; those before passed over. */
    private void decode(Block x, int from, int to, List<TemporalInstance> out) {
        ByteSource in = new ByteSource(x.packed(), 0, x.packed().length);
        EntityCodec codec = new EntityCodec();
        try {
            for (int k = 0; k < to; k++) {
                int flags = in.u8();
                String id;
                if ((flags & 2) != 0) {
                    id = in.nullableString();
                } else {
                    long n = in.varlong();
                    id = k >= from ? TemporalInstance.idOf(n) : null;
                }
                long deletedAt = (flags & 1) != 0 ? in.zigzag() : TemporalInstance.NO_TIME;
                if (k < from) {
                    codec.skipAttribute(in);
                } else {
                    out.add(new TemporalInstance(attribute, codec.readAttribute(in), id, x.observed()[k], deletedAt));
                }
            }
        } catch (ByteSource.Malformed e) { // written by seal in this process: a bug, not a peer's input
            throw new IllegalStateException("a packed block of " + attribute + " does not read back", e);
        }
    }
}
