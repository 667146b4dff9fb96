package dev.cor.examples.gateway;

import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestCoroutineHook;

/**
 * The gateway's own hook: a forward waits only in cor's client, which yields on the loop, so
 * every forward may be a coroutine. ({@code --coroutines 0} turns them off: every forward takes
 * the worker hop, the comparison the chain benchmark makes.)
 */
final class GatewayCoroutineHook implements CorRestCoroutineHook {
    @Override
    public boolean mayBeCoroutine(CorRest request) {
        return true;
    }
}
