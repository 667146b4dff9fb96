package dev.cor.ngsild.store;

import java.util.Collection;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.ld.LdContexts;

/**
 * Keeps the context source registrations beyond the process (the durable store implements it,
 * as it does {@link dev.cor.ngsild.store.SubscriptionKeeper}): told of every registration
 * created, updated and deleted, in the order requests saw, and asked once, when the broker is
 * built, for the ones it kept from before. Called by {@link Registrations} from any loop or
 * worker inside the short section that publishes the change; must not wait (the API waits for
 * durability after the request's work, through the entity store's {@code sync}).
 */
public interface RegistrationKeeper {
    /**
     * Called once, when the broker is built: returns the registrations kept from before, and
     * receives a view of the registrations in force from now on (a snapshot reads it).
     */
    List<Kept> attachRegistrations(Supplier<Collection<Kept>> current);

    /**
     * Records that {@code r} is in force (created or updated), then runs {@code publish}.
     *
     * @throws dev.cor.ngsild.store.StoreUnavailableException when it cannot be recorded (nothing is published)
     */
    void keepRegistration(Kept r, Runnable publish);

    /**
     * Runs {@code remove}; when it removed the registration (true), records that.
     *
     * @throws dev.cor.ngsild.store.StoreUnavailableException when it cannot be recorded (nothing is removed)
     */
    boolean forgetRegistration(String tenant, String id, BooleanSupplier remove);

    /** As {@link SubscriptionKeeper#waits()}, for the registrations. Default: no. */
    default boolean waitsForRegistrations() {
        return false;
    }

    /**
     * As {@link #keepRegistration}, for a registration that must not exist yet: {@code false}
     * (nothing recorded or published) when the keeper holds one of that id already. Default:
     * {@link #keepRegistration}, and {@code true}.
     */
    default boolean keepNewRegistration(Kept r, Runnable publish) {
        keepRegistration(r, publish);
        return true;
    }

    /** As {@link SubscriptionKeeper#follow}, for the registrations. Default: none. */
    default void followRegistrations(java.util.function.Consumer<Kept> kept,
            java.util.function.BiConsumer<String, String> forgotten) {
    }

    /** As {@link SubscriptionKeeper#refresh}, for a registration. Default: {@code false}. */
    default boolean refreshRegistration(String tenant, String id) {
        return false;
    }

    /**
     * What is kept of a registration: enough to build it again without the network.
     *
     * @param tenant     its tenant
     * @param id         its id
     * @param document   {@link Registration#document()}: as the registrant wrote it, names expanded
     * @param context    the registrant's {@code @context} as given ({@code LdContext.echo()})
     * @param documents  the remote context documents that context was built from, as downloaded
     * @param createdAt  epoch ms
     * @param modifiedAt epoch ms
     */
    record Kept(String tenant, String id, ObjectNode document, JsonNode context, List<LdContexts.RemoteDocument> documents,
            long createdAt, long modifiedAt) {
    }
}
