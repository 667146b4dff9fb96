package dev.cor.rest;

/** Found through ServiceLoader by {@code CorRestDispatcherTest}: every request may be a coroutine. */
public final class TestHooks implements CorRestCoroutineHook {
    @Override
    public boolean mayBeCoroutine(CorRest request) {
        return true;
    }
}
