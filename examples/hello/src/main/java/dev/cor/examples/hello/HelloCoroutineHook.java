package dev.cor.examples.hello;

import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestCoroutineHook;

/**
 * The host's own coroutine hook: everything this application waits for (a deadline) yields on
 * the loop, so every request that can wait may be a coroutine. An application whose handler
 * called a blocking library would say no for those requests here.
 */
final class HelloCoroutineHook implements CorRestCoroutineHook {
    @Override
    public boolean mayBeCoroutine(CorRest request) {
        return true;
    }
}
