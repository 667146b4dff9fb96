package dev.cor.ngsild.subscription;

import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicReference;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.metrics.NgsildMetrics;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.MatchBudget;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.EntityWrite;
import dev.cor.ngsild.store.SubscriptionKeeper;
import dev.cor.ngsild.store.WriteObserver;
import dev.cor.rest.CorRest;

/**
 * The broker's subscriptions, per tenant, and what they do on every write: {@link #onWrite}
 * gives the store an observer that, inside the entity's critical section, finds the
 * subscriptions a write can concern through an index by entity type (the types their selectors
 * name; those that select by watched attributes alone are checked on every write of the tenant),
 * matches triggers, watched attributes, throttling and expiry, and puts a {@link Notice} in each
 * matching subscription's bounded queue - so each queue holds an entity's notices in the order
 * of its writes. The sending is deferred to the request's post-response phase
 * ({@link CorRest#defer}) - so the write's answer goes out first, and the notification leaves
 * from a coroutine of the loop (or from a worker, when the finish hook says so) - and one sender
 * at a time drains a queue ({@link #deliver}), so notifications leave in the queue's order.
 * Periodic subscriptions tick on the deadlines of the loop that created them.
 * <p>
 * Shared by every loop and worker. A change to a tenant's subscriptions publishes a new immutable
 * index (compare-and-set, no lock); a write reads the index it finds. With a
 * {@link SubscriptionKeeper} (the durable store), a change and its record share a short
 * section under the tenant's monitor, so that the kept order is the order of the changes.
 */
public final class Subscriptions {
    private static final System.Logger LOG = System.getLogger(Subscriptions.class.getName());
    private static final LiveSubscription[] NONE = new LiveSubscription[0];
    /** The most entities one notification carries when notices queued up behind a slow receiver. */
    static final int MAX_BATCH = 100;

    private final InstantSource clock;
    private final Notifier notifier;
    private final NgsildMetrics metrics;
    private final EntityStore store;
    private final int queueBound;
    private final Map<String, Tenant> tenants = new ConcurrentHashMap<>();
    /** Periodic subscriptions that have no loop to tick on yet (restored at start, or created off a loop). */
    private final ConcurrentLinkedQueue<LiveSubscription> homeless = new ConcurrentLinkedQueue<>();
    private volatile SubscriptionKeeper keeper;
    /** The server's loops, once it has them: where the periodic subscriptions other brokers make tick. */
    private volatile List<CorCoLoop> loops = List.of();
    private volatile LdContexts contexts;
    /** The csourceSubscriptions (§ 5.11): notified of registrations, never of writes. */
    private final boolean contextSources;
    /** A periodic csourceSubscription's data on each tick: the registrations it matches, rendered. */
    private volatile java.util.function.Function<LiveSubscription, String> registrationsOf = s -> "";

    public Subscriptions(InstantSource clock, Notifier notifier, NgsildMetrics metrics, EntityStore store, int queueBound) {
        this(clock, notifier, metrics, store, queueBound, false);
    }

    private Subscriptions(InstantSource clock, Notifier notifier, NgsildMetrics metrics, EntityStore store, int queueBound,
            boolean contextSources) {
        this.clock = clock;
        this.notifier = notifier;
        this.metrics = metrics;
        this.store = store;
        this.queueBound = queueBound;
        this.contextSources = contextSources;
    }

    /**
     * The subscriptions to context source registrations (§ 5.11) beside these: their own
     * resource, the same sender, queues and counts ({@link #notifyRendered}). Called once, by the broker.
     */
    public Subscriptions forContextSources() {
        return new Subscriptions(clock, notifier, metrics, store, queueBound, true);
    }

    /** What a periodic csourceSubscription notifies on each tick (the API renders the registrations). */
    public void periodicData(java.util.function.Function<LiveSubscription, String> registrationsOf) {
        this.registrationsOf = registrationsOf;
    }

    /**
     * Queues a context source notification (§ 5.3.2) whose data - the registrations, compacted
     * with the subscriber's context - is rendered already, and has {@code request}'s
     * post-response phase send it, as a write's notification is sent. Nothing when the
     * subscription is not in force (paused, expired, deleted) or its throttle holds it back.
     */
    public void notifyRendered(LiveSubscription s, String data, String triggerReason, CorRest request) {
        long now = clock.millis();
        Subscription d = s.def;
        if (!s.live(now) || !admit(s, d, now)) {
            return;
        }
        if (enqueue(s, new Notice(data, triggerReason), now)) {
            request.defer(r -> deliver(s));
        }
    }

    /**
     * Queues a notification of {@code entities} that changed elsewhere - at a context source
     * that notified this broker of them (§ 5.8.1.4) - and has {@code request}'s post-response
     * phase send it, rendered for the subscriber as a write's notification is. Nothing when the
     * subscription is not in force or its throttle holds it back.
     */
    public void notifyEntities(LiveSubscription s, List<Entity> entities, CorRest request) {
        long now = clock.millis();
        Subscription d = s.def;
        if (entities.isEmpty() || !s.live(now) || !admit(s, d, now)) {
            return;
        }
        List<Notice.Change> changes = new ArrayList<>(entities.size());
        for (Entity e : entities) {
            changes.add(new Notice.Change(e, null, false));
        }
        Notice n = new Notice(changes);
        if (enqueue(s, n, now)) {
            request.defer(r -> {
                notifier.prepare(d, n);
                deliver(s);
            });
        }
    }

    /**
     * One tenant's subscriptions and the index writes read. A change to the subscriptions
     * publishes a new index by compare-and-set, rebuilt from the map after the change: whoever
     * loses the race rebuilds with the winner's change in the map too. No monitor, so a loop
     * never blocks on another's subscription request (design rule 1).
     */
    private static final class Tenant {
        final ConcurrentSkipListMap<String, LiveSubscription> byId = new ConcurrentSkipListMap<>();
        final AtomicReference<Index> index = new AtomicReference<>(Index.EMPTY);

        void reindex() {
            while (true) {
                Index old = index.get();
                if (index.compareAndSet(old, build())) {
                    return;
                }
            }
        }

        private Index build() {
            Map<String, List<LiveSubscription>> byType = new HashMap<>();
            List<LiveSubscription> any = new ArrayList<>();
            for (LiveSubscription s : byId.values()) {
                Subscription d = s.def;
                if (d.timeIntervalMs() > 0) {
                    continue; // periodic: changes do not trigger it
                }
                if (d.entities().isEmpty()) {
                    any.add(s);
                    continue;
                }
                Set<String> keys = new HashSet<>();
                for (Subscription.Selector sel : d.entities()) {
                    keys.addAll(sel.types());
                }
                for (String k : keys) {
                    byType.computeIfAbsent(k, t -> new ArrayList<>()).add(s);
                }
            }
            Map<String, LiveSubscription[]> frozen = new HashMap<>();
            byType.forEach((k, v) -> frozen.put(k, v.toArray(NONE)));
            return new Index(Map.copyOf(frozen), any.toArray(NONE));
        }
    }

    /** What a write reads: the subscriptions by type, and those that name no entities. Immutable. */
    private record Index(Map<String, LiveSubscription[]> byType, LiveSubscription[] anyType) {
        static final Index EMPTY = new Index(Map.of(), NONE);

        boolean isEmpty() {
            return byType.isEmpty() && anyType.length == 0;
        }
    }

    private Tenant tenant(String name) {
        return tenants.computeIfAbsent(name, k -> new Tenant());
    }

    // ---------------------------------------------------------------- keeping them

    /**
     * From now on every change is recorded by {@code keeper} before it is in force (the journal's
     * order is the order requests saw), and a snapshot sees every subscription through it.
     * Returns what the keeper kept from before, for the broker to {@link #restore}. Called once,
     * by the broker as it is built, before any request.
     */
    public List<SubscriptionKeeper.Kept> keepWith(SubscriptionKeeper keeper, LdContexts contexts) {
        this.contexts = contexts;
        this.keeper = keeper;
        return keeper.attachSubscriptions(this::kept);
    }

    /**
     * Calls {@code each} with every subscription's {@code @context} and its tenant ({@code null}
     * for the default one): what the context service must keep serving for them
     * ({@link dev.cor.ngsild.ld.ContextHolders}). Never waits.
     */
    public void forEachContext(java.util.function.BiConsumer<String, dev.cor.ngsild.ld.LdContext> each) {
        for (Map.Entry<String, Tenant> t : tenants.entrySet()) {
            String tenant = t.getKey().equals(EntityStore.DEFAULT_TENANT) ? null : t.getKey();
            for (LiveSubscription s : t.getValue().byId.values()) {
                each.accept(tenant, s.def.context());
            }
        }
    }

    /** Every subscription in force, as a keeper keeps it (a snapshot's view). */
    private List<SubscriptionKeeper.Kept> kept() {
        List<SubscriptionKeeper.Kept> out = new ArrayList<>();
        for (Tenant t : tenants.values()) {
            for (LiveSubscription s : t.byId.values()) {
                out.add(kept(s.def, s.keptStatus(s.modifiedAt)));
            }
        }
        return out;
    }

    private SubscriptionKeeper.Kept kept(Subscription d, SubscriptionKeeper.Status status) {
        return new SubscriptionKeeper.Kept(d.tenant(), d.id(), d.document(), d.context().echo(),
                contexts.remoteDocuments(d.context()), d.brokerUrl(), status);
    }

    /**
     * Puts a subscription kept from before a restart in force again, with its times and counters
     * as kept. A periodic one ticks once it has a loop ({@link #tickOn}). Called by the broker as
     * it is built, before any request; not recorded again.
     */
    public void restore(Subscription def, SubscriptionKeeper.Status status) {
        Tenant t = tenant(def.tenant());
        LiveSubscription s = new LiveSubscription(def, status);
        t.byId.put(def.id(), s);
        t.reindex();
        if (def.timeIntervalMs() > 0) {
            homeless.add(s);
        }
    }

    /**
     * Puts in force a subscription another broker made or changed (its keeper follows them), in
     * place of this broker's copy, if any (whose periodic chain ends); its times and counters as
     * kept. Any thread.
     */
    public void applyKept(Subscription def, SubscriptionKeeper.Status status) {
        Tenant t = tenant(def.tenant());
        LiveSubscription s = new LiveSubscription(def, status);
        LiveSubscription old = t.byId.put(def.id(), s);
        if (old != null) {
            old.removed = true;
        }
        t.reindex();
        if (def.timeIntervalMs() > 0) {
            List<CorCoLoop> on = loops;
            if (on.isEmpty()) {
                homeless.add(s);
            } else {
                on.get(Math.floorMod(def.id().hashCode(), on.size())).execute(() -> startPeriodic(s));
            }
        }
    }

    /** Takes out of force a subscription another broker removed. Any thread. */
    public void dropKept(String tenant, String id) {
        Tenant t = tenants.get(tenant);
        LiveSubscription s = t == null ? null : t.byId.remove(id);
        if (s != null) {
            s.removed = true;
            t.reindex();
            while (s.queue.poll() != null) {
                // removed elsewhere: what this broker had not sent of it goes with it
            }
        }
    }

    /** Thrown inside a keeper's record when the id was taken on this broker meanwhile: the record rolls back. */
    private static final class IdTaken extends RuntimeException {
        IdTaken() {
            super("the id was taken meanwhile", null, false, false);
        }
    }

    /**
     * Gives the periodic subscriptions that have no loop yet (those restored at start) loops to
     * tick on, one after the other. A server calls it once it has started; until then, the first
     * request a loop serves takes them ({@link #adopt}).
     */
    public void tickOn(List<CorCoLoop> loops) {
        this.loops = List.copyOf(loops);
        int i = 0;
        LiveSubscription s;
        while (!loops.isEmpty() && (s = homeless.poll()) != null) {
            LiveSubscription periodic = s;
            loops.get(i++ % loops.size()).execute(() -> startPeriodic(periodic));
        }
    }

    /** On a loop: starts the periodic subscriptions that have none yet. One volatile read when there are none. */
    public void adopt() {
        if (!homeless.isEmpty() && CorCoLoop.current() != null) {
            LiveSubscription s;
            while ((s = homeless.poll()) != null) {
                startPeriodic(s);
            }
        }
    }

    // ---------------------------------------------------------------- the resource

    /** Adds a subscription; {@code null} when its id is taken (the caller answers 409). */
    public LiveSubscription add(Subscription def) {
        Tenant t = tenant(def.tenant());
        LiveSubscription s = new LiveSubscription(def, clock.millis());
        SubscriptionKeeper k = keeper;
        if (k == null) {
            if (t.byId.putIfAbsent(def.id(), s) != null) {
                return null;
            }
        } else if (k.waits()) {
            // no monitor: the keeper waits for its database, and publishes inside its transaction
            try {
                if (t.byId.containsKey(def.id()) || !k.keepNew(kept(def, s.keptStatus(s.modifiedAt)), () -> {
                    if (t.byId.putIfAbsent(def.id(), s) != null) {
                        throw new IdTaken(); // made meanwhile on this broker: the record is rolled back
                    }
                })) {
                    return null;
                }
            } catch (IdTaken taken) {
                return null;
            }
        } else {
            // the record and the change under one monitor of the tenant's: held for a map operation
            // and a queue append (never across a yield), so the journal's order is the order of the changes
            synchronized (t) {
                if (t.byId.containsKey(def.id())) {
                    return null;
                }
                k.keep(kept(def, s.keptStatus(s.modifiedAt)), () -> t.byId.put(def.id(), s));
            }
        }
        t.reindex();
        startPeriodic(s);
        return s;
    }

    /**
     * The subscription of that id, or {@code null}; when this broker has none, its keeper is asked
     * first (one another broker made a moment ago is found at once). May wait.
     */
    public LiveSubscription find(String tenant, String id) {
        LiveSubscription s = get(tenant, id);
        SubscriptionKeeper k = keeper;
        if (s == null && k != null && k.refresh(tenant, id)) {
            s = get(tenant, id);
        }
        return s;
    }

    /** The subscription of that id, or {@code null}. */
    public LiveSubscription get(String tenant, String id) {
        Tenant t = tenants.get(tenant);
        return t == null ? null : t.byId.get(id);
    }

    /** The tenant's subscriptions in id order. */
    public List<LiveSubscription> list(String tenant) {
        Tenant t = tenants.get(tenant);
        return t == null ? List.of() : List.copyOf(t.byId.values());
    }

    /** Puts {@code def} in place of the subscription's definition, keeping its status; {@code false} if it is gone. */
    public boolean update(LiveSubscription s, Subscription def) {
        Tenant t = tenant(def.tenant());
        SubscriptionKeeper k = keeper;
        long now = clock.millis();
        if (k == null) {
            if (s.removed || t.byId.get(def.id()) != s) {
                return false;
            }
            publish(s, def, now);
        } else if (k.waits()) {
            boolean[] published = {false};
            if (s.removed || t.byId.get(def.id()) != s) {
                return false;
            }
            k.keep(kept(def, s.keptStatus(now)), () -> {
                publish(s, def, now);
                published[0] = true;
            });
            if (!published[0]) {
                return false; // removed meanwhile, on another broker
            }
        } else {
            synchronized (t) {
                if (s.removed || t.byId.get(def.id()) != s) {
                    return false;
                }
                k.keep(kept(def, s.keptStatus(now)), () -> publish(s, def, now));
            }
        }
        t.reindex();
        restartPeriodic(s);
        return true;
    }

    private static void publish(LiveSubscription s, Subscription def, long now) {
        s.def = def; // two updates at once: the last one stands, each one whole
        s.modifiedAt = now;
    }

    /** Removes a subscription; {@code false} when there is none of that id. */
    public boolean remove(String tenant, String id) {
        Tenant t = tenants.get(tenant);
        if (t == null) {
            return false;
        }
        SubscriptionKeeper k = keeper;
        LiveSubscription s;
        if (k == null) {
            s = t.byId.remove(id);
        } else if (k.waits()) {
            LiveSubscription[] gone = {null};
            boolean recorded = k.forget(tenant, id, () -> (gone[0] = t.byId.remove(id)) != null);
            s = gone[0];
            if (s == null) {
                return recorded; // made on another broker and not yet here: removed where it is kept
            }
        } else {
            LiveSubscription[] gone = {null};
            synchronized (t) {
                k.forget(tenant, id, () -> (gone[0] = t.byId.remove(id)) != null);
            }
            s = gone[0];
        }
        if (s == null) {
            return false;
        }
        s.removed = true;
        t.reindex();
        int dropped = 0;
        while (s.queue.poll() != null) {
            dropped++; // the subscription is gone: what it had not sent goes with it, said in the log
        }
        if (dropped > 0) {
            LOG.log(System.Logger.Level.INFO, "cor-ngsild: subscription " + id + " deleted with " + dropped
                    + " notifications not sent");
        }
        return true;
    }

    /** How many subscriptions the tenant has. */
    public int count(String tenant) {
        Tenant t = tenants.get(tenant);
        return t == null ? 0 : t.byId.size();
    }

    // ---------------------------------------------------------------- matching

    /**
     * What one write of an entity of the tenant means for its subscriptions, in two steps. The
     * store calls the returned observer inside the entity's critical section
     * ({@link EntityStore#write(String, String, dev.cor.ngsild.store.EntityChange, WriteObserver)}):
     * it matches the change and puts a notice in the queue of each subscription it triggers - so
     * a queue holds one entity's notices in the order of its writes, from whichever loop or
     * worker they came. Then, after the store's write, {@link Triggered#sendAfter} has the
     * request's post-response phase send them. One per write; the writer's thread only.
     */
    public Triggered onWrite(String tenant) {
        Tenant t = tenants.get(tenant);
        if (t != null) {
            return new Triggered(t, tenant);
        }
        SubscriptionKeeper k = keeper;
        // a keeper that other brokers share: the tenant's first subscription may come from one of them before the
        // write is applied (the store's write waits until this broker has applied those committed before it)
        return k != null && k.waits() ? new Triggered(null, tenant) : nothingTriggered;
    }

    /**
     * The subscriptions one write triggered, and the notices it queued for them. Its
     * {@link #applied} runs inside the store's critical section, so it only matches and queues:
     * the index it reads and the throttle are lock-free, the queue is a lock-free append, the
     * filters (q, geoQ, scopeQ, idPattern) are CPU alone on the record given - nothing in it waits,
     * yields or takes a lock. Rendering and sending come after, in the post-response phase.
     */
    public final class Triggered implements WriteObserver {
        private final Tenant tenant;
        /** The tenant's name, to find it when the write is applied if it had no subscriptions when the write began. */
        private final String tenantName;
        /** Pairs: a subscription, the notice queued for it; {@code null} for none. */
        private List<Object> hit;

        private Triggered(Tenant tenant, String tenantName) {
            this.tenant = tenant;
            this.tenantName = tenantName;
        }

        @Override
        public void applied(Entity before, Entity after) {
            Tenant t = tenant != null || tenantName == null ? tenant : tenants.get(tenantName);
            if (t != null) {
                hit = match(t, new EntityWrite(before, after));
            }
        }

        /** Has {@code request}'s post-response phase render and send what {@link #applied} queued. */
        public void sendAfter(CorRest request) {
            if (hit == null) {
                return;
            }
            for (int i = 0; i < hit.size(); i += 2) {
                LiveSubscription s = (LiveSubscription) hit.get(i);
                Notice n = (Notice) hit.get(i + 1);
                request.defer(r -> {
                    notifier.prepare(s.def, n);
                    deliver(s);
                });
            }
        }
    }

    /** What a write triggers in a tenant without subscriptions: nothing (shared: it keeps no state). */
    private final Triggered nothingTriggered = new Triggered(null, null);

    /** Queues a notice in each subscription of the tenant that {@code write} triggers; the pairs (subscription, notice). */
    private List<Object> match(Tenant t, EntityWrite write) {
        Index index = t.index.get();
        if (index.isEmpty() || (write.before() == null && write.after() == null)) {
            return null;
        }
        Entity e = write.after() != null ? write.after() : write.before();
        List<Object> hit = null;
        if (index.anyType().length > 0) {
            hit = consider(index.anyType(), write, e, hit);
        }
        if (!index.byType().isEmpty()) {
            for (String type : e.types()) {
                LiveSubscription[] c = index.byType().get(type);
                if (c != null) {
                    hit = consider(c, write, e, hit);
                }
            }
            if (write.before() != null && write.after() != null && !write.before().types().equals(write.after().types())) {
                for (String type : write.before().types()) {
                    LiveSubscription[] c = index.byType().get(type);
                    if (c != null) {
                        hit = consider(c, write, e, hit);
                    }
                }
            }
        }
        return hit;
    }

    private List<Object> consider(LiveSubscription[] candidates, EntityWrite w, Entity e, List<Object> hit) {
        long now = -1;
        for (LiveSubscription s : candidates) {
            if (hit != null && containsSame(hit, s)) {
                continue; // indexed under two of the entity's types
            }
            Subscription d = s.def;
            if (now < 0) {
                now = clock.millis();
            }
            if (!s.live(now) || !WriteTriggers.triggered(d, w) || !selects(s, d, e, MatchBudget.oneMatch(), now)) {
                continue;
            }
            if (!admit(s, d, now)) {
                continue;
            }
            Map<String, AttributeList> deleted = d.triggers().contains(Subscription.Trigger.ATTRIBUTE_DELETED)
                    || (d.showChanges() && w.after() == null) ? WriteTriggers.deletedAttributes(d, w) : Map.of();
            // when: the write's own time (the record it left), or now for a deletion of the entity, as its history says
            long deletedAt = w.after() == null ? now : deleted.isEmpty() ? 0 : w.after().modifiedAt();
            Notice n = new Notice(List.of(new Notice.Change(e, d.showChanges() ? w.before() : null, w.after() == null,
                    deleted, deletedAt)));
            if (enqueue(s, n, now)) {
                if (hit == null) {
                    hit = new ArrayList<>(2);
                }
                hit.add(s);
                hit.add(n);
            }
        }
        return hit;
    }

    /**
     * Whether {@code d} (the definition of {@code s} in force) selects {@code e}, its patterns
     * within {@code budget}. A write pays for every subscription it reaches but is not to blame
     * for their patterns: one whose patterns run out of budget does not fail the write - it is
     * spent instead ({@link LiveSubscription#spend}): failed, matching nothing, until an update
     * replaces its definition. So a costly pattern costs writers one match, once.
     */
    private static boolean selects(LiveSubscription s, Subscription d, Entity e, MatchBudget budget, long now) {
        if (s.spent(d)) {
            return false;
        }
        try {
            return d.selects(e, budget);
        } catch (NgsiLdException tooCostly) {
            s.spend(d, now, tooCostly.getMessage());
            LOG.log(System.Logger.Level.WARNING, () -> "subscription " + d.id() + " matches nothing until it is updated: "
                    + tooCostly.getMessage());
            return false;
        }
    }

    private static boolean containsSame(List<Object> l, LiveSubscription s) {
        for (int i = 0; i < l.size(); i += 2) {
            if (l.get(i) == s) {
                return true;
            }
        }
        return false;
    }

    /** The throttle (§ 5.2.12): at most one notification per {@code throttling} seconds; what falls inside is not sent. */
    private static boolean admit(LiveSubscription s, Subscription d, long now) {
        if (d.throttlingMs() <= 0) {
            return true;
        }
        while (true) {
            long last = s.lastAdmitted.get();
            if (now - last < d.throttlingMs()) {
                return false;
            }
            if (s.lastAdmitted.compareAndSet(last, now)) {
                return true;
            }
        }
    }

    /** Queues a notice; a full queue counts it as overflowed and failed, in the status and in /metrics. */
    private boolean enqueue(LiveSubscription s, Notice n, long now) {
        if (s.queued.incrementAndGet() > queueBound) {
            s.queued.decrementAndGet();
            s.overflowed.incrementAndGet();
            s.timesFailed.incrementAndGet();
            s.lastFailure = now;
            s.lastFailureReason = "the subscription's queue of " + queueBound + " notifications is full";
            metrics.notificationOverflowed();
            return false;
        }
        s.queue.add(n);
        return true;
    }

    // ---------------------------------------------------------------- sending

    /**
     * Sends what waits in the subscription's queue, in order, unless another sender is at it
     * already (then that one sends this too). Runs in a post-response phase: in a coroutine each
     * send yields; on a worker it blocks.
     * <p>
     * One sender at a time, handed over by counting: each call counts itself in
     * {@link LiveSubscription#deliveries}, and the call that finds the count at zero is the
     * sender. Before it lets go, the sender takes back the calls it accounted for; when more came
     * meanwhile - calls that returned trusting it to send their notices - it drains the queue
     * again. So a notice is never left queued with nobody to send it, and two senders (two loops'
     * phases, each sending its part of the queue) never race each other to the receiver.
     */
    void deliver(LiveSubscription s) {
        if (s.deliveries.getAndIncrement() != 0) {
            return; // a sender is at the queue: it counts this call before it lets go, and sends this notice too
        }
        int accounted = 1;
        boolean done = false;
        try {
            do {
                Notice n;
                while ((n = s.queue.poll()) != null) {
                    s.queued.decrementAndGet();
                    n.taken = true;
                    if (s.removed) {
                        continue;
                    }
                    notifier.send(s, coalesce(s, n));
                }
                accounted = s.deliveries.addAndGet(-accounted);
            } while (accounted != 0);
            done = true;
        } finally {
            if (!done) {
                // the sender fails (an Error): the next call becomes the sender; a call counted meanwhile waits for the next
                s.deliveries.set(0);
            }
        }
    }

    /**
     * {@code first} and whatever queued up behind it while the previous notification was out, as
     * one notification whose data lists them in order (at most {@link #MAX_BATCH} entities): a
     * receiver slower than the writes gets fewer, fuller notifications instead of a queue that
     * overflows, and the order stays the order of the writes.
     */
    private static List<Notice> coalesce(LiveSubscription s, Notice first) {
        Notice next = s.queue.peek();
        if (next == null || s.def.timeIntervalMs() > 0 || first.triggerReason != null) {
            return List.of(first);
        }
        List<Notice> batch = new ArrayList<>();
        batch.add(first);
        int entities = first.data().size();
        while ((next = s.queue.peek()) != null && entities + next.data().size() <= MAX_BATCH) {
            s.queue.poll(); // one sender at a time: the head it peeked is still the head
            s.queued.decrementAndGet();
            next.taken = true;
            batch.add(next);
            entities += next.data().size();
        }
        return batch;
    }

    // ---------------------------------------------------------------- periodic subscriptions

    private void startPeriodic(LiveSubscription s) {
        Subscription d = s.def;
        if (d.timeIntervalMs() <= 0) {
            return;
        }
        CorCoLoop loop = CorCoLoop.current();
        if (loop == null) {
            homeless.add(s); // the next request on a loop, or tickOn, gives it one
            return;
        }
        int generation = s.generation.incrementAndGet();
        loop.schedule(d.timeIntervalMs(), () -> tick(loop, s, generation));
    }

    /** After an update: the old period's chain of ticks ends at its next tick (its generation is past). */
    private void restartPeriodic(LiveSubscription s) {
        s.generation.incrementAndGet();
        startPeriodic(s);
    }

    /**
     * One period of a periodic subscription, on its loop: every entity it selects, in one
     * notification. Over a store whose reads wait, the period runs as a coroutine of the loop (or
     * on its helper threads when the loop's cap is reached); the next one is scheduled either way.
     */
    private void tick(CorCoLoop loop, LiveSubscription s, int generation) {
        if (s.removed || s.generation.get() != generation) {
            return;
        }
        if (store.readsWait()) {
            mayWait(loop, () -> {
                try {
                    period(loop, s);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "cor-ngsild: a period of subscription " + s.def.id() + " failed: " + e);
                }
            });
        } else {
            period(loop, s);
        }
        if (!s.removed && s.generation.get() == generation) {
            loop.schedule(s.def.timeIntervalMs(), () -> tick(loop, s, generation));
        }
    }

    /** What one period notifies, where {@link #tick} runs it. */
    private void period(CorCoLoop loop, LiveSubscription s) {
        SubscriptionKeeper k = keeper;
        if (k != null && s.live(clock.millis()) && !k.claimPeriod(s.def.tenant(), s.def.id(), s.def.timeIntervalMs())) {
            return; // another broker over the same keeper notifies this period
        }
        Subscription d = s.def;
        long now = clock.millis();
        if (s.live(now) && contextSources) {
            String registrations = registrationsOf.apply(s);
            if (!registrations.isEmpty() && enqueue(s, new Notice(registrations, "newlyMatching"), now)) {
                send(loop, s);
            }
        } else if (s.live(now) && !s.spent(d)) {
            List<Notice.Change> data = new ArrayList<>();
            Map<Entity, Boolean> seen = new IdentityHashMap<>();
            // one budget for the tick's patterns over every entity it reads, as a query's
            MatchBudget budget = MatchBudget.request();
            for (Subscription.Selector sel : d.entities()) {
                for (String type : sel.types()) {
                    store.forEach(d.tenant(), type, e -> {
                        if (!s.spent(d) && seen.get(e) == null && selects(s, d, e, budget, now)) {
                            seen.put(e, Boolean.TRUE);
                            data.add(new Notice.Change(e, null, false));
                        }
                    });
                }
            }
            if (s.spent(d)) {
                data.clear(); // a tick that ran out of budget notifies nothing: what it saw is not the whole
            }
            if (!data.isEmpty() && enqueue(s, new Notice(List.copyOf(data)), now)) {
                send(loop, s);
            }
        }
    }

    /** A tick's notification leaves from a coroutine of the loop, or from a helper thread when the loop's cap is reached. */
    private void send(CorCoLoop loop, LiveSubscription s) {
        mayWait(loop, () -> deliver(s));
    }

    /** Runs {@code task}, which may wait, as a coroutine of {@code loop}, or on its helper threads when the loop's cap is reached. */
    private static void mayWait(CorCoLoop loop, Runnable task) {
        if (CorCo.start(() -> {
            task.run();
            return null;
        }) == null) {
            loop.blockingExecutor().execute(task);
        }
    }

    /** Stops the periodic timers (their loops may be gone already). */
    public void close() {
        for (Tenant t : tenants.values()) {
            for (LiveSubscription s : t.byId.values()) {
                s.removed = true;
            }
        }
    }
}
