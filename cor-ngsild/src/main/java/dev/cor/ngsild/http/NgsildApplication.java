package dev.cor.ngsild.http;

import java.time.InstantSource;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Forwarder;
import dev.cor.ngsild.federation.RegistrationLookup;
import dev.cor.ngsild.ld.ContextRef;
import dev.cor.ngsild.ld.JsonldContextsApi;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.metrics.NgsildMetrics;
import dev.cor.ngsild.policy.NgsildAuthorizer;
import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.RegistrationKeeper;
import dev.cor.ngsild.store.StoreUnavailableException;
import dev.cor.ngsild.store.SubscriptionKeeper;
import dev.cor.ngsild.store.TemporalStore;
import dev.cor.ngsild.subscription.Subscriptions;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;

/**
 * The broker as a {@link CorRestApplication}. On the loop, before the dispatch, it reads what it
 * can of a request without waiting - the route, the preconditions of § 6.3.4, the tenant, the
 * parameters, the body and the {@code @context} the request names - and answers "can this
 * wait?": yes when that context is not cached yet, and for every write when the store's answer
 * waits for its journal ({@link EntityStore#writesWait()}). The handler then resolves the context
 * (downloading it, yielding in a coroutine), runs the operation and, after a write, waits for the
 * store to make it durable ({@link EntityStore#sync()}) before the answer goes out. Every error becomes a
 * ProblemDetails answer (§ 6.3.3). Shared by every loop and worker; state lives in the request.
 */
public final class NgsildApplication implements CorRestApplication {
    /** Where the broker's resources live. */
    public static final String BASE_PATH = "/ngsi-ld/v1/";

    private static final System.Logger LOG = System.getLogger(NgsildApplication.class.getName());

    /**
     * What the application works with. {@code temporal}: where every write's history is recorded
     * and the temporal API reads, or {@code null} - the store keeps none, or history is off -: the
     * temporal API then answers 501.
     */
    public record Config(EntityStore store, LdContexts contexts, InstantSource clock, NgsildMetrics metrics,
            long contextTimeoutMs, NgsildLimits limits, Subscriptions subscriptions, RegistrationLookup registrations,
            NgsildAuthorizer authorizer, TemporalStore temporal) {
        public Config {
            java.util.Objects.requireNonNull(authorizer, "authorizer");
        }

        /** Without authorization (every request is allowed) and without history. */
        public Config(EntityStore store, LdContexts contexts, InstantSource clock, NgsildMetrics metrics,
                long contextTimeoutMs, NgsildLimits limits, Subscriptions subscriptions, RegistrationLookup registrations) {
            this(store, contexts, clock, metrics, contextTimeoutMs, limits, subscriptions, registrations,
                    NgsildAuthorizer.ALLOW_ALL, null);
        }
    }

    private final Config config;
    private final EntityOperations entities;
    private final BatchOperations batches;
    private final ContextOperations contextOps;
    private final DiscoveryOperations discovery;
    private final SubscriptionOperations subscriptionOps;
    private final DistributedPlan distributedPlan;
    private final DistributedWrites distributedWrites;
    private final RegistrationOperations registrationOps;
    private final SubscriptionOperations csourceSubscriptionOps;
    private final TemporalOperations temporalOps;
    private final Subscriptions csourceSubscriptions;
    /** Each operation's meters, by {@link Operation#ordinal()}; the last for a request that is no operation. */
    private final NgsildMetrics.Operation[] meters;

    /** Whether a request for {@code path} is this application's to answer (a host routes by it). Any thread. */
    public static boolean owns(String path) {
        return Route.owns(path);
    }

    /** The application without forwarding: registrations never match ({@link RegistrationLookup#NONE} in the config). */
    public NgsildApplication(Config config) {
        this(config, null);
    }

    /** The application; {@code forwarder} sends the forwards of distributed operations (§ 4.3.6). */
    public NgsildApplication(Config config, Forwarder forwarder) {
        this.config = config;
        Operation[] ops = Operation.values();
        this.meters = new NgsildMetrics.Operation[ops.length + 1];
        for (Operation op : ops) {
            meters[op.ordinal()] = config.metrics().operation(op.metricName());
        }
        meters[ops.length] = config.metrics().operation("unknown");
        // without a forwarder nothing is distributed: every one of these is null, and x.forwards always is
        Forwards forwards = forwarder == null ? null : new Forwards(config, forwarder);
        this.distributedPlan = forwarder == null ? null : new DistributedPlan(config, forwarder);
        DistributedReads reads = forwards == null ? null : new DistributedReads(config, forwards, distributedPlan);
        this.distributedWrites = forwards == null ? null : new DistributedWrites(config, forwards, distributedPlan);
        DistributedBatches batchForwards = forwards == null ? null : new DistributedBatches(config, forwards, distributedPlan);
        this.entities = new EntityOperations(config, reads);
        this.batches = new BatchOperations(config, batchForwards);
        this.contextOps = new ContextOperations(new JsonldContextsApi(config.contexts()));
        this.discovery = new DiscoveryOperations(config, reads);
        this.temporalOps = new TemporalOperations(config, forwards == null ? null
                : new DistributedTemporal(config, forwards, distributedPlan));
        this.subscriptionOps = new SubscriptionOperations(config);
        this.csourceSubscriptions = config.subscriptions().forContextSources();
        CsourceNotifications csourceNotifications = new CsourceNotifications(config, csourceSubscriptions);
        this.registrationOps = new RegistrationOperations(config, csourceNotifications);
        csourceSubscriptions.periodicData(csourceNotifications::matchingNow);
        this.csourceSubscriptionOps = new SubscriptionOperations(config, csourceSubscriptions,
                "csourceSubscriptions", csourceNotifications::initialNotification);
        if (forwards != null) {
            subscriptionOps.distribute(distributedPlan, forwards, csourceSubscriptionOps);
        }
    }

    /**
     * Puts the subscriptions a store kept from before a restart in force again. One that no
     * longer builds (its Hosted context was deleted since, say) is left out with a warning that
     * names it: the broker starts without it rather than not at all. Called once, by the broker
     * as it is built.
     */
    public void restoreSubscriptions(List<SubscriptionKeeper.Kept> kept) {
        for (SubscriptionKeeper.Kept k : kept) {
            try {
                subscriptionOps.restore(k);
            } catch (NgsiLdException | StoreUnavailableException e) {
                LOG.log(System.Logger.Level.WARNING, "cor-ngsild: subscription " + k.id() + " of tenant '" + k.tenant()
                        + "' was kept but cannot be restored, and is left out: " + e.getMessage());
            }
        }
    }

    /**
     * Has this broker follow the subscriptions, subscriptions to registrations and registrations
     * other brokers over the same keepers make, change and remove (a keeper that several brokers
     * share: a database). One that does not build here is left out with a warning, as at a
     * restore. Called once, by the broker as it is built, after the restores.
     */
    public void followKeepers(SubscriptionKeeper subscriptionKeeper, RegistrationKeeper registrationKeeper) {
        if (subscriptionKeeper != null) {
            subscriptionKeeper.follow(k -> followed("subscription", k.tenant(), k.id(), () -> subscriptionOps.follow(k)),
                    config.subscriptions()::dropKept);
            SubscriptionKeeper csources = subscriptionKeeper.contextSources();
            if (csources != null && registrationOps.served()) {
                csources.follow(k -> followed("subscription to registrations", k.tenant(), k.id(),
                        () -> csourceSubscriptionOps.follow(k)), csourceSubscriptions::dropKept);
            }
        }
        if (registrationKeeper != null && registrationOps.served()) {
            registrationKeeper.followRegistrations(k -> followed("registration", k.tenant(), k.id(), () -> registrationOps.follow(k)),
                    registrationOps::dropFollowed);
        }
    }

    private static void followed(String what, String tenant, String id, Runnable apply) {
        try {
            apply.run();
        } catch (NgsiLdException | StoreUnavailableException e) {
            LOG.log(System.Logger.Level.WARNING, "cor-ngsild: " + what + " " + id + " of tenant '" + tenant
                    + "', made by another broker, cannot be built here, and is left out: " + e.getMessage());
        }
    }

    /**
     * Has {@code keeper} record every change of the subscriptions to registrations from now on,
     * and puts those it kept from before a restart in force again (one that no longer builds is
     * left out with a warning). Called once, by the broker as it is built, after the registrations.
     */
    public void restoreCsourceSubscriptions(SubscriptionKeeper keeper, LdContexts contexts) {
        if (keeper == null || !registrationOps.served()) {
            return;
        }
        for (SubscriptionKeeper.Kept k : csourceSubscriptions.keepWith(keeper, contexts)) {
            try {
                csourceSubscriptionOps.restore(k);
            } catch (NgsiLdException | StoreUnavailableException e) {
                LOG.log(System.Logger.Level.WARNING, "cor-ngsild: subscription to registrations " + k.id() + " of tenant '"
                        + k.tenant() + "' was kept but cannot be restored, and is left out: " + e.getMessage());
            }
        }
    }

    /**
     * Has {@code keeper} record every change of the registrations from now on, and puts the
     * registrations it kept from before a restart in force again; one that no longer builds is
     * left out with a warning that names it. Called once, by the broker as it is built.
     */
    public void restoreRegistrations(RegistrationKeeper keeper) {
        if (!registrationOps.served()) {
            return;
        }
        for (RegistrationKeeper.Kept k : registrationOps.keepWith(keeper)) {
            try {
                registrationOps.restore(k);
            } catch (NgsiLdException | StoreUnavailableException e) {
                LOG.log(System.Logger.Level.WARNING, "cor-ngsild: registration " + k.id() + " of tenant '" + k.tenant()
                        + "' was kept but cannot be restored, and is left out: " + e.getMessage());
            }
        }
    }

    /**
     * The subscriptions to registrations (§ 5.11), for what the broker does with every
     * subscription at its edges: {@code tickOn} once a server has loops, {@code close} at the end.
     */
    public Subscriptions csourceSubscriptions() {
        return csourceSubscriptions;
    }

    // ---------------------------------------------------------------- the dispatch's questions

    @Override
    public boolean canWait(CorRest request) {
        Exchange x = prepare(request);
        if (x.tenantUnknown) {
            return true; // the store is asked whether the tenant exists, a round trip
        }
        if (x.failure != null || x.bareStatus != 0 || x.allow != null) {
            return false;
        }
        if (x.forwards != null) {
            return true; // a registration matches: it asks other brokers (§ 4.3.6)
        }
        if (config.store().readsWait()) {
            return true; // every answer reads the store, a round trip to its database
        }
        if (!x.operation().isRead() && config.store().writesWait()) {
            return true; // its answer waits for the store's journal
        }
        if (x.contextRef != null && config.contexts().needsDownload(x.contextRef)) {
            return true;
        }
        if (x.operation().isTemporal() && x.operation().isRead() && config.temporal() != null) {
            // its instances may be read from disk, and a long history is read in slices, the loop
            // serving everyone else between two (TemporalReads.Pace)
            return true;
        }
        if (x.operation() == Operation.DELETE_CONTEXT && contextOps.canWait(x)) {
            return true;
        }
        // a subscription's jsonldContext is downloaded when it is created or updated
        if ((x.operation() == Operation.CREATE_SUBSCRIPTION || x.operation() == Operation.UPDATE_SUBSCRIPTION
                || x.operation() == Operation.CREATE_CSR_SUBSCRIPTION || x.operation() == Operation.UPDATE_CSR_SUBSCRIPTION)
                && x.body != null && x.body.isObject() && x.body.get("jsonldContext") instanceof JsonNode c
                && c.isTextual() && config.contexts().needsDownload(ContextRef.link(c.asText()))) {
            return true;
        }
        // a batch in application/ld+json: each entity names its own context
        if (x.body != null && x.body.isArray()) {
            for (JsonNode e : x.body) {
                JsonNode c = e.get("@context");
                if (c != null && config.contexts().needsDownload(ContextRef.body(c))) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public void handle(CorRest request) {
        config.subscriptions().adopt(); // periodic subscriptions restored before the server had loops
        csourceSubscriptions.adopt();
        Exchange x = request.state().userData() instanceof Exchange e ? e : prepare(request);
        int status;
        try {
            if (x.tenantUnknown && (config.store().hasTenantNow(x.tenant)
                    || (config.temporal() != null && config.temporal().hasTenant(x.tenant)))) {
                x = prepare(request); // the store knew it: the checks again, past the tenant this time
            }
            if (x.bareStatus != 0) {
                x.bare(x.bareStatus);
            } else if (x.allow != null) {
                x.request.responseHeaders().set("Allow", x.allow);
                throw new NgsiLdException(ErrorType.METHOD_NOT_ALLOWED, request.method() + " is not allowed on "
                        + request.path() + " (allowed: " + x.allow + ")");
            } else if (x.failure != null) {
                throw x.failure;
            } else {
                if (x.contextRef != null) {
                    x.context = config.contexts().resolve(x.contextRef, config.contextTimeoutMs());
                }
                run(x);
                if (!x.operation().isRead() && request.status() < 400) {
                    config.store().sync(); // what the answer acknowledges is durable before it goes out
                }
            }
        } catch (NgsiLdException e) {
            x.error(e);
        } catch (StoreUnavailableException e) {
            x.error(new NgsiLdException(ErrorType.SERVICE_UNAVAILABLE, e.getMessage()));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "cor-ngsild: " + request + " failed", e);
            // the message may hold anything a peer sent on the way: the client gets its kind, the log the rest
            x.error(new NgsiLdException(ErrorType.INTERNAL_ERROR, e.getClass().getSimpleName() + " (in the broker's log)"));
        }
        status = request.status();
        Operation op = x.operation();
        meters[op == null ? meters.length - 1 : op.ordinal()].answered(status, System.nanoTime() - x.startNanos);
        if (op != null && !op.isRead() && status < 300) {
            config.metrics().tenant(config.store(), x.tenant); // a write may have made the tenant
        }
    }

    private void run(Exchange x) {
        if (x.forwards != null && DistributedPlan.isEntityWrite(x.operation())) {
            distributedWrites.distributedWrite(x, this::runHere);
            return;
        }
        runHere(x);
    }

    private void runHere(Exchange x) {
        switch (x.operation()) {
            case CREATE_ENTITY -> entities.create(x);
            case RETRIEVE_ENTITY -> entities.retrieve(x);
            case REPLACE_ENTITY -> entities.replace(x);
            case MERGE_ENTITY -> entities.merge(x);
            case DELETE_ENTITY -> entities.delete(x);
            case PURGE_ENTITIES -> entities.purge(x);
            case APPEND_ATTRIBUTES -> entities.append(x);
            case UPDATE_ATTRIBUTES -> entities.update(x);
            case PARTIAL_ATTRIBUTE_UPDATE -> entities.partialAttributeUpdate(x);
            case REPLACE_ATTRIBUTE -> entities.replaceAttribute(x);
            case DELETE_ATTRIBUTE -> entities.deleteAttribute(x);
            case QUERY_ENTITIES -> entities.query(x);
            case QUERY_ENTITIES_POST -> entities.queryPost(x);
            case BATCH_CREATE, BATCH_UPSERT, BATCH_UPDATE, BATCH_DELETE, BATCH_MERGE -> batches.run(x);
            case LIST_CONTEXTS, ADD_CONTEXT, SERVE_CONTEXT, DELETE_CONTEXT -> contextOps.run(x);
            case LIST_TYPES, RETRIEVE_TYPE, LIST_ATTRIBUTES, RETRIEVE_ATTRIBUTE -> discovery.run(x);
            case CREATE_SUBSCRIPTION -> subscriptionOps.create(x);
            case QUERY_SUBSCRIPTIONS -> subscriptionOps.list(x);
            case RETRIEVE_SUBSCRIPTION -> subscriptionOps.retrieve(x);
            case UPDATE_SUBSCRIPTION -> subscriptionOps.update(x);
            case DELETE_SUBSCRIPTION -> subscriptionOps.delete(x);
            case REMOTE_NOTIFY -> subscriptionOps.remoteNotify(x);
            case CREATE_CSR, QUERY_CSR, RETRIEVE_CSR, UPDATE_CSR, DELETE_CSR -> registration(x);
            case CREATE_TEMPORAL, APPEND_TEMPORAL, DELETE_TEMPORAL, DELETE_TEMPORAL_ATTRIBUTE, MODIFY_INSTANCE, DELETE_INSTANCE,
                    RETRIEVE_TEMPORAL, QUERY_TEMPORAL, QUERY_TEMPORAL_POST -> temporalOps.run(x);
            case CREATE_CSR_SUBSCRIPTION, QUERY_CSR_SUBSCRIPTIONS, RETRIEVE_CSR_SUBSCRIPTION, UPDATE_CSR_SUBSCRIPTION,
                    DELETE_CSR_SUBSCRIPTION -> csourceSubscription(x);
        }
    }

    private void csourceSubscription(Exchange x) {
        if (!registrationOps.served()) {
            throw new NgsiLdException(ErrorType.NOT_IMPLEMENTED, "this broker keeps no context source registrations");
        }
        switch (x.operation()) {
            case CREATE_CSR_SUBSCRIPTION -> csourceSubscriptionOps.create(x);
            case QUERY_CSR_SUBSCRIPTIONS -> csourceSubscriptionOps.list(x);
            case RETRIEVE_CSR_SUBSCRIPTION -> csourceSubscriptionOps.retrieve(x);
            case UPDATE_CSR_SUBSCRIPTION -> csourceSubscriptionOps.update(x);
            default -> csourceSubscriptionOps.delete(x);
        }
    }

    private void registration(Exchange x) {
        if (!registrationOps.served()) {
            throw new NgsiLdException(ErrorType.NOT_IMPLEMENTED, "this broker keeps no context source registrations");
        }
        switch (x.operation()) {
            case CREATE_CSR -> registrationOps.create(x);
            case QUERY_CSR -> registrationOps.list(x);
            case RETRIEVE_CSR -> registrationOps.retrieve(x);
            case UPDATE_CSR -> registrationOps.update(x);
            default -> registrationOps.delete(x);
        }
        if (x.forwards != null && x.request.status() < 300) {
            // a source that takes createSubscription, registered after the subscriptions it serves (§ 5.8.1.4)
            String location = x.request.responseHeaders().get("Location");
            subscriptionOps.registered(x, x.operation() == Operation.CREATE_CSR && location != null
                    ? location.substring(location.lastIndexOf('/') + 1) : x.route.entityId());
        }
    }

    // ---------------------------------------------------------------- preparing, on the loop

    /**
     * Reads a request without waiting and keeps what it learned in the request's state. Never
     * throws: an error found is kept for the handler to answer.
     */
    Exchange prepare(CorRest request) {
        Exchange x = new Exchange(request, config);
        request.state().userData(x);
        try {
            checks(x);
        } catch (NgsiLdException e) {
            x.failure = e;
        } catch (RuntimeException e) {
            x.failure = new NgsiLdException(ErrorType.INTERNAL_ERROR, e.toString());
        }
        return x;
    }

    /** The preconditions, in the order the specification's outcomes need them (§ 6.3.4, § 6.3.5, § 5.5.10). */
    private void checks(Exchange x) {
        CorRest r = x.request;
        Route.Match m = Route.match(r.method(), r.path());
        if (m.unsupported() != null) {
            throw new NgsiLdException(ErrorType.NOT_IMPLEMENTED, "the /" + m.unsupported()
                    + " resources are not served by this broker yet");
        }
        if (m.allow() != null) {
            x.allow = m.allow();
            return;
        }
        if (m.route() == null) {
            throw NgsiLdException.notFound("no resource at " + r.path());
        }
        x.route = m.route();
        Operation op = x.operation();
        tenant(x);
        authorize(x, op); // before anything else is read: a refused request learns nothing, not even whether the tenant exists
        if (x.hasBody()) {
            // A body without a length (chunked, or none at all): § 6.3.4 wants the length. Over
            // cor:// a body arrives framed and parsed, with neither field.
            if (!r.headers().contains("Content-Length")
                    && (r.headers().contains("Transfer-Encoding") || (r.body().length == 0 && r.json() == null))) {
                x.bareStatus = 411; // § 6.3.4: just the status, no body
                return;
            }
            String ct = r.headers().get("Content-Type");
            // over cor:// a JSON body may arrive already parsed, with no Content-Type to say so
            x.contentType = ct == null && r.isJson() ? MediaType.JSON : MediaType.ofContentType(ct);
            if (x.contentType == null || x.contentType == MediaType.GEO_JSON
                    || (x.contentType == MediaType.MERGE_PATCH && !readsMergePatch(r.method(), op))) {
                x.bareStatus = 415; // § 6.3.4: just the status, no body
                return;
            }
        }
        List<MediaType> offered = switch (op) {
            case RETRIEVE_ENTITY, QUERY_ENTITIES, QUERY_ENTITIES_POST -> MediaType.ENTITY_ANSWERS;
            default -> MediaType.JSON_OR_LD;
        };
        x.accept = MediaType.negotiate(r.headers().get("Accept"), offered);
        if (x.accept == null) {
            if (op.isRead() || op == Operation.QUERY_ENTITIES_POST) {
                throw new NgsiLdException(ErrorType.NOT_ACCEPTABLE, "the Accept header admits none of the available"
                        + " representations: " + names(offered));
            }
            x.accept = MediaType.JSON; // the answer of a write has no body to negotiate
        }
        x.params = QueryParams.parse(r.query(), op);
        if (op.isRead() || !createsTenant(op)) {
            if (!config.store().hasTenant(x.tenant) && config.subscriptions().count(x.tenant) == 0
                    && (config.temporal() == null || !config.temporal().hasTenant(x.tenant))
                    && !config.registrations().any(x.tenant) && csourceSubscriptions.count(x.tenant) == 0) {
                x.tenantUnknown = config.store().readsWait();
                throw new NgsiLdException(ErrorType.NONEXISTENT_TENANT, "tenant '" + x.tenant + "' does not exist");
            }
        }
        if (x.hasBody()) {
            x.body = x.parseBody();
        }
        x.contextRef = contextRef(x);
        if (distributedPlan != null) {
            x.forwards = distributedPlan.plan(x);
            if (x.forwards == null && (op == Operation.REMOTE_NOTIFY
                    || ((op == Operation.DELETE_SUBSCRIPTION || op == Operation.UPDATE_SUBSCRIPTION)
                            && subscriptionOps.hasRemoteCopies(x))
                    || ((op == Operation.CREATE_CSR || op == Operation.UPDATE_CSR) && config.subscriptions().count(x.tenant) > 0))) {
                x.forwards = List.of(); // it may forward: to the sources of a subscription's copies (§ 5.8.1.4, 5.8.5.4)
            }
        }
    }

    /**
     * Where {@code application/merge-patch+json} is read as {@code application/json}: every PATCH (§ 6.3.4),
     * and Append Attributes, which FIWARE's ngsijs (1.4.1) sends so and Stellio takes - an append is a
     * member-level merge of the entity, and the one thing a merge patch says otherwise, null removing a
     * member, is refused there anyway. A create, a replace (PUT) or a batch sent as a merge patch
     * contradicts itself: 415.
     */
    private static boolean readsMergePatch(String method, Operation op) {
        return method.equals("PATCH") || op == Operation.APPEND_ATTRIBUTES;
    }

    /** Operations that may create a tenant: they write new entities. */
    private static boolean createsTenant(Operation op) {
        return switch (op) {
            case CREATE_ENTITY, BATCH_CREATE, BATCH_UPSERT, CREATE_SUBSCRIPTION, CREATE_CSR, CREATE_CSR_SUBSCRIPTION,
                    CREATE_TEMPORAL -> true;
            case REMOTE_NOTIFY -> true; // a source's notification names the subscription; its tenant header is the source's business
            default -> false;
        };
    }

    /** The authorizer's decision (inline, on the loop): a refusal is a ProblemDetails, 401 with its challenge. */
    private void authorize(Exchange x, Operation op) {
        if (config.authorizer() == NgsildAuthorizer.ALLOW_ALL) {
            return;
        }
        NgsildAuthorizer.Decision d = config.authorizer().authorize(
                new NgsildAuthorizer.Request(x.headers(), x.tenant, op.metricName(), op.isRead()));
        switch (d) {
            case NgsildAuthorizer.Allow a -> { }
            case NgsildAuthorizer.Unauthorized u -> {
                x.request.responseHeaders().set("WWW-Authenticate", u.challenge());
                throw new NgsiLdException(ErrorType.UNAUTHORIZED, u.detail());
            }
            case NgsildAuthorizer.Forbidden f -> throw new NgsiLdException(ErrorType.FORBIDDEN, f.detail());
        }
    }

    private static void tenant(Exchange x) {
        String t = x.headers().get(Exchange.TENANT_HEADER);
        if (t == null || t.isEmpty()) {
            return;
        }
        x.tenantGiven = true;
        if (t.length() > 256 || !t.chars().allMatch(c -> c > 0x20 && c < 0x7F)) {
            throw NgsiLdException.badData("the NGSILD-Tenant header names no valid tenant: up to 256 visible ASCII characters");
        }
        x.tenant = t;
    }

    /** The context the request names (§ 6.3.5), or {@code null} for a batch in ld+json. */
    private static ContextRef contextRef(Exchange x) {
        if (!x.hasBody() || x.operation() == Operation.ADD_CONTEXT) {
            return x.linkContext();
        }
        boolean ld = x.contentType == MediaType.LD_JSON;
        ContextRef link = x.linkContext();
        if (ld && !link.isNone()) {
            throw NgsiLdException.badData("an application/ld+json request carries its @context in the body, not in a"
                    + " Link header");
        }
        JsonNode body = x.body;
        if (body.isArray()) {
            return ld ? null : link; // a batch: an entity that breaks the rules fails alone (207)
        }
        JsonNode ctx = body.isObject() ? body.get("@context") : null;
        if (!ld) {
            if (ctx != null) {
                throw NgsiLdException.badData("an application/json body may not carry @context (use a Link header, or"
                        + " send application/ld+json)");
            }
            return link;
        }
        if (ctx == null || ctx.isNull()) {
            throw NgsiLdException.badData("an application/ld+json body carries its @context, and this one has none");
        }
        return ContextRef.body(ctx);
    }

    private static String names(List<MediaType> types) {
        StringBuilder sb = new StringBuilder();
        for (MediaType t : types) {
            sb.append(sb.isEmpty() ? "" : ", ").append(t.mediaType());
        }
        return sb.toString();
    }
}
