package dev.cor.ngsild;

import java.util.Set;
import java.util.TreeSet;

import dev.cor.ngsild.federation.Registrations;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.subscription.Subscriptions;

/**
 * What a broker holds, read only: its tenants and, per tenant, how many entities, subscriptions
 * and context source registrations (with the subscriptions to them) are in force. Each figure is
 * read when asked, from the structures the requests publish to; any thread. Got from
 * {@link CorNgsild#status()}.
 */
public final class NgsildStatus {
    private final EntityStore store;
    private final Subscriptions subscriptions;
    private final Subscriptions csourceSubscriptions;
    private final Registrations registrations;

    NgsildStatus(EntityStore store, Subscriptions subscriptions, Subscriptions csourceSubscriptions,
            Registrations registrations) {
        this.store = store;
        this.subscriptions = subscriptions;
        this.csourceSubscriptions = csourceSubscriptions;
        this.registrations = registrations;
    }

    /** The tenants, sorted: the default one ({@code ""}, always there) and each that a write made. */
    public Set<String> tenants() {
        return new TreeSet<>(store.tenants());
    }

    /** How many entities {@code tenant} holds (0 for a tenant that does not exist). */
    public int entities(String tenant) {
        return store.count(tenant);
    }

    /** How many subscriptions are in force in {@code tenant}. */
    public int subscriptions(String tenant) {
        return subscriptions.count(tenant);
    }

    /** How many context source registrations are in force in {@code tenant}. */
    public int registrations(String tenant) {
        return registrations.count(tenant);
    }

    /** How many subscriptions to context source registrations (§ 5.11) are in force in {@code tenant}. */
    public int csourceSubscriptions(String tenant) {
        return csourceSubscriptions.count(tenant);
    }
}
