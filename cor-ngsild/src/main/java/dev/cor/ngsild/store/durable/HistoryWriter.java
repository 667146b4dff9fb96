package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * The history writer: one thread of its own (never a loop) that writes what the writers queue -
 * sealed and edited chunks, deletions, heads - to the history segments, seals the largest tails
 * when the heap bound is passed, and serves a snapshot's {@link DurableTemporalStore#checkpoint}.
 * It takes an entity's monitor only to copy a chunk and to install where it wrote it; it encodes
 * and writes outside. A write that fails is tried again every second; meanwhile the journal keeps
 * everything (a checkpoint fails, so no snapshot truncates it).
 */
final class HistoryWriter {
    private final DurableTemporalStore store;
    private final Thread thread;
    private final CRC32C crc = new CRC32C();
    private final EntityCodec codec = new EntityCodec();
    private final ByteSink buf = new ByteSink(1 << 16);
    private volatile boolean sleeping;
    private volatile boolean stopping;
    private volatile boolean halted;
    private volatile IOException failure;
    /** The counters the segments hold (a mark, or the recovery's): a checkpoint without news writes none. */
    private long markedN;
    private long markedChunk;

    HistoryWriter(DurableTemporalStore store) {
        this.store = store;
        this.thread = new Thread(this::run, "cor-store-history");
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    boolean running() {
        return thread.isAlive() && !stopping;
    }

    /** Wakes the thread if it sleeps: never waits. Any thread. */
    void wake() {
        if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    /** Stops the thread: at once ({@code halt}), or once what is queued is written and forced. */
    void stop(boolean halt) {
        if (halt) {
            halted = true;
        }
        stopping = true;
        LockSupport.unpark(thread);
        try {
            thread.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        long sinceBound = 0;
        while (!halted) {
            try {
                DurableTemporalStore.Job job = store.peekJob();
                if (job != null) {
                    write(job);
                    store.jobDone();
                    failed(null);
                    if (++sinceBound >= 256) {
                        sinceBound = 0;
                        bound();
                    }
                    continue;
                }
                DurableTemporalStore.Checkpoint c = store.takeCheckpoint();
                if (c != null) {
                    checkpoint(c);
                    continue;
                }
                if (store.overHeapBound() && bound()) {
                    continue;
                }
                if (stopping) {
                    store.files.force();
                    return;
                }
                sleeping = true;
                if (store.peekJob() == null && store.takeCheckpoint() == null && !stopping) {
                    LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(100));
                }
                sleeping = false;
            } catch (IOException | RuntimeException e) {
                failed(e instanceof IOException io ? io : new IOException(e.toString(), e));
                DurableTemporalStore.Checkpoint c = store.takeCheckpoint();
                if (c != null) {
                    store.completeCheckpoint(c, failure);
                }
                if (stopping) {
                    return;
                }
                LockSupport.parkNanos(this, DurableTemporalStore.retryNanos());
            }
        }
    }

    private void failed(IOException e) {
        if (e != null && failure == null) {
            DurableTemporalStore.log().log(System.Logger.Level.ERROR, "cor-store: the history cannot be written to "
                    + store.files.dir() + " (" + Journal.describe(e) + "); the journal keeps it, trying again every second");
        } else if (e == null && failure != null) {
            DurableTemporalStore.log().log(System.Logger.Level.WARNING, "cor-store: the history is written again");
        }
        failure = e;
    }

    /** Serves a checkpoint: every tail sealed, everything queued before written, then forced. */
    private void checkpoint(DurableTemporalStore.Checkpoint c) throws IOException {
        for (EntityHistory eh : store.allEntities()) {
            synchronized (eh) {
                if (eh.removed) {
                    continue;
                }
                for (EntityHistory.Series s : eh.series.values()) {
                    eh.seal(s, store);
                }
                if (eh.exists && eh.lastSeq > eh.writtenVersion) {
                    store.enqueue(new DurableTemporalStore.HeadJob(eh));
                }
            }
        }
        long target = store.enqueued();
        while (store.processed() < target) {
            write(store.peekJob());
            store.jobDone();
        }
        long n = store.nextN.get();
        long chunk = store.nextChunk.get();
        if (markedN == 0) {
            markedN = store.recoveredN;
            markedChunk = store.recoveredChunk;
        }
        if (n != markedN || chunk != markedChunk) {
            // the counters, so that a number given to an instance since deleted is not given again
            buf.clear();
            HistoryFormat.writeMark(buf, n, chunk, crc);
            store.files.append(buf);
            markedN = n;
            markedChunk = chunk;
        }
        store.files.force();
        failed(null);
        store.completeCheckpoint(c, null);
    }

    /** Seals the largest tails until they hold half the heap bound; answers whether it sealed one. */
    private boolean bound() {
        if (!store.overHeapBound()) {
            return false;
        }
        record Tail(EntityHistory eh, EntityHistory.Series s, long bytes) {
        }
        List<Tail> tails = new ArrayList<>();
        for (EntityHistory eh : store.allEntities()) {
            synchronized (eh) {
                for (EntityHistory.Series s : eh.series.values()) {
                    if (s.tailBytes > 0) {
                        tails.add(new Tail(eh, s, s.tailBytes));
                    }
                }
            }
        }
        tails.sort((a, b) -> Long.compare(b.bytes, a.bytes));
        boolean sealed = false;
        for (Tail t : tails) {
            if (store.tailHeap.get() <= store.heapBound() / 2) {
                break;
            }
            synchronized (t.eh) {
                if (!t.eh.removed && t.eh.series.get(t.s.attribute) == t.s) {
                    t.eh.seal(t.s, store);
                    sealed = true;
                }
            }
        }
        return sealed;
    }

    private void write(DurableTemporalStore.Job job) throws IOException {
        switch (job) {
            case DurableTemporalStore.ChunkJob j -> writeChunk(j);
            case DurableTemporalStore.GoneJob g -> {
                buf.clear();
                HistoryFormat.writeGone(buf, g.version(), g.tenant(), g.entityId(), g.attribute(), crc);
                store.files.append(buf);
            }
            case DurableTemporalStore.HeadJob h -> {
                EntityHistory eh = h.entity();
                long version;
                HistoryFormat.Head head;
                synchronized (eh) {
                    if (eh.removed || !eh.exists || eh.lastSeq <= eh.writtenVersion) {
                        return;
                    }
                    version = eh.lastSeq;
                    head = eh.head();
                }
                buf.clear();
                HistoryFormat.writeHeadFrame(buf, version, eh.tenant, eh.id, head, codec, crc);
                store.files.append(buf);
                synchronized (eh) {
                    eh.writtenVersion = Math.max(eh.writtenVersion, version);
                }
            }
        }
    }

    private void writeChunk(DurableTemporalStore.ChunkJob j) throws IOException {
        EntityHistory eh = j.entity();
        EntityHistory.ChunkState c;
        long version;
        HistoryFormat.Head head;
        synchronized (eh) {
            EntityHistory.Series s = eh.removed ? null : eh.series.get(j.attribute());
            int k = s == null ? -1 : s.indexOf(j.chunkId());
            if (k < 0 || s.chunks.get(k).pending() == null) {
                return; // deleted, or written already
            }
            c = s.chunks.get(k);
            version = eh.lastSeq; // the content reflects every change of the entity up to here
            head = eh.head();
        }
        buf.clear();
        HistoryFormat.writeChunk(buf, version, eh.tenant, eh.id, j.attribute(), c.id(), c.minN(), c.maxN(), head,
                c.pending(), c.summary(), codec, crc);
        int length = buf.position();
        long[] at = store.files.append(buf);
        synchronized (eh) {
            eh.writtenVersion = Math.max(eh.writtenVersion, version);
            EntityHistory.Series s = eh.removed ? null : eh.series.get(j.attribute());
            int k = s == null ? -1 : s.indexOf(j.chunkId());
            if (k >= 0 && s.chunks.get(k) == c) {
                store.pendingHeap.addAndGet(-c.ranges().bytes());
                if (c.ranges().count() == 0) {
                    s.chunks.remove(k); // an emptied chunk: written so that it stays empty, then forgotten
                } else {
                    HistoryFormat.Ranges r = c.ranges();
                    s.chunks.set(k, new EntityHistory.ChunkState(c.id(), c.minN(), c.maxN(), version,
                            new HistoryFormat.Ranges(r.count(), length, r.minObserved(), r.maxObserved(), r.minCreated(),
                                    r.maxCreated(), r.minModified(), r.maxModified(), r.minDeleted(), r.maxDeleted()),
                            new EntityHistory.ChunkRef(at[0], at[1], length), null, c.summary()));
                }
            }
        }
    }
}
