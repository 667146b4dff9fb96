package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

import dev.cor.ngsild.ld.ContextKeeper;
import dev.cor.ngsild.ld.HostedContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.store.EntityChange;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.EntityWrite;
import dev.cor.ngsild.store.MemoryEntityStore;
import dev.cor.ngsild.store.RegistrationKeeper;
import dev.cor.ngsild.store.SubscriptionKeeper;
import dev.cor.ngsild.store.TemporalRetention;
import dev.cor.ngsild.store.TemporalStore;
import dev.cor.ngsild.store.WriteObserver;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The durable embedded store: a {@link MemoryEntityStore} that every read is served from, and a
 * data directory that keeps everything it acknowledged - a write-ahead {@link Journal} and
 * snapshots ({@code doc/storage.md}). Entities, tenants, Hosted {@code @context}s (it is the
 * broker's {@link ContextKeeper}) and subscriptions (its {@link SubscriptionKeeper}) survive a restart.
 * <p>
 * A write changes the memory store inside its per-id critical section, and inside that same
 * section appends its record to the journal's queue - so the journal's order is the order of
 * the changes - before the writer's {@link WriteObserver} is called there. The request then waits for its record in {@link #sync()}, after the critical
 * section and before its answer: as a coroutine of its loop, which serves everyone else
 * meanwhile ({@link #writesWait()} is true unless the policy is {@code off}). A batch is one
 * record per entity, each whole or not at all on recovery.
 * <p>
 * {@link Builder#open()} recovers what the directory holds (snapshot, then journal replay; a torn
 * tail is truncated with one log line, damage anywhere else is a {@link DataDamagedException}).
 * {@link #close()} writes what is left and takes a last snapshot. Thread-safe: every loop and
 * worker shares one.
 */
public final class DurableEntityStore implements EntityStore, ContextKeeper, SubscriptionKeeper, RegistrationKeeper,
        MeterBinder, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DurableEntityStore.class.getName());

    private final Path dir;
    private final DataFiles files;
    private final MemoryEntityStore memory;
    private final Journal journal;
    private final Snapshotter snapshotter;
    private final WriteGate gate = new WriteGate();
    private final long syncTimeoutMs;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final List<HostedContext> recoveredContexts;
    private final List<SubscriptionKeeper.Kept> recoveredSubscriptions;
    private final List<RegistrationKeeper.Kept> recoveredRegistrations;
    private final List<SubscriptionKeeper.Kept> recoveredCsourceSubscriptions;
    private final SubscriptionKeeper csourceKeeper = new CsourceSubscriptionKeeper();
    private final long recoveryMillis;
    private final Recovery.Outcome recovered;
    private final DurableTemporalStore temporal;
    private final String recoverySummary;
    private boolean closed;

    private DurableEntityStore(Builder b, MemoryEntityStore memory, DurableTemporalStore temporal, Recovery.Outcome r, List<HostedContext> contexts,
            List<SubscriptionKeeper.Kept> subscriptions, List<RegistrationKeeper.Kept> registrations,
            List<SubscriptionKeeper.Kept> csourceSubscriptions, long recoveryMillis, String recoverySummary, FileChannel lockChannel, FileLock lock) throws IOException {
        this.recoverySummary = recoverySummary;
        this.dir = b.dir;
        this.files = b.files;
        this.memory = memory;
        this.temporal = temporal;
        this.syncTimeoutMs = b.syncTimeoutMs;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.recoveredContexts = contexts;
        this.recoveredSubscriptions = subscriptions;
        this.recoveredRegistrations = registrations;
        this.recoveredCsourceSubscriptions = csourceSubscriptions;
        this.recoveryMillis = recoveryMillis;
        this.recovered = r;
        List<Path> kept = new ArrayList<>(r.segments);
        kept.removeAll(r.coveredSegments);
        if (r.lastSegment != null) {
            kept.remove(r.lastSegment);
        }
        this.journal = new Journal(dir, files, b.policy, b.segmentBytes, b.retryMs, r.lastSeq(), r.lastSegment,
                r.lastSegmentFirstSeq, r.lastSegmentEnd, kept);
        this.snapshotter = new Snapshotter(dir, files, memory, gate, journal, b.snapshotBytes, r.snapshotSeq);
        snapshotter.history(seq -> temporal.checkpoint(seq, 60_000));
        temporal.start(journal, gate);
        journal.start(snapshotter);
        snapshotter.start();
    }

    /** A builder of a store over {@code dataDir} (made if missing); {@code open()} recovers what it holds. */
    public static Builder builder(Path dataDir) {
        return new Builder(dataDir);
    }

    // ---------------------------------------------------------------- reads: the memory store's

    @Override
    public boolean blocks() {
        return false; // it waits only by yielding (or, on a worker, with a deadline)
    }

    @Override
    public boolean hasTenant(String tenant) {
        return memory.hasTenant(tenant);
    }

    @Override
    public Set<String> tenants() {
        return memory.tenants();
    }

    @Override
    public Entity get(String tenant, String id) {
        return memory.get(tenant, id);
    }

    @Override
    public void forEach(String tenant, String type, Consumer<Entity> visitor) {
        memory.forEach(tenant, type, visitor);
    }

    @Override
    public int count(String tenant) {
        return memory.count(tenant);
    }

    // the query planner's indexes are the memory store's: a query costs what it costs there

    @Override
    public void scan(String tenant, Index index, String key, Predicate<Entity> visitor) {
        memory.scan(tenant, index, key, visitor);
    }

    @Override
    public int size(String tenant, Index index, String key) {
        return memory.size(tenant, index, key);
    }

    @Override
    public List<String> idsWithValues(String tenant, dev.cor.ngsild.query.ValueLookup lookup, int max) {
        return memory.idsWithValues(tenant, lookup, max);
    }

    @Override
    public Collection<String> idsInBox(String tenant, String geoproperty, double minLon, double minLat, double maxLon,
            double maxLat) {
        return memory.idsInBox(tenant, geoproperty, minLon, minLat, maxLon, maxLat);
    }

    @Override
    public int sizeInBox(String tenant, String geoproperty, double minLon, double minLat, double maxLon, double maxLat) {
        return memory.sizeInBox(tenant, geoproperty, minLon, minLat, maxLon, maxLat);
    }

    @Override
    public Set<String> keys(String tenant, Index index) {
        return memory.keys(tenant, index);
    }

    // ---------------------------------------------------------------- writes

    @Override
    public EntityWrite write(String tenant, String id, EntityChange change, WriteObserver observer) {
        journal.checkWritable();
        int epoch = gate.enter();
        try {
            if (!memory.hasTenant(tenant)) {
                // before the write creates it, whatever the write then does
                journal.append(Format.TENANT, tenant, null);
            }
            return memory.write(tenant, id, current -> {
                Entity next = change.apply(current);
                if (next != current) {
                    if (next != null && !next.id().equals(id)) {
                        throw new IllegalStateException("a change of " + id + " returned entity " + next.id());
                    }
                    // inside the critical section: the record takes its place in the journal's order here
                    if (next != null) {
                        journal.append(Format.ENTITY_PUT, tenant, next);
                    } else {
                        journal.append(Format.ENTITY_DELETE, tenant, id);
                    }
                }
                return next;
            }, observer);
        } finally {
            gate.exit(epoch);
            journal.signal();
        }
    }

    @Override
    public boolean writesWait() {
        return journal.policy().waits();
    }

    @Override
    public void sync() {
        if (journal.policy().waits()) {
            journal.await(journal.lastAppended(), syncTimeoutMs);
        }
    }

    // ---------------------------------------------------------------- hosted @contexts

    /** This store keeps the subscriptions (and those to registrations), in its journal and snapshots. */
    @Override
    public Optional<SubscriptionKeeper> subscriptionKeeper() {
        return Optional.of(this);
    }

    /** This store keeps the context source registrations. */
    @Override
    public Optional<RegistrationKeeper> registrationKeeper() {
        return Optional.of(this);
    }

    /**
     * This store keeps the history ({@link DurableTemporalStore}), in the same journal and under
     * {@code history/}, with the retention it was built with.
     */
    @Override
    public Optional<TemporalStore> temporal() {
        return Optional.of(temporal);
    }

    /** This store keeps the Hosted {@code @context}s. */
    @Override
    public Optional<ContextKeeper> contextKeeper() {
        return Optional.of(this);
    }

    /** Its journal's meters ({@link #bindTo}). */
    @Override
    public Optional<MeterBinder> meters() {
        return Optional.of(this);
    }

    @Override
    public List<HostedContext> attach(Supplier<Collection<HostedContext>> current) {
        snapshotter.contexts(current);
        return recoveredContexts;
    }

    @Override
    public void host(HostedContext context, Runnable publish) {
        recordThen(Format.CONTEXT_PUT, null, context, publish);
    }

    @Override
    public boolean remove(String id, BooleanSupplier remove) {
        return recordIf(remove, Format.CONTEXT_DELETE, null, id);
    }

    /** Appends a record, then runs {@code publish}: both inside the gate, so a snapshot sees both or neither. */
    private void recordThen(int type, String tenant, Object value, Runnable publish) {
        journal.checkWritable();
        int epoch = gate.enter();
        try {
            journal.append(type, tenant, value);
            publish.run();
        } finally {
            gate.exit(epoch);
            journal.signal();
        }
    }

    /** Runs {@code remove}, and appends a record when it removed something; inside the gate. */
    private boolean recordIf(BooleanSupplier remove, int type, String tenant, Object value) {
        journal.checkWritable();
        int epoch = gate.enter();
        try {
            boolean removed = remove.getAsBoolean();
            if (removed) {
                journal.append(type, tenant, value);
            }
            return removed;
        } finally {
            gate.exit(epoch);
            journal.signal();
        }
    }

    // ---------------------------------------------------------------- subscriptions

    @Override
    public List<SubscriptionKeeper.Kept> attachSubscriptions(Supplier<Collection<SubscriptionKeeper.Kept>> current) {
        snapshotter.subscriptions(current);
        return recoveredSubscriptions;
    }

    @Override
    public void keep(SubscriptionKeeper.Kept s, Runnable publish) {
        recordThen(Format.SUBSCRIPTION_PUT, s.tenant(), s, publish);
    }

    @Override
    public boolean forget(String tenant, String id, BooleanSupplier remove) {
        return recordIf(remove, Format.SUBSCRIPTION_DELETE, tenant, id);
    }

    @Override
    public SubscriptionKeeper contextSources() {
        return csourceKeeper;
    }

    /** The subscriptions to registrations (§ 5.11): subscription records under kinds 10 and 11. */
    private final class CsourceSubscriptionKeeper implements SubscriptionKeeper {
        @Override
        public List<SubscriptionKeeper.Kept> attachSubscriptions(Supplier<Collection<SubscriptionKeeper.Kept>> current) {
            snapshotter.csourceSubscriptions(current);
            return recoveredCsourceSubscriptions;
        }

        @Override
        public void keep(SubscriptionKeeper.Kept s, Runnable publish) {
            recordThen(Format.CSOURCE_SUBSCRIPTION_PUT, s.tenant(), s, publish);
        }

        @Override
        public boolean forget(String tenant, String id, BooleanSupplier remove) {
            return recordIf(remove, Format.CSOURCE_SUBSCRIPTION_DELETE, tenant, id);
        }
    }

    // ---------------------------------------------------------------- registrations

    @Override
    public List<RegistrationKeeper.Kept> attachRegistrations(Supplier<Collection<RegistrationKeeper.Kept>> current) {
        snapshotter.registrations(current);
        return recoveredRegistrations;
    }

    @Override
    public void keepRegistration(RegistrationKeeper.Kept r, Runnable publish) {
        recordThen(Format.REGISTRATION_PUT, r.tenant(), r, publish);
    }

    @Override
    public boolean forgetRegistration(String tenant, String id, BooleanSupplier remove) {
        return recordIf(remove, Format.REGISTRATION_DELETE, tenant, id);
    }

    // ---------------------------------------------------------------- health, counters

    /** Whether writes are taken: false while the journal cannot write to the disk. */
    public boolean writable() {
        return journal.failure() == null;
    }

    /** Why writes are refused ({@code null} while they are taken). */
    public String problem() {
        IOException f = journal.failure();
        return f == null ? null : "the journal cannot write to " + dir + " since "
                + java.time.Instant.ofEpochMilli(journal.failedSinceMs()) + ": " + Journal.describe(f);
    }

    /** What the recovery at open found, in one line (the launcher prints it). */
    public String recoverySummary() {
        return recoverySummary;
    }

    /** The data directory. */
    public Path dataDir() {
        return dir;
    }

    /** When the journal makes its appends durable, as the store was opened with. */
    public FsyncPolicy policy() {
        return journal.policy();
    }

    /** Records written to the journal, forces made, and snapshots taken, for tools and tests. */
    public Stats stats() {
        return new Stats(journal.recordsWritten(), journal.forces(), journal.forcedRecords(), journal.bytesWritten(),
                journal.failures(), snapshotter.taken(), snapshotter.failed(), snapshotter.lastSeq(), journal.durableSeq(),
                recoveryMillis, recovered.replayed);
    }

    /** The store's counters (see {@link #bindTo} for what each one is). */
    public record Stats(long records, long forces, long forcedRecords, long bytes, long failures, long snapshots,
            long snapshotFailures, long snapshotSeq, long durableSeq, long recoveryMillis, long replayed) {
    }

    /** Registers the store's state and counters in {@code registry}, read from the journal and the snapshotter when it is scraped. */
    @Override
    public void bindTo(MeterRegistry registry) {
        memory.bindValueIndexes(registry);
        Gauge.builder("cor.store.writable", this, s -> s.writable() ? 1 : 0)
                .description("1 while the store takes writes, 0 while its disk fails (writes answer 503).").register(registry);
        counter(registry, "cor.store.journal.records", "Records written to the journal.", null, Journal::recordsWritten);
        counter(registry, "cor.store.journal.bytes", "Bytes written to the journal.", "bytes", Journal::bytesWritten);
        counter(registry, "cor.store.journal.forces",
                "fsyncs of the journal (records_total / forces_total: the writes that shared one).", null, Journal::forces);
        counter(registry, "cor.store.journal.forced.records", "Records made durable by those fsyncs.", null,
                Journal::forcedRecords);
        counter(registry, "cor.store.journal.failures", "Writes or fsyncs of the journal that failed.", null, Journal::failures);
        Gauge.builder("cor.store.journal.durable.seq", journal, Journal::durableSeq)
                .description("The last record as durable as the fsync policy asks.").register(registry);
        FunctionCounter.builder("cor.store.snapshots", snapshotter, Snapshotter::taken).description("Snapshots taken.")
                .register(registry);
        FunctionCounter.builder("cor.store.snapshot.failures", snapshotter, Snapshotter::failed)
                .description("Snapshots that failed.").register(registry);
        Gauge.builder("cor.store.snapshot.seq", snapshotter, Snapshotter::lastSeq)
                .description("The last record the newest snapshot holds.").register(registry);
        Gauge.builder("cor.store.recovery", this, s -> s.recoveryMillis / 1000.0).baseUnit("seconds")
                .description("How long the recovery at start took.").register(registry);
    }

    private void counter(MeterRegistry registry, String name, String help, String unit,
            java.util.function.ToLongFunction<Journal> value) {
        FunctionCounter.builder(name, journal, j -> value.applyAsLong(j)).description(help).baseUnit(unit).register(registry);
    }

    // ---------------------------------------------------------------- stopping

    /**
     * Writes and forces what the journal holds, takes a last snapshot and releases the directory.
     * The writers must have stopped (the server first). Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            snapshotter.stop();
            journal.close(30_000);
            if (journal.closedClean()) {
                snapshotter.snapshotNow(true);
            } else {
                LOG.log(System.Logger.Level.WARNING, "cor-store: the journal did not close cleanly (" + problem()
                        + "): no last snapshot; the next start replays it");
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cor-store: the last snapshot failed (" + e + "); the next start replays the journal");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            temporal.close();
            release();
        }
    }

    /** Stops at once, writing nothing more and taking no snapshot: what {@code kill -9} leaves (for tests). */
    synchronized void crash() throws InterruptedException {
        if (closed) {
            return;
        }
        closed = true;
        snapshotter.stop();
        temporal.crash();
        journal.halt();
        release();
    }

    private void release() {
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            // the process ends soon; the lock goes with it
        }
    }

    // ---------------------------------------------------------------- opening

    /** Opens a data directory: its settings, then {@link #open()}. */
    public static final class Builder {
        private final Path dir;
        private DataFiles files = DataFiles.system();
        private FsyncPolicy policy = FsyncPolicy.always();
        private long segmentBytes = 64L << 20;
        private long snapshotBytes = 64L << 20;
        private long syncTimeoutMs = 5_000;
        private long retryMs = 1_000;
        private TemporalRetention retention = TemporalRetention.FOREVER;
        private dev.cor.ngsild.store.ValueIndexSettings valueIndexes = dev.cor.ngsild.store.ValueIndexSettings.defaults();
        private long historySegmentBytes = 64L << 20;
        private long historyHeapBytes = 32L << 20;

        private Builder(Path dir) {
            this.dir = Objects.requireNonNull(dir, "dataDir");
        }

        /** The file layer (default: the real file system). */
        public Builder files(DataFiles files) {
            this.files = Objects.requireNonNull(files, "files");
            return this;
        }

        /** When appends are made durable, and what a write's answer waits for (default: always). */
        public Builder fsync(FsyncPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** A journal segment's size before the next one begins (default 64 MiB). */
        public Builder segmentBytes(long bytes) {
            this.segmentBytes = positive("segmentBytes", bytes);
            return this;
        }

        /**
         * How much the journal grows before a snapshot is taken (default 64 MiB; at least the
         * size of the last snapshot, so that snapshots cost at most as much writing as the journal).
         */
        public Builder snapshotBytes(long bytes) {
            this.snapshotBytes = positive("snapshotBytes", bytes);
            return this;
        }

        /** How long a write waits for the journal before it is answered 503 (default 5 000 ms). */
        public Builder syncTimeoutMs(long ms) {
            this.syncTimeoutMs = positive("syncTimeoutMs", ms);
            return this;
        }

        /** How much history is kept ({@link DurableTemporalStore#expire}); default {@link TemporalRetention#FOREVER}. */
        public Builder temporalRetention(TemporalRetention retention) {
            this.retention = Objects.requireNonNull(retention, "retention");
            return this;
        }

        /** Which value indexes the store keeps in the heap (default {@link dev.cor.ngsild.store.ValueIndexSettings#defaults()}). */
        public Builder valueIndexes(dev.cor.ngsild.store.ValueIndexSettings settings) {
            this.valueIndexes = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /** A history segment's size before the next one begins (default 64 MiB). */
        public Builder historySegmentBytes(long bytes) {
            this.historySegmentBytes = positive("historySegmentBytes", bytes);
            return this;
        }

        /** How many bytes the history's tails and unwritten chunks may hold in the heap (default 32 MiB). */
        public Builder historyHeapBytes(long bytes) {
            this.historyHeapBytes = positive("historyHeapBytes", bytes);
            return this;
        }

        /** How often a failing disk is tried again (default 1 000 ms). */
        public Builder retryMs(long ms) {
            this.retryMs = positive("retryMs", ms);
            return this;
        }

        /**
         * Locks the directory (creating it), recovers what it holds and starts the journal and
         * snapshot threads.
         *
         * @throws DataDamagedException  the directory holds damage other than a torn tail
         * @throws IllegalStateException another process uses the directory, or it cannot be read
         */
        public DurableEntityStore open() {
            FileChannel lockChannel = null;
            FileLock lock;
            try {
                Files.createDirectories(dir);
                Path lockFile = dir.resolve(Format.LOCK_FILE);
                lockChannel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
                try {
                    lock = lockChannel.tryLock();
                } catch (OverlappingFileLockException e) {
                    lock = null;
                }
                if (lock == null) {
                    throw new IllegalStateException("the data directory " + dir + " is in use by another broker");
                }
                if (lockChannel.size() == 0) {
                    lockChannel.write(java.nio.ByteBuffer.wrap(("cor-store data directory, format version " + Format.VERSION
                            + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
                }
            } catch (IOException e) {
                closeQuietly(lockChannel);
                throw new IllegalStateException("cannot use the data directory " + dir + ": " + e, e);
            } catch (RuntimeException e) {
                closeQuietly(lockChannel);
                throw e;
            }
            try {
                long began = System.nanoTime();
                MemoryEntityStore memory = new MemoryEntityStore(
                        new TemporalRetention(Long.MAX_VALUE, TemporalRetention.MEMORY_DEFAULT_BYTES), valueIndexes);
                Map<String, HostedContext> contexts = new LinkedHashMap<>();
                Map<String, SubscriptionKeeper.Kept> subscriptions = new LinkedHashMap<>();
                Map<String, RegistrationKeeper.Kept> registrations = new LinkedHashMap<>();
                Map<String, SubscriptionKeeper.Kept> csourceSubscriptions = new LinkedHashMap<>();
                DurableTemporalStore temporal = DurableTemporalStore.open(dir, files, retention, historySegmentBytes,
                        historyHeapBytes, true);
                Recovery.Outcome r = new Recovery(dir, files, new Apply(memory, contexts, subscriptions, registrations,
                        csourceSubscriptions, temporal), true).run();
                temporal.recovered();
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
                long entities = 0;
                for (String t : memory.tenants()) {
                    entities += memory.count(t);
                }
                String from = r.snapshot == null ? "no snapshot" : "snapshot " + r.snapshot.getFileName();
                String summary = entities + " entities, " + memory.tenants().size() + " tenant(s), " + contexts.size()
                        + " hosted @context(s), " + subscriptions.size() + " subscription(s), " + registrations.size()
                        + " registration(s), " + csourceSubscriptions.size() + " subscription(s) to registrations recovered from " + dir + " in " + millis + " ms (" + from + ", then "
                        + r.replayed + " journal records)";
                LOG.log(System.Logger.Level.DEBUG, () -> "cor-store: " + summary + "; fsync " + policy);
                return new DurableEntityStore(this, memory, temporal, r, List.copyOf(contexts.values()),
                        List.copyOf(subscriptions.values()), List.copyOf(registrations.values()),
                        List.copyOf(csourceSubscriptions.values()), millis, summary,
                        lockChannel, lock);
            } catch (IOException e) {
                closeQuietly(lockChannel);
                throw new IllegalStateException("cannot read the data directory " + dir + ": " + e, e);
            } catch (RuntimeException e) {
                closeQuietly(lockChannel);
                throw e;
            }
        }

        private static void closeQuietly(FileChannel ch) {
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException ignored) {
                    // nothing more to release
                }
            }
        }

        private static long positive(String name, long v) {
            if (v < 1) {
                throw new IllegalArgumentException(name + " must be >= 1: " + v);
            }
            return v;
        }
    }

    /** Applies recovered records to the memory store, the hosted contexts and the subscriptions. */
    static final class Apply implements Format.Apply {
        private final MemoryEntityStore memory;
        private final Map<String, HostedContext> contexts;
        /** By tenant and id, joined by a NUL (which neither holds). */
        private final Map<String, SubscriptionKeeper.Kept> subscriptions;
        private final Map<String, RegistrationKeeper.Kept> registrations;
        private final Map<String, SubscriptionKeeper.Kept> csourceSubscriptions;
        private final DurableTemporalStore temporal;

        Apply(MemoryEntityStore memory, Map<String, HostedContext> contexts,
                Map<String, SubscriptionKeeper.Kept> subscriptions, Map<String, RegistrationKeeper.Kept> registrations,
                Map<String, SubscriptionKeeper.Kept> csourceSubscriptions, DurableTemporalStore temporal) {
            this.temporal = temporal;
            this.memory = memory;
            this.contexts = contexts;
            this.subscriptions = subscriptions;
            this.registrations = registrations;
            this.csourceSubscriptions = csourceSubscriptions;
        }

        @Override
        public void history(long seq, HistoryOp op) {
            temporal.replay(seq, op);
        }

        @Override
        public void csourceSubscribed(SubscriptionKeeper.Kept s) {
            csourceSubscriptions.put(s.tenant() + '\0' + s.id(), s);
        }

        @Override
        public void csourceUnsubscribed(String tenant, String id) {
            csourceSubscriptions.remove(tenant + '\0' + id);
        }

        @Override
        public void registered(RegistrationKeeper.Kept r) {
            registrations.put(r.tenant() + '\0' + r.id(), r);
        }

        @Override
        public void unregistered(String tenant, String id) {
            registrations.remove(tenant + '\0' + id);
        }

        @Override
        public void subscribed(SubscriptionKeeper.Kept s) {
            subscriptions.put(s.tenant() + '\0' + s.id(), s);
        }

        @Override
        public void unsubscribed(String tenant, String id) {
            subscriptions.remove(tenant + '\0' + id);
        }

        @Override
        public void tenant(String tenant) {
            // the SPI creates a tenant with its first write; a change of an absent id to nothing is that write alone
            memory.write(tenant, "", current -> current);
        }

        @Override
        public void put(String tenant, Entity entity) {
            memory.write(tenant, entity.id(), current -> entity);
        }

        @Override
        public void delete(String tenant, String id) {
            memory.write(tenant, id, current -> null);
        }

        @Override
        public void hosted(HostedContext context) {
            contexts.put(context.id(), context);
        }

        @Override
        public void unhosted(String id) {
            contexts.remove(id);
        }
    }
}
