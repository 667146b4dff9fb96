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
        TOO_LARGE,
        /** The client's {@link dev.cor.rest.OutboundPolicy} refuses the address the host resolved to: nothing was sent. */
        DENIED
    }

    private final Kind kind;
    private final TlsFailure tlsFailure;

    public CorRestClientException(Kind kind, String message) {
        this(kind, message, null);
    }

    public CorRestClientException(Kind kind, String message, Throwable cause) {
        this(kind, null, message, cause);
    }

    /** A TLS failure ({@link Kind#TLS}, or {@link Kind#TIMEOUT} for a handshake that timed out) and what failed. */
    public CorRestClientException(Kind kind, TlsFailure tlsFailure, String message, Throwable cause) {
        super(message, cause);
        this.kind = java.util.Objects.requireNonNull(kind, "kind");
        this.tlsFailure = tlsFailure;
    }

    public Kind kind() {
        return kind;
    }

    /** What failed in TLS, or {@code null} when TLS is not what failed. */
    public TlsFailure tlsFailure() {
        return tlsFailure;
    }

    /** The status a gateway answers for this failure: 504 for a timeout, 502 for the rest. */
    public int gatewayStatus() {
        return kind == Kind.TIMEOUT ? 504 : 502;
    }

    /**
     * This failure in the client's own words, naming {@code peer} as the caller gives it (its
     * origin, say) and {@code timeoutMs} for a timeout. Unlike {@link #getMessage()}, which may
     * quote what the peer sent (a status line, a header), nothing here came from the peer: the
     * text a caller may pass on to a third party, a client of its own. A refusal by the outbound
     * policy is the policy's one text, naming neither {@code peer} nor the address.
     */
    public String reason(String peer, long timeoutMs) {
        return switch (kind) {
            case REFUSED -> "cannot connect to " + peer;
            case RESET -> "the connection to " + peer + " failed";
            case TIMEOUT -> tlsFailure != null ? "TLS with " + peer + " failed: " + tlsFailure.words()
                    : peer + " did not answer within " + timeoutMs + " ms";
            case MALFORMED -> peer + " answered what is not HTTP/1.1";
            case TLS -> "TLS with " + peer + " failed" + (tlsFailure != null ? ": " + tlsFailure.words() : "");
            case RESOLVE -> "the host of " + peer + " did not resolve";
            case CLOSED -> peer + " closed the connection before a full answer";
            case TOO_LARGE -> peer + " answered more than the client reads";
            case DENIED -> dev.cor.rest.OutboundPolicy.REFUSAL;
        };
    }

    @Override
    public String toString() {
        return "CorRestClientException[" + kind + "]: " + getMessage();
    }
}
