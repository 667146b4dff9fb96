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
import dev.cor.ngsild.policy.ContextLimits;
import dev.cor.ngsild.policy.NgsildAuthorizer;
import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.MemoryEntityStore;
import dev.cor.ngsild.subscription.Notifier;
import dev.cor.ngsild.subscription.Subscriptions;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestCoroutineHook;
import dev.cor.rest.CorRestFinishCoroutineHook;
import dev.cor.rest.CorRestService;
import dev.cor.rest.OutboundPolicy;
import dev.cor.rest.client.CorRestClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * An embeddable NGSI-LD context broker (ETSI GS CIM 009): what a {@code CorHttpServer} (or a
 * {@code CorProtoServer} beside it) serves under {@code /ngsi-ld/v1/}. It is a
 * {@link CorRestService}: one call mounts it on a server - its {@linkplain #application()
 * application} (the "can this wait?" answer and the handler), its {@linkplain #coroutineHook()
 * coroutine hooks} (a request that waits - an {@code @context} not cached yet, a forward, a
 * durable write - runs as a coroutine of the loop that read it, every other request inline on
 * it), and its lifecycle (its periodic subscriptions tick on the server's loops once they run;
 * it closes when the server has stopped).
 * <p>
 * A host application that serves routes of its own delegates to {@link #application()} the
 * requests for which {@link #handles} is true, and calls {@link #started} and {@link #close}
 * itself. Built once, shared by every loop; thread-safe.
 *
 * <pre>{@code
 * CorNgsild broker = CorNgsild.builder().store(DurableEntityStore.builder(dir).open()).build();
 * CorHttpServer server = CorHttpServer.builder().port(1026).service(broker).build().start();
 * ...
 * server.stop(); // stops the broker too; its owner closes the store afterwards
 * }</pre>
 */
public final class CorNgsild implements CorRestService, AutoCloseable {
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
    private final NgsildStatus status;
    /** Applies the history's retention, or {@code null}: no history is kept. */
    private final HistoryExpiry historyExpiry;
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    private CorNgsild(Builder b) {
        this.metrics = new NgsildMetrics(b.meterRegistry != null ? b.meterRegistry : new SimpleMeterRegistry());
        this.ownsClient = b.client == null;
        this.client = b.client != null ? b.client
                : CorRestClient.builder().sslContext(b.tls()).outboundPolicy(b.outboundPolicy)
                        .connectTimeoutMs(b.contextTimeoutMs).responseTimeoutMs(b.contextTimeoutMs).build();
        this.store = b.store != null ? b.store : new MemoryEntityStore();
        LdContexts.Builder cb = LdContexts.builder().limits(b.contextLimits).client(client).timeoutMs(b.contextTimeoutMs);
        store.contextKeeper().ifPresent(cb::keeper); // a store that keeps contexts too (the durable one) keeps the Hosted ones
        this.contexts = cb.build();
        // notifications have a client of their own: a receiver that hangs holds its connections, not the contexts'
        this.notificationClient = CorRestClient.builder().sslContext(b.tls()).outboundPolicy(b.outboundPolicy)
                .connectTimeoutMs(b.notificationTimeoutMs).responseTimeoutMs(b.notificationTimeoutMs).build();
        this.notifier = new Notifier(notificationClient, store, contexts, b.clock, metrics, b.notificationTimeoutMs, b.tls(),
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
                b.contextTimeoutMs, b.limits, subscriptions, registrations, b.authorizer,
                b.history ? store.temporal().orElse(null) : null),
                forwarder);
        // what subscriptions and registrations rely on stays served: not evicted, not deleted
        Subscriptions csourceSubscriptions = application.csourceSubscriptions();
        contexts.holders(each -> {
            subscriptions.forEachContext(each);
            csourceSubscriptions.forEachContext(each);
            registrations.forEachContext(each);
        });
        // after the contexts: a subscription's context may be a Hosted one the store kept
        store.subscriptionKeeper().ifPresent(k -> application.restoreSubscriptions(subscriptions.keepWith(k, contexts)));
        store.registrationKeeper().ifPresent(application::restoreRegistrations);
        store.subscriptionKeeper().ifPresent(k -> application.restoreCsourceSubscriptions(k.contextSources(), contexts));
        application.followKeepers(store.subscriptionKeeper().orElse(null), store.registrationKeeper().orElse(null));
        contexts.bindTo(metrics.registry());
        store.meters().ifPresent(m -> m.bindTo(metrics.registry())); // the durable store's journal
        this.status = new NgsildStatus(store, subscriptions, application.csourceSubscriptions(), registrations);
        this.historyExpiry = b.history && store.temporal().isPresent() ? new HistoryExpiry(store.temporal().get(), b.clock) : null;
        for (String tenant : store.tenants()) {
            metrics.tenant(store, tenant); // those a durable store recovered; the others as writes make them
        }
    }

    /**
     * The expanded name of an attribute as a request without {@code @context} names it: a term
     * expanded with the core context ({@code status} is {@code https://uri.etsi.org/ngsi-ld/status},
     * {@code speed} is in the default context), an IRI as it is; {@code null} for a term that
     * stands for nothing. For settings that name attributes ({@code ValueIndexSettings}).
     */
    public static String expandName(String term) {
        return CoreNames.CORE.expand(term);
    }

    /** The core context, processed once when first asked. */
    private static final class CoreNames {
        static final dev.cor.ngsild.ld.LdContext CORE = LdContexts.builder().build().core();
    }

    /** A builder of a broker: every setting has a default (an in-memory store, no authorization, 5 s deadlines). */
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

    /** The store the broker keeps its entities in (for a host's own reads; writes go through the API). */
    public EntityStore store() {
        return store;
    }

    /** The {@code @context} service (for the tests of this package's TestBroker: not API). */
    LdContexts contexts() {
        return contexts;
    }

    /** The subscriptions, live (for the tests, through TestBroker: not API). */
    Subscriptions subscriptions() {
        return subscriptions;
    }

    /** The context source registrations, live (for the tests, through TestBroker: not API). */
    Registrations registrations() {
        return registrations;
    }

    /**
     * A read-only view of what the broker holds - tenants, entities, subscriptions and
     * registrations - for a host's own pages and probes. Any thread; each figure is read when
     * asked.
     */
    public NgsildStatus status() {
        return status;
    }

    /**
     * Gives the periodic subscriptions - those restored at start among them - the server's loops
     * to tick on. A server given the broker as its service calls it once its loops run; a host
     * that delegates to the broker calls it so (without it, the first request each loop serves
     * takes them).
     */
    @Override
    public void started(List<CorCoLoop> loops) {
        subscriptions.tickOn(loops);
        application.csourceSubscriptions().tickOn(loops);
    }

    /** The server that served the broker as its service has stopped: the broker {@linkplain #close() closes}. */
    @Override
    public void stopped() {
        close();
    }

    /**
     * Releases what the broker opened: its subscriptions stop, its MQTT connections and HTTP
     * clients (the context client too, unless it was given) close. Each is closed even when
     * closing another failed; the first failure is thrown then, with the others suppressed in it.
     * Not the store: its owner closes it, after the server has stopped. Idempotent; any thread.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException failed = null;
        failed = closing(failed, subscriptions::close);
        failed = closing(failed, application.csourceSubscriptions()::close);
        failed = closing(failed, notifier::close);
        failed = closing(failed, notificationClient::close);
        failed = closing(failed, forwardClient::close);
        if (historyExpiry != null) {
            failed = closing(failed, historyExpiry::close);
        }
        if (ownsClient) {
            failed = closing(failed, client::close);
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** Runs {@code close}; its failure becomes the one to throw, or is suppressed in the one already there. */
    static RuntimeException closing(RuntimeException failed, Runnable close) {
        try {
            close.run();
        } catch (RuntimeException e) {
            if (failed == null) {
                return e;
            }
            failed.addSuppressed(e);
        }
        return failed;
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
        private ContextLimits contextLimits = ContextLimits.defaults();
        private NgsildAuthorizer authorizer = NgsildAuthorizer.ALLOW_ALL;
        private MeterRegistry meterRegistry;
        private boolean history = true;

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
         * Where entities are kept; default: a new in-memory store. A store that keeps
         * subscriptions, registrations and Hosted {@code @context}s too (the durable one: see
         * {@link EntityStore#subscriptionKeeper()}) keeps them across restarts. The broker does
         * not close it: its owner does, after the server has stopped.
         */
        public Builder store(EntityStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /**
         * Whether every write's history is recorded, in the store's temporal side
         * ({@link EntityStore#temporal()}), and the temporal API served; default: yes, when the
         * store keeps history. Off: no history, and the temporal API answers 501.
         */
        public Builder history(boolean on) {
            this.history = on;
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
         * The bounds of the {@code @context} service: its caches in bytes and entries, the TTLs of
         * what it downloads, the inline contexts a request may write (default:
         * {@link ContextLimits#defaults()}).
         */
        public Builder contextLimits(ContextLimits limits) {
            this.contextLimits = Objects.requireNonNull(limits, "limits");
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

        /**
         * The broker: its subscriptions, registrations and Hosted contexts kept by the store from
         * before are in force again (one that no longer builds is left out with a warning).
         */
        public CorNgsild build() {
            return new CorNgsild(this);
        }
    }
}
