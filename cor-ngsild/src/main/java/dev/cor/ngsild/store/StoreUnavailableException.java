package dev.cor.ngsild.store;

/**
 * The store cannot take or confirm a write now: its disk is full, read-only or failing, or the
 * journal did not confirm in time. The API answers it 503 with a ProblemDetails; reads go on, and
 * writes are taken again once the store recovers. A write refused before it was applied changed
 * nothing; one whose confirmation failed may still be kept (as after a timeout, the client cannot
 * know) - never one that was acknowledged is lost.
 */
public final class StoreUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** {@code message} says what failed, for the 503's detail and the log. */
    public StoreUnavailableException(String message) {
        super(message, null, false, false);
    }

    /** As {@link #StoreUnavailableException(String)}, with the I/O failure behind it. */
    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause, false, false);
    }
}
