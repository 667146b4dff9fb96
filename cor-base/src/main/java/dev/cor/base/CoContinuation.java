package dev.cor.base;

import jdk.internal.vm.Continuation;
import jdk.internal.vm.ContinuationScope;

/**
 * The raw switch: a {@link Continuation} in cor's own scope, owned by one {@link CorCo}.
 * <p>
 * The only class that names {@code jdk.internal.vm}. It is loaded only after
 * {@link CorCoSupport#available()} said the package is exported to us, so a JVM started
 * without the flag never links it and runs with coroutines off.
 */
final class CoContinuation extends Continuation {
    private static final ContinuationScope SCOPE = new ContinuationScope("cor");

    private final CorCo owner;

    CoContinuation(CorCo owner, Runnable body) {
        super(SCOPE, body);
        this.owner = owner;
    }

    /** The coroutine whose continuation is mounted innermost on this thread, or null. */
    static CorCo currentOwner() {
        return Continuation.getCurrentContinuation(SCOPE) instanceof CoContinuation c ? c.owner : null;
    }

    /** Suspends the innermost cor continuation mounted on this thread. */
    static void suspend() {
        Continuation.yield(SCOPE);
    }

    @Override
    protected void onPinned(Pinned reason) {
        String who = owner == null ? "a coroutine" : owner.name();
        throw new CorCoException(who + " cannot yield: its stack is pinned (" + reason
                + ") - a native frame or a critical section is between it and its loop");
    }
}
