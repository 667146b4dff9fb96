package dev.cor.server;

import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;

/**
 * CORS in front of an application - {@code --corsOrigin ORIGIN|__ALL}, Orion-LD's flag. A request
 * from an allowed origin (its {@code Origin} header is the flag's, or any with {@code __ALL}) gets
 * {@code Access-Control-Allow-Origin} and the NGSI-LD headers exposed to the page's script; its
 * preflight ({@code OPTIONS} with {@code Access-Control-Request-Method}) is answered 204 here,
 * inline on the loop, with the methods, headers and max age. A request without an {@code Origin},
 * or from another origin, passes through untouched (a browser then refuses the answer to the
 * page). Shared by every loop and worker; holds nothing mutable.
 */
final class CorsApplication implements CorRestApplication {
    /** The flag's value that allows every origin (answered {@code *}). */
    static final String ALL = "__ALL";
    /** Methods the NGSI-LD API answers. */
    static final String METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";
    /** Request headers a page may send: the NGSI-LD ones and a bearer token. */
    static final String ALLOWED_HEADERS = "Accept, Authorization, Content-Type, Link, NGSILD-Tenant, NGSILD-Path,"
            + " Fiware-Service, Fiware-ServicePath, Fiware-Correlator";
    /** Response headers a page's script may read beyond the CORS-safelisted ones. */
    static final String EXPOSED_HEADERS = "Link, Location, NGSILD-Results-Count, NGSILD-Tenant, NGSILD-Warning";
    /** How long a browser may keep a preflight's answer: a day, Orion-LD's default. */
    static final String MAX_AGE = "86400";

    private final CorRestApplication inner;
    private final String origin;

    CorsApplication(CorRestApplication inner, String origin) {
        this.inner = inner;
        this.origin = origin;
    }

    /** A {@code --corsOrigin} value: {@link #ALL} or an origin, {@code scheme://host[:port]}. */
    static String origin(String flag, String v) {
        if (v.equals(ALL) || v.matches("[a-zA-Z][a-zA-Z0-9+.-]*://[^/\\s?#,]+")) {
            return v;
        }
        throw new IllegalArgumentException(flag + " takes an origin (scheme://host[:port], no path) or __ALL, not '" + v + "'");
    }

    @Override
    public boolean canWait(CorRest request) {
        return !preflight(request) && inner.canWait(request);
    }

    @Override
    public boolean finishCanWait(CorRest request) {
        return !preflight(request) && inner.finishCanWait(request);
    }

    @Override
    public void handle(CorRest request) throws Exception {
        String allowed = allowedOrigin(request);
        if (allowed == null) {
            inner.handle(request);
            return;
        }
        var h = request.responseHeaders();
        h.set("Access-Control-Allow-Origin", allowed);
        if (!allowed.equals("*")) {
            h.set("Vary", "Origin"); // the answer differs by Origin: a cache must not mix them
        }
        if (preflight(request)) {
            h.set("Access-Control-Allow-Methods", METHODS);
            h.set("Access-Control-Allow-Headers", ALLOWED_HEADERS);
            h.set("Access-Control-Max-Age", MAX_AGE);
            request.respond(204, null, null);
            return;
        }
        h.set("Access-Control-Expose-Headers", EXPOSED_HEADERS);
        inner.handle(request);
    }

    /** A browser's preflight from an allowed origin. */
    private boolean preflight(CorRest request) {
        return request.method().equals("OPTIONS") && request.headers().get("Access-Control-Request-Method") != null
                && allowedOrigin(request) != null;
    }

    /** The Allow-Origin value for this request, or {@code null} when it is not a CORS request this broker allows. */
    private String allowedOrigin(CorRest request) {
        String o = request.headers().get("Origin");
        if (o == null) {
            return null;
        }
        if (origin.equals(ALL)) {
            return "*";
        }
        return o.equalsIgnoreCase(origin) ? origin : null;
    }
}
