package dev.cor.ngsild.subscription;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.cor.ngsild.store.SubscriptionKeeper;

/**
 * A subscription in force: its current {@link Subscription} (swapped whole by an update) and
 * what the broker counts of it - the status of § 5.2.12-2 and § 5.2.14 - and its bounded queue of
 * notifications. Any thread enqueues (a write on any loop or worker, inside the store's critical
 * section for the entity); one sender at a time drains the queue ({@link #deliveries}), so
 * notifications leave in the order of the writes. The
 * counters are written by that sender and read by anyone.
 */
public final class LiveSubscription {
    volatile Subscription def;
    final long createdAt;
    volatile long modifiedAt;
    volatile boolean removed;

    final AtomicLong timesSent = new AtomicLong();
    final AtomicLong timesFailed = new AtomicLong();
    /** Notifications that found the queue full: counted as failures too. */
    final AtomicLong overflowed = new AtomicLong();
    volatile long lastNotification = -1;
    volatile long lastSuccess = -1;
    volatile long lastFailure = -1;
    volatile String lastFailureReason;
    /** Whether the last notification sent failed (the status says {@code failed} until one succeeds). */
    volatile boolean failing;
    /**
     * The definition whose patterns ran out of budget on an entity: while it is the one in force
     * the subscription matches nothing and its status says {@code failed}; an update replaces it.
     */
    private volatile Subscription spent;
    /** When the last notification was let through the throttle (epoch ms). */
    final AtomicLong lastAdmitted = new AtomicLong(Long.MIN_VALUE / 2);

    final ConcurrentLinkedQueue<Notice> queue = new ConcurrentLinkedQueue<>();
    final AtomicInteger queued = new AtomicInteger();
    /**
     * The calls to send the queue that the one sender has not accounted for yet: 0 when no
     * sender is at the queue ({@code Subscriptions.deliver}).
     */
    final AtomicInteger deliveries = new AtomicInteger();
    /** A periodic subscription's chain of ticks: a tick of an older generation ends its chain. */
    final AtomicInteger generation = new AtomicInteger();

    LiveSubscription(Subscription def, long now) {
        this.def = def;
        this.createdAt = now;
        this.modifiedAt = now;
    }

    /** A subscription kept from before a restart: its times and counters as they were kept. */
    LiveSubscription(Subscription def, SubscriptionKeeper.Status kept) {
        this.def = def;
        this.createdAt = kept.createdAt();
        this.modifiedAt = kept.modifiedAt();
        timesSent.set(kept.timesSent());
        timesFailed.set(kept.timesFailed());
        lastNotification = kept.lastNotification();
        lastSuccess = kept.lastSuccess();
        lastFailure = kept.lastFailure();
        // the last outcome is as kept: failing until a notification succeeds again
        failing = kept.lastFailure() > kept.lastSuccess();
    }

    /** Its times and counters now, with {@code modifiedAt} as given (what a keeper keeps). */
    SubscriptionKeeper.Status keptStatus(long modified) {
        return new SubscriptionKeeper.Status(createdAt, modified, timesSent.get(), timesFailed.get(), lastNotification,
                lastSuccess, lastFailure);
    }

    public Subscription definition() {
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

    public long overflowed() {
        return overflowed.get();
    }

    /** Epoch ms of the last notification attempted, -1 for none. */
    public long lastNotification() {
        return lastNotification;
    }

    public long lastSuccess() {
        return lastSuccess;
    }

    public long lastFailure() {
        return lastFailure;
    }

    /** Why the last notification failed, or {@code null}. */
    public String lastFailureReason() {
        return lastFailureReason;
    }

    /** Whether a sender is at its queue now (a notification may be out, its outcome not counted yet). */
    public boolean sending() {
        return deliveries.get() != 0;
    }

    /** How many notifications wait in the queue. */
    public int queued() {
        return queued.get();
    }

    /**
     * The status at {@code now} (§ 5.2.12-2, with Orion-LD's {@code failed}): paused when not
     * active, expired past {@code expiresAt}, failed when the last notification failed or its
     * patterns ran out of budget (until an update), else active.
     */
    public String status(long now) {
        Subscription d = def;
        if (!d.active()) {
            return "paused";
        }
        if (now >= d.expiresAt()) {
            return "expired";
        }
        if (failing || spent == d) {
            return "failed";
        }
        return "active";
    }

    /** Whether {@code d} is the definition whose patterns ran out of budget. */
    boolean spent(Subscription d) {
        return spent == d;
    }

    /** {@code d}'s patterns ran out of budget at {@code now}, for {@code reason}: it matches nothing from now on. */
    void spend(Subscription d, long now, String reason) {
        spent = d;
        lastFailure = now;
        lastFailureReason = reason;
    }

    /** Whether it notifies at {@code now}: active and not expired. */
    boolean live(long now) {
        Subscription d = def;
        return !removed && d.active() && now < d.expiresAt();
    }
}
