package dev.cor.ngsild.http;

import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.ld.ContextRef;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestException;
import dev.cor.rest.CorRestHeaders;

/**
 * One request on its way through the broker: what {@link NgsildApplication} learned of it before
 * the dispatch (its route, preconditions, tenant, parameters, body and the context it names) and
 * what the operation resolves later (the context). Created on the loop by "can this wait?",
 * kept in the request's {@code CorRestState} so that the handler - inline, in a coroutine or on a
 * worker - does not read the request twice. Touched by one thread at a time, like its request.
 */
final class Exchange {
    static final String TENANT_HEADER = "NGSILD-Tenant";

    final CorRest request;
    /** When the broker was first asked about the request (its dispatch): its latency counts from here. */
    final long startNanos = System.nanoTime();
    Route route;
    /** The error found while preparing, answered by the handler. */
    NgsiLdException failure;
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

    Exchange(CorRest request) {
        this.request = request;
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
