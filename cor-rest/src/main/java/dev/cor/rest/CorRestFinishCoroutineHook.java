package dev.cor.rest;

/**
 * The same decision as {@link CorRestCoroutineHook} for a request's post-response phase (its
 * {@link CorRest#defer deferred} work, notifications above all): yes runs it as a coroutine of the
 * loop - started from the request's own coroutine when the answer went out from one - no on a
 * worker. No hook: the worker.
 */
@FunctionalInterface
public interface CorRestFinishCoroutineHook {
    boolean mayBeCoroutine(CorRest request);
}
