package dev.cor.ngsild.federation;

import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.cor.ngsild.store.RegistrationKeeper;

/**
 * The broker's context source registrations (§ 5.9, § 5.10), per tenant, and the lookup every
 * distributed operation asks first ({@link #matching}, § 4.3.6, by the rules of {@link Coverage}).
 * Each tenant's registrations sit in a map by id; every change publishes a new immutable array of
 * them in id order, so a lookup reads one array and never waits, and {@link #any} is one volatile
 * read while the broker has no registration at all.
 * <p>
 * A change (create, update, delete) takes the tenant's monitor for a short section: the mode's
 * conflict check against the registrations in force (§ 5.9.2.4 - two exclusive registrations of
 * one attribute at once must not both pass), the record with a {@link RegistrationKeeper} (a
 * queue append; the API waits for its fsync afterwards), the map operation and the publication.
 * Nothing in it waits, and lookups never take it. The distributed operations report each
 * forward's outcome through {@link #reportSuccess} and {@link #reportFailure}: counters, not a
 * change of the registration, never recorded. Shared by every loop and worker.
 */
public final class Registrations implements RegistrationLookup {
    private static final Live[] NONE = new Live[0];

    private final InstantSource clock;
    private final Map<String, Tenant> tenants = new ConcurrentHashMap<>();
    /** Registrations in all tenants: {@link #any} answers false on one read while there are none. */
    private final AtomicInteger total = new AtomicInteger();
    private volatile RegistrationKeeper keeper;

    public Registrations(InstantSource clock) {
        this.clock = clock;
    }

    /**
     * A registration in force and what the broker counts of it. The definition is replaced whole
     * by an update; the counters are the forwards' (§ 5.2.9, Table 5.2.9-2).
     */
    public static final class Live {
        volatile Registration def;
        final long createdAt;
        volatile long modifiedAt;
        final AtomicLong timesSent = new AtomicLong();
        final AtomicLong timesFailed = new AtomicLong();
        volatile long lastSuccess = -1;
        volatile long lastFailure = -1;
        volatile String lastFailureReason;
        volatile boolean removed;

        Live(Registration def, long createdAt, long modifiedAt) {
            this.def = def;
            this.createdAt = createdAt;
            this.modifiedAt = modifiedAt;
        }

        public Registration definition() {
            return def;
        }

        public long createdAt() {
            return createdAt;
        }

        public long modifiedAt() {
            return modifiedAt;
        }

        public long timesSent() {
            return timesSent.get();
        }

        public long timesFailed() {
            return timesFailed.get();
        }

        /** Epoch ms, or -1 for none yet. */
        public long lastSuccess() {
            return lastSuccess;
        }

        /** Epoch ms, or -1 for none yet. */
        public long lastFailure() {
            return lastFailure;
        }

        public String lastFailureReason() {
            return lastFailureReason;
        }

        /** "ok" or "failed" after the last forward (§ 5.2.9-2), or null before the first. */
        public String status() {
            long s = lastSuccess;
            long f = lastFailure;
            if (s < 0 && f < 0) {
                return null;
            }
            return f > s ? "failed" : "ok";
        }

        /** Whether it is in force at {@code nowMs}: not removed, not expired. */
        public boolean live(long nowMs) {
            long exp = def.expiresAtMs();
            return !removed && (exp < 0 || nowMs < exp);
        }
    }

    private static final class Tenant {
        final ConcurrentSkipListMap<String, Live> byId = new ConcurrentSkipListMap<>();
        final AtomicReference<Live[]> all = new AtomicReference<>(NONE);

        void republish() {
            while (true) {
                Live[] old = all.get();
                if (all.compareAndSet(old, byId.values().toArray(NONE))) {
                    return;
                }
            }
        }
    }

    private Tenant tenant(String name) {
        return tenants.computeIfAbsent(name, k -> new Tenant());
    }

    /**
     * Calls {@code each} with every registration's {@code @context} and its tenant ({@code null}
     * for the default one): what the context service must keep serving for its forwards
     * ({@link dev.cor.ngsild.ld.ContextHolders}). Never waits.
     */
    public void forEachContext(java.util.function.BiConsumer<String, dev.cor.ngsild.ld.LdContext> each) {
        for (Map.Entry<String, Tenant> t : tenants.entrySet()) {
            String tenant = t.getKey().isEmpty() ? null : t.getKey();
            for (Live l : t.getValue().byId.values()) {
                each.accept(tenant, l.def.context());
            }
        }
    }

    // ---------------------------------------------------------------- keeping them

    /**
     * From now on every change is recorded by {@code keeper} before it is in force, and a
     * snapshot sees every registration through it. Returns what the keeper kept from before, for
     * the broker to {@link #restore}. Called once, by the broker as it is built, before any request.
     */
    public List<RegistrationKeeper.Kept> keepWith(RegistrationKeeper keeper, KeptForm form) {
        this.keeper = keeper;
        this.form = form;
        return keeper.attachRegistrations(this::kept);
    }

    /** How a registration is kept: the API side knows its context's documents. */
    public interface KeptForm {
        RegistrationKeeper.Kept of(Registration r, long createdAt, long modifiedAt);
    }

    private volatile KeptForm form;

    private Collection<RegistrationKeeper.Kept> kept() {
        List<RegistrationKeeper.Kept> out = new ArrayList<>();
        for (Tenant t : tenants.values()) {
            for (Live l : t.byId.values()) {
                out.add(form.of(l.def, l.createdAt, l.modifiedAt));
            }
        }
        return out;
    }

    /** Puts a registration kept from before a restart in force again; not recorded again. */
    public void restore(Registration r, long createdAt, long modifiedAt) {
        Tenant t = tenant(r.tenant());
        if (t.byId.put(r.id(), new Live(r, createdAt, modifiedAt)) == null) {
            total.incrementAndGet();
        }
        t.republish();
    }

    // ---------------------------------------------------------------- the resource

    /**
     * Adds a registration unless its id is taken. {@code admit} runs just before it is put in
     * force, under the tenant's monitor, with the tenant's registrations as they are then (the
     * exclusive/redirect conflict checks of {@link RegistrationConflicts}, § 5.9.2.4); it throws to
     * refuse.
     *
     * @return the registration, or {@code null} when its id is taken (409)
     */
    public Live add(Registration r, java.util.function.Consumer<Live[]> admit) {
        Tenant t = tenant(r.tenant());
        long now = clock.millis();
        Live l = new Live(r, now, now);
        RegistrationKeeper waiting = keeper;
        if (waiting != null && waiting.waitsForRegistrations()) {
            return addWaiting(waiting, t, r, l, now, admit);
        }
        synchronized (t) {
            // the monitor orders the conflict check with the change (two exclusive registrations for the
            // same attribute at once: one wins); held for a scan of an array and a map operation, never a wait
            if (t.byId.containsKey(r.id())) {
                return null;
            }
            admit.accept(t.all.get());
            RegistrationKeeper k = keeper;
            if (k == null) {
                t.byId.put(r.id(), l);
            } else {
                k.keepRegistration(form.of(r, now, now), () -> t.byId.put(r.id(), l));
            }
            t.republish();
        }
        total.incrementAndGet();
        return l;
    }

    /**
     * {@link #add} over a keeper that waits for its database: the conflicts are checked under the
     * monitor before, and again when the keeper publishes inside its transaction (a conflicting
     * registration made meanwhile rolls this one back); the wait itself is outside the monitor.
     */
    private Live addWaiting(RegistrationKeeper k, Tenant t, Registration r, Live l, long now,
            java.util.function.Consumer<Live[]> admit) {
        synchronized (t) {
            if (t.byId.containsKey(r.id())) {
                return null;
            }
            admit.accept(t.all.get());
        }
        try {
            if (!k.keepNewRegistration(form.of(r, now, now), () -> {
                synchronized (t) {
                    if (t.byId.containsKey(r.id())) {
                        throw new IdTaken();
                    }
                    admit.accept(t.all.get());
                    t.byId.put(r.id(), l);
                    t.republish();
                }
            })) {
                return null;
            }
        } catch (IdTaken taken) {
            return null;
        }
        total.incrementAndGet();
        return l;
    }

    /** Thrown inside a keeper's record when the id was taken on this broker meanwhile: the record rolls back. */
    private static final class IdTaken extends RuntimeException {
        IdTaken() {
            super("the id was taken meanwhile", null, false, false);
        }
    }

    /**
     * Puts in force a registration another broker made or changed (its keeper follows them), in
     * place of this broker's copy, keeping nothing of it. Any thread.
     */
    public void applyKept(Registration r, long createdAt, long modifiedAt) {
        Tenant t = tenant(r.tenant());
        synchronized (t) {
            Live old = t.byId.put(r.id(), new Live(r, createdAt, modifiedAt));
            if (old != null) {
                old.removed = true;
            } else {
                total.incrementAndGet();
            }
            t.republish();
        }
    }

    /** Takes out of force a registration another broker removed. Any thread. */
    public void dropKept(String tenant, String id) {
        Tenant t = tenants.get(tenant);
        if (t == null) {
            return;
        }
        synchronized (t) {
            Live gone = t.byId.remove(id);
            if (gone != null) {
                gone.removed = true;
                total.decrementAndGet();
                t.republish();
            }
        }
    }

    /**
     * The registration of that id, or {@code null}; when this broker has none, its keeper is asked
     * first (one another broker made a moment ago is found at once). May wait.
     */
    public Live find(String tenant, String id) {
        Live l = get(tenant, id);
        RegistrationKeeper k = keeper;
        if (l == null && k != null && k.refreshRegistration(tenant, id)) {
            l = get(tenant, id);
        }
        return l;
    }

    /** The registration of that id (expired or not), or {@code null}. */
    public Live get(String tenant, String id) {
        Tenant t = tenants.get(tenant);
        return t == null ? null : t.byId.get(id);
    }

    /** The tenant's registrations in id order (expired ones too: they stay until deleted). */
    public List<Live> list(String tenant) {
        Tenant t = tenants.get(tenant);
        return t == null ? List.of() : List.of(t.all.get());
    }

    /** How many registrations the tenant has. */
    public int count(String tenant) {
        Tenant t = tenants.get(tenant);
        return t == null ? 0 : t.byId.size();
    }

    /**
     * Puts {@code r} in place of the registration's definition, keeping its counters, after
     * {@code admit} (as in {@link #add}) accepted it; {@code false} if it is gone.
     */
    public boolean update(Live l, Registration r, java.util.function.Consumer<Live[]> admit) {
        Tenant t = tenant(r.tenant());
        RegistrationKeeper waiting = keeper;
        if (waiting != null && waiting.waitsForRegistrations()) {
            synchronized (t) {
                if (l.removed || t.byId.get(r.id()) != l) {
                    return false;
                }
                admit.accept(t.all.get());
            }
            long now = clock.millis();
            boolean[] published = {false};
            waiting.keepRegistration(form.of(r, l.createdAt, now), () -> {
                synchronized (t) {
                    if (l.removed || t.byId.get(r.id()) != l) {
                        return; // removed meanwhile: the keeper records nothing either
                    }
                    admit.accept(t.all.get());
                    publish(l, r, now);
                    t.republish();
                    published[0] = true;
                }
            });
            return published[0];
        }
        synchronized (t) {
            if (l.removed || t.byId.get(r.id()) != l) {
                return false;
            }
            admit.accept(t.all.get());
            long now = clock.millis();
            RegistrationKeeper k = keeper;
            if (k == null) {
                publish(l, r, now);
            } else {
                k.keepRegistration(form.of(r, l.createdAt, now), () -> publish(l, r, now));
            }
            t.republish();
        }
        return true;
    }

    private static void publish(Live l, Registration r, long now) {
        l.def = r;
        l.modifiedAt = now;
    }

    /** Removes a registration; {@code false} when there is none of that id. */
    public boolean remove(String tenant, String id) {
        Tenant t = tenants.get(tenant);
        if (t == null) {
            return false;
        }
        Live gone;
        RegistrationKeeper waiting = keeper;
        if (waiting != null && waiting.waitsForRegistrations()) {
            Live[] g = {null};
            boolean recorded = waiting.forgetRegistration(tenant, id, () -> {
                synchronized (t) {
                    g[0] = t.byId.remove(id);
                    if (g[0] != null) {
                        g[0].removed = true;
                        t.republish();
                    }
                    return g[0] != null;
                }
            });
            if (g[0] != null) {
                total.decrementAndGet();
                return true;
            }
            return recorded;
        }
        synchronized (t) {
            RegistrationKeeper k = keeper;
            if (k == null) {
                gone = t.byId.remove(id);
            } else {
                Live[] g = {null};
                k.forgetRegistration(tenant, id, () -> (g[0] = t.byId.remove(id)) != null);
                gone = g[0];
            }
            if (gone == null) {
                return false;
            }
            gone.removed = true;
            t.republish();
        }
        total.decrementAndGet();
        return true;
    }

    // ---------------------------------------------------------------- the forwards' outcomes

    /** A forward to the registration's source answered (2xx). Any thread; a registration gone since is ignored. */
    public void reportSuccess(String tenant, String id, long nowMs) {
        Live l = get(tenant, id);
        if (l != null) {
            l.timesSent.incrementAndGet();
            l.lastSuccess = nowMs;
        }
    }

    /** A forward to the registration's source failed (no answer, a timeout, not 2xx), for {@code reason}. */
    public void reportFailure(String tenant, String id, long nowMs, String reason) {
        Live l = get(tenant, id);
        if (l != null) {
            l.timesSent.incrementAndGet();
            l.timesFailed.incrementAndGet();
            l.lastFailure = nowMs;
            l.lastFailureReason = reason;
        }
    }

    // ---------------------------------------------------------------- the lookup

    @Override
    public boolean any(String tenant) {
        if (total.get() == 0) {
            return false;
        }
        Tenant t = tenants.get(tenant);
        return t != null && t.all.get().length > 0;
    }

    @Override
    public List<Registration> matching(String tenant, Want want, long nowMs) {
        if (total.get() == 0) {
            return List.of();
        }
        Tenant t = tenants.get(tenant);
        if (t == null) {
            return List.of();
        }
        List<Registration> out = null;
        for (Live l : t.all.get()) {
            Registration r = l.def;
            if (!l.live(nowMs) || (want.operation() != null && !r.operations().contains(want.operation()))
                    || (temporal(r) && !TEMPORAL_OPS.contains(want.operation())) || !Coverage.matches(r, want)) {
                continue;
            }
            if (out == null) {
                out = new ArrayList<>(2);
            }
            out.add(r);
        }
        return out == null ? List.of() : out;
    }

    private static final Set<String> TEMPORAL_OPS = Set.of("retrieveTemporal", "queryTemporal");

    /**
     * Whether {@code r} registers a source of temporal evolutions (an {@code observationInterval}
     * or {@code managementInterval}, § 5.2.9): it serves no request for the latest information -
     * "a separate Context Registration is needed for this purpose".
     */
    public static boolean temporal(Registration r) {
        return r.document() != null && (r.document().has("observationInterval") || r.document().has("managementInterval"));
    }
}
