package dev.cor.ngsild.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.model.Syntax;

/**
 * The {@code expiresAt} member of a subscription (§ 5.2.12) and of a context source registration
 * (§ 5.2.9), read by one rule: a UTC DateTime ({@link Syntax#epochMillis}: seconds, an optional
 * fraction, {@code Z}), in the future when a client gives it (§ 5.8.1.4, 5.9.2.4); one restored
 * from the store may have passed since (it is then expired, not invalid). Stateless; any thread.
 */
final class ExpiresAt {
    /** No {@code expiresAt}: it never expires. */
    static final long NEVER = Long.MAX_VALUE;

    private ExpiresAt() {
    }

    /**
     * The {@code expiresAt} of {@code doc} in epoch milliseconds, or {@link #NEVER}.
     *
     * @throws NgsiLdException BadRequestData when it is no DateTime, or - unless {@code restored} -
     *                         not after {@code nowMs}
     */
    static long of(ObjectNode doc, boolean restored, long nowMs) {
        String expires = SubscriptionOperations.optionalText(doc, "expiresAt");
        if (expires == null) {
            return NEVER;
        }
        long at = Syntax.epochMillis(expires);
        if (at == Syntax.NOT_A_DATE_TIME) {
            throw NgsiLdException.badData("expiresAt is a UTC DateTime (YYYY-MM-DDThh:mm:ss[.fraction]Z), not '"
                    + expires + "'");
        }
        if (!restored && at <= nowMs) {
            throw NgsiLdException.badData("expiresAt " + expires + " has passed already (§ 5.8.1.4, 5.9.2.4)");
        }
        return at;
    }
}
