package dev.cor.ngsild.store;

import java.util.Collection;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.ld.LdContexts;

/**
 * Keeps the subscriptions beyond the process (a durable store implements it, as it does
 * {@link dev.cor.ngsild.ld.ContextKeeper}): told of every subscription created, updated and
 * deleted, in the order requests saw, and asked once, when the broker is built, for the ones it
 * kept from before. Called by {@link Subscriptions} from any loop or worker, inside the short
 * section that publishes the change; must not wait (the API waits for durability after the
 * request's work, through the entity store's {@code sync}).
 */
public interface SubscriptionKeeper {
    /**
     * Called once, when the broker is built: returns the subscriptions kept from before (the
     * broker runs them again), and receives a view of the subscriptions in force from now on (a
     * snapshot reads it).
     */
    List<Kept> attachSubscriptions(Supplier<Collection<Kept>> current);

    /**
     * Records that {@code s} is in force (created or updated), then runs {@code publish} (which
     * makes it so): both before another change of the same subscription can be recorded.
     *
     * @throws dev.cor.ngsild.store.StoreUnavailableException when it cannot be recorded (nothing is published)
     */
    void keep(Kept s, Runnable publish);

    /**
     * Runs {@code remove}; when it removed the subscription (true), records that.
     *
     * @throws dev.cor.ngsild.store.StoreUnavailableException when it cannot be recorded (nothing is removed)
     */
    boolean forget(String tenant, String id, BooleanSupplier remove);

    /**
     * Whether {@link #keep}, {@link #keepNew} and {@link #forget} wait (a database's transaction):
     * the broker then calls them outside any section, never under a monitor, and they run
     * {@code publish} / {@code remove} inside what makes the record (before its commit), so that two
     * changes of one subscription are published in the order they are recorded. Default: no - they
     * append to a journal and the API waits in the store's {@code sync}.
     */
    default boolean waits() {
        return false;
    }

    /**
     * As {@link #keep}, for a subscription that must not exist yet: {@code false} (nothing recorded,
     * nothing published) when the keeper holds one of that id already - made by another broker over
     * the same keeper, say. Default: {@link #keep}, and {@code true} (the caller has checked).
     *
     * @throws dev.cor.ngsild.store.StoreUnavailableException when it cannot be recorded (nothing is published)
     */
    default boolean keepNew(Kept s, Runnable publish) {
        keep(s, publish);
        return true;
    }

    /**
     * Has this broker follow the changes other brokers over the same keeper make: from now on, the
     * keeper calls {@code kept} with each subscription another broker made or changed, and
     * {@code forgotten} with (tenant, id) of each one it removed - on a thread of the keeper's, in
     * the order they were recorded. Called once, after {@link #attachSubscriptions}. Default: none
     * (a keeper of one broker).
     */
    default void follow(java.util.function.Consumer<Kept> kept, java.util.function.BiConsumer<String, String> forgotten) {
    }

    /**
     * Reads the subscription again from where it is kept, and when it is there hands it to the
     * follower ({@link #follow}'s {@code kept}) before it returns {@code true}: what a read that
     * missed it asks, so that a subscription another broker made a moment ago is found at once.
     * May wait (called in a coroutine or on a worker). Default: {@code false}, nothing to read.
     */
    default boolean refresh(String tenant, String id) {
        return false;
    }

    /**
     * Whether this broker notifies the period of a periodic subscription that begins now: a keeper
     * that several brokers share answers {@code true} to one of them per period (a lease in the
     * database, {@code intervalMs} long), so that the group notifies once. Called where a period
     * runs: in a coroutine or on a worker, never inside a section of {@link #keep}; may wait.
     * Default: yes - one broker alone.
     */
    default boolean claimPeriod(String tenant, String id, long intervalMs) {
        return true;
    }

    /**
     * The keeper of the subscriptions to context source registrations (§ 5.11): the same records
     * under kinds of their own, so that a restart gives each back to its resource; {@code null}
     * when they are not kept.
     */
    default SubscriptionKeeper contextSources() {
        return null;
    }

    /**
     * What is kept of a subscription: enough to build it again without the network.
     *
     * @param tenant    its tenant
     * @param id        its id
     * @param document  {@link Subscription#document()}: as the subscriber wrote it, names expanded
     * @param context   the subscriber's {@code @context} as it was given ({@code LdContext.echo()}: a URL, an object, an array)
     * @param documents the remote context documents that context was built from, as downloaded
     * @param brokerUrl {@link Subscription#brokerUrl()}
     * @param status    its times and counters when it was kept
     */
    record Kept(String tenant, String id, ObjectNode document, JsonNode context, List<LdContexts.RemoteDocument> documents,
            String brokerUrl, Status status) {
    }

    /** A subscription's times (epoch ms, -1 for none) and counters. */
    record Status(long createdAt, long modifiedAt, long timesSent, long timesFailed, long lastNotification,
            long lastSuccess, long lastFailure) {
    }
}
