package dev.cor.examples.embedded;

import dev.cor.ngsild.CorNgsild;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestCoroutineHook;
import dev.cor.rest.CorRestFinishCoroutineHook;

/**
 * The host's coroutine hooks: it decides for its own routes - {@code /shop/legacy} calls a
 * blocking library, so it may never be a coroutine (it takes the worker hop); everything else of
 * the host only waits through the runtime and may - and delegates the broker's requests to the
 * broker's own hooks, which know what its store does. Stateless; any loop.
 */
final class ShopCoroutineHook implements CorRestCoroutineHook {
    private final CorNgsild broker;
    private final CorRestCoroutineHook brokerHook;
    private final CorRestFinishCoroutineHook brokerFinishHook;

    ShopCoroutineHook(CorNgsild broker) {
        this.broker = broker;
        this.brokerHook = broker.coroutineHook();
        this.brokerFinishHook = broker.finishCoroutineHook();
    }

    @Override
    public boolean mayBeCoroutine(CorRest request) {
        if (broker.handles(request)) {
            return brokerHook.mayBeCoroutine(request);
        }
        return !request.path().equals("/shop/legacy");
    }

    /** The same for the post-response phase: only the broker's requests have one here. */
    CorRestFinishCoroutineHook finish() {
        return request -> broker.handles(request) && brokerFinishHook.mayBeCoroutine(request);
    }
}
