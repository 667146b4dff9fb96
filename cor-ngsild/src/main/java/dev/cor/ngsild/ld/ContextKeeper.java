package dev.cor.ngsild.ld;

import java.util.Collection;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Keeps the Hosted {@code @context}s beyond the process (a durable store implements it): told of
 * every one added and removed, in an order that matches what requests saw, and asked once, when
 * the broker is built, for the ones it kept from before. Called by the broker's
 * {@link LdContexts} from any loop or worker; must not wait (the API waits for durability after
 * the request's work, through the entity store's {@code sync}).
 */
public interface ContextKeeper {
    /**
     * Called once, when the broker's {@link LdContexts} is built: returns the contexts kept from
     * before (they are hosted again, with their ids), and receives a view of the contexts hosted
     * from now on (a snapshot reads it).
     */
    List<HostedContext> attach(Supplier<Collection<HostedContext>> current);

    /**
     * Records that {@code context} is hosted, then runs {@code publish} (which makes it visible):
     * both before any removal of it can be recorded.
     *
     * @throws dev.cor.ngsild.store.StoreUnavailableException when it cannot be recorded (nothing is published)
     */
    void host(HostedContext context, Runnable publish);

    /**
     * Runs {@code remove}; when it removed the context (true), records that.
     *
     * @throws dev.cor.ngsild.store.StoreUnavailableException when it cannot be recorded (nothing is removed)
     */
    boolean remove(String id, BooleanSupplier remove);

    /**
     * Has this broker follow the Hosted contexts other brokers over the same keeper add
     * ({@code hosted}) and remove ({@code removed}, by id), on a thread of the keeper's. Called
     * once, after {@link #attach}. Default: none (a keeper of one broker).
     */
    default void followContexts(java.util.function.Consumer<HostedContext> hosted, java.util.function.Consumer<String> removed) {
    }
}
