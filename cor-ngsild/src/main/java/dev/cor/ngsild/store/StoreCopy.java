package dev.cor.ngsild.store;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.cor.ngsild.ld.ContextKeeper;
import dev.cor.ngsild.ld.HostedContext;
import dev.cor.ngsild.model.TemporalInstance;

/**
 * Copies everything one store holds into another that holds nothing: every tenant - those whose
 * entities were all deleted too ({@link EntityStore#createTenant}) - and its entities, each the
 * source's record as it is (its times kept); the Hosted {@code @context}s with their ids and
 * createdAt (other records name them by id); the subscriptions, the subscriptions to
 * registrations and the registrations as they were kept (times and counters); and the history of
 * every entity. What the launcher's {@code --import} and {@code --export} run, with no broker over
 * either store; on a plain thread, where the stores' waits block.
 * <p>
 * <b>The keepers.</b> It attaches every keeper of both stores - the one attach of their life -
 * giving each a view of what it holds (a durable store snapshots that view when it closes: the
 * source keeps what it had, the target what was copied into it).
 * <p>
 * <b>The history.</b> Recorded again through {@link TemporalStore#record}, each entity's on one
 * thread: its instances in the order they were recorded (createdAt, then the number in their id),
 * those recorded together - the same createdAt - in one record; the entity's types and scopes with
 * the first, its deletion with the last. The durable store dates an evolution by its records - the
 * latest time of a record's instances, or its deletion's - so its copy's dates are the source's:
 * an evolution whose first record carried no instance (an entity created without attributes)
 * begins with a record of its deletion at its createdAt, which the next record undoes. What that
 * cannot date: an evolution without any instance that still exists (dated by the copy), an
 * instance modified after it was recorded (its modifiedAt dates the record it is copied in), and
 * any evolution in a store that dates by its clock (the memory one). The target gives the
 * instances ids of its own: no record refers to an instance's id (an entity does not keep one),
 * only a client that read it does.
 * <p>
 * Memory is bounded by the histories of the entities in flight and by the kept records
 * (subscriptions, registrations, contexts: a keeper hands them over whole). Entities and histories
 * stream, written by {@value #WRITERS} threads with a few writes queued each (a database commits
 * each write on its own; commits made together share a flush), and the target is asked to make its
 * writes durable ({@link EntityStore#sync}) every {@value #SYNC_EVERY} records.
 */
public final class StoreCopy {
    /** How many records are written between two waits for the target's durability (its journal's queue stays short). */
    static final int SYNC_EVERY = 1024;

    /** Orders one entity's instances as they were recorded: createdAt, then the number in the id the store gave. */
    private static final Comparator<TemporalInstance> RECORDED = Comparator
            .comparingLong((TemporalInstance i) -> i.value().createdAt())
            .thenComparingLong(i -> TemporalInstance.numberOf(i.instanceId()));

    private StoreCopy() {
    }

    /**
     * How many entity writes are in flight at once: a database target commits each write in a
     * transaction of its own, and commits made together share the log's flush.
     */
    static final int WRITERS = 8;
    /** How long a write may keep the next one waiting: each has the target's own deadline well under it. */
    private static final long WRITE_WAIT_MS = 120_000;

    /** A copy refused before it wrote anything: the target holds something, or cannot keep what the source holds. */
    public static final class Refused extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    /**
     * How much a copy copied.
     *
     * @param tenants              tenants besides the default one
     * @param emptyTenants         of those, the ones that held no entity
     * @param entities             entities, every tenant's
     * @param contexts             Hosted {@code @context}s
     * @param subscriptions        subscriptions
     * @param csourceSubscriptions subscriptions to registrations
     * @param registrations        context source registrations
     * @param histories            entities with a history
     * @param instances            their instances
     */
    public record Counts(int tenants, int emptyTenants, long entities, int contexts, int subscriptions,
            int csourceSubscriptions, int registrations, long histories, long instances) {
        @Override
        public String toString() {
            return entities + " entities in " + (tenants + 1) + " tenant(s) (" + emptyTenants + " empty), " + contexts
                    + " hosted @context(s), " + subscriptions + " subscription(s), " + csourceSubscriptions
                    + " subscription(s) to registrations, " + registrations + " registration(s), the history of "
                    + histories + " entities (" + instances + " instances)";
        }
    }

    /**
     * Copies everything {@code from} holds into {@code to}, which must hold nothing; neither store
     * is closed.
     *
     * @throws Refused              {@code to} is not empty (the message names what it holds), or it
     *                               cannot keep a kind of record that {@code from} holds: nothing was written
     * @throws RuntimeException      a store failed meanwhile ({@code to} then holds a part of the copy)
     */
    public static Counts copy(EntityStore from, EntityStore to) {
        Keepers source = Keepers.attach(from);
        Keepers target = Keepers.attach(to);
        refuseUnlessEmpty(to, target);
        Set<String> historyTenants = historyTenants(from);
        refuseWhatCannotBeKept(source, target, !historyTenants.isEmpty() && to.temporal().isEmpty());

        for (HostedContext c : source.contexts.items) {
            target.contextKeeper.host(c, () -> target.contexts.items.add(c));
        }
        int tenants = 0;
        int empty = 0;
        long[] entities = {0};
        try (Writers writers = new Writers(WRITERS)) {
            for (String t : new TreeSet<>(from.tenants())) {
                if (!EntityStore.DEFAULT_TENANT.equals(t)) {
                    tenants++;
                    to.createTenant(t);
                }
                long before = entities[0];
                from.forEach(t, null, e -> {
                    writers.submit(() -> to.write(t, e.id(), current -> e));
                    if (++entities[0] % SYNC_EVERY == 0) {
                        to.sync();
                    }
                });
                if (entities[0] == before && !EntityStore.DEFAULT_TENANT.equals(t)) {
                    empty++;
                }
            }
            writers.drain();
        }
        for (SubscriptionKeeper.Kept s : source.subscriptions.items) {
            if (!target.subscriptionKeeper.keepNew(s, () -> target.subscriptions.items.add(s))) {
                throw gained("subscription", s.id());
            }
        }
        for (SubscriptionKeeper.Kept s : source.csourceSubscriptions.items) {
            if (!target.csourceKeeper.keepNew(s, () -> target.csourceSubscriptions.items.add(s))) {
                throw gained("subscription to registrations", s.id());
            }
        }
        for (RegistrationKeeper.Kept r : source.registrations.items) {
            if (!target.registrationKeeper.keepNewRegistration(r, () -> target.registrations.items.add(r))) {
                throw gained("registration", r.id());
            }
        }
        long[] histories = {0};
        AtomicLong instances = new AtomicLong();
        if (!historyTenants.isEmpty()) {
            TemporalStore fromT = from.temporal().orElseThrow();
            TemporalStore toT = to.temporal().orElseThrow();
            try (Writers writers = new Writers(WRITERS)) {
                for (String t : historyTenants) {
                    fromT.entities(t, head -> {
                        // one entity's records in order, on one thread; entities side by side
                        writers.submit(() -> instances.addAndGet(copyHistory(fromT, toT, t, head)));
                        if (++histories[0] % SYNC_EVERY == 0) {
                            to.sync();
                        }
                        return true;
                    });
                }
                writers.drain();
            }
        }
        to.sync();
        return new Counts(tenants, empty, entities[0], source.contexts.items.size(), source.subscriptions.items.size(),
                source.csourceSubscriptions.items.size(), source.registrations.items.size(), histories[0], instances.get());
    }

    /** A record the target holds though it was empty when the copy began: someone else writes to it. */
    private static IllegalStateException gained(String what, String id) {
        return new IllegalStateException("the target gained " + what + " " + id + " meanwhile: is a broker running over it?");
    }

    /** Records one entity's history in {@code to}; returns how many instances. */
    private static int copyHistory(TemporalStore from, TemporalStore to, String tenant, TemporalEntity head) {
        List<TemporalInstance> all = new ArrayList<>();
        for (String a : head.attributes()) {
            all.addAll(from.instances(tenant, head.id(), a, InstanceQuery.ALL, Integer.MAX_VALUE));
        }
        all.sort(RECORDED);
        List<List<TemporalInstance>> records = new ArrayList<>();
        for (int start = 0, end; start < all.size(); start = end) {
            long createdAt = all.get(start).value().createdAt();
            for (end = start + 1; end < all.size() && all.get(end).value().createdAt() == createdAt; end++) {
                // the instances recorded together
            }
            List<TemporalInstance> group = new ArrayList<>(end - start);
            for (TemporalInstance i : all.subList(start, end)) {
                group.add(i.withId(null)); // the target numbers its own
            }
            records.add(group);
        }
        boolean first = true;
        // a first record dated by a deletion at the evolution's createdAt, when its instances would date it later
        // (the class's Javadoc); not when no record follows to undo the deletion
        boolean dated = !records.isEmpty() ? head.createdAt() < time(records.getFirst())
                : head.deletedAt() != TemporalInstance.NO_TIME && head.createdAt() < head.deletedAt();
        if (dated) {
            to.record(tenant, head.id(), head.types(), head.scopes(), List.of(), head.createdAt());
            first = false;
        }
        if (records.isEmpty()) {
            records.add(List.of());
        }
        for (int k = 0; k < records.size(); k++) {
            boolean last = k == records.size() - 1;
            to.record(tenant, head.id(), first ? head.types() : null, first ? head.scopes() : null, records.get(k),
                    last ? head.deletedAt() : TemporalInstance.NO_TIME);
            first = false;
        }
        return all.size();
    }

    /** The time a store dates a record of {@code instances} by: the latest of theirs. */
    private static long time(List<TemporalInstance> instances) {
        long t = Long.MIN_VALUE;
        for (TemporalInstance i : instances) {
            t = Math.max(t, Math.max(i.value().createdAt(), i.value().modifiedAt()));
        }
        return t;
    }

    /**
     * The tenants whose history is copied: those of {@code from}'s temporal store that hold an
     * entity's history, sorted; none when it keeps no history.
     */
    private static Set<String> historyTenants(EntityStore from) {
        Set<String> out = new TreeSet<>();
        from.temporal().ifPresent(ts -> {
            Set<String> all = new TreeSet<>(from.tenants());
            try {
                all.addAll(ts.tenants());
            } catch (UnsupportedOperationException e) {
                throw new Refused("the source's history cannot be copied (" + e.getMessage() + "); nothing was copied");
            }
            for (String t : all) {
                if (ts.count(t) > 0) {
                    out.add(t);
                }
            }
        });
        return out;
    }

    /** Refuses a target that holds anything, naming what. */
    private static void refuseUnlessEmpty(EntityStore to, Keepers target) {
        List<String> holds = new ArrayList<>();
        for (String t : new TreeSet<>(to.tenants())) {
            int n = to.count(t);
            if (!EntityStore.DEFAULT_TENANT.equals(t)) {
                holds.add("tenant '" + t + "' (" + n + " entities)");
            } else if (n > 0) {
                holds.add(n + " entities in the default tenant");
            }
        }
        target.contexts.describe(holds, "hosted @context(s)");
        target.subscriptions.describe(holds, "subscription(s)");
        target.csourceSubscriptions.describe(holds, "subscription(s) to registrations");
        target.registrations.describe(holds, "registration(s)");
        to.temporal().ifPresent(ts -> {
            Set<String> all = new TreeSet<>(to.tenants());
            try {
                all.addAll(ts.tenants());
            } catch (UnsupportedOperationException e) {
                // its entity store's tenants: the history of a tenant the temporal API made alone is not seen
            }
            for (String t : all) {
                int n = ts.count(t);
                if (n > 0) {
                    holds.add("the history of " + n + " entities in tenant '" + t + "'");
                }
            }
        });
        if (!holds.isEmpty()) {
            throw new Refused("the target is not empty: it holds " + String.join(", ", holds) + "; nothing was copied");
        }
    }

    /** Refuses a copy that would leave out a kind of record the source holds and the target cannot keep. */
    private static void refuseWhatCannotBeKept(Keepers source, Keepers target, boolean historyLost) {
        List<String> lost = new ArrayList<>();
        if (!source.contexts.items.isEmpty() && target.contextKeeper == null) {
            lost.add("hosted @contexts");
        }
        if (!source.subscriptions.items.isEmpty() && target.subscriptionKeeper == null) {
            lost.add("subscriptions");
        }
        if (!source.csourceSubscriptions.items.isEmpty() && target.csourceKeeper == null) {
            lost.add("subscriptions to registrations");
        }
        if (!source.registrations.items.isEmpty() && target.registrationKeeper == null) {
            lost.add("registrations");
        }
        if (historyLost) {
            lost.add("history");
        }
        if (!lost.isEmpty()) {
            throw new Refused("the target keeps no " + String.join(", no ", lost)
                    + ", which the source holds; nothing was copied");
        }
    }

    /**
     * A few threads that write to the target, at most {@code 4 * n} writes queued or in flight
     * (memory stays bounded while the source is read faster than the target writes); the first
     * failure stops the copy. Entities are independent of each other: their order does not matter.
     */
    private static final class Writers implements AutoCloseable {
        private final int permits;
        private final Semaphore inFlight;
        private final ExecutorService pool;
        private final AtomicReference<RuntimeException> failed = new AtomicReference<>();

        Writers(int n) {
            this.permits = 4 * n;
            this.inFlight = new Semaphore(permits);
            AtomicInteger named = new AtomicInteger();
            this.pool = Executors.newFixedThreadPool(n, r -> {
                Thread t = new Thread(r, "cor-copy-writer-" + named.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }

        void submit(Runnable write) {
            check();
            acquire(1);
            pool.execute(() -> {
                try {
                    if (failed.get() == null) {
                        write.run();
                    }
                } catch (RuntimeException e) {
                    failed.compareAndSet(null, e);
                } finally {
                    inFlight.release();
                }
            });
        }

        /** Waits until every write submitted is done; throws the first failure. */
        void drain() {
            acquire(permits);
            inFlight.release(permits);
            check();
        }

        private void acquire(int n) {
            try {
                if (!inFlight.tryAcquire(n, WRITE_WAIT_MS, TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("the target took no write for " + WRITE_WAIT_MS + " ms");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while copying", e);
            }
        }

        private void check() {
            RuntimeException e = failed.get();
            if (e != null) {
                throw e;
            }
        }

        @Override
        public void close() {
            pool.shutdownNow();
        }
    }

    /**
     * What a keeper holds: the records it handed over at attach, and the records copied into it
     * since - the view it was given (a durable store's snapshot reads it on another thread).
     */
    private static final class Held<T> implements Supplier<Collection<T>> {
        final List<T> items = new CopyOnWriteArrayList<>();

        /** Attaches a keeper ({@code attach} is its attach, given this view); none when it is {@code null}. */
        static <K, T> Held<T> of(K keeper, Function<K, Function<Supplier<Collection<T>>, List<T>>> attach) {
            Held<T> h = new Held<>();
            if (keeper != null) {
                h.items.addAll(attach.apply(keeper).apply(h));
            }
            return h;
        }

        @Override
        public Collection<T> get() {
            return items;
        }

        void describe(List<String> holds, String what) {
            if (!items.isEmpty()) {
                holds.add(items.size() + " " + what);
            }
        }
    }

    /** A store's keepers, attached, and what each holds. */
    private static final class Keepers {
        ContextKeeper contextKeeper;
        SubscriptionKeeper subscriptionKeeper;
        SubscriptionKeeper csourceKeeper;
        RegistrationKeeper registrationKeeper;
        Held<HostedContext> contexts;
        Held<SubscriptionKeeper.Kept> subscriptions;
        Held<SubscriptionKeeper.Kept> csourceSubscriptions;
        Held<RegistrationKeeper.Kept> registrations;

        static Keepers attach(EntityStore store) {
            Keepers k = new Keepers();
            k.contextKeeper = store.contextKeeper().orElse(null);
            k.subscriptionKeeper = store.subscriptionKeeper().orElse(null);
            k.csourceKeeper = k.subscriptionKeeper == null ? null : k.subscriptionKeeper.contextSources();
            k.registrationKeeper = store.registrationKeeper().orElse(null);
            k.contexts = Held.of(k.contextKeeper, c -> c::attach);
            k.subscriptions = Held.of(k.subscriptionKeeper, s -> s::attachSubscriptions);
            k.csourceSubscriptions = Held.of(k.csourceKeeper, s -> s::attachSubscriptions);
            k.registrations = Held.of(k.registrationKeeper, r -> r::attachRegistrations);
            return k;
        }
    }
}
