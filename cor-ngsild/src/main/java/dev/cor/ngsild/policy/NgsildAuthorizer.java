package dev.cor.ngsild.policy;

import java.util.Objects;

import dev.cor.rest.CorRestHeaders;

/**
 * Decides whether a request to the broker may run: from its headers, its tenant and its
 * operation, it allows it, or refuses it with 401 (no valid credential: the answer carries a
 * {@code WWW-Authenticate} challenge) or 403 (a valid credential that does not cover this tenant
 * or this operation). The broker answers a refusal as a ProblemDetails ({@code Unauthorized} or
 * {@code Forbidden}) before it reads the body or says whether the tenant exists.
 * <p>
 * Threading contract: called on the event loop that read the request, inline, before the
 * dispatch decides whether the request may wait - so it must answer at once: never block, never
 * wait for I/O, never yield. Every loop calls it at the same time; it must be thread-safe. What
 * is costly (verifying a signature) is the implementation's to cache.
 */
@FunctionalInterface
public interface NgsildAuthorizer {

    /** Allows everything: the default. */
    NgsildAuthorizer ALLOW_ALL = request -> Decision.ALLOW;

    /** Decides one request; must not throw (a refusal is a {@link Decision}). */
    Decision authorize(Request request);

    /**
     * What a decision looks at.
     *
     * @param headers   the request's headers (read only)
     * @param tenant    the tenant the request names in {@code NGSILD-Tenant}; {@code ""} for the default tenant
     * @param operation the operation's name, as {@code /metrics} counts it (e.g. {@code retrieveEntity})
     * @param read      whether the operation only reads
     */
    record Request(CorRestHeaders headers, String tenant, String operation, boolean read) {
    }

    /** Allow, 401 with its challenge, or 403. */
    sealed interface Decision {
        /** The request may run. */
        Decision ALLOW = new Allow();

        static Decision allow() {
            return ALLOW;
        }

        /**
         * 401: no credential, or one that is not valid.
         *
         * @param challenge the {@code WWW-Authenticate} value, e.g. {@code Bearer realm="cor", error="invalid_token"}
         * @param detail    the ProblemDetails' detail: what was wrong, never the credential itself
         */
        static Decision unauthorized(String challenge, String detail) {
            return new Unauthorized(challenge, detail);
        }

        /** 403: a valid credential that does not allow this tenant or operation. */
        static Decision forbidden(String detail) {
            return new Forbidden(detail);
        }
    }

    /** The request may run. */
    record Allow() implements Decision {
    }

    /** 401 with a {@code WWW-Authenticate} challenge. */
    record Unauthorized(String challenge, String detail) implements Decision {
        /** Both are required: the challenge goes to {@code WWW-Authenticate}, the detail to the ProblemDetails. */
        public Unauthorized {
            Objects.requireNonNull(challenge, "challenge");
            Objects.requireNonNull(detail, "detail");
        }
    }

    /** 403. */
    record Forbidden(String detail) implements Decision {
        /** The detail is required: it goes to the ProblemDetails. */
        public Forbidden {
            Objects.requireNonNull(detail, "detail");
        }
    }
}
