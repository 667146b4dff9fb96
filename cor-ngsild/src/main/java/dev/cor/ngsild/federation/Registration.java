package dev.cor.ngsild.federation;

import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.query.StandingPattern;

/**
 * One context source registration (ETSI GS CIM 009 § 5.2.9) as the broker keeps it: immutable,
 * entity types and attribute names expanded, operation groups resolved to operation names.
 * Built by the registry when a registration is created or updated; read by the distributed
 * operations from any loop or worker without a lock.
 *
 * @param tenant            the tenant of this broker the registration belongs to
 * @param id                its id (a URI)
 * @param information       what the source provides (§ 5.2.10), at least one
 * @param mode              inclusive, exclusive, redirect or auxiliary (§ 4.3.6.2)
 * @param operations        the operation names it serves, groups resolved (§ 4.20), e.g. {@code retrieveEntity}
 * @param endpoint          the source's endpoint: {@code http}, {@code https} or {@code cor} scheme, no trailing slash
 * @param contextSourceInfo key-value pairs sent to the source as headers with each forward (§ 5.2.9)
 * @param sourceTenant      the tenant to name at the source ({@code tenant} member), or null for its default
 * @param timeoutMs         {@code management.timeout} (ms), or 0 for the broker's default
 * @param cooldownMs        {@code management.cooldown} (ms), or 0 for none
 * @param expiresAtMs       {@code expiresAt} (epoch ms), or -1 for never
 * @param context           the {@code @context} the registration was made with: forwards are compacted with it
 * @param document          the registration as given, names expanded (what a retrieve compacts again)
 */
public record Registration(String tenant, String id, List<Info> information, Mode mode, Set<String> operations,
        String endpoint, Map<String, String> contextSourceInfo, String sourceTenant, long timeoutMs, long cooldownMs,
        long expiresAtMs, LdContext context, ObjectNode document) {

    /** § 4.3.6.2: how the source's information combines with this broker's. */
    public enum Mode {
        INCLUSIVE, EXCLUSIVE, REDIRECT, AUXILIARY
    }

    /**
     * One RegistrationInfo (§ 5.2.10). Empty sets mean "not restricted by this member".
     *
     * @param entities          entity selectors; empty: any entity
     * @param propertyNames     expanded property names
     * @param relationshipNames expanded relationship names
     */
    public record Info(List<EntityInfo> entities, Set<String> propertyNames, Set<String> relationshipNames) {
    }

    /**
     * One EntityInfo (§ 5.2.8): a type (expanded) and at most one of id and idPattern, the
     * pattern compiled once, with the registration. The one place that says which entity ids it
     * names: {@link #selectsId}.
     */
    public record EntityInfo(String id, StandingPattern idPattern, String type) {

        /** An EntityInfo of a pattern's text (compiled here; BadRequestData when invalid), for tests and tools. */
        public EntityInfo(String id, String idPattern, String type) {
            this(id, idPattern == null ? null : StandingPattern.compile(idPattern, "idPattern", "an EntityInfo"), type);
        }

        /**
         * Whether it names entity {@code entityId}, types aside: its id is that id, or its
         * idPattern is found in it (§ 5.2.8; anchors as written, as Orion-LD's regexec and the
         * suite's {@code urn:ngsi-ld:Vehicle:*} want), or it names neither (every id).
         */
        public boolean selectsId(String entityId) {
            if (id != null) {
                return id.equals(entityId);
            }
            return idPattern == null || idPattern.find(entityId);
        }
    }
}
