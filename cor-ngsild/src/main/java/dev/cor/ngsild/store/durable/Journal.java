package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

import org.jctools.queues.atomic.MpscUnboundedAtomicArrayQueue;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoCancelledException;
import dev.cor.base.CorCoLoop;
import dev.cor.ngsild.store.StoreUnavailableException;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * The write-ahead journal: records appended by the writers, written and made durable by one
 * journal thread, never by a loop.
 * <p>
 * A writer {@linkplain #append appends} inside its critical section: the record takes the next
 * sequence number and goes into a queue - no I/O, no wait, no encoding (the record holds the
 * immutable entity; the journal thread encodes it). The journal thread takes whatever has queued,
 * in sequence order, writes it in one {@code write} and - under {@link FsyncPolicy#always()} -
 * one {@code force}: the writes that arrived together share it (group commit) - and it holds a
 * force a moment for the requests the last one answered ({@link #awaitSiblings}). A request then
 * {@linkplain #await waits} for its records outside the critical section: as a coroutine it parks
 * and its loop serves everyone else until the journal thread wakes it through the loop's inbox;
 * on a worker it blocks, with a deadline.
 * <p>
 * When a write or a force fails (the disk is full, read-only, an I/O error), the waiting
 * requests are told at once (503), new writes are refused before they change anything
 * ({@link #checkWritable}), and the journal thread tries again every {@code retryMs}, rewriting
 * everything since the last good force, until the disk takes it; then writes are taken again.
 */
final class Journal {
    private static final System.Logger LOG = System.getLogger(Journal.class.getName());

    /** Bytes encoded before they are written, at most (a larger backlog is written in several). */
    private static final int MAX_BATCH_BYTES = 4 << 20;
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long MAX_SIBLINGS_WAIT_NANOS = TimeUnit.MICROSECONDS.toNanos(300);
    private static final long SIBLINGS_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

    /** One record waiting to be written. Immutable; the value is an immutable record of the model. */
    record Entry(long seq, int type, String tenant, Object value) {
    }

    /** A request waiting for its records to be durable. */
    private static final class Waiter {
        static final int WAITING = 0;
        static final int DONE = 1;
        static final int FAILED = 2;

        final long target;
        final CorCo co;
        final Thread thread;
        volatile int outcome;
        /** Set by the coroutine when it stops waiting; read by the wake, both on its loop's thread. */
        boolean abandoned;

        Waiter(long target, CorCo co, Thread thread) {
            this.target = target;
            this.co = co;
            this.thread = thread;
        }
    }

    /** Told of the bytes the journal appended, to decide when to take a snapshot. */
    interface Progress {
        void appended(long totalBytes);
    }

    private final Path dir;
    private final DataFiles files;
    private final FsyncPolicy policy;
    private final long segmentBytes;
    private final long retryNanos;
    private final Thread thread;
    private volatile Progress progress = total -> { };

    // ---------------------------------------------------------------- shared with the writers
    private final AtomicLong claimed;
    private final MpscUnboundedAtomicArrayQueue<Entry> queue = new MpscUnboundedAtomicArrayQueue<>(1024);
    private final MpscUnboundedAtomicArrayQueue<Waiter> waiters = new MpscUnboundedAtomicArrayQueue<>(256);
    private volatile boolean sleeping;
    private volatile boolean closing;
    private volatile boolean halted;
    private volatile boolean rotateRequested;
    /** Every record up to this one is as durable as the policy asks. */
    private volatile long durable;
    private volatile IOException failure;
    private volatile long failedSinceMs;
    /** The segments on disk, by first sequence number: the journal thread adds, the snapshot deletes. */
    final ConcurrentSkipListMap<Long, Path> segments = new ConcurrentSkipListMap<>();

    // counters: written by the journal thread only, read by anyone
    private volatile long recordsWritten;
    private volatile long bytesWritten;
    private volatile long forces;
    private volatile long forcedRecords;
    private volatile long failures;

    // ---------------------------------------------------------------- the journal thread's own
    private final CRC32C crc = new CRC32C();
    private final EntityCodec codec = new EntityCodec();
    private final PriorityQueue<Entry> early = new PriorityQueue<>((a, b) -> Long.compare(a.seq, b.seq));
    private final ArrayList<Waiter> waiting = new ArrayList<>();
    /** Encoded records for file positions [bufFilePos, bufFilePos + buf.position()): not yet known durable. */
    private final ByteSink buf = new ByteSink(1 << 16);
    private long bufFilePos;
    /** How much of buf is written to the file. */
    private int bufWritten;
    private long bufLastSeq;
    /** The first record in buf after the written ones: where a new segment begins. */
    private long bufFirstSeq;
    private DataFile file;
    private Path segment;
    /** The next sequence number to encode. */
    private long nextSeq;
    private long writtenSeq;
    private long forcedSeq;
    private long lastForceNanos;
    private long nextRetryNanos;
    private long appendedSinceOpen;
    // group commit's siblings (ALWAYS): how many requests the last force answered and how many
    // were waiting besides, the last force's time, and when the wait for them began (0: none)
    private int releasedLast;
    private int pendingAfterLast;
    private long lastForceTookNanos;
    private long siblingsSince;

    /**
     * A journal that goes on after record {@code lastSeq}: in {@code segment} from {@code end} on,
     * or, when {@code segment} is null, in a new segment created with the next record.
     */
    Journal(Path dir, DataFiles files, FsyncPolicy policy, long segmentBytes, long retryMs, long lastSeq,
            Path segment, long segmentFirstSeq, long end, List<Path> existing) throws IOException {
        this.dir = dir;
        this.files = files;
        this.policy = policy;
        this.segmentBytes = segmentBytes;
        this.retryNanos = TimeUnit.MILLISECONDS.toNanos(retryMs);
        this.claimed = new AtomicLong(lastSeq);
        this.nextSeq = lastSeq + 1;
        this.writtenSeq = lastSeq;
        this.forcedSeq = lastSeq;
        this.durable = lastSeq;
        for (Path p : existing) {
            segments.put(Format.number(p, Format.JOURNAL_PREFIX, Format.JOURNAL_SUFFIX), p);
        }
        if (segment != null) {
            this.file = files.open(segment, DataFiles.Mode.WRITE);
            this.segment = segment;
            this.bufFilePos = end;
            segments.put(segmentFirstSeq, segment);
        }
        this.lastForceNanos = System.nanoTime();
        this.thread = new Thread(this::run, "cor-store-journal");
        this.thread.setDaemon(true);
    }

    void start(Progress progress) {
        this.progress = progress;
        thread.start();
    }

    FsyncPolicy policy() {
        return policy;
    }

    // ---------------------------------------------------------------- the writers' side

    /** Refuses a write while the journal cannot write: before the write changes anything. */
    void checkWritable() {
        IOException f = failure;
        if (f != null) {
            throw unavailable(f);
        }
        if (closing) {
            throw new StoreUnavailableException("the store is closing");
        }
    }

    /**
     * Appends a record: the next sequence number, in the order of the calls - which, made inside
     * the critical section of the entity (or context) it changes, is the order of the changes.
     * No I/O, no wait. Returns its sequence number.
     */
    long append(int type, String tenant, Object value) {
        long seq = claimed.incrementAndGet();
        queue.offer(new Entry(seq, type, tenant, value));
        return seq;
    }

    /** Wakes the journal thread if it sleeps: after the critical section, never inside one. */
    void signal() {
        if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    /** The last sequence number appended. */
    long lastAppended() {
        return claimed.get();
    }

    /**
     * Waits until every record up to {@code target} is durable (written, or forced, as the
     * policy asks). Yields inside a coroutine; blocks elsewhere; refuses on a loop thread outside
     * a coroutine.
     *
     * @throws StoreUnavailableException the journal failed before, or the deadline passed
     */
    void await(long target, long timeoutMs) {
        if (durable >= target) {
            return;
        }
        checkFailure(target);
        CorCo co = CorCo.current();
        if (co == null) {
            CorCoLoop loop = CorCoLoop.current();
            if (loop != null) {
                throw new IllegalStateException("a wait for the journal on loop thread " + loop.name()
                        + " outside a coroutine: a loop never blocks (a write request can wait: it runs as a coroutine or on a worker)");
            }
        }
        Waiter w = new Waiter(target, co, co == null ? Thread.currentThread() : null);
        waiters.offer(w);
        // the journal thread publishes `durable` before it drains the waiters: a waiter it
        // missed sees the new value here
        if (durable >= target) {
            w.abandoned = true;
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        try {
            while (w.outcome == Waiter.WAITING) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new StoreUnavailableException("the journal did not confirm the write within " + timeoutMs
                            + " ms (the disk is too slow or stuck)");
                }
                if (co != null) {
                    CorCo.park(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left + 999_999)));
                } else {
                    LockSupport.parkNanos(this, left);
                    if (Thread.interrupted()) {
                        Thread.currentThread().interrupt();
                        throw new StoreUnavailableException("interrupted while waiting for the journal");
                    }
                }
                if (w.outcome == Waiter.WAITING && failure != null && durable < target) {
                    break;
                }
            }
        } catch (CorCoCancelledException e) {
            throw new StoreUnavailableException("the broker is stopping", e);
        } finally {
            w.abandoned = true;
        }
        if (w.outcome != Waiter.DONE && durable < target) {
            checkFailure(target);
            throw new StoreUnavailableException("the journal stopped before it confirmed the write");
        }
    }

    private void checkFailure(long target) {
        IOException f = failure;
        if (f != null && durable < target) {
            throw unavailable(f);
        }
    }

    private StoreUnavailableException unavailable(IOException f) {
        return new StoreUnavailableException("the store cannot write to its disk (" + describe(f)
                + "): writes are refused until it can, reads are served", f);
    }

    static String describe(IOException e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m != null ? ": " + m : "");
    }

    // ---------------------------------------------------------------- health and counters

    /** The error the journal is failing with, or {@code null} while it writes. */
    IOException failure() {
        return failure;
    }

    long failedSinceMs() {
        return failedSinceMs;
    }

    long durableSeq() {
        return durable;
    }

    long recordsWritten() {
        return recordsWritten;
    }

    long bytesWritten() {
        return bytesWritten;
    }

    long forces() {
        return forces;
    }

    long forcedRecords() {
        return forcedRecords;
    }

    long failures() {
        return failures;
    }

    /** Asks for a new segment with the next record (a snapshot does, so that the old ones can go). */
    void requestRotation() {
        rotateRequested = true;
        LockSupport.unpark(thread);
    }

    // ---------------------------------------------------------------- stopping

    /**
     * Writes and forces everything appended, then stops the journal thread, within
     * {@code timeoutMs}. The writers have stopped.
     */
    void close(long timeoutMs) throws InterruptedException {
        closing = true;
        LockSupport.unpark(thread);
        thread.join(timeoutMs);
        if (thread.isAlive()) {
            halted = true;
            LockSupport.unpark(thread);
            thread.join(timeoutMs);
        }
    }

    /** Stops at once, writing nothing more: what a process that is killed leaves (for tests). */
    void halt() throws InterruptedException {
        halted = true;
        LockSupport.unpark(thread);
        thread.join(10_000);
    }

    /** Whether everything appended was written and forced by the stop. */
    boolean closedClean() {
        return !thread.isAlive() && forcedSeq == claimed.get() && failure == null;
    }

    // ---------------------------------------------------------------- the journal thread

    private void run() {
        try {
            loop();
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "cor-store: the journal thread failed; writes are refused from now on", t);
            failure = new IOException("the journal thread failed: " + t, t);
            failedSinceMs = System.currentTimeMillis();
        } finally {
            wakeWaiters(true);
            closeFile();
        }
    }

    private void loop() {
        while (!halted) {
            boolean closingNow = closing; // read first: what was appended before it is drained below
            collect();
            long now = System.nanoTime();
            if (failure != null && now < nextRetryNanos) {
                if (closingNow && halted) {
                    return;
                }
                sleep(nextRetryNanos - now);
                continue;
            }
            try {
                boolean rotate = rotateRequested || (segment != null && bufFilePos + buf.position() >= segmentBytes);
                if (bufWritten < buf.position()) {
                    if (segment == null) {
                        openSegment(bufFirstSeq);
                    }
                    flush();
                }
                boolean forceDue = switch (policy.mode()) {
                    case ALWAYS -> forcedSeq < writtenSeq;
                    case INTERVAL -> forcedSeq < writtenSeq
                            && (now - lastForceNanos >= TimeUnit.MILLISECONDS.toNanos(policy.intervalMs()) || failure != null);
                    case OFF -> false;
                };
                if (forceDue && !rotate && !closingNow && policy.mode() == FsyncPolicy.Mode.ALWAYS && awaitSiblings()) {
                    continue; // collect and write what came meanwhile, then force it all at once
                }
                if (forceDue || ((rotate || closingNow) && segment != null && forcedSeq < writtenSeq)) {
                    force();
                }
                if (rotate && buf.position() == 0) {
                    if (segment != null && writtenSeq >= segmentFirst()) {
                        // the next record begins a new segment; an empty one is not worth replacing
                        closeFile();
                        segment = null;
                    }
                    rotateRequested = false;
                }
                if (failure != null && bufWritten == buf.position() && (policy.mode() == FsyncPolicy.Mode.OFF
                        || forcedSeq == writtenSeq)) {
                    recovered();
                }
            } catch (IOException e) {
                failed(e);
                continue;
            }
            if (closingNow && nextSeq > claimed.get() && buf.position() == 0 && forcedSeq == writtenSeq
                    && failure == null) {
                wakeWaiters(false);
                return;
            }
            if (queue.isEmpty() && bufWritten == buf.position() && !rotateRequested) {
                long park = IDLE_PARK_NANOS;
                if (policy.mode() == FsyncPolicy.Mode.INTERVAL && forcedSeq < writtenSeq) {
                    park = Math.max(0, lastForceNanos + TimeUnit.MILLISECONDS.toNanos(policy.intervalMs()) - System.nanoTime());
                }
                if (park > 0) {
                    sleep(park);
                }
            }
        }
    }

    private void sleep(long nanos) {
        sleeping = true;
        if (queue.isEmpty() && !halted && !(closing && failure == null)) {
            LockSupport.parkNanos(this, nanos);
        }
        sleeping = false;
    }

    /** Takes what has queued, in sequence order, and encodes it into buf (up to a batch's bytes). */
    private void collect() {
        Entry e;
        while (buf.position() - bufWritten < MAX_BATCH_BYTES && (e = queue.relaxedPoll()) != null) {
            if (e.seq != nextSeq) {
                early.add(e); // its writer took a number after another one that is still offering its record
                continue;
            }
            encode(e);
            while (!early.isEmpty() && early.peek().seq == nextSeq) {
                encode(early.poll());
            }
        }
    }

    private void encode(Entry e) {
        if (buf.position() == bufWritten) {
            bufFirstSeq = e.seq;
        }
        Format.writeRecord(buf, e.seq, e.type, e.tenant, e.value, codec, crc);
        bufLastSeq = e.seq;
        nextSeq = e.seq + 1;
    }


    private long segmentFirst() {
        return Format.number(segment, Format.JOURNAL_PREFIX, Format.JOURNAL_SUFFIX);
    }

    private void openSegment(long firstSeq) throws IOException {
        Path p = dir.resolve(Format.journalName(firstSeq));
        DataFile f = files.open(p, DataFiles.Mode.CREATE);
        try {
            ByteSink h = new ByteSink(Format.HEADER_BYTES);
            Format.writeHeader(h, Format.JOURNAL_MAGIC, firstSeq, System.currentTimeMillis(), crc);
            writeFully(f, h.slice(0), 0);
            f.force();
            files.syncDirectory(dir);
        } catch (IOException e) {
            closeQuietly(f);
            throw e;
        }
        file = f;
        segment = p;
        segments.put(firstSeq, p);
        // buf's bytes now go to this segment, after its header
        bufFilePos = Format.HEADER_BYTES;
    }

    private void flush() throws IOException {
        int from = bufWritten;
        writeFully(file, buf.slice(from), bufFilePos + from);
        long n = buf.position() - from;
        bufWritten = buf.position();
        recordsWritten += bufLastSeq - writtenSeq;
        writtenSeq = bufLastSeq;
        bytesWritten += n;
        appendedSinceOpen += n;
        if (policy.mode() == FsyncPolicy.Mode.OFF) {
            // nothing waits for these bytes, and nothing will force them: keep none of them
            bufFilePos += bufWritten;
            buf.clear();
            bufWritten = 0;
        } else if (policy.mode() == FsyncPolicy.Mode.INTERVAL && failure == null) {
            publishDurable(writtenSeq);
        }
        progress.appended(appendedSinceOpen);
    }

    /**
     * Whether to hold the force a moment for the requests the last one answered. With one force
     * in flight, writers that each wait for their answer split into two halves taking turns - one
     * waits for the force under way while the other is answered and sends its next write - so at
     * most half of them would share a force. The requests the last force answered come back
     * within a fraction of a force's time: waiting until as many requests wait as the last force
     * answered plus those that waited besides, but no longer than the last force took (at most
     * 300 us), lets them share this one. One writer at a time: it waits for itself, at once.
     */
    private boolean awaitSiblings() {
        int expected = releasedLast + pendingAfterLast;
        if (expected < 2) {
            return false;
        }
        Waiter w;
        while ((w = waiters.relaxedPoll()) != null) {
            waiting.add(w);
        }
        long now = System.nanoTime();
        if (siblingsSince == 0) {
            siblingsSince = now;
        }
        long left = siblingsSince + Math.min(lastForceTookNanos, MAX_SIBLINGS_WAIT_NANOS) - now;
        if (waiting.size() >= expected || left <= 0 || failure != null) {
            siblingsSince = 0;
            return false;
        }
        LockSupport.parkNanos(this, Math.min(left, SIBLINGS_PARK_NANOS));
        return true;
    }

    private void force() throws IOException {
        long began = System.nanoTime();
        file.force();
        lastForceNanos = System.nanoTime();
        lastForceTookNanos = lastForceNanos - began;
        forces++;
        forcedRecords += writtenSeq - forcedSeq;
        forcedSeq = writtenSeq;
        bufFilePos += bufWritten;
        buf.discard(bufWritten);
        bufWritten = 0;
        if (policy.mode() == FsyncPolicy.Mode.ALWAYS && failure == null) {
            releasedLast = publishDurable(forcedSeq);
            pendingAfterLast = waiting.size();
        }
    }

    /** Returns how many waiting requests it answered. */
    private int publishDurable(long seq) {
        durable = seq;
        return wakeWaiters(false);
    }

    private static void writeFully(DataFile f, ByteBuffer b, long position) throws IOException {
        long at = position;
        while (b.hasRemaining()) {
            at += f.write(b, at);
        }
    }

    private void failed(IOException e) {
        boolean first = failure == null;
        failures++;
        if (first) {
            failedSinceMs = System.currentTimeMillis();
            LOG.log(System.Logger.Level.ERROR, "cor-store: the journal cannot write to " + dir + " (" + describe(e)
                    + "): writes are answered 503 until it can, reads are served; trying again every "
                    + TimeUnit.NANOSECONDS.toMillis(retryNanos) + " ms");
        }
        failure = e;
        // what was written since the last good force may be lost or half on disk: all of it is
        // written again, at the same place, when the disk takes it (a failed fsync may have
        // dropped the dirty pages, so the bytes themselves are written again, not just forced)
        bufWritten = 0;
        nextRetryNanos = System.nanoTime() + retryNanos;
        wakeWaiters(true);
    }

    private void recovered() {
        long since = failedSinceMs;
        failure = null;
        LOG.log(System.Logger.Level.WARNING, "cor-store: the journal writes to " + dir + " again (after "
                + (System.currentTimeMillis() - since) + " ms): writes are taken again");
        publishDurable(policy.mode() == FsyncPolicy.Mode.ALWAYS ? forcedSeq : writtenSeq);
    }

    /**
     * Completes the waiters whose records are durable; with {@code failing}, tells every other
     * one that the journal failed. Each coroutine is woken through its loop's inbox, one task per
     * loop; each thread is unparked.
     */
    private int wakeWaiters(boolean failing) {
        Waiter w;
        while ((w = waiters.relaxedPoll()) != null) {
            waiting.add(w);
        }
        if (waiting.isEmpty()) {
            return 0;
        }
        int released = 0;
        long d = durable;
        Map<CorCoLoop, List<Waiter>> byLoop = null;
        for (int i = waiting.size() - 1; i >= 0; i--) {
            w = waiting.get(i);
            boolean done = w.target <= d;
            if (!done && !failing) {
                continue;
            }
            waiting.set(i, waiting.get(waiting.size() - 1));
            waiting.remove(waiting.size() - 1);
            w.outcome = done ? Waiter.DONE : Waiter.FAILED;
            if (done) {
                released++;
            }
            if (w.co == null) {
                LockSupport.unpark(w.thread);
            } else {
                if (byLoop == null) {
                    byLoop = new HashMap<>();
                }
                byLoop.computeIfAbsent(w.co.loop(), k -> new ArrayList<>()).add(w);
            }
        }
        if (byLoop != null) {
            for (Map.Entry<CorCoLoop, List<Waiter>> e : byLoop.entrySet()) {
                List<Waiter> list = e.getValue();
                try {
                    e.getKey().execute(() -> {
                        for (Waiter x : list) {
                            if (!x.abandoned) {
                                x.co.wake();
                            }
                        }
                    });
                } catch (RejectedExecutionException stopped) {
                    // the loop has ended: its coroutines were cancelled
                }
            }
        }
        return released;
    }

    private void closeFile() {
        if (file != null) {
            closeQuietly(file);
            file = null;
        }
    }

    private static void closeQuietly(DataFile f) {
        try {
            f.close();
        } catch (IOException e) {
            // nothing more to do with it
        }
    }
}
