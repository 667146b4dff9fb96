package dev.cor.rest;

/**
 * Found through ServiceLoader by {@code CorRestDispatcherTest}: every request, and every
 * post-response phase, may be a coroutine.
 */
public final class TestHooks implements CorRestCoroutineHook, CorRestFinishCoroutineHook {
    @Override
    public boolean mayBeCoroutine(CorRest request) {
        return true;
    }
}
