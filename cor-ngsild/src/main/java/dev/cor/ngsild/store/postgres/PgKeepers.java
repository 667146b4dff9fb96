package dev.cor.ngsild.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.cor.ngsild.ld.ContextKeeper;
import dev.cor.ngsild.ld.HostedContext;
import dev.cor.ngsild.store.RegistrationKeeper;
import dev.cor.ngsild.store.SubscriptionKeeper;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;
import dev.cor.ngsild.store.KeptCodec;
import dev.cor.ngsild.store.postgres.PgFollower.Kind;
import dev.cor.ngsild.store.postgres.PgMigrations.Migration;

/**
 * The subscriptions, the subscriptions to registrations, the registrations and the Hosted
 * {@code @context}s in PostgreSQL, shared by every broker over the database: one table,
 * {@code cor_kept}, a row per record (its kind, tenant and id; the record in the stores' binary
 * form, {@link KeptCodec}), and for a periodic subscription the end of the lease of its current
 * period ({@code period_until}, the database's clock in epoch ms).
 * <p>
 * Each broker holds them in memory as well (they are matched against every write); a change is
 * made in one transaction that writes the row, publishes the change in this broker's memory and
 * announces it ({@link PgFollower}) before the commit - so the row lock orders two changes of one
 * record on one broker, and the other brokers hear of it when it commits and read it again. A
 * broker whose follower missed announcements reads every kind whole and applies what differs.
 * <p>
 * Its methods wait for the database ({@link #waits()}: the broker calls them outside its
 * sections) - in a coroutine they yield; the followers' callbacks run on the follower's thread.
 */
final class PgKeepers implements SubscriptionKeeper, RegistrationKeeper, ContextKeeper {
    /** The keepers' part of the schema. */
    static final Migration MIGRATION = new Migration(2, "subscriptions, registrations, hosted contexts", List.of(
            "CREATE TABLE cor_kept (kind \"char\" NOT NULL, tenant text COLLATE \"C\" NOT NULL, id text COLLATE \"C\" NOT NULL,"
                    + " record bytea NOT NULL, period_until bigint NOT NULL DEFAULT 0, PRIMARY KEY (kind, tenant, id))",
            // one row: how many changes the keepers committed, each change counting one under the row's lock (commit order)
            "CREATE TABLE cor_kept_version (one boolean PRIMARY KEY DEFAULT true CHECK (one), v bigint NOT NULL)",
            "INSERT INTO cor_kept_version (v) VALUES (0)"));

    /** The database's clock, epoch ms: brokers on several hosts share it for the leases. */
    private static final String NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
    /** Hosted contexts' ids are unique across tenants: their rows carry this tenant, and the tenant in the record. */
    private static final String CONTEXTS_TENANT = "";
    private static final System.Logger LOG = System.getLogger(PgKeepers.class.getName());

    private final PgDatabase db;
    private final PgFollower follower;
    /**
     * This broker's changes begun and ended: a follower's apply reads the database and writes this
     * broker's memory, which a change of this broker does too, publishing before its commit - so the
     * follower applies only while none is under way, and reads everything again once they are over
     * if one began meanwhile (its read may be older than what the change published).
     */
    private final java.util.concurrent.atomic.AtomicLong changesBegun = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong changesEnded = new java.util.concurrent.atomic.AtomicLong();
    private final Subscriptions subscriptions;
    private final Subscriptions contextSources;
    private volatile Consumer<RegistrationKeeper.Kept> registrationKept = k -> { };
    private volatile Supplier<Collection<RegistrationKeeper.Kept>> registrationsHere = List::of;

    PgKeepers(PgDatabase db, PgFollower follower) {
        this.db = db;
        this.follower = follower;
        this.subscriptions = new Subscriptions(Kind.SUBSCRIPTION);
        this.contextSources = new Subscriptions(Kind.CSOURCE_SUBSCRIPTION);
    }

    // ---------------------------------------------------------------- the subscriptions

    @Override
    public List<SubscriptionKeeper.Kept> attachSubscriptions(Supplier<Collection<SubscriptionKeeper.Kept>> current) {
        return subscriptions.attachSubscriptions(current);
    }

    @Override
    public boolean waits() {
        return true;
    }

    @Override
    public void keep(SubscriptionKeeper.Kept s, Runnable publish) {
        subscriptions.keep(s, publish);
    }

    @Override
    public boolean keepNew(SubscriptionKeeper.Kept s, Runnable publish) {
        return subscriptions.keepNew(s, publish);
    }

    @Override
    public boolean forget(String tenant, String id, BooleanSupplier remove) {
        return subscriptions.forget(tenant, id, remove);
    }

    @Override
    public void follow(Consumer<SubscriptionKeeper.Kept> kept, BiConsumer<String, String> forgotten) {
        subscriptions.follow(kept, forgotten);
    }

    @Override
    public boolean refresh(String tenant, String id) {
        return subscriptions.refresh(tenant, id);
    }

    @Override
    public boolean claimPeriod(String tenant, String id, long intervalMs) {
        return subscriptions.claimPeriod(tenant, id, intervalMs);
    }

    @Override
    public SubscriptionKeeper contextSources() {
        return contextSources;
    }

    /**
     * The subscriptions of one kind (to entities, to registrations): rows of that kind. Shared by
     * the two keepers the broker is given.
     */
    private final class Subscriptions implements SubscriptionKeeper {
        private final Kind kind;
        private volatile Consumer<SubscriptionKeeper.Kept> kept = k -> { };
        private volatile Supplier<Collection<SubscriptionKeeper.Kept>> here = List::of;

        Subscriptions(Kind kind) {
            this.kind = kind;
        }

        @Override
        public List<SubscriptionKeeper.Kept> attachSubscriptions(Supplier<Collection<SubscriptionKeeper.Kept>> current) {
            this.here = current;
            List<SubscriptionKeeper.Kept> all = new ArrayList<>();
            for (byte[] record : rows(kind).values()) {
                all.add(decodeSubscription(record));
            }
            return all;
        }

        @Override
        public boolean waits() {
            return true;
        }

        @Override
        public void keep(SubscriptionKeeper.Kept s, Runnable publish) {
            change(kind, s.tenant(), s.id(), encode(s), false, publish);
        }

        @Override
        public boolean keepNew(SubscriptionKeeper.Kept s, Runnable publish) {
            return change(kind, s.tenant(), s.id(), encode(s), true, publish);
        }

        @Override
        public boolean forget(String tenant, String id, BooleanSupplier remove) {
            return delete(kind, tenant, id, remove);
        }

        @Override
        public void follow(Consumer<SubscriptionKeeper.Kept> kept, BiConsumer<String, String> forgotten) {
            this.kept = kept;
            followKind(kind, PgKeepers::decodeSubscription, () -> here.get(), k -> List.of(k.tenant(), k.id()),
                    k -> k.status().modifiedAt(), kept, forgotten);
        }

        @Override
        public boolean refresh(String tenant, String id) {
            return PgKeepers.this.refresh(kind, tenant, id, PgKeepers::decodeSubscription, kept);
        }

        @Override
        public boolean claimPeriod(String tenant, String id, long intervalMs) {
            // at most one claim per 9/10 of the interval: the brokers' ticks of one period, whatever their phase, see one claim
            long lease = Math.max(1, intervalMs * 9 / 10);
            return PgEntityStore.call(() -> db.read(c -> {
                try (PreparedStatement ps = c.prepareStatement("UPDATE cor_kept SET period_until = " + NOW_MS + " + ?"
                        + " WHERE kind = ? AND tenant = ? AND id = ? AND period_until <= " + NOW_MS)) {
                    ps.setLong(1, lease);
                    ps.setString(2, String.valueOf(kind.code));
                    ps.setString(3, tenant);
                    ps.setString(4, id);
                    return ps.executeUpdate() == 1;
                }
            }));
        }
    }

    // ---------------------------------------------------------------- the registrations

    @Override
    public List<RegistrationKeeper.Kept> attachRegistrations(Supplier<Collection<RegistrationKeeper.Kept>> current) {
        this.registrationsHere = current;
        List<RegistrationKeeper.Kept> all = new ArrayList<>();
        for (byte[] record : rows(Kind.REGISTRATION).values()) {
            all.add(decodeRegistration(record));
        }
        return all;
    }

    @Override
    public boolean waitsForRegistrations() {
        return true;
    }

    @Override
    public void keepRegistration(RegistrationKeeper.Kept r, Runnable publish) {
        change(Kind.REGISTRATION, r.tenant(), r.id(), encode(r), false, publish);
    }

    @Override
    public boolean keepNewRegistration(RegistrationKeeper.Kept r, Runnable publish) {
        return change(Kind.REGISTRATION, r.tenant(), r.id(), encode(r), true, publish);
    }

    @Override
    public boolean forgetRegistration(String tenant, String id, BooleanSupplier remove) {
        return delete(Kind.REGISTRATION, tenant, id, remove);
    }

    @Override
    public void followRegistrations(Consumer<RegistrationKeeper.Kept> kept, BiConsumer<String, String> forgotten) {
        this.registrationKept = kept;
        followKind(Kind.REGISTRATION, PgKeepers::decodeRegistration, () -> registrationsHere.get(),
                k -> List.of(k.tenant(), k.id()), RegistrationKeeper.Kept::modifiedAt, kept, forgotten);
    }

    @Override
    public boolean refreshRegistration(String tenant, String id) {
        return refresh(Kind.REGISTRATION, tenant, id, PgKeepers::decodeRegistration, registrationKept);
    }

    // ---------------------------------------------------------------- the Hosted contexts

    @Override
    public List<HostedContext> attach(Supplier<Collection<HostedContext>> current) {
        List<HostedContext> all = new ArrayList<>();
        for (byte[] record : rows(Kind.CONTEXT).values()) {
            all.add(decodeContext(record));
        }
        contextsHere = current;
        return all;
    }

    private volatile Supplier<Collection<HostedContext>> contextsHere = List::of;

    @Override
    public void host(HostedContext context, Runnable publish) {
        change(Kind.CONTEXT, CONTEXTS_TENANT, context.id(), encode(context), true, publish);
    }

    @Override
    public boolean remove(String id, BooleanSupplier remove) {
        return delete(Kind.CONTEXT, CONTEXTS_TENANT, id, remove);
    }

    @Override
    public void followContexts(Consumer<HostedContext> hosted, Consumer<String> removed) {
        // a Hosted context never changes: its createdAt tells one apart from another of the same id
        followKind(Kind.CONTEXT, PgKeepers::decodeContext, () -> contextsHere.get(), c -> List.of(CONTEXTS_TENANT, c.id()),
                HostedContext::createdAt, hosted, (tenant, id) -> removed.accept(id));
    }

    // ---------------------------------------------------------------- following the other brokers

    /**
     * Has the follower keep this broker's copies of one kind current: an announced change read
     * again from its row and handed to {@code kept} (or {@code forgotten} when the row is gone); a
     * resync that reads every row and hands over those whose {@code modifiedAt} differs from the
     * copy {@code here} holds, and forgets those the database no longer has. Both only while none
     * of this broker's own changes is under way ({@link #quietly}).
     */
    private <T> void followKind(Kind kind, java.util.function.Function<byte[], T> decode, Supplier<Collection<T>> here,
            java.util.function.Function<T, List<String>> key, java.util.function.ToLongFunction<T> modifiedAt, Consumer<T> kept,
            BiConsumer<String, String> forgotten) {
        follower.on(kind, (tenant, id) -> quietly(() -> {
            byte[] record = row(kind, tenant, id);
            if (record == null) {
                forgotten.accept(tenant, id);
            } else {
                kept.accept(decode.apply(record));
            }
        }));
        follower.onResync(() -> quietly(() -> {
            Map<List<String>, Long> modified = new HashMap<>();
            for (T k : here.get()) {
                modified.put(key.apply(k), modifiedAt.applyAsLong(k));
            }
            for (byte[] record : rows(kind).values()) {
                T k = decode.apply(record);
                Long was = modified.remove(key.apply(k));
                if (was == null || was != modifiedAt.applyAsLong(k)) {
                    kept.accept(k);
                }
            }
            for (List<String> gone : modified.keySet()) {
                forgotten.accept(gone.get(0), gone.get(1));
            }
        }));
    }

    /** Reads one record again and, when it is there, hands it to {@code kept}: what a read that missed it asks. */
    private <T> boolean refresh(Kind kind, String tenant, String id, java.util.function.Function<byte[], T> decode, Consumer<T> kept) {
        byte[] record = row(kind, tenant, id);
        if (record == null) {
            return false;
        }
        kept.accept(decode.apply(record));
        return true;
    }

    // ---------------------------------------------------------------- the rows

    /**
     * Writes a record in one transaction: with {@code create}, a new row ({@code false}, nothing
     * published, when the id is taken); else the row that is there ({@code false}, nothing
     * published, when it is gone). The change is published in memory and announced before the
     * commit, while the row's lock orders it after any other change of that record.
     */
    private boolean change(Kind kind, String tenant, String id, byte[] record, boolean create, Runnable publish) {
        boolean[] published = {false};
        return afterPublish(() -> db.inTransaction(c -> {
            String sql = create
                    ? "INSERT INTO cor_kept (kind, tenant, id, record) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
                    : "UPDATE cor_kept SET record = ? WHERE kind = ? AND tenant = ? AND id = ?";
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                int k = 1;
                if (!create) {
                    ps.setBytes(k++, record);
                }
                ps.setString(k++, String.valueOf(kind.code));
                ps.setString(k++, tenant);
                ps.setString(k++, id);
                if (create) {
                    ps.setBytes(k, record);
                }
                if (ps.executeUpdate() != 1) {
                    return false;
                }
            }
            follower.announce(c, kind, tenant, id, nextVersion(c));
            publish.run();
            published[0] = true;
            return true;
        }), published);
    }

    /**
     * {@code call}'s result; when it failed after this broker published the change in memory
     * (the commit failed: the database went away), the follower reads every record again once it
     * can, so that memory goes back to what the database kept.
     */
    private boolean afterPublish(PgEntityStore.Call<Boolean> call, boolean[] published) {
        changesBegun.incrementAndGet();
        try {
            return PgEntityStore.call(call);
        } catch (RuntimeException e) {
            if (published[0]) {
                follower.resyncLater();
            }
            throw e;
        } finally {
            changesEnded.incrementAndGet();
        }
    }

    /**
     * Runs a follower's {@code apply} (it reads rows and writes this broker's memory) when none of
     * this broker's changes is under way, and asks for everything to be read again when one is, or
     * began meanwhile: an apply never leaves this broker's memory older than the database.
     */
    private void quietly(Runnable apply) {
        long begun = changesBegun.get();
        if (begun != changesEnded.get()) {
            follower.resyncLater();
            return;
        }
        apply.run();
        if (changesBegun.get() != begun) {
            follower.resyncLater();
        }
    }

    /** Deletes a record and runs {@code remove} in one transaction; whether either removed something. */
    private boolean delete(Kind kind, String tenant, String id, BooleanSupplier remove) {
        boolean[] published = {false};
        return afterPublish(() -> db.inTransaction(c -> {
            boolean deleted;
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM cor_kept WHERE kind = ? AND tenant = ? AND id = ?")) {
                ps.setString(1, String.valueOf(kind.code));
                ps.setString(2, tenant);
                ps.setString(3, id);
                deleted = ps.executeUpdate() == 1;
            }
            if (deleted) {
                follower.announce(c, kind, tenant, id, nextVersion(c));
            }
            boolean removed = remove.getAsBoolean();
            published[0] = removed;
            return deleted || removed;
        }), published);
    }

    /**
     * Counts one more change of the keepers, inside its transaction: the row's lock orders the
     * changes of every broker, so the versions follow the commits.
     */
    private static long nextVersion(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE cor_kept_version SET v = v + 1 RETURNING v");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** How many changes the keepers committed so far: what a follower's resync catches up to. */
    long version() {
        return PgEntityStore.call(() -> db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT v FROM cor_kept_version"); ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }));
    }

    /** One record, or {@code null}. */
    private byte[] row(Kind kind, String tenant, String id) {
        return PgEntityStore.call(() -> db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT record FROM cor_kept WHERE kind = ? AND tenant = ? AND id = ?")) {
                ps.setString(1, String.valueOf(kind.code));
                ps.setString(2, tenant);
                ps.setString(3, id);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? rs.getBytes(1) : null;
                }
            }
        }));
    }

    /** Every record of a kind, by (tenant, id), in id order. */
    private Map<List<String>, byte[]> rows(Kind kind) {
        return PgEntityStore.call(() -> db.read(c -> {
            Map<List<String>, byte[]> all = new java.util.LinkedHashMap<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT tenant, id, record FROM cor_kept WHERE kind = ? ORDER BY tenant, id")) {
                ps.setString(1, String.valueOf(kind.code));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        all.put(List.of(rs.getString(1), rs.getString(2)), rs.getBytes(3));
                    }
                }
            }
            return all;
        }));
    }

    // ---------------------------------------------------------------- the records' form

    private static byte[] encode(SubscriptionKeeper.Kept s) {
        ByteSink out = new ByteSink(512);
        KeptCodec.writeSubscription(out, s);
        return Arrays.copyOf(out.array(), out.position());
    }

    private static byte[] encode(RegistrationKeeper.Kept r) {
        ByteSink out = new ByteSink(512);
        KeptCodec.writeRegistration(out, r);
        return Arrays.copyOf(out.array(), out.position());
    }

    private static byte[] encode(HostedContext h) {
        ByteSink out = new ByteSink(512);
        out.nullableString(h.tenant());
        out.string(h.id());
        out.zigzag(h.createdAt());
        EntityCodec.writeJson(out, h.context());
        return Arrays.copyOf(out.array(), out.position());
    }

    private static SubscriptionKeeper.Kept decodeSubscription(byte[] record) {
        try {
            return KeptCodec.readSubscription(new ByteSource(record, 0, record.length), new EntityCodec());
        } catch (ByteSource.Malformed e) {
            throw damaged("a subscription", e);
        }
    }

    private static RegistrationKeeper.Kept decodeRegistration(byte[] record) {
        try {
            return KeptCodec.readRegistration(new ByteSource(record, 0, record.length), new EntityCodec());
        } catch (ByteSource.Malformed e) {
            throw damaged("a registration", e);
        }
    }

    private static HostedContext decodeContext(byte[] record) {
        try {
            ByteSource in = new ByteSource(record, 0, record.length);
            String tenant = in.nullableString();
            String id = in.string();
            long created = in.zigzag();
            return new HostedContext(id, tenant, new EntityCodec().readJson(in, 0), created);
        } catch (ByteSource.Malformed e) {
            throw damaged("a hosted context", e);
        }
    }

    private static IllegalStateException damaged(String what, ByteSource.Malformed e) {
        LOG.log(System.Logger.Level.ERROR, "cor-ngsild: " + what + " in the database does not read back: " + e.getMessage());
        return new IllegalStateException(what + " in the database does not read back: " + e.getMessage(), e);
    }
}
