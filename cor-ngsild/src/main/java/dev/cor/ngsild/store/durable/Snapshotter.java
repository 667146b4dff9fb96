package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.zip.CRC32C;

import dev.cor.ngsild.ld.HostedContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.RegistrationKeeper;
import dev.cor.ngsild.store.SubscriptionKeeper;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * Takes snapshots in the background, on a thread of its own: when the journal has grown by the
 * threshold since the last one, it passes the {@link WriteGate}'s barrier (the loops go on
 * writing), reads every tenant, entity, hosted {@code @context} and subscription of the live store into a new
 * file, makes it durable, renames it into place, and then deletes the older snapshot and the
 * journal segments it covers. A snapshot that fails is logged and tried again at the next
 * threshold; the journal still holds everything. {@link #snapshotNow} takes the last one at stop.
 */
final class Snapshotter implements Journal.Progress {
    private static final System.Logger LOG = System.getLogger(Snapshotter.class.getName());
    private static final long BARRIER_TIMEOUT_MS = 10_000;

    private final Path dir;
    private final DataFiles files;
    private final EntityStore memory;
    private final WriteGate gate;
    private final Journal journal;
    private final long thresholdBytes;
    private final Thread thread;
    private volatile Supplier<Collection<HostedContext>> contexts = List::of;
    private volatile HistoryCheckpoint history = seq -> { };

    /** What makes the history up to a journal record durable outside the journal, before a snapshot lets the journal go. */
    @FunctionalInterface
    interface HistoryCheckpoint {
        void upTo(long seq) throws IOException;
    }
    private volatile Supplier<Collection<SubscriptionKeeper.Kept>> subscriptions = List::of;
    private volatile Supplier<Collection<RegistrationKeeper.Kept>> registrations = List::of;
    private volatile Supplier<Collection<SubscriptionKeeper.Kept>> csourceSubscriptions = List::of;

    private volatile boolean stopping;
    private volatile boolean requested;
    /** The journal's appended bytes when the last snapshot began. */
    private volatile long appendedAtLast;
    /** The size of the last snapshot: the journal may grow by that much before the next (so snapshots cost at most half the writes). */
    private volatile long lastSize;
    private volatile long lastSeq;
    private volatile long taken;
    private volatile long failed;
    private volatile long lastMillis;
    private volatile String lastError;

    Snapshotter(Path dir, DataFiles files, EntityStore memory, WriteGate gate, Journal journal, long thresholdBytes,
            long lastSeq) {
        this.dir = dir;
        this.files = files;
        this.memory = memory;
        this.gate = gate;
        this.journal = journal;
        this.thresholdBytes = thresholdBytes;
        this.lastSeq = lastSeq;
        this.thread = new Thread(this::run, "cor-store-snapshot");
        this.thread.setDaemon(true);
    }

    /** The history's checkpoint, asked after the barrier and before the snapshot is written. */
    void history(HistoryCheckpoint checkpoint) {
        this.history = checkpoint;
    }

    void contexts(Supplier<Collection<HostedContext>> hosted) {
        this.contexts = hosted;
    }

    void csourceSubscriptions(Supplier<Collection<SubscriptionKeeper.Kept>> inForce) {
        this.csourceSubscriptions = inForce;
    }

    void registrations(Supplier<Collection<RegistrationKeeper.Kept>> inForce) {
        this.registrations = inForce;
    }

    void subscriptions(Supplier<Collection<SubscriptionKeeper.Kept>> inForce) {
        this.subscriptions = inForce;
    }

    void start() {
        thread.start();
    }

    /** On the journal thread: asks for a snapshot once the journal has grown enough. */
    @Override
    public void appended(long totalBytes) {
        if (!requested && totalBytes - appendedAtLast >= Math.max(thresholdBytes, lastSize)) {
            requested = true;
            LockSupport.unpark(thread);
        }
    }

    /** Stops the background thread, waiting for a snapshot under way. */
    void stop() throws InterruptedException {
        stopping = true;
        LockSupport.unpark(thread);
        thread.join(60_000);
    }

    private void run() {
        while (!stopping) {
            if (!requested) {
                LockSupport.parkNanos(this, TimeUnit.SECONDS.toNanos(1));
                continue;
            }
            try {
                snapshotNow(false);
            } catch (IOException | RuntimeException e) {
                // counted and logged in snapshotNow; the journal still holds everything
            }
            requested = false;
        }
    }

    /**
     * Takes a snapshot now and deletes what it covers ({@code closing}: the journal is closed, so
     * its last segment goes too). One at a time: the background thread, or the stop after it.
     */
    synchronized void snapshotNow(boolean closing) throws IOException {
        long began = System.nanoTime();
        Path tmp = null;
        try {
            long seq = gate.barrier(journal::lastAppended, BARRIER_TIMEOUT_MS);
            journal.requestRotation(); // so that the segment written now can go with the next snapshot
            // the snapshot lets the journal up to seq go (and a start replays only after it): the
            // history up to seq must first be in its own forced segments
            history.upTo(seq);
            Path file = dir.resolve(Format.snapshotName(seq));
            tmp = dir.resolve(Format.snapshotName(seq) + Format.TEMP_SUFFIX);
            long size = write(tmp, seq);
            files.rename(tmp, file);
            tmp = null;
            files.syncDirectory(dir);
            lastSize = size;
            lastSeq = seq;
            deleteCovered(seq, file, closing);
            taken++;
            lastMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
            lastError = null;
            LOG.log(System.Logger.Level.DEBUG, () -> "cor-store: snapshot of record " + seq + " (" + size + " bytes) in "
                    + lastMillis + " ms");
        } catch (IOException | RuntimeException e) {
            failed++;
            lastError = e.toString();
            // the next one is tried once the journal has grown by the threshold again, not at the next append
            LOG.log(System.Logger.Level.WARNING, "cor-store: a snapshot failed (" + e
                    + "); the journal keeps everything, the next one is tried later");
            if (tmp != null) {
                try {
                    files.delete(tmp);
                } catch (IOException ignored) {
                    // the next start deletes it
                }
            }
            throw e;
        }
    }

    /** Writes the snapshot file: every tenant, entity and hosted context, then the end record. Returns its size. */
    private long write(Path tmp, long seq) throws IOException {
        appendedAtLast = journal.bytesWritten();
        CRC32C crc = new CRC32C();
        EntityCodec codec = new EntityCodec();
        ByteSink out = new ByteSink(1 << 20);
        try (DataFile f = files.open(tmp, DataFiles.Mode.CREATE)) {
            long[] pos = {0};
            long[] ordinal = {0};
            Format.writeHeader(out, Format.SNAPSHOT_MAGIC, seq, System.currentTimeMillis(), crc);
            List<String> tenants = new ArrayList<>(memory.tenants());
            tenants.sort(null);
            long entities = 0;
            IOException[] failure = {null};
            for (String t : tenants) {
                Format.writeRecord(out, ++ordinal[0], Format.TENANT, t, null, codec, crc);
            }
            for (String t : tenants) {
                long[] n = {0};
                memory.forEach(t, null, (Entity e) -> {
                    if (failure[0] != null) {
                        return;
                    }
                    Format.writeRecord(out, ++ordinal[0], Format.ENTITY_PUT, t, e, codec, crc);
                    n[0]++;
                    if (out.position() >= 1 << 20) {
                        try {
                            pos[0] = spill(f, out, pos[0]);
                        } catch (IOException x) {
                            failure[0] = x;
                        }
                    }
                });
                if (failure[0] != null) {
                    throw failure[0];
                }
                entities += n[0];
            }
            long hosted = 0;
            for (HostedContext c : contexts.get()) {
                Format.writeRecord(out, ++ordinal[0], Format.CONTEXT_PUT, null, c, codec, crc);
                hosted++;
            }
            long subscribed = 0;
            for (SubscriptionKeeper.Kept k : subscriptions.get()) {
                Format.writeRecord(out, ++ordinal[0], Format.SUBSCRIPTION_PUT, null, k, codec, crc);
                subscribed++;
            }
            long registered = 0;
            for (RegistrationKeeper.Kept k : registrations.get()) {
                Format.writeRecord(out, ++ordinal[0], Format.REGISTRATION_PUT, null, k, codec, crc);
                registered++;
            }
            long csourceSubscribed = 0;
            for (SubscriptionKeeper.Kept k : csourceSubscriptions.get()) {
                Format.writeRecord(out, ++ordinal[0], Format.CSOURCE_SUBSCRIPTION_PUT, null, k, codec, crc);
                csourceSubscribed++;
            }
            Format.writeRecord(out, ++ordinal[0], Format.SNAPSHOT_END, null,
                    new long[] {tenants.size(), entities, hosted, subscribed, registered, csourceSubscribed}, codec, crc);
            pos[0] = spill(f, out, pos[0]);
            f.force();
            return pos[0];
        }
    }

    private static long spill(DataFile f, ByteSink out, long at) throws IOException {
        var b = out.slice(0);
        long p = at;
        while (b.hasRemaining()) {
            p += f.write(b, p);
        }
        out.clear();
        return p;
    }

    /** Deletes the older snapshots and every journal segment whose records the snapshot holds. */
    private void deleteCovered(long seq, Path keep, boolean closing) throws IOException {
        boolean deleted = false;
        for (Path p : files.list(dir)) {
            long s = Format.number(p, Format.SNAPSHOT_PREFIX, Format.SNAPSHOT_SUFFIX);
            if (s >= 0 && s < seq) {
                files.delete(p);
                deleted = true;
            }
        }
        // a segment is covered when the one after it begins at or before seq + 1: all of its
        // records are at or before seq. The last segment takes the appends - unless closing.
        List<Map.Entry<Long, Path>> segs = new ArrayList<>(journal.segments.entrySet());
        for (int i = 0; i < segs.size(); i++) {
            boolean covered = i + 1 < segs.size() ? segs.get(i + 1).getKey() <= seq + 1 : closing;
            if (covered) {
                files.delete(segs.get(i).getValue());
                journal.segments.remove(segs.get(i).getKey());
                deleted = true;
            }
        }
        if (deleted) {
            files.syncDirectory(dir);
        }
    }

    long taken() {
        return taken;
    }

    long failed() {
        return failed;
    }

    long lastSeq() {
        return lastSeq;
    }

    long lastMillis() {
        return lastMillis;
    }

    String lastError() {
        return lastError;
    }
}
