package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.store.StoreUnavailableException;
import dev.cor.ngsild.store.TemporalEntity;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.store.TemporalRetention;
import dev.cor.ngsild.store.TemporalStore;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * The durable store's history ({@code doc/storage.md}, "History"): every change is a journal
 * record appended inside the entity's short lock - in the journal of the current state, so that
 * one fsync covers both and {@link DurableEntityStore#sync()} waits for history too - and the
 * instances live per series (tenant, entity, attribute) in a small tail in the heap, sealed every
 * {@value #CHUNK_INSTANCES} instances (or {@value #CHUNK_BYTES} bytes) into a chunk that the history
 * writer thread writes to the segments under {@code history/}. The heap holds the tails (bounded
 * by the heap bound: the largest are sealed when over it) and per chunk a small index entry.
 * <p>
 * A snapshot first asks for a {@link #checkpoint}: every tail sealed, every chunk written and
 * forced, so that the journal it truncates holds no history the segments do not. At open the
 * segments are scanned into the index, then the journal's history records after the snapshot are
 * replayed over it, each skipped where the segments already hold it.
 * <p>
 * Threads: every method of {@link TemporalStore}, from any loop or worker; {@link #record} and the
 * edits never wait on I/O inside the lock ({@link #record} never at all), reads copy the index
 * under the lock and read the chunks after. The history writer is one thread of its own.
 */
public final class DurableTemporalStore implements TemporalStore {
    private static final System.Logger LOG = System.getLogger(DurableTemporalStore.class.getName());
    /** A tail is sealed into a chunk at this many instances. */
    static final int CHUNK_INSTANCES = 128;
    /** ... or at this many bytes (estimated). */
    static final long CHUNK_BYTES = 32 << 10;
    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** A piece of work for the history writer. */
    sealed interface Job permits ChunkJob, GoneJob, HeadJob {
    }

    /** Write the newest content of a chunk. */
    record ChunkJob(EntityHistory entity, String attribute, long chunkId) implements Job {
    }

    /** Write a deletion's frame: an entity's ({@code attribute} null) or an attribute's. */
    record GoneJob(String tenant, String entityId, String attribute, long version) implements Job {
    }

    /** Write an entity's head. */
    record HeadJob(EntityHistory entity) implements Job {
    }

    /** A snapshot's request to the writer: make everything up to {@code seq} durable in the segments. */
    record Checkpoint(long seq, CompletableFuture<Void> done) {
    }

    final HistoryFiles files;
    private final TemporalRetention retention;
    private final long heapBound;
    private final ConcurrentHashMap<String, ConcurrentSkipListMap<String, EntityHistory>> tenants = new ConcurrentHashMap<>();
    final AtomicLong nextN = new AtomicLong(1);
    final AtomicLong nextChunk = new AtomicLong(1);
    /** Bytes (estimated) of the tails, and of the sealed or edited chunks waiting for the writer. */
    final AtomicLong tailHeap = new AtomicLong();
    final AtomicLong pendingHeap = new AtomicLong();
    private final ConcurrentLinkedQueue<Job> queue = new ConcurrentLinkedQueue<>();
    private final AtomicLong enqueued = new AtomicLong();
    private long processed;
    private final HistoryWriter writer;
    private volatile Journal journal;
    private volatile WriteGate gate;
    private volatile boolean replaying = true;
    private volatile Checkpoint checkpoint;
    final List<String> notes = new ArrayList<>();

    private DurableTemporalStore(HistoryFiles files, TemporalRetention retention, long heapBound) {
        this.files = files;
        this.retention = retention;
        this.heapBound = heapBound;
        this.writer = new HistoryWriter(this);
    }

    // ---------------------------------------------------------------- opening

    /**
     * Scans the history segments of {@code dataDir} into the index ({@code repair}: a chunk cut
     * short at the tail is truncated). The journal's history records are then {@link #replay}ed,
     * then {@link #start} starts the writer.
     *
     * @throws DataDamagedException a segment is damaged other than at its tail
     */
    static DurableTemporalStore open(Path dataDir, DataFiles files, TemporalRetention retention, long segmentBytes,
            long heapBound, boolean repair) throws IOException {
        DurableTemporalStore s = new DurableTemporalStore(
                new HistoryFiles(dataDir.resolve(HistoryFormat.DIRECTORY), files, segmentBytes), retention, heapBound);
        HistoryIndexReader.read(s, repair);
        return s;
    }

    /** The entity's history, made if missing (a recovery, a write). */
    EntityHistory entityFor(String tenant, String id) {
        return tenants.computeIfAbsent(tenant, t -> new ConcurrentSkipListMap<>())
                .computeIfAbsent(id, k -> new EntityHistory(tenant, id));
    }

    private EntityHistory lookup(String tenant, String id) {
        var m = tenants.get(tenant);
        return m == null ? null : m.get(id);
    }

    /** Takes an entity with nothing left out of its tenant's map; under its monitor. */
    private void forgetIfGone(EntityHistory eh) {
        if (!replaying && eh.gone()) {
            eh.removed = true;
            var m = tenants.get(eh.tenant);
            if (m != null) {
                m.remove(eh.id, eh);
            }
        }
    }

    boolean replaying() {
        return replaying;
    }

    /** Applies a history record of the journal (recovery; one thread), skipping what the segments hold. */
    void replay(long seq, HistoryOp op) {
        EntityHistory eh = entityFor(op.tenant(), op.entityId());
        if (op instanceof HistoryOp.Recorded r) {
            nextN.accumulateAndGet(r.firstN() + r.instances().size(), Math::max);
            eh.record(r, seq, this);
            return;
        }
        Map<Long, EntityHistory.Loaded> loaded = new HashMap<>();
        for (EntityHistory.ChunkState c : eh.toRead(op, seq)) {
            try {
                loaded.put(c.id(), new EntityHistory.Loaded(c.version(), readChunk(c.ref())));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        eh.edit(op, seq, loaded, () -> seq, this);
    }

    /** The recovery is over: entities with nothing left go. */
    void recovered() {
        replaying = false;
        for (var m : tenants.values()) {
            for (EntityHistory eh : m.values()) {
                synchronized (eh) {
                    forgetIfGone(eh);
                }
            }
        }
    }

    /** The counters as the segments hold them (before the journal's replay). */
    long recoveredN;
    long recoveredChunk;

    /** Starts the history writer, once the journal exists. */
    void start(Journal journal, WriteGate gate) {
        this.journal = journal;
        this.gate = gate;
        writer.start();
    }

    // ---------------------------------------------------------------- writes

    @Override
    public List<TemporalInstance> record(String tenant, String entityId, List<String> types, List<String> scopes,
            List<TemporalInstance> instances, long deletedAt) {
        Journal j = journal;
        j.checkWritable();
        int epoch = gate.enter();
        try {
            while (true) {
                EntityHistory eh = entityFor(tenant, entityId);
                synchronized (eh) {
                    if (eh.removed) {
                        continue;
                    }
                    long firstN = nextN.getAndAdd(instances.size());
                    List<TemporalInstance> recorded = new ArrayList<>(instances.size());
                    for (int i = 0; i < instances.size(); i++) {
                        recorded.add(instances.get(i).withId(TemporalInstance.idOf(firstN + i)));
                    }
                    recorded = List.copyOf(recorded);
                    HistoryOp.Recorded op = new HistoryOp.Recorded(tenant, entityId, types == null ? null : List.copyOf(types),
                            scopes == null ? null : List.copyOf(scopes), deletedAt, firstN, recorded);
                    long seq = j.append(Format.HISTORY_RECORD, tenant, op);
                    eh.record(op, seq, this);
                    return recorded;
                }
            }
        } finally {
            gate.exit(epoch);
            j.signal();
        }
    }

    @Override
    public boolean deleteEntity(String tenant, String entityId) {
        return edit(new HistoryOp.EntityDeleted(tenant, entityId));
    }

    @Override
    public boolean deleteAttribute(String tenant, String entityId, String attribute, String datasetId, boolean all) {
        return edit(new HistoryOp.AttributeDeleted(tenant, entityId, attribute, datasetId, all));
    }

    @Override
    public boolean modifyInstance(String tenant, String entityId, String attribute, String instanceId, Attribute value) {
        long n = HistoryFormat.number(instanceId);
        return n >= 0 && edit(new HistoryOp.InstanceModified(tenant, entityId, attribute, n, value));
    }

    @Override
    public boolean deleteInstance(String tenant, String entityId, String attribute, String instanceId) {
        long n = HistoryFormat.number(instanceId);
        return n >= 0 && edit(new HistoryOp.InstanceDeleted(tenant, entityId, attribute, n));
    }

    /**
     * An edit: the written chunks it touches are read first, outside the lock; then, under it,
     * the edit is applied if none of them changed meanwhile (else it reads again) and its record
     * appended.
     */
    private boolean edit(HistoryOp op) {
        Journal j = journal;
        j.checkWritable();
        for (int attempt = 0; ; attempt++) {
            EntityHistory eh = lookup(op.tenant(), op.entityId());
            if (eh == null) {
                return false;
            }
            List<EntityHistory.ChunkState> need;
            synchronized (eh) {
                if (eh.removed) {
                    continue;
                }
                need = eh.toRead(op, Long.MAX_VALUE);
            }
            Map<Long, EntityHistory.Loaded> loaded = new HashMap<>();
            for (EntityHistory.ChunkState c : need) {
                try {
                    loaded.put(c.id(), new EntityHistory.Loaded(c.version(), readChunk(c.ref())));
                } catch (IOException e) {
                    if (attempt > 3) {
                        throw new StoreUnavailableException("the history cannot be read: " + e, e);
                    }
                }
            }
            int epoch = gate.enter();
            try {
                synchronized (eh) {
                    if (eh.removed) {
                        continue;
                    }
                    Boolean done = eh.edit(op, Long.MAX_VALUE, loaded, () -> j.append(op.type(), op.tenant(), op), this);
                    if (done == null) {
                        continue;
                    }
                    forgetIfGone(eh);
                    return done;
                }
            } finally {
                gate.exit(epoch);
                j.signal();
            }
        }
    }

    // ---------------------------------------------------------------- reads

    @Override
    public TemporalEntity entity(String tenant, String entityId) {
        EntityHistory eh = lookup(tenant, entityId);
        if (eh == null) {
            return null;
        }
        synchronized (eh) {
            return eh.temporalEntity();
        }
    }

    @Override
    public void entities(String tenant, boolean descending, Predicate<TemporalEntity> visitor) {
        var m = tenants.get(tenant);
        if (m == null) {
            return;
        }
        for (EntityHistory eh : descending ? m.descendingMap().values() : m.values()) {
            TemporalEntity e;
            synchronized (eh) {
                e = eh.temporalEntity();
            }
            if (e != null && !visitor.test(e)) {
                return;
            }
        }
    }

    @Override
    public java.util.Set<String> tenants() {
        return java.util.Set.copyOf(tenants.keySet());
    }

    @Override
    public boolean hasTenant(String tenant) {
        return tenants.containsKey(tenant);
    }

    @Override
    public int count(String tenant) {
        int[] n = {0};
        entities(tenant, e -> {
            n[0]++;
            return true;
        });
        return n[0];
    }

    @Override
    public List<TemporalInstance> instances(String tenant, String entityId, String attribute, InstanceQuery query,
            int limit) {
        SeriesCopy s = limit < 1 ? null : copyOf(tenant, entityId, attribute);
        return s == null ? List.of() : HistoryReads.select(this, s.chunks(), s.tail(), query, limit);
    }

    /** What a read of one series works on, copied under the entity's monitor and read outside it. */
    private record SeriesCopy(EntityHistory.ChunkState[] chunks, List<TemporalInstance> tail) {
    }

    /** A copy of the series' index and tail, or {@code null} when there is no such series. */
    private SeriesCopy copyOf(String tenant, String entityId, String attribute) {
        EntityHistory eh = lookup(tenant, entityId);
        if (eh == null) {
            return null;
        }
        synchronized (eh) {
            EntityHistory.Series s = eh.series.get(attribute);
            return s == null ? null : new SeriesCopy(s.chunks.toArray(new EntityHistory.ChunkState[0]), List.copyOf(s.tail));
        }
    }

    /**
     * With the chunks' summaries where they serve ({@link HistoryReads#aggregate}): a window by
     * observedAt without lastN. Otherwise every instance of the window, as by default.
     */
    @Override
    public List<dev.cor.ngsild.store.DatasetAggregate> aggregate(String tenant, String entityId, String attribute,
            InstanceQuery window, java.util.Set<String> datasetIds, dev.cor.ngsild.query.TemporalAggregation aggregation) {
        if (window.property() != TimeProperty.OBSERVED_AT || window.lastN() > 0) {
            return TemporalStore.super.aggregate(tenant, entityId, attribute, window, datasetIds, aggregation);
        }
        SeriesCopy s = copyOf(tenant, entityId, attribute);
        return s == null ? List.of() : HistoryReads.aggregate(this, s.chunks(), s.tail(), window, datasetIds, aggregation);
    }

    /**
     * From the heap when it can: an instance of the tail in the window, or a chunk whose range of
     * the window's time lies inside it and that holds no deletion (then every one of its instances
     * is in the window); else the instances are read.
     */
    @Override
    public boolean shows(String tenant, String entityId, String attribute, InstanceQuery window) {
        EntityHistory eh = lookup(tenant, entityId);
        if (eh == null) {
            return false;
        }
        TimeProperty p = window.property();
        synchronized (eh) {
            EntityHistory.Series s = eh.series.get(attribute);
            if (s == null) {
                return false;
            }
            for (TemporalInstance i : s.tail) {
                if (!i.deleted() && window.admits(i)) {
                    return true;
                }
            }
            if (window.datasetId() == null) {
                for (EntityHistory.ChunkState c : s.chunks) {
                    HistoryFormat.Ranges r = c.ranges();
                    if (r.count() > 0 && r.maxDeleted() == TemporalInstance.NO_TIME && r.min(p) != TemporalInstance.NO_TIME
                            && r.min(p) >= window.from() && r.max(p) < window.to()) {
                        return true;
                    }
                }
            }
        }
        return TemporalStore.super.shows(tenant, entityId, attribute, window);
    }

    /** Reads the instances of a written chunk. Any thread. */
    List<TemporalInstance> readChunk(EntityHistory.ChunkRef ref) throws IOException {
        return readChunk(ref, InstanceQuery.ALL);
    }

    /**
     * Reads the instances of a written chunk that a read of {@code window} needs: every one it
     * admits, perhaps others ({@link HistoryFormat#readInstances(ByteSource, HistoryFormat.ChunkHeader,
     * EntityCodec, InstanceQuery)}). Any thread.
     */
    List<TemporalInstance> readChunk(EntityHistory.ChunkRef ref, InstanceQuery window) throws IOException {
        ByteSource in = files.read(ref.segment(), ref.offset(), ref.length());
        EntityCodec codec = new EntityCodec();
        try {
            HistoryFormat.ChunkHeader h = HistoryFormat.readChunkHeader(in, ref.length(), in.u8(), codec);
            return HistoryFormat.readInstances(in, h, codec, window);
        } catch (ByteSource.Malformed e) {
            throw new DataDamagedException(files.dir().resolve(HistoryFormat.segmentName(ref.segment())), ref.offset(),
                    "a history chunk that does not decode: " + e.getMessage());
        }
    }

    /** The history's reads can wait for the disk: the API runs them as coroutines. */
    @Override
    public boolean readsWait() {
        return true;
    }

    // ---------------------------------------------------------------- the writer's queue

    /** Queues work for the history writer: no wait, under an entity's monitor too. */
    void enqueue(Job job) {
        queue.offer(job);
        enqueued.incrementAndGet();
        writer.wake();
    }

    Job peekJob() {
        return queue.peek();
    }

    void jobDone() {
        queue.poll();
        processed++;
    }

    long processed() {
        return processed;
    }

    long enqueued() {
        return enqueued.get();
    }

    boolean overHeapBound() {
        return tailHeap.get() + pendingHeap.get() > heapBound;
    }

    long heapBound() {
        return heapBound;
    }

    /** Every entity, for the writer's and retention's passes (weakly consistent). */
    Iterable<EntityHistory> allEntities() {
        List<EntityHistory> out = new ArrayList<>();
        for (var m : tenants.values()) {
            out.addAll(m.values());
        }
        return out;
    }

    Checkpoint takeCheckpoint() {
        return checkpoint;
    }

    /** The writer served {@code c}: it completes, and the next may come. */
    void completeCheckpoint(Checkpoint c, Throwable failure) {
        synchronized (this) {
            if (checkpoint == c) {
                checkpoint = null;
            }
        }
        if (failure == null) {
            c.done().complete(null);
        } else {
            c.done().completeExceptionally(failure);
        }
    }

    /**
     * Makes every history record up to journal record {@code seq} durable in the segments - every
     * tail sealed, every chunk, deletion and head written, the segments forced - so that the
     * journal segments up to it can go. The snapshot thread calls it after its barrier; it waits
     * for the history writer.
     *
     * @throws IOException the writer cannot write (the journal keeps everything meanwhile)
     */
    void checkpoint(long seq, long timeoutMs) throws IOException {
        if (!writer.running()) {
            throw new IOException("the history writer is not running");
        }
        Checkpoint c = new Checkpoint(seq, new CompletableFuture<>());
        checkpoint = c; // one snapshot at a time asks
        writer.wake();
        try {
            c.done().get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException("the history checkpoint failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("the history writer did not checkpoint within " + timeoutMs + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while the history checkpointed");
        }
    }

    // ---------------------------------------------------------------- retention

    @Override
    public synchronized long expire(long nowMs) {
        return HistoryRetention.expire(this, retention, nowMs);
    }

    /** Takes a written chunk out of the index (retention), under its entity's monitor; returns its instances. */
    int dropChunk(EntityHistory eh, EntityHistory.Series s, int k) {
        EntityHistory.ChunkState c = s.chunks.remove(k);
        forgetIfGoneLater.add(eh);
        return c.ranges().count();
    }

    /** Entities retention emptied: forgotten once it is done. */
    private final List<EntityHistory> forgetIfGoneLater = new ArrayList<>();

    void forgetEmptied() {
        for (EntityHistory eh : forgetIfGoneLater) {
            synchronized (eh) {
                boolean any = false;
                for (EntityHistory.Series s : eh.series.values()) {
                    any |= !s.empty();
                }
                if (!any && !replaying) {
                    eh.exists = false;
                    forgetIfGone(eh);
                }
            }
        }
        forgetIfGoneLater.clear();
    }

    // ---------------------------------------------------------------- stopping

    /** Writes what waits, forces, and stops the writer (after the last snapshot's checkpoint). */
    void close() {
        writer.stop(false);
        files.closeWriter();
        files.closeReaders();
    }

    /** Stops at once, writing nothing more (what {@code kill -9} leaves; for tests). */
    void crash() {
        writer.stop(true);
        files.closeWriter();
        files.closeReaders();
    }

    // ---------------------------------------------------------------- for the check and tests

    /** Chunks in the index, instances in them and in the tails. */
    long[] census() {
        long chunks = 0;
        long inChunks = 0;
        long inTails = 0;
        for (EntityHistory eh : allEntities()) {
            synchronized (eh) {
                for (EntityHistory.Series s : eh.series.values()) {
                    for (EntityHistory.ChunkState c : s.chunks) {
                        if (c.ranges().count() > 0) {
                            chunks++;
                            inChunks += c.ranges().count();
                        }
                    }
                    inTails += s.tail.size();
                }
            }
        }
        return new long[] {chunks, inChunks, inTails};
    }

    /** Chunks in the index with a summary: what an aggregation may take instead of reading them. */
    long summarised() {
        long n = 0;
        for (EntityHistory eh : allEntities()) {
            synchronized (eh) {
                for (EntityHistory.Series s : eh.series.values()) {
                    for (EntityHistory.ChunkState c : s.chunks) {
                        n += c.summary() != null ? 1 : 0;
                    }
                }
            }
        }
        return n;
    }

    /** Bytes (estimated) the tails hold in the heap now. */
    long tailHeapBytes() {
        return tailHeap.get();
    }

    /** Bytes (estimated) of sealed chunks waiting for the writer. */
    long pendingHeapBytes() {
        return pendingHeap.get();
    }

    static long retryNanos() {
        return RETRY_NANOS;
    }

    static System.Logger log() {
        return LOG;
    }
}
