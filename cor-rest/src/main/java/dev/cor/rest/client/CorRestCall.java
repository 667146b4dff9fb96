package dev.cor.rest.client;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;

/**
 * One request of a fan-out, started by {@link CorRestClient#start} and awaited with
 * {@link CorRestClient#awaitAll} or {@link #await()}. Inside a coroutine it runs as a child
 * coroutine of the same loop and belongs to that loop: only a coroutine of that loop may await
 * it. Started outside a coroutine it has already run when {@code start} returns.
 */
public final class CorRestCall {
    private final CorRestClientRequest request;
    /** The loop whose child coroutine runs the call; {@code null} when it ran in the caller. */
    final CorCoLoop loop;
    /** The coroutine parked in awaitAll for this call, if any. Loop thread only. */
    CorCo waiter;
    private CorRestClientResponse response;
    private Throwable error;
    private volatile boolean done;

    CorRestCall(CorRestClientRequest request, CorCoLoop loop) {
        this.request = request;
        this.loop = loop;
    }

    /** Sends the request here, on the calling coroutine or thread, and keeps the outcome. */
    void run(CorRestClient client) {
        try {
            response = client.send(request);
        } catch (Throwable t) {
            error = t;
        }
    }

    /** The call is over (its child coroutine finished, or it ran in the caller). */
    void finish(Throwable coroutineError) {
        if (response == null && error == null) {
            error = coroutineError != null ? coroutineError
                    : new IllegalStateException("the coroutine of " + request + " ended without running it");
        }
        done = true;
        CorCo w = waiter;
        if (w != null) {
            waiter = null;
            w.wake();
        }
    }

    public CorRestClientRequest request() {
        return request;
    }

    /** Whether the call has its outcome. */
    public boolean isDone() {
        return done;
    }

    /** The response, or {@code null} (not done yet, or it failed). */
    public CorRestClientResponse response() {
        return done ? response : null;
    }

    /**
     * Why the call failed, or {@code null}: a {@link CorRestClientException} as a rule; an
     * unchecked exception for a programming error or a stopping loop.
     */
    public Throwable error() {
        return done ? error : null;
    }

    /**
     * Waits for this call (as {@link CorRestClient#awaitAll}) and returns its response.
     *
     * @throws CorRestClientException why it failed
     */
    public CorRestClientResponse await() throws CorRestClientException {
        CorRestClient.awaitAll(java.util.List.of(this));
        if (error instanceof CorRestClientException e) {
            throw e;
        }
        if (error instanceof RuntimeException e) {
            throw e;
        }
        if (error instanceof Error e) {
            throw e;
        }
        if (error != null) {
            throw new IllegalStateException(error);
        }
        return response;
    }

    @Override
    public String toString() {
        return request + (done ? (error != null ? " failed: " + error : " -> " + response) : " (running)");
    }
}
