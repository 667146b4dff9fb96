package dev.cor.base;

/**
 * A coroutine failed for a reason of the runtime's own - its stack overflowed, it could not
 * yield, it yielded with a lock held - and the message names the coroutine and its loop.
 */
public class CorCoException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public CorCoException(String message) {
        super(message);
    }

    public CorCoException(String message, Throwable cause) {
        super(message, cause);
    }
}
