package dev.cor.rest.proto;

/**
 * A {@code cor://} deadline passed - connect, HELLO, write or answer: a gateway answers 504.
 * Immutable once thrown; any thread may read it.
 * Whether the request was processed is unknown unless it never left ({@link #retryable()}).
 */
public final class CorProtoTimeoutException extends CorProtoException {
    private static final long serialVersionUID = 1L;

    public CorProtoTimeoutException(String message, boolean retryable) {
        super(Kind.TIMEOUT, CorProtoError.TIMEOUT, message, retryable, null);
    }
}
