package dev.cor.rest.client;

import java.io.IOException;

/**
 * Why a client request got no usable response, as a {@link Kind} a caller can act on, and the
 * status a server forwarding the request answers its own caller with ({@link #gatewayStatus()}).
 * Thrown by {@link CorRestClient#send} and kept by {@link CorRestCall#error()}; any thread may
 * read it.
 */
public class CorRestClientException extends IOException {
    private static final long serialVersionUID = 1L;

    /** What went wrong, coarse enough to map to an answer. */
    public enum Kind {
        /** Nobody accepted the connection (refused, unreachable), or the scheme has no transport. */
        REFUSED,
        /** The connection failed under the request: reset by the peer, or a write or read failed. */
        RESET,
        /** A deadline passed: the connect, the TLS handshake or the response. */
        TIMEOUT,
        /** The peer's answer is not HTTP/1.1 as it must be. */
        MALFORMED,
        /** TLS failed: no {@code SSLContext} for https, a certificate refused, a protocol error. */
        TLS,
        /** The host name did not resolve. */
        RESOLVE,
        /** The peer closed the connection before a full response. */
        CLOSED,
        /** The response (its header section or body) is over the client's limits. */
        TOO_LARGE
    }

    private final Kind kind;

    public CorRestClientException(Kind kind, String message) {
        this(kind, message, null);
    }

    public CorRestClientException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = java.util.Objects.requireNonNull(kind, "kind");
    }

    public Kind kind() {
        return kind;
    }

    /** The status a gateway answers for this failure: 504 for a timeout, 502 for the rest. */
    public int gatewayStatus() {
        return kind == Kind.TIMEOUT ? 504 : 502;
    }

    /**
     * This failure in the client's own words, naming {@code peer} as the caller gives it (its
     * origin, say) and {@code timeoutMs} for a timeout. Unlike {@link #getMessage()}, which may
     * quote what the peer sent (a status line, a header), nothing here came from the peer: the
     * text a caller may pass on to a third party, a client of its own.
     */
    public String reason(String peer, long timeoutMs) {
        return switch (kind) {
            case REFUSED -> "cannot connect to " + peer;
            case RESET -> "the connection to " + peer + " failed";
            case TIMEOUT -> peer + " did not answer within " + timeoutMs + " ms";
            case MALFORMED -> peer + " answered what is not HTTP/1.1";
            case TLS -> "TLS with " + peer + " failed";
            case RESOLVE -> "the host of " + peer + " did not resolve";
            case CLOSED -> peer + " closed the connection before a full answer";
            case TOO_LARGE -> peer + " answered more than the client reads";
        };
    }

    @Override
    public String toString() {
        return "CorRestClientException[" + kind + "]: " + getMessage();
    }
}
