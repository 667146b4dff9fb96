package dev.cor.rest;

/**
 * Per-request state that must follow the request, not the thread it happens to run on
 * (design rule 2): the application's own slot and the in-process forward depth guard. Owned by
 * one {@link CorRest}; touched by whichever single thread runs that request at the time.
 */
public final class CorRestState {
    /** Default bound of in-process forwards one request may nest. */
    public static final int DEFAULT_MAX_FORWARD_DEPTH = 8;

    private Object userData;
    private int forwardDepth;
    private final long startNanos = System.nanoTime();

    /** The application's own per-request state (the broker hangs its request context here). */
    public Object userData() {
        return userData;
    }

    public void userData(Object data) {
        this.userData = data;
    }

    /** How many in-process forwards of this request are in progress. */
    public int forwardDepth() {
        return forwardDepth;
    }

    /**
     * Enters one more in-process forward.
     *
     * @return {@code false} - and no change - if that would pass {@code max}: the request is
     *         forwarding to itself; answer it with an error instead
     */
    public boolean enterForward(int max) {
        if (forwardDepth >= max) {
            return false;
        }
        forwardDepth++;
        return true;
    }

    public void exitForward() {
        if (forwardDepth > 0) {
            forwardDepth--;
        }
    }

    /** When the request was read ({@link System#nanoTime()}). */
    public long startNanos() {
        return startNanos;
    }
}
