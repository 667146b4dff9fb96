package dev.cor.ngsild.federation;

import java.util.List;
import java.util.Set;

import dev.cor.ngsild.query.BoundedPattern;
import dev.cor.ngsild.query.MatchBudget;

/**
 * Finds the registrations a request matches (§ 4.3.6, § 5.12): the question every distributed
 * operation asks first. Implemented by the registry; thread-safe, never waits, called from any
 * loop or worker, for every request on the hot path - so the answer for a tenant without
 * registrations must cost next to nothing.
 */
public interface RegistrationLookup {
    /** No registrations at all: until the registry is wired in. */
    RegistrationLookup NONE = new RegistrationLookup() {
        @Override
        public List<Registration> matching(String tenant, Want want, long nowMs) {
            return List.of();
        }

        @Override
        public boolean any(String tenant) {
            return false;
        }
    };

    /**
     * The registrations of {@code tenant} in force at {@code nowMs} (not expired) that serve
     * {@code want}, in a stable order (by id).
     */
    List<Registration> matching(String tenant, Want want, long nowMs);

    /** Whether {@code tenant} has any registration at all (a request's cheap first check). */
    boolean any(String tenant);

    /**
     * What a request asks, as far as registrations can tell.
     *
     * @param operation the operation's name as § 4.20 spells it ({@code retrieveEntity}, {@code queryEntity}, ...)
     * @param id        the entity id the request names, or null
     * @param idPattern the request's idPattern, or null
     * @param types     the expanded entity types the request names; empty: any type
     * @param attrs     the expanded attribute names the request names; empty: every attribute
     * @param budget    what the request's idPattern may read over the registrations' ids (null without one)
     */
    record Want(String operation, String id, BoundedPattern idPattern, Set<String> types, Set<String> attrs,
            MatchBudget budget) {

        /** A lookup's want, its idPattern (if any) with the budget of one request. */
        public Want(String operation, String id, BoundedPattern idPattern, Set<String> types, Set<String> attrs) {
            this(operation, id, idPattern, types, attrs, idPattern == null ? null : MatchBudget.request());
        }
    }
}
