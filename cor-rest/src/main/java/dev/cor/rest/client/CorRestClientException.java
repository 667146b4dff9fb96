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

    @Override
    public String toString() {
        return "CorRestClientException[" + kind + "]: " + getMessage();
    }
}
