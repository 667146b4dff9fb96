package dev.cor.rest.proto;

/**
 * The error codes of {@code cor://} (spec § 8.2), as they travel in GOAWAY and ERROR frames.
 * Immutable; any thread.
 */
public enum CorProtoError {
    /** Going away normally: the server or the client is stopping, or an idle connection closes. */
    NO_ERROR(0),
    /** A frame not allowed where it came. */
    PROTOCOL_ERROR(1),
    /** A frame type the receiver does not know. */
    UNKNOWN_TYPE(2),
    /** A HELLO of a version the server does not speak. */
    VERSION_MISMATCH(3),
    /** A header announcing more than the maximum payload. */
    FRAME_TOO_LARGE(4),
    /** A truncated or malformed payload, or a connection closed mid-frame. */
    INVALID_PAYLOAD(5),
    /** A REQUEST on a stream still in flight. */
    STREAM_IN_USE(6),
    /** A missing or wrong token. */
    UNAUTHORIZED(7),
    /** A first frame other than HELLO. */
    HELLO_EXPECTED(8),
    /** No HELLO, or a frame left unfinished, within its timeout. */
    TIMEOUT(9),
    /** A stream or connection refused for want of room: retryable. */
    REFUSED(10),
    /** An answer that does not fit in a frame. */
    TOO_LARGE(11),
    /** The server failed to answer. */
    INTERNAL(12);

    private static final CorProtoError[] BY_CODE = values();

    private final int code;

    CorProtoError(int code) {
        this.code = code;
    }

    /** The number on the wire. */
    public int code() {
        return code;
    }

    /** The error of a wire number; one this version does not know is {@link #PROTOCOL_ERROR} (spec § 8.2). */
    public static CorProtoError of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : PROTOCOL_ERROR;
    }
}
