package dev.cor.server;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;

import dev.cor.http.CorHttpServer;
import dev.cor.ngsild.CorNgsild;
import dev.cor.ngsild.policy.NgsildAuthorizer;
import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.MemoryEntityStore;
import dev.cor.ngsild.store.TemporalRetention;
import dev.cor.ngsild.store.ValueIndexSettings;
import dev.cor.ngsild.store.durable.DataFiles;
import dev.cor.ngsild.store.durable.DurableEntityStore;
import dev.cor.ngsild.store.postgres.PostgresEntityStore;
import dev.cor.rest.proto.CorProtoServer;

/**
 * A running launcher: the store (durable in {@code --dataDir} unless {@code --store memory}), the
 * broker, the HTTP server it is mounted on (with the launcher's own routes around it) and, with
 * {@code --corPort}, a {@code cor://} server on the same loops and dispatcher (asking
 * {@code --corSecret}'s secret at HELLO; with {@code --https} it serves {@code cors://}, TLS with
 * the same key and certificate as the HTTP port). Started by
 * {@link #start}, stopped once by {@link #stop} from any thread.
 */
final class CorServer {
    private final DurableEntityStore durable;
    private final PostgresEntityStore postgres;
    private final CorNgsild broker;
    private final ServerApplication application;
    private final CorHttpServer http;
    private final CorProtoServer cor;
    private final AccessLog accessLog;
    private boolean stopped;

    private CorServer(DurableEntityStore durable, PostgresEntityStore postgres, CorNgsild broker, ServerApplication application,
            CorHttpServer http, CorProtoServer cor, AccessLog accessLog) {
        this.accessLog = accessLog;
        this.durable = durable;
        this.postgres = postgres;
        this.broker = broker;
        this.application = application;
        this.http = http;
        this.cor = cor;
    }

    /**
     * Builds the broker and starts its servers.
     *
     * @throws IllegalStateException when the data directory cannot be used (in use, damaged -
     *                               {@link dev.cor.ngsild.store.durable.DataDamagedException}) or
     *                               a port cannot be bound (nothing is left running)
     */
    static CorServer start(ServerOptions o, BuildInfo build) {
        return start(o, build, DataFiles.system(), s -> { });
    }

    /** {@link #start(ServerOptions, BuildInfo)} with the durable store on {@code files} (a test's failing disk). */
    static CorServer start(ServerOptions o, BuildInfo build, DataFiles files) {
        return start(o, build, files, s -> { });
    }

    /**
     * {@link #start(ServerOptions, BuildInfo)}, with {@code announce} run once the ports are bound
     * and before the server is ready: what it prints (the start line) comes before any access line,
     * since the access log's writer starts after it - lines of probes answered 503 meanwhile wait in
     * the loops' rings.
     */
    static CorServer start(ServerOptions o, BuildInfo build, DataFiles files, Consumer<CorServer> announce) {
        // the files the auth flags name are read before anything opens: a bad one leaves nothing running
        NgsildAuthorizer authorizer = o.auth().authorizer();
        String corSecret = o.auth().corSecretValue();
        AccessLog accessLog = o.logs().accessLog() == null ? null
                : new AccessLog(o.logs().accessLog(), o.httpLoops(), o.logs().json());
        Consumer<CorNgsild.Builder> outbound = o.outbound().settings(); // reads --trustStore
        ValueIndexSettings valueIndexes = o.indexes().settings();
        DurableEntityStore durable = o.durable()
                ? DurableEntityStore.builder(Path.of(o.dataDir())).files(files).fsync(o.fsync())
                        .snapshotBytes(o.snapshotEvery()).temporalRetention(o.temporal().retention(Long.MAX_VALUE))
                        .valueIndexes(valueIndexes).open()
                : null;
        PostgresEntityStore postgres = o.postgres() ? o.db().open(o.temporal()) : null;
        EntityStore store = durable != null ? durable : postgres != null ? postgres
                : new MemoryEntityStore(o.temporal().retention(TemporalRetention.MEMORY_DEFAULT_BYTES), valueIndexes);
        ServerMetrics metrics = new ServerMetrics(build);
        CorNgsild.Builder nb = CorNgsild.builder().store(store).meterRegistry(metrics.registry()).contextTimeoutMs(o.contextTimeout())
                .notificationTimeoutMs(o.notificationTimeout()).notificationQueue(o.notificationQueue())
                .forwardTimeoutMs(o.forwardTimeout()).authorizer(authorizer).history(o.temporal().on())
                .limits(NgsildLimits.defaults().withTemporalInstances(o.temporal().page()));
        if (o.brokerId() != null) {
            nb.brokerId(o.brokerId());
        }
        outbound.accept(nb);
        CorNgsild broker;
        try {
            broker = nb.build();
        } catch (RuntimeException e) {
            closeStore(durable, postgres);
            throw e;
        }
        ServerApplication app = new ServerApplication(broker.application(), metrics, build, o, durable, authorizer, store);
        // One context, read once, for the broker's port and the cor:// port alike.
        javax.net.ssl.SSLContext serverTls = o.tls() != null ? o.tls().sslContext() : null;
        CorHttpServer http;
        try {
            // The broker mounted as a host that serves it alone would mount it - its hooks, its periodic
            // subscriptions ticking on the loops, closed when the server stops - its application wrapped
            // in the launcher's (health, metrics, CORS).
            CorHttpServer.Builder hb = CorHttpServer.builder().host(o.host()).port(o.port()).loops(o.httpLoops())
                    .coroutineCap(o.coroutines()).stackSize(o.coStackBytes()).workerThreads(o.workers())
                    .maxBodyBytes(o.maxBodyBytes()).service(broker)
                    .application(o.corsOrigin() == null ? app : new CorsApplication(app, o.corsOrigin()))
                    .accessLog(accessLog);
            if (serverTls != null) {
                hb.tls(serverTls);
            }
            http = hb.build().start();
        } catch (RuntimeException e) {
            broker.close();
            closeStore(durable, postgres);
            closeQuietly(accessLog);
            throw new IllegalStateException("cannot serve " + (o.tls() != null ? "HTTPS" : "HTTP") + " on " + o.host() + ":" + o.port() + ": " + reason(e), e);
        }
        CorProtoServer cor = null;
        if (o.corPort() >= 0) {
            try {
                // Same loops, same dispatch decision: a cor:// request waits exactly as an HTTP one does.
                cor = CorProtoServer.builder().host(o.host()).port(o.corPort()).name("cor-server").token(corSecret)
                        .tls(serverTls).loops(http.loops()).dispatcher(http.dispatcher()).build().start();
            } catch (IOException | RuntimeException e) {
                http.stop();
                broker.close();
                closeStore(durable, postgres);
                closeQuietly(accessLog);
                throw new IllegalStateException("cannot serve " + (serverTls != null ? "cors://" : "cor://") + " on " + o.host() + ":" + o.corPort() + ": "
                        + reason(e), e);
            }
        }
        CorServer server = new CorServer(durable, postgres, broker, app, http, cor, accessLog);
        announce.accept(server);
        if (accessLog != null) {
            accessLog.start();
        }
        metrics.attach(http, cor, accessLog);
        app.health().serving(http.loops()); // ready: everything above is up
        return server;
    }

    private static void closeQuietly(AccessLog log) {
        if (log != null) {
            log.close();
        }
    }

    private static void closeStore(DurableEntityStore durable, PostgresEntityStore postgres) {
        if (durable != null) {
            durable.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    /** The PostgreSQL store, or {@code null} unless {@code --store postgres}. */
    PostgresEntityStore postgresStore() {
        return postgres;
    }

    /** The durable store, or {@code null} with {@code --store memory}. */
    DurableEntityStore durableStore() {
        return durable;
    }

    /** The bound HTTP port. */
    int port() {
        return http.port();
    }

    /** The bound {@code cor://} port, or -1 when none is served. */
    int corPort() {
        return cor == null ? -1 : cor.port();
    }

    CorHttpServer http() {
        return http;
    }

    CorNgsild broker() {
        return broker;
    }

    /** From now on {@code /health/ready} answers 503 (the drain); the servers still serve. */
    void markStopping() {
        application.health().stopping();
    }

    /**
     * Stops: {@code /health/ready} turns 503, the {@code cor://} server closes, the HTTP server lets the
     * requests in flight finish within its grace (5 s), then the broker lets go of what it holds
     * and the durable store writes what is left and takes its last snapshot.
     * Any thread; a second call waits until the first has finished (a shutdown hook must not
     * let the JVM end while the stop on the main thread still answers requests), then does nothing.
     */
    synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        application.health().stopping();
        if (cor != null) {
            cor.stop();
        }
        http.stop();
        closeQuietly(accessLog); // after the HTTP server: its last answers are logged too
        broker.close();
        closeStore(durable, postgres);
    }

    private static String reason(Exception e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String m = e.getMessage();
        return t == e || t.getMessage() == null ? String.valueOf(m) : m + " (" + t.getMessage() + ")";
    }
}
