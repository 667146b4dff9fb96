package dev.cor.rest;

/**
 * The application's call: may this request, which can wait, run as a coroutine of its loop?
 * Say no for a request that would block inside a library that knows nothing of the loop (a
 * blocking database driver): a blocked loop stops every connection on it. No hook: no request
 * is a coroutine, every one that can wait takes the worker hop.
 * <p>
 * Called on the loop thread, once per request that can wait. Set it on the dispatcher's builder,
 * or provide it through {@link java.util.ServiceLoader}.
 */
@FunctionalInterface
public interface CorRestCoroutineHook {
    boolean mayBeCoroutine(CorRest request);
}
