package dev.cor.server;

import java.util.Set;

import dev.cor.ngsild.policy.NgsildAuthorizer;

/**
 * What one credential may do: the tenants it may use ({@code *} every tenant, {@code -} the
 * default one, the tenant a request without {@code NGSILD-Tenant} uses) and whether it may write.
 * Immutable; any thread.
 *
 * @param who     how a refusal names the credential (never the credential itself)
 * @param tenants the tenants granted, the default tenant as {@code ""}
 * @param any     every tenant is granted
 * @param write   writes are allowed too, not only reads
 */
record Grant(String who, Set<String> tenants, boolean any, boolean write) {
    /** The word for every tenant in a token file or a tenants claim. */
    static final String ANY = "*";
    /** The word for the default tenant in a token file or a tenants claim. */
    static final String DEFAULT = "-";

    Grant {
        tenants = Set.copyOf(tenants);
    }

    /** A grant of {@code names} as written in a token file or a claim ({@code *}, {@code -} or tenant names). */
    static Grant of(String who, Iterable<String> names, boolean write) {
        java.util.HashSet<String> t = new java.util.HashSet<>();
        boolean any = false;
        for (String n : names) {
            if (n.equals(ANY)) {
                any = true;
            } else {
                t.add(n.equals(DEFAULT) ? "" : n);
            }
        }
        return new Grant(who, t, any, write);
    }

    /** Whether this grant covers the request: its tenant, and a write only when writes are granted. */
    NgsildAuthorizer.Decision decide(String tenant, boolean read) {
        if (!any && !tenants.contains(tenant)) {
            return NgsildAuthorizer.Decision.forbidden(who + " does not grant "
                    + (tenant.isEmpty() ? "the default tenant" : "tenant '" + tenant + "'"));
        }
        if (!read && !write) {
            return NgsildAuthorizer.Decision.forbidden(who + " is read-only");
        }
        return NgsildAuthorizer.Decision.allow();
    }
}
