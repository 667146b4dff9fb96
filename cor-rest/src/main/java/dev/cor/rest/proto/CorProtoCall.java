package dev.cor.rest.proto;

import java.util.Collection;
import java.util.List;

import dev.cor.base.CorCo;
import dev.cor.rest.CorRest;

/**
 * One {@code cor://} request in flight, started by {@link CorProtoClient#start}: what a fan-out
 * holds while it waits for all its answers ({@link #awaitAll}). It ends answered, failed, or past
 * its deadline.
 * <p>
 * <b>Threading.</b> A call belongs to where it was started: inside a coroutine, to that
 * coroutine's loop - it may be awaited by any coroutine of the loop; on a plain or worker thread,
 * to that thread. It is not thread-safe.
 */
public final class CorProtoCall {
    final long deadlineNanos;
    /** The connection it was sent on, once it was; its stream there. */
    ClientConnection connection;
    int stream;
    /** The coroutine parked for it (loop connections only). */
    CorCo waiter;

    private boolean done;
    private CorProtoResponse response;
    private CorProtoException failure;

    CorProtoCall(long deadlineNanos) {
        this.deadlineNanos = deadlineNanos;
    }

    /** Whether it has its answer, or its failure. */
    public boolean isDone() {
        return done;
    }

    /**
     * Waits until the call is done - yielding inside a coroutine, blocking on a plain thread -
     * and returns its answer. Waits no longer than the call's deadline.
     *
     * @throws CorProtoException what failed; {@link CorProtoTimeoutException} once the deadline passed
     */
    public CorProtoResponse await() throws CorProtoException {
        if (!done) {
            connection.await(this);
        }
        return response();
    }

    /**
     * The answer of a call that is done.
     *
     * @throws CorProtoException     what failed (a fresh exception per call, its cause the connection's)
     * @throws IllegalStateException if it is not done yet
     */
    public CorProtoResponse response() throws CorProtoException {
        if (!done) {
            throw new IllegalStateException("the call is still in flight: await it first");
        }
        if (failure != null) {
            throw failure;
        }
        return response;
    }

    /**
     * Waits until every call is done (answered, failed or past its deadline); never throws what a
     * call failed with - read each one's {@link #response()}. The calls wait at once: the whole
     * takes as long as the slowest.
     */
    public static void awaitAll(Collection<CorProtoCall> calls) {
        for (CorProtoCall c : calls) {
            if (!c.done) {
                try {
                    c.connection.await(c);
                } catch (CorProtoException e) {
                    // recorded on the call
                }
            }
        }
    }

    public static void awaitAll(CorProtoCall... calls) {
        awaitAll(List.of(calls));
    }

    // ---------------------------------------------------------------- the connection's side

    void complete(CorProtoResponse r) {
        if (!done) {
            done = true;
            response = r;
            wakeWaiter();
        }
    }

    void fail(CorProtoException e) {
        if (!done) {
            done = true;
            failure = e;
            wakeWaiter();
        }
    }

    private void wakeWaiter() {
        CorCo w = waiter;
        if (w != null) {
            waiter = null;
            w.wake();
        }
    }

    long remainingMs() {
        return CorRest.remainingMs(deadlineNanos);
    }

    @Override
    public String toString() {
        return "CorProtoCall[stream " + Integer.toUnsignedString(stream) + (done ? failure != null ? ", failed" : ", answered" : ", in flight") + "]";
    }
}
