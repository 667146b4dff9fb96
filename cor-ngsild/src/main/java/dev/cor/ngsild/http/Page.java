package dev.cor.ngsild.http;

import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.policy.NgsildLimits;

/**
 * The page a listing asks for (§ 5.5.9): {@code limit} (at most the broker's maximum: 403
 * TooManyResults above it), {@code offset}, and whether to {@code count} the whole result
 * ({@code limit=0} only with it; {@code options=count} asks the same). Immutable.
 */
record Page(int limit, int offset, boolean count) {
    static Page of(QueryParams p, NgsildLimits limits) {
        int limit = p.integer("limit", limits.defaultLimit());
        if (limit > limits.maxLimit()) {
            throw new NgsiLdException(ErrorType.TOO_MANY_RESULTS, "limit " + limit + " is above the maximum "
                    + limits.maxLimit());
        }
        int offset = p.integer("offset", 0);
        boolean count = p.bool("count", false) || p.list("options").contains("count");
        if (limit == 0 && !count) {
            throw NgsiLdException.badData("limit=0 asks for nothing unless count=true");
        }
        return new Page(limit, offset, count);
    }

    /**
     * Adds the {@code Link}s to the previous page (when this one does not start at 0) and to the
     * next one (when {@code more} is left) of a listing of {@code resource} (§ 5.5.9, § 6.3.10):
     * the request's parameters in the order the request wrote them, with {@code limit} and
     * {@code offset} set in their places (added at the end when the request had none). Every
     * listing links its pages here - entities, subscriptions, registrations and the subscriptions
     * to them. None when the page is empty by request ({@code limit=0}).
     */
    void links(Exchange x, String resource, boolean more) {
        if (limit == 0) {
            return;
        }
        if (offset > 0) {
            x.request.responseHeaders().add("Link", link(x, resource, Math.max(0, offset - limit), "prev"));
        }
        if (more) {
            x.request.responseHeaders().add("Link", link(x, resource, offset + limit, "next"));
        }
    }

    /**
     * {@code </ngsi-ld/v1/RESOURCE?...>;rel="REL";type="application/ld+json"}, written as the
     * specification's examples and ETSI's test purposes (031_02, 037_11, 041_03) write it. The
     * type is the NGSI-LD media type whatever this answer's is: it says what the linked page is,
     * and a client asks it with its own Accept.
     */
    private String link(Exchange x, String resource, int at, String rel) {
        java.util.Map<String, String> params = new java.util.LinkedHashMap<>(x.params.asMap());
        params.put("limit", Integer.toString(limit));
        params.put("offset", Integer.toString(at));
        StringBuilder b = new StringBuilder("<").append(NgsildApplication.BASE_PATH).append(resource);
        char sep = '?';
        for (java.util.Map.Entry<String, String> p : params.entrySet()) {
            b.append(sep).append(p.getKey()).append('=').append(PercentEncoding.encode(p.getValue()));
            sep = '&';
        }
        return b.append(">;rel=\"").append(rel).append("\";type=\"application/ld+json\"").toString();
    }
}
