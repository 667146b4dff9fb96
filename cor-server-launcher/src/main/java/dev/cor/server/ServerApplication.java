package dev.cor.server;

import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.policy.NgsildAuthorizer;
import dev.cor.ngsild.store.durable.DurableEntityStore;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestException;
import dev.cor.rest.CorRestJson;

/**
 * What the launcher's server runs: the operator's routes - {@code GET /version}, {@code /health}
 * (and {@code /health/live}, {@code /health/ready}: {@link Health}), {@code /metrics} - answered
 * inline on the loop (none of them can wait), and every other request handed to the broker's
 * application, its "can this wait?" answers included, so the broker's dispatch is exactly what it
 * would be mounted alone. The probes and {@code /version} are open whatever the authentication
 * (a load balancer probes without credentials); {@code /metrics}, whose labels name the tenants,
 * needs a credential that grants every tenant when the broker asks for credentials. Shared by every
 * loop and worker.
 */
final class ServerApplication implements CorRestApplication {
    static final String VERSION = "/version";
    static final String METRICS = "/metrics";

    private final CorRestApplication broker;
    private final ServerMetrics metrics;
    /** The answer of /version: it does not change while the process lives. */
    private final byte[] version;
    /** Who may read /metrics: a credential that grants every tenant. */
    private final NgsildAuthorizer authorizer;
    private final Health health;

    ServerApplication(CorRestApplication broker, ServerMetrics metrics, BuildInfo build, ServerOptions options,
            DurableEntityStore store, NgsildAuthorizer authorizer, dev.cor.ngsild.store.EntityStore entities) {
        this.broker = broker;
        this.authorizer = authorizer;
        this.metrics = metrics;
        this.version = versionJson(build, options);
        this.health = new Health(store, entities);
    }

    /** The probes' state: set by the thread that starts and stops the server. */
    Health health() {
        return health;
    }

    @Override
    public boolean canWait(CorRest request) {
        return !own(request) && broker.canWait(request);
    }

    @Override
    public boolean finishCanWait(CorRest request) {
        return !own(request) && broker.finishCanWait(request);
    }

    @Override
    public void handle(CorRest request) throws Exception {
        String path = request.path();
        if (!own(request)) {
            broker.handle(request);
            return;
        }
        if (!request.method().equals("GET") && !request.method().equals("HEAD")) {
            request.fail(new CorRestException(405, "Method Not Allowed", path + " is read with GET"));
            request.responseHeaders().set("Allow", "GET, HEAD");
            return;
        }
        if (path.equals(VERSION)) {
            request.respond(200, "application/json", version);
        } else if (path.equals(METRICS)) {
            if (allowedMetrics(request)) {
                request.respond(200, ServerMetrics.CONTENT_TYPE, metrics.render().getBytes(StandardCharsets.UTF_8));
            }
        } else {
            health.answer(request);
        }
    }

    /** Whether the authorizer lets {@code request} read /metrics (as a read of every tenant); if not, answers the refusal. */
    private boolean allowedMetrics(CorRest request) {
        if (authorizer == NgsildAuthorizer.ALLOW_ALL) {
            return true;
        }
        NgsildAuthorizer.Decision d = authorizer.authorize(
                new NgsildAuthorizer.Request(request.headers(), Grant.ANY, "metrics", true));
        ErrorType refusal;
        String detail;
        switch (d) {
            case NgsildAuthorizer.Allow a -> {
                return true;
            }
            case NgsildAuthorizer.Unauthorized u -> {
                request.responseHeaders().set("WWW-Authenticate", u.challenge());
                refusal = ErrorType.UNAUTHORIZED;
                detail = u.detail();
            }
            case NgsildAuthorizer.Forbidden f -> {
                refusal = ErrorType.FORBIDDEN;
                detail = "/metrics is read with a credential that grants every tenant (*)";
            }
        }
        ObjectNode p = CorRestJson.mapper().createObjectNode();
        p.put("type", refusal.uri());
        p.put("title", refusal.title());
        p.put("status", refusal.status());
        p.put("detail", detail);
        request.respondJson(refusal.status(), p);
        return false;
    }

    private static boolean own(CorRest request) {
        String p = request.path();
        return p.equals(VERSION) || p.equals(METRICS) || Health.owns(p);
    }

    private static byte[] versionJson(BuildInfo build, ServerOptions o) {
        ObjectNode v = CorRestJson.mapper().createObjectNode();
        v.put("name", build.name());
        v.put("version", build.version());
        v.put("build", build.build());
        v.put("buildTime", build.time());
        v.put("jdk", Runtime.version().toString());
        v.put("jdkVendor", System.getProperty("java.vendor"));
        ObjectNode f = v.putObject("flags");
        f.put("host", o.host());
        f.put("port", o.port());
        if (o.corPort() >= 0) {
            f.put("corPort", o.corPort());
        } else {
            f.putNull("corPort");
        }
        f.put("httpLoops", o.httpLoops());
        f.put("coroutines", o.coroutines());
        f.put("workers", o.workers());
        if (o.coStackBytes() > 0) {
            f.put("coStack", o.coStackBytes());
        } else {
            f.putNull("coStack");
        }
        f.put("contextTimeout", o.contextTimeout());
        f.put("notificationTimeout", o.notificationTimeout());
        f.put("notificationQueue", o.notificationQueue());
        f.put("forwardTimeout", o.forwardTimeout());
        f.put("maxBody", o.maxBodyBytes());
        f.put("logLevel", o.logLevel());
        f.put("store", o.store());
        f.put("https", o.tls() != null);
        if (o.corsOrigin() != null) {
            f.put("corsOrigin", o.corsOrigin());
        } else {
            f.putNull("corsOrigin");
        }
        if (o.postgres()) {
            f.put("db", o.db().uri());
            f.put("dbPoolPerLoop", o.db().poolPerLoop());
        }
        if (o.durable()) {
            f.put("dataDir", java.nio.file.Path.of(o.dataDir()).toAbsolutePath().normalize().toString());
            f.put("fsync", o.fsync().toString());
            f.put("snapshotEvery", o.snapshotEvery());
        }
        try {
            return CorRestJson.mapper().writeValueAsBytes(v);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
