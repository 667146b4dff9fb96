package dev.cor.ngsild.federation;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The operation names of § 4.20 (Table 4.20-1) and the named groups (Table 4.20-2) a
 * registration's {@code operations} may list: {@link #resolve} turns a list into the set of
 * names a registration serves. Immutable tables; any thread.
 */
public final class OperationNames {
    /** Context information provision (§ 5.6): what an auxiliary registration may not serve. */
    public static final Set<String> PROVISION = Set.of("createEntity", "updateEntity", "appendAttrs", "updateAttrs",
            "deleteAttrs", "deleteEntity", "createBatch", "upsertBatch", "updateBatch", "deleteBatch", "upsertTemporal",
            "appendAttrsTemporal", "deleteAttrsTemporal", "updateAttrInstanceTemporal", "deleteAttrInstanceTemporal",
            "deleteTemporal", "mergeEntity", "replaceEntity", "replaceAttrs", "mergeBatch", "purgeEntity");

    /** Every single operation name of Table 4.20-1. */
    public static final Set<String> ALL;

    private static final List<String> FEDERATION = List.of("retrieveEntity", "queryEntity", "queryBatch",
            "retrieveEntityTypes", "retrieveEntityTypeDetails", "retrieveEntityTypeInfo", "retrieveAttrTypes",
            "retrieveAttrTypeDetails", "retrieveAttrTypeInfo", "createSubscription", "updateSubscription",
            "retrieveSubscription", "querySubscription", "deleteSubscription", "retrieveEntityMap", "updateEntityMap",
            "deleteEntityMap", "createEntityMapQueryEntity", "retrieveContextSourceIdentity");

    /** The named groups of Table 4.20-2. */
    public static final Map<String, Set<String>> GROUPS = Map.of(
            "federationOps", Set.copyOf(FEDERATION),
            "associationOps", Set.of("retrieveEntity", "queryEntity", "queryBatch", "retrieveEntityTypes",
                    "retrieveEntityTypeDetails", "retrieveEntityTypeInfo", "retrieveAttrTypes", "retrieveAttrTypeDetails",
                    "retrieveAttrTypeInfo", "createSubscription", "updateSubscription", "retrieveSubscription",
                    "querySubscription", "deleteSubscription", "retrieveContextSourceIdentity"),
            "updateOps", Set.of("updateEntity", "updateAttrs", "replaceEntity", "replaceAttrs"),
            "retrieveOps", Set.of("retrieveEntity", "queryEntity"),
            "redirectionOps", Set.of("createEntity", "updateEntity", "appendAttrs", "updateAttrs", "deleteAttrs",
                    "deleteEntity", "mergeEntity", "replaceEntity", "replaceAttrs", "retrieveEntity", "queryEntity",
                    "purgeEntity", "retrieveEntityTypes", "retrieveEntityTypeDetails", "retrieveEntityTypeInfo",
                    "retrieveAttrTypes", "retrieveAttrTypeDetails", "retrieveAttrTypeInfo", "retrieveEntityMap",
                    "updateEntityMap", "deleteEntityMap", "createEntityMapQueryEntity", "retrieveContextSourceIdentity"));

    /** What a registration without {@code operations} serves (§ 5.2.9): federationOps. */
    public static final Set<String> DEFAULT = GROUPS.get("federationOps");

    static {
        Set<String> all = new LinkedHashSet<>(PROVISION);
        all.addAll(FEDERATION);
        all.addAll(List.of("retrieveTemporal", "queryTemporal", "createEntityMapQueryTemporal"));
        ALL = Set.copyOf(all);
    }

    private OperationNames() {
    }

    /** Whether {@code name} is an operation name or a group name. */
    public static boolean known(String name) {
        return ALL.contains(name) || GROUPS.containsKey(name);
    }

    /** The names and groups of {@code listed}, groups replaced by their members; unknown names are left out. */
    public static Set<String> resolve(Iterable<String> listed) {
        Set<String> out = new LinkedHashSet<>();
        for (String n : listed) {
            Set<String> g = GROUPS.get(n);
            if (g != null) {
                out.addAll(g);
            } else if (ALL.contains(n)) {
                out.add(n);
            }
        }
        return Set.copyOf(out);
    }
}
