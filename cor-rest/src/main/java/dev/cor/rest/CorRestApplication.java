package dev.cor.rest;

/**
 * The application a server runs: its answer to "can this request wait at all?" and its handler.
 * A server calls both on the loop that read the request; {@link #handle} then runs where the
 * dispatch decided - inline on the loop, as a coroutine of it, or on a worker.
 */
public interface CorRestApplication {
    /**
     * Whether the request may have to wait (a forward, a download, anything on a socket). No:
     * it runs inline on the loop - no coroutine, no hop, no cost - and must not wait.
     */
    boolean canWait(CorRest request);

    /** Handles the request: sets its response ({@link CorRest#respond}); throwing answers with an error. */
    void handle(CorRest request) throws Exception;

    /**
     * Whether the request's post-response work ({@link CorRest#defer}) may wait. No: it runs
     * inline on the loop right after the answer. Asked only when there is such work.
     */
    default boolean finishCanWait(CorRest request) {
        return true;
    }
}
