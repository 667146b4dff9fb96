package dev.cor.ngsild.subscription;

import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.MatchBudget;

/**
 * The part of a subscription that filters entities by their content: its {@code q}, {@code geoQ}
 * and {@code scopeQ} (ETSI GS CIM 009 § 5.2.12). Evaluated on a loop (or a worker) for every
 * write that reaches the subscription through the index, with the record the write left: it must
 * not wait. Immutable, shared by every thread.
 * <p>
 * The API builds it from the query engine's parsed q, geoQ and scopeQ ({@code dev.cor.ngsild.query});
 * a subscription with none of the three has {@link #ALL}. Its patterns read at most what the
 * budget it is given has left, and throw TooComplexQuery past it: the caller decides what that
 * means for the subscription.
 */
@FunctionalInterface
public interface SubscriptionFilter {
    /** The filter of a subscription without q, geoQ or scopeQ. */
    SubscriptionFilter ALL = (e, budget) -> true;

    boolean matches(Entity entity, MatchBudget budget);
}
