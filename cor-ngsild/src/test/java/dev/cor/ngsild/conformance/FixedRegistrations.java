package dev.cor.ngsild.conformance;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;

import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.registry.Registration;
import dev.cor.ngsild.registry.RegistrationLookup;

/**
 * Registrations a test puts in place directly, through the registry's contract
 * ({@link RegistrationLookup}), matched as § 5.12 says: tenant, not expired, the operation, and an
 * information entry whose entities (id, idPattern, type) and attribute names fit what is asked.
 * What the distributed-operation tests stand on until they can create registrations through
 * {@code /csourceRegistrations}; thread-safe.
 */
final class FixedRegistrations implements RegistrationLookup {
    /** Every operation a source may be asked (the {@code redirectionOps} group and the batches, § 4.20). */
    static final Set<String> ALL_OPS = Set.of("createEntity", "updateEntity", "appendAttrs", "updateAttrs", "deleteAttrs",
            "deleteEntity", "mergeEntity", "replaceEntity", "replaceAttrs", "retrieveEntity", "queryEntity", "queryBatch",
            "createBatch", "upsertBatch", "updateBatch", "deleteBatch", "mergeBatch");

    private final List<Registration> all = new CopyOnWriteArrayList<>();

    void add(Registration r) {
        all.add(r);
    }

    void clear() {
        all.clear();
    }

    /** A registration of the default tenant, every operation, no timeout or cooldown of its own. */
    static Registration of(String id, Registration.Mode mode, String endpoint, LdContext context, String entityId,
            String type, Set<String> attrs) {
        return with(id, mode, endpoint, context, entityId, type, attrs, 0, 0);
    }

    static Registration with(String id, Registration.Mode mode, String endpoint, LdContext context, String entityId,
            String type, Set<String> attrs, long timeoutMs, long cooldownMs) {
        Registration.Info info = new Registration.Info(
                entityId == null && type == null ? List.of() : List.of(new Registration.EntityInfo(entityId, null, type)),
                attrs, Set.of());
        return new Registration(dev.cor.ngsild.store.EntityStore.DEFAULT_TENANT, id, List.of(info), mode, ALL_OPS, endpoint, Map.of(), null, timeoutMs,
                cooldownMs, -1, context, null);
    }

    @Override
    public List<Registration> matching(String tenant, Want want, long nowMs) {
        List<Registration> out = new ArrayList<>();
        for (Registration r : all) {
            if (r.tenant().equals(tenant) && (r.expiresAtMs() < 0 || r.expiresAtMs() > nowMs)
                    && r.operations().contains(want.operation()) && matches(r, want)) {
                out.add(r);
            }
        }
        out.sort(Comparator.comparing(Registration::id));
        return out;
    }

    private static boolean matches(Registration r, Want want) {
        for (Registration.Info info : r.information()) {
            boolean attrsOk = want.attrs().isEmpty() || (info.propertyNames().isEmpty() && info.relationshipNames().isEmpty())
                    || want.attrs().stream().anyMatch(a -> info.propertyNames().contains(a) || info.relationshipNames().contains(a));
            if (!attrsOk) {
                continue;
            }
            if (info.entities().isEmpty()) {
                return true;
            }
            for (Registration.EntityInfo e : info.entities()) {
                boolean id = want.id() == null || e.id() == null || e.id().equals(want.id());
                boolean pattern = want.id() == null || e.idPattern() == null || Pattern.matches(e.idPattern(), want.id());
                boolean type = want.types().isEmpty() || e.type() == null || want.types().contains(e.type());
                if (id && pattern && type) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public boolean any(String tenant) {
        for (Registration r : all) {
            if (r.tenant().equals(tenant)) {
                return true;
            }
        }
        return false;
    }
}
