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
}
