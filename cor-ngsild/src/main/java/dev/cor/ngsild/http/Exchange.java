package dev.cor.ngsild.http;

import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.ContextRef;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.store.EntityChange;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.EntityWrite;
import dev.cor.ngsild.store.WriteHistory;
import dev.cor.ngsild.store.WriteObserver;
import dev.cor.ngsild.subscription.Subscriptions;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestException;
import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.CorRestJson;

/**
 * One request on its way through the broker: what {@link NgsildApplication} learned of it before
 * the dispatch (its route, preconditions, tenant, parameters, body and the context it names) and
 * what the operation resolves later (the context). Created on the loop by "can this wait?",
 * kept in the request's {@code CorRestState} so that the handler - inline, in a coroutine or on a
 * worker - does not read the request twice - and the way every handler writes an entity and
 * answers, so that no handler needs the application back. Touched by one thread at a time, like
 * its request.
 */
final class Exchange {
    static final String TENANT_HEADER = "NGSILD-Tenant";

    final CorRest request;
    /** What the application works with: the store, the contexts, the subscriptions, the limits. */
    final Config config;
    /** When the broker was first asked about the request (its dispatch): its latency counts from here. */
    final long startNanos = System.nanoTime();
    Route route;
    /** The error found while preparing, answered by the handler. */
    NgsiLdException failure;
    /**
     * The failure is that the tenant is unknown here, and the store may know better than its memory
     * (another broker over the same database made it a moment ago): asked in the request's coroutine.
     */
    boolean tenantUnknown;
    /** 411 or 415: answered with no body (§ 6.3.4). */
    int bareStatus;
    /** Allowed methods for a 405. */
    String allow;
    String tenant = EntityStore.DEFAULT_TENANT;
    boolean tenantGiven;
    QueryParams params;
    MediaType contentType;
    MediaType accept;
    JsonNode body;
    /** The context the request names ({@code null} for a batch in ld+json: each entity names its own). */
    ContextRef contextRef;
    LdContext context;
    /** The registrations the request may be forwarded to (§ 4.3.6), or {@code null}: answered here alone. */
    java.util.List<dev.cor.ngsild.federation.Registration> forwards;
    /**
     * A write of attributes that went to sources gathers its parts here - theirs first, then this
     * broker's - and is answered from it ({@code null}: the write is this broker's alone).
     */
    UpdateResult updateResult;

    Exchange(CorRest request, Config config) {
        this.request = request;
        this.config = config;
    }

    String method() {
        return request.method();
    }

    CorRestHeaders headers() {
        return request.headers();
    }

    boolean hasBody() {
        String m = request.method();
        return m.equals("POST") || m.equals("PATCH") || m.equals("PUT");
    }

    Operation operation() {
        return route == null ? null : route.operation();
    }

    /** The request body parsed as JSON once (or as it arrived parsed over cor://). */
    JsonNode parseBody() {
        try {
            JsonNode n = request.json();
            if (n == null) {
                if (request.body().length == 0) {
                    throw NgsiLdException.invalid("the request has no body");
                }
                n = dev.cor.rest.CorRestJson.mapper().readTree(request.body());
            }
            return n;
        } catch (CorRestException e) {
            throw NgsiLdException.invalid("the body is not valid JSON: " + e.detail());
        } catch (java.io.IOException e) {
            throw NgsiLdException.invalid("the body is not valid JSON: " + firstLine(e.getMessage()));
        }
    }

    /** The context named by the request's {@code Link} header(s). */
    ContextRef linkContext() {
        if (request.headers().get("Link") == null) {
            return ContextRef.none(); // the common case: no list to build
        }
        return ContextRef.fromLinkHeaders(request.headers().getAll("Link"));
    }

    /** {@code http://host} of this broker as the client reached it, for URLs in answers. */
    String baseUrl() {
        String host = request.headers().get("Host");
        return "http://" + (host != null ? host : "localhost");
    }

    // ---------------------------------------------------------------- writing, as every handler writes

    /**
     * Every write of an entity goes through here: the store's atomic write, inside whose critical
     * section the subscriptions it triggers queue their notices (so that they are in the order of
     * the entity's writes, whichever loop made them); the request's post-response phase sends them.
     */
    EntityWrite write(String id, EntityChange change) {
        Subscriptions.Triggered triggered = config.subscriptions().onWrite(tenant);
        WriteObserver observer = triggered;
        if (config.temporal() != null) {
            WriteHistory history = new WriteHistory(config.temporal(), tenant);
            observer = (before, after) -> {
                history.applied(before, after); // the history first: a notice may be read as "it is recorded"
                triggered.applied(before, after);
            };
        }
        EntityWrite w = config.store().write(tenant, id, change, observer);
        triggered.sendAfter(request);
        return w;
    }

    // ---------------------------------------------------------------- answers

    /**
     * A successful answer with a body of {@code type}: an {@code application/json} one (and a
     * GeoJSON one under {@code Prefer: body=json}) carries the context's {@code Link} header
     * (§ 6.3.6); the caller has put {@code @context} in the body of the others.
     */
    void answer(int status, MediaType type, byte[] body, LdContext ctx) {
        CorRest r = request;
        r.respond(status, type.mediaType(), body);
        if (type == MediaType.JSON || (type == MediaType.GEO_JSON && preferBodyJson())) {
            r.responseHeaders().set("Link", "<" + config.contexts().linkUrlFor(ctx, baseUrl(), tenantGiven ? tenant : null) + ">; rel=\""
                    + ContextRef.LINK_REL + "\"; type=\"application/ld+json\"");
        }
        echoTenant();
    }

    /** Whether a GeoJSON answer leaves @context out of its body ({@code Prefer: body=json}, § 6.3.6). */
    boolean preferBodyJson() {
        String prefer = headers().get("Prefer");
        return prefer != null && prefer.replace(" ", "").contains("body=json");
    }

    /** An answer in {@code application/json} without a context: 201's ids, 207's results. */
    void answerPlain(int status, JsonNode body) {
        request.respond(status, MediaType.JSON.mediaType(), json(body));
        echoTenant();
    }

    /** {@code n} as the bytes of an answer's body (a tree the broker built: it always writes). */
    static byte[] json(JsonNode n) {
        try {
            return CorRestJson.mapper().writeValueAsBytes(n);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    void noContent() {
        request.respond(204, null, null);
        echoTenant();
    }

    /** 201 with the Location of {@code id} in {@code collection} (its id percent-encoded: a path segment, whatever the id holds). */
    void created(String collection, String id) {
        request.respond(201, null, null);
        request.responseHeaders().set("Location", NgsildApplication.BASE_PATH + collection + "/" + PercentEncoding.encode(id));
        echoTenant();
    }

    void bare(int status) {
        request.respond(status, null, null);
        echoTenant();
    }

    /** An error: {@code application/json}, a ProblemDetails, no {@code Link} (§ 6.3.3, § 6.3.6). */
    void error(NgsiLdException e) {
        request.responseHeaders().remove("Link");
        request.responseHeaders().remove("Location");
        answerPlain(e.status(), problem(e));
    }

    /** The ProblemDetails of an error (§ 5.5.3): type, title, status, detail. */
    static ObjectNode problem(NgsiLdException e) {
        ObjectNode p = CorRestJson.mapper().createObjectNode();
        p.put("type", e.type().uri());
        p.put("title", e.type().title());
        p.put("status", e.status());
        if (e.detail() != null) {
            p.put("detail", e.detail());
        }
        return p;
    }

    void echoTenant() {
        if (tenantGiven) {
            request.responseHeaders().set(TENANT_HEADER, tenant);
        }
    }

    static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl >= 0 ? s.substring(0, nl) : s;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
