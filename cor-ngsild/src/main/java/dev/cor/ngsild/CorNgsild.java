package dev.cor.ngsild;

import java.time.InstantSource;
import java.util.List;
import java.util.Objects;

import dev.cor.base.CorCoLoop;
import dev.cor.ngsild.federation.Forwarder;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.federation.Registrations;
import dev.cor.ngsild.http.NgsildApplication;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.metrics.NgsildMetrics;
import dev.cor.ngsild.policy.NgsildAuthorizer;
import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.ngsild.ld.ContextKeeper;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.MemoryEntityStore;
import dev.cor.ngsild.store.RegistrationKeeper;
import dev.cor.ngsild.store.SubscriptionKeeper;
import dev.cor.ngsild.subscription.Notifier;
import dev.cor.ngsild.subscription.Subscriptions;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestCoroutineHook;
import dev.cor.rest.CorRestFinishCoroutineHook;
import dev.cor.rest.OutboundPolicy;
import dev.cor.rest.client.CorRestClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * An embeddable NGSI-LD context broker (ETSI GS CIM 009): what a {@code CorHttpServer} (or a
 * {@code CorProtoServer}) serves under {@code /ngsi-ld/v1/}. It gives the server its
 * {@linkplain #application() application} - the "can this wait?" answer and the handler - and its
 * {@linkplain #coroutineHook() coroutine hooks}, so that a request that waits (an {@code @context}
 * not cached yet) runs as a coroutine of the loop that read it and every other request runs
 * inline on it.
 * <p>
 * A host application mounts it beside routes of its own by delegating the requests for which
 * {@link #handles} is true. Built once, shared by every loop; thread-safe.
 *
 * <pre>{@code
 * CorNgsild broker = CorNgsild.builder().build();
 * CorHttpServer server = CorHttpServer.builder().port(1026)
 *         .application(broker.application())
 *         .coroutineHook(broker.coroutineHook())
 *         .finishCoroutineHook(broker.finishCoroutineHook())
 *         .build().start();
 * }</pre>
 */
public final class CorNgsild implements AutoCloseable {
    /** Where the broker's resources live. */
    public static final String BASE_PATH = NgsildApplication.BASE_PATH;

    private final EntityStore store;
    private final LdContexts contexts;
    private final CorRestClient client;
    private final boolean ownsClient;
    private final NgsildMetrics metrics;
    private final NgsildApplication application;
    private final CorRestClient notificationClient;
    private final Notifier notifier;
    private final Subscriptions subscriptions;
    private final CorRestClient forwardClient;
    private final Forwarder forwarder;
    private final Registrations registrations;

    private CorNgsild(Builder b) {
        this.metrics = new NgsildMetrics(b.meterRegistry != null ? b.meterRegistry : new SimpleMeterRegistry());
        this.ownsClient = b.client == null;
        this.client = b.client != null ? b.client
                : CorRestClient.builder().sslContext(b.tls()).outboundPolicy(b.outboundPolicy)
                        .connectTimeoutMs(b.contextTimeoutMs).responseTimeoutMs(b.contextTimeoutMs).build();
        this.store = b.store != null ? b.store : new MemoryEntityStore();
        LdContexts.Builder cb = LdContexts.builder();
        b.contextSettings.accept(cb);
        cb.client(client).timeoutMs(b.contextTimeoutMs);
        if (store instanceof ContextKeeper keeper) {
            cb.keeper(keeper); // a store that keeps contexts too (the durable one) keeps the Hosted ones
        }
        this.contexts = cb.build();
        // notifications have a client of their own: a receiver that hangs holds its connections, not the contexts'
        this.notificationClient = CorRestClient.builder().sslContext(b.tls()).outboundPolicy(b.outboundPolicy)
                .connectTimeoutMs(b.notificationTimeoutMs).responseTimeoutMs(b.notificationTimeoutMs).build();
        this.notifier = new Notifier(notificationClient, contexts, b.clock, metrics, b.notificationTimeoutMs, b.tls(),
                b.outboundPolicy);
        this.subscriptions = new Subscriptions(b.clock, notifier, metrics, store, b.notificationQueue);
        this.registrations = new Registrations(b.clock);
        // forwards have a client of their own too: a source that hangs holds its connections, nobody else's
        this.forwardClient = CorRestClient.builder().sslContext(b.tls()).outboundPolicy(b.outboundPolicy)
                .connectTimeoutMs(b.forwardTimeoutMs).responseTimeoutMs(b.forwardTimeoutMs).build();
        this.forwarder = new Forwarder(forwardClient, b.brokerId != null ? b.brokerId
                : "cor-" + Long.toHexString(new java.security.SecureRandom().nextLong()), b.forwardTimeoutMs, b.clock);
        // each forward's outcome goes to the registration's status members (timesSent, lastFailure, ...)
        forwarder.listener(new Forwarder.FailureListener() {
            @Override
            public void success(Registration r, long nowMs) {
                registrations.reportSuccess(r.tenant(), r.id(), nowMs);
            }

            @Override
            public void failure(Registration r, long nowMs, String reason) {
                registrations.reportFailure(r.tenant(), r.id(), nowMs, reason);
            }
        });
        this.application = new NgsildApplication(new NgsildApplication.Config(store, contexts, b.clock, metrics,
                b.contextTimeoutMs, b.limits, subscriptions, registrations, b.authorizer),
                forwarder);
        // what subscriptions and registrations rely on stays served: not evicted, not deleted
        Subscriptions csourceSubscriptions = application.csourceSubscriptions();
        contexts.holders(each -> {
            subscriptions.forEachContext(each);
            csourceSubscriptions.forEachContext(each);
            registrations.forEachContext(each);
        });
        if (store instanceof SubscriptionKeeper keeper) {
            // after the contexts: a subscription's context may be a Hosted one the store kept
            application.restoreSubscriptions(subscriptions.keepWith(keeper, contexts));
        }
        if (store instanceof RegistrationKeeper keeper) {
            application.restoreRegistrations(keeper);
        }
        if (store instanceof SubscriptionKeeper keeper) {
            application.restoreCsourceSubscriptions(keeper.contextSources(), contexts);
        }
        contexts.bindTo(metrics.registry());
        if (store instanceof MeterBinder meters) {
            meters.bindTo(metrics.registry()); // a store with meters of its own (the durable one: its journal)
        }
        for (String tenant : store.tenants()) {
            metrics.tenant(store, tenant); // those a durable store recovered; the others as writes make them
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The application a server runs: every request under {@link #BASE_PATH}, and the
     * notifications its sources send for the copies of its subscriptions.
     */
    public CorRestApplication application() {
        return application;
    }

    /**
     * Whether {@code request} is the broker's: its path is under {@link #BASE_PATH}, or it is
     * where the broker's sources notify it of the copies of its subscriptions (§ 5.8.1.4). A host
     * that mounts the broker beside routes of its own gives it every request this is true of.
     */
    public boolean handles(CorRest request) {
        return NgsildApplication.owns(request.path());
    }

    /**
     * The broker's coroutine hook: a request that waits may be a coroutine of its loop when the
     * store does not block (the in-memory store never does).
     */
    public CorRestCoroutineHook coroutineHook() {
        boolean mayYield = !store.blocks();
        return request -> mayYield;
    }

    /** The same decision for the post-response phase. */
    public CorRestFinishCoroutineHook finishCoroutineHook() {
        boolean mayYield = !store.blocks();
        return request -> mayYield;
    }

    /**
     * The broker's meters: requests by operation and status, their latency, notifications and
     * entities, in the registry the builder was given (beside the context cache's and the store's).
     */
    public NgsildMetrics metrics() {
        return metrics;
    }

    /** The store the broker keeps its entities in. */
    public EntityStore store() {
        return store;
    }

    /** The broker's {@code @context} service. */
    public LdContexts contexts() {
        return contexts;
    }

    /**
     * The broker's context source registrations: the lookup the distributed operations ask, and
     * where they report each forward's outcome ({@link Registrations#reportSuccess}).
     */
    public Registrations registrations() {
        return registrations;
    }

    /** The broker's subscriptions (their status, for a host's own look). */
    public Subscriptions subscriptions() {
        return subscriptions;
    }

    /**
     * Gives the periodic subscriptions restored at start loops to tick on (a server calls it with
     * its loops once started; without it, the first request each loop serves takes them).
     */
    public void tickOn(List<CorCoLoop> loops) {
        subscriptions.tickOn(loops);
        application.csourceSubscriptions().tickOn(loops);
    }

    /** The client notifications go out through (its pool: one kept-alive connection per receiver and loop). */
    public CorRestClient notificationClient() {
        return notificationClient;
    }

    /** Sends the forwards of distributed operations (§ 4.3.6); names this broker in {@code Via} headers. */
    public Forwarder forwarder() {
        return forwarder;
    }

    /** Releases what the broker opened (its HTTP clients, unless given; its MQTT connections). Idempotent. */
    @Override
    public void close() {
        subscriptions.close();
        application.csourceSubscriptions().close();
        notifier.close();
        notificationClient.close();
        forwardClient.close();
        if (ownsClient) {
            client.close();
        }
    }

    /** Builds a broker; every setting has a default. */
    public static final class Builder {
        private EntityStore store;
        private CorRestClient client;
        private long contextTimeoutMs = 5_000;
        private InstantSource clock = InstantSource.system();
        private NgsildLimits limits = NgsildLimits.defaults();
        private long notificationTimeoutMs = 5_000;
        private int notificationQueue = 1024;
        private long forwardTimeoutMs = 5_000;
        private String brokerId;
        private javax.net.ssl.SSLContext sslContext;
        private OutboundPolicy outboundPolicy = OutboundPolicy.ALLOW_ALL;
        private java.util.function.Consumer<LdContexts.Builder> contextSettings = c -> { };
        private NgsildAuthorizer authorizer = NgsildAuthorizer.ALLOW_ALL;
        private MeterRegistry meterRegistry;

        private Builder() {
        }

        /**
         * The Micrometer registry the broker's meters go to - requests, their latency,
         * notifications, entities, the {@code @context} cache and the store's journal - so a host
         * application's monitoring has them beside its own (default: a registry of the broker's
         * own, read through {@link CorNgsild#metrics()}). The registry's naming convention names
         * them; under Prometheus', {@code doc/broker.md} lists each family.
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.meterRegistry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * The TLS the broker's own clients connect with - context downloads, notifications
         * ({@code https://} and {@code mqtts://}), forwards to context sources - (default: the
         * JDK's default context, its default trust store). Hostname verification is always on,
         * whatever the context. A client given with {@link #client} keeps its own.
         */
        public Builder sslContext(javax.net.ssl.SSLContext context) {
            this.sslContext = Objects.requireNonNull(context, "sslContext");
            return this;
        }

        /**
         * Which addresses the broker may connect to (default: all): asked by every client it
         * builds - context downloads and each redirect they follow, notifications (HTTP and MQTT),
         * forwards and notifications to context sources - with the address a URL's host resolved
         * to, before connecting. A refused connection is a failure like a refused connect, whose
         * reason is {@link OutboundPolicy#REFUSAL}. A client given with {@link #client} keeps its own.
         */
        public Builder outboundPolicy(OutboundPolicy policy) {
            this.outboundPolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        private javax.net.ssl.SSLContext tls() {
            if (sslContext != null) {
                return sslContext;
            }
            try {
                return javax.net.ssl.SSLContext.getDefault();
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException("this JVM has no default TLS", e);
            }
        }

        /**
         * How long a forward to a context source may take (connect and answer) when its
         * registration names no {@code management.timeout} (default 5 000 ms): past it, the
         * source failed and the answer says so (§ 6.3.17).
         */
        public Builder forwardTimeoutMs(long ms) {
            if (ms < 1) {
                throw new IllegalArgumentException("forwardTimeoutMs must be >= 1: " + ms);
            }
            this.forwardTimeoutMs = ms;
            return this;
        }

        /**
         * This broker's name in the {@code Via} header of its forwards, by which it knows a
         * request that went round a loop of brokers (§ 4.3.6.4); default: a random one per start.
         * Visible ASCII, no spaces, commas or quotes.
         */
        public Builder brokerId(String id) {
            this.brokerId = Objects.requireNonNull(id, "id");
            return this;
        }


        /**
         * Where entities are kept; default: a new in-memory store. A store that is also a
         * {@link ContextKeeper} keeps the Hosted {@code @context}s as well. The broker does not
         * close it: its owner does, after the server has stopped.
         */
        public Builder store(EntityStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /**
         * The client remote {@code @context}s are downloaded with; default: a client of the
         * broker's own, closed with it.
         */
        public Builder client(CorRestClient client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /** How long a remote {@code @context} may take to download (default 5 000 ms). */
        public Builder contextTimeoutMs(long ms) {
            if (ms < 1) {
                throw new IllegalArgumentException("contextTimeoutMs must be >= 1: " + ms);
            }
            this.contextTimeoutMs = ms;
            return this;
        }

        /**
         * How long a notification may take to connect and be answered (HTTP), or to be
         * published (MQTT), default 5 000 ms: past it, it failed.
         */
        public Builder notificationTimeoutMs(long ms) {
            if (ms < 1) {
                throw new IllegalArgumentException("notificationTimeoutMs must be >= 1: " + ms);
            }
            this.notificationTimeoutMs = ms;
            return this;
        }

        /**
         * How many notifications may wait per subscription (default 1024) while its receiver is
         * slow: what comes beyond is counted as overflowed and failed, not sent.
         */
        public Builder notificationQueue(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("notificationQueue must be >= 1: " + n);
            }
            this.notificationQueue = n;
            return this;
        }

        /** The clock of createdAt/modifiedAt, throttling and expiry (a test sets its own). */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The {@code @context} service's settings beyond its client and timeout: the bounds of its
         * caches in bytes, and of the inline contexts a request may write ({@link LdContexts.Builder}).
         */
        public Builder contextSettings(java.util.function.Consumer<LdContexts.Builder> settings) {
            this.contextSettings = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /** Bounds on what one request may carry. */
        public Builder limits(NgsildLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /**
         * Who may do what: asked inline on the loop for every request under {@link #BASE_PATH}
         * (see {@link NgsildAuthorizer} for its threading contract); default: everything allowed.
         */
        public Builder authorizer(NgsildAuthorizer authorizer) {
            this.authorizer = Objects.requireNonNull(authorizer, "authorizer");
            return this;
        }

        public CorNgsild build() {
            return new CorNgsild(this);
        }
    }
}
