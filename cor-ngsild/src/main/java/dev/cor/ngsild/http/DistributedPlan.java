package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Forwarder;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.federation.RegistrationLookup;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.query.BoundedPattern;

/**
 * Which requests are distributed, and which context source registrations each reaches (ETSI GS
 * CIM 009 § 4.3.6, § 4.20, § 5.12). On the loop, before the dispatch, {@link #plan} tells whether
 * a request may forward at all - a tenant without registrations pays one look-up - and stops a
 * write that came round a loop (Via, § 4.3.6.4, § 6.3.17); the handlers then ask precisely, their
 * types and attributes expanded ({@link #reach}, {@link #queryServers}), and the copies of
 * subscriptions ask which sources take {@code createSubscription} (§ 5.8.1.4). The operations'
 * § 4.20 names live here. The matching itself is the registry's ({@link RegistrationLookup}, by
 * the rules of {@link dev.cor.ngsild.federation.Coverage}). Called by {@link NgsildApplication}
 * (the plan, kept on the request's {@link Exchange} as {@code forwards}), the distributed reads,
 * writes and batches, and {@link RemoteSubscriptions}. Stateless; one per application, shared by
 * every loop and worker.
 */
final class DistributedPlan {
    private final Config config;
    private final Forwarder forwarder;

    DistributedPlan(Config config, Forwarder forwarder) {
        this.config = config;
        this.forwarder = forwarder;
    }

    // ---------------------------------------------------------------- which requests

    /** § 4.20's name of an operation that registrations can be asked about, or {@code null}. */
    static String operationName(Operation op) {
        return switch (op) {
            case RETRIEVE_ENTITY -> "retrieveEntity";
            case QUERY_ENTITIES -> "queryEntity";
            case QUERY_ENTITIES_POST -> "queryBatch";
            case CREATE_ENTITY -> "createEntity";
            case UPDATE_ATTRIBUTES -> "updateEntity";
            case APPEND_ATTRIBUTES -> "appendAttrs";
            case PARTIAL_ATTRIBUTE_UPDATE -> "updateAttrs";
            case DELETE_ATTRIBUTE -> "deleteAttrs";
            case DELETE_ENTITY -> "deleteEntity";
            case MERGE_ENTITY -> "mergeEntity";
            case REPLACE_ENTITY -> "replaceEntity";
            case REPLACE_ATTRIBUTE -> "replaceAttrs";
            case BATCH_CREATE -> "createBatch";
            case BATCH_UPSERT -> "upsertBatch";
            case BATCH_UPDATE -> "updateBatch";
            case BATCH_DELETE -> "deleteBatch";
            case BATCH_MERGE -> "mergeBatch";
            case PURGE_ENTITIES -> "purgeEntity";
            case CREATE_SUBSCRIPTION -> "createSubscription";
            case LIST_TYPES -> "retrieveEntityTypes";
            case LIST_ATTRIBUTES -> "retrieveAttrTypes";
            case RETRIEVE_TEMPORAL -> "retrieveTemporal";
            case QUERY_TEMPORAL, QUERY_TEMPORAL_POST -> "queryTemporal";
            default -> null;
        };
    }

    /** Whether the request writes one entity (§ 5.6.1-5.6.6, 5.6.17-5.6.19): what the modes forward besides reads. */
    static boolean isEntityWrite(Operation op) {
        return !op.isRead() && operationName(op) != null && !isBatch(op) && op != Operation.PURGE_ENTITIES
                && op != Operation.CREATE_SUBSCRIPTION;
    }

    static boolean isBatch(Operation op) {
        return switch (op) {
            case BATCH_CREATE, BATCH_UPSERT, BATCH_UPDATE, BATCH_DELETE, BATCH_MERGE -> true;
            default -> false;
        };
    }

    /**
     * On the loop, before the dispatch: the registrations the request may reach, or {@code null}
     * - answered here alone. A tenant with no registration pays one map look-up; a request with
     * {@code local=true}, or whose {@code Via} names this broker (a loop, § 4.3.6.4), is local.
     * Types and attributes are not narrowed yet (the context may still have to be downloaded):
     * the handler asks again, precisely ({@link #reach}).
     */
    List<Registration> plan(Exchange x) {
        String op = operationName(x.operation());
        if (op == null || !config.registrations().any(x.tenant) || localOnly(x)) {
            return null;
        }
        String id = x.route.entityId() != null ? x.route.entityId()
                : x.operation() == Operation.CREATE_ENTITY && x.body != null ? x.body.path("id").asText(null) : null;
        List<Registration> regs = config.registrations().matching(x.tenant,
                new RegistrationLookup.Want(op, id, null, Set.of(), Set.of()), config.clock().millis());
        if (regs.isEmpty() && (x.operation() == Operation.RETRIEVE_ENTITY || x.operation() == Operation.QUERY_ENTITIES
                || x.operation() == Operation.QUERY_ENTITIES_POST)) {
            // a source that only answers queries serves a retrieve too; one that takes only GET or only POST queries, both
            regs = queryServers(x, id, null, Set.of(), Set.of(), List.of());
        }
        if (regs.isEmpty() && x.operation() == Operation.PURGE_ENTITIES && proxiedElsewhere(x, null)) {
            return List.of(); // no source takes it, but one holds what it may select: purge() reports the Conflict
        }
        if (regs.isEmpty() && (x.operation() == Operation.CREATE_ENTITY || x.operation() == Operation.DELETE_ENTITY)
                && id != null && proxiedElsewhere(x, id)) {
            return List.of(); // no source takes it, but one holds it: DistributedWrites answers its part's Conflict
        }
        if (regs.isEmpty()) {
            return null;
        }
        if (forwarder.seenIn(x.headers().getAll("Via"))) {
            // came round a loop: a read is answered from here alone. A write: § 6.3.17 gives 508 "in the
            // case of an exclusive or redirect registration" (its data is held only outside, so it would
            // go round again); an inclusive one drops out of the matching (§ 6.3.18, Via) and the write is
            // done here - the suite's D018_01 registers mode=redirect for its 508 (testsuite-doubts 75)
            if (x.operation().isRead() || regs.stream().noneMatch(r -> r.mode() == Registration.Mode.EXCLUSIVE
                    || r.mode() == Registration.Mode.REDIRECT)) {
                return null;
            }
            throw new NgsiLdException(ErrorType.LOOP_DETECTED, "the request's Via names this broker ("
                    + forwarder.brokerId() + "): forwarding its write again would loop");
        }
        return regs;
    }

    private static boolean localOnly(Exchange x) {
        if (x.params == null) {
            return true;
        }
        try {
            return x.params.bool("local", false) || "*".equals(x.params.get("type"));
        } catch (NgsiLdException e) {
            return true; // the operation answers the malformed parameter itself
        }
    }

    /**
     * The registrations that serve {@code queryEntity} or {@code queryBatch} but not
     * {@code retrieveEntity} for the entity: a retrieve asks them with a query by id (the suite's
     * D010_03), leaving out those in {@code already}.
     */
    List<Registration> queryServers(Exchange x, String id, String idPattern, Set<String> types, Set<String> attrs,
            List<Registration> already) {
        List<Registration> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Registration r : already) {
            seen.add(r.id());
        }
        BoundedPattern pattern = BoundedPattern.compileOrNull(idPattern, "idPattern");
        for (String op : List.of("queryEntity", "queryBatch")) {
            for (Registration r : config.registrations().matching(x.tenant,
                    new RegistrationLookup.Want(op, id, pattern, types, attrs), config.clock().millis())) {
                if (seen.add(r.id())) {
                    out.add(r);
                }
            }
        }
        return out;
    }

    /** The registrations a request reaches, its types and attributes expanded: the handler's precise look. */
    List<Registration> reach(Exchange x, String id, String idPattern, Set<String> types, Set<String> attrs) {
        return config.registrations().matching(x.tenant, new RegistrationLookup.Want(operationName(x.operation()), id,
                BoundedPattern.compileOrNull(idPattern, "idPattern"), types, attrs), config.clock().millis());
    }

    /**
     * Whether a create or a delete of the entity may meet a proxied registration that does not take
     * it: such a write is handled by {@link DistributedWrites}, which answers that part's Conflict
     * (§ 5.6.1.4, § 5.6.6.4).
     */
    private boolean proxiedElsewhere(Exchange x, String id) {
        for (String op : List.of("retrieveEntity", "queryEntity", "updateEntity", "updateAttrs")) {
            for (Registration r : config.registrations().matching(x.tenant,
                    new RegistrationLookup.Want(op, id, null, Set.of(), Set.of()), config.clock().millis())) {
                if (r.mode() == Registration.Mode.EXCLUSIVE || r.mode() == Registration.Mode.REDIRECT) {
                    return true;
                }
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- distributed subscriptions (§ 5.8.1.4)

    /** The registrations of the request's tenant that take {@code createSubscription} for one of {@code types}. */
    List<Registration> subscriptionSources(Exchange x, Set<String> types) {
        return config.registrations().matching(x.tenant,
                new RegistrationLookup.Want("createSubscription", null, null, types, Set.of()), config.clock().millis());
    }

    /** The registration of that id in the request's tenant, in force, or {@code null}. */
    Registration registration(String tenant, String id) {
        for (Registration r : config.registrations().matching(tenant,
                new RegistrationLookup.Want("createSubscription", null, null, Set.of(), Set.of()), config.clock().millis())) {
            if (r.id().equals(id)) {
                return r;
            }
        }
        return null;
    }
}
