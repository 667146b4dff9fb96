package dev.cor.rest;

/**
 * Work of a request to do after its answer went out - a notification above all. It runs on the
 * path {@link CorRestFinishCoroutineHook} chose: inline on the loop, as a coroutine (where it may
 * wait), or on a worker.
 */
@FunctionalInterface
public interface CorRestDeferred {
    void run(CorRest request) throws Exception;
}
