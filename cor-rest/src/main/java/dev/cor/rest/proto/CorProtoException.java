package dev.cor.rest.proto;

import java.io.IOException;

/**
 * A {@code cor://} exchange that failed, typed by what went wrong ({@link #kind()}), so that a
 * broker forwarding a request can answer its own client with the right status
 * ({@link #gatewayStatus()}: 504 for a timeout, 502 for everything else) and knows whether
 * trying again is safe ({@link #retryable()}). A violation found by the codec is one too, with
 * the {@link #code()} the GOAWAY carries. Immutable once thrown; any thread may read it.
 */
public class CorProtoException extends IOException {
    private static final long serialVersionUID = 1L;

    /** What went wrong. */
    public enum Kind {
        /** The peer could not be reached: name, connect. Nothing was sent. */
        CONNECT,
        /** The peer refused the connection at HELLO (token, version, too many connections). */
        REFUSED,
        /** The connection ended with the request in flight (closed, reset, GOAWAY). */
        CLOSED,
        /** A side broke the protocol; the connection was ended with GOAWAY. */
        PROTOCOL,
        /** The peer answered this request with an ERROR frame; the connection goes on. */
        STREAM,
        /** The request does not fit in a frame; nothing was sent, the connection goes on. */
        TOO_LARGE,
        /** A deadline passed: connect, HELLO, write or answer ({@link CorProtoTimeoutException}). */
        TIMEOUT,
        /** The client's {@link dev.cor.rest.OutboundPolicy} refuses the peer's address. Nothing was sent. */
        DENIED
    }

    private final Kind kind;
    private final transient CorProtoError code;
    private final boolean retryable;

    public CorProtoException(Kind kind, CorProtoError code, String message, boolean retryable, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.code = code;
        this.retryable = retryable;
    }

    public CorProtoException(Kind kind, String message) {
        this(kind, null, message, false, null);
    }

    /** A protocol violation: the GOAWAY code and the reason. */
    static CorProtoException violation(CorProtoError code, String reason) {
        return new CorProtoException(Kind.PROTOCOL, code, reason, false, null);
    }

    public Kind kind() {
        return kind;
    }

    /** The wire code involved (GOAWAY, ERROR, a violation), or {@code null}. */
    public CorProtoError code() {
        return code;
    }

    /**
     * Whether the request certainly was not processed by the peer, so sending it again (on a
     * new connection) is safe: not connected, refused for room, or sent after the GOAWAY's
     * last stream.
     */
    public boolean retryable() {
        return retryable;
    }

    /** The status a gateway answers with: 504 for a timeout, 502 otherwise. */
    public int gatewayStatus() {
        return kind == Kind.TIMEOUT ? 504 : 502;
    }
}
