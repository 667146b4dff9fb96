package dev.cor.rest;

import java.util.List;

import dev.cor.base.CorCoLoop;

/**
 * What a server mounts in one call: an application, the coroutine hooks that say which of its
 * requests may wait as coroutines of their loop, and its lifecycle. A server given a service
 * serves its application with its hooks, calls {@link #started} once its loops run and
 * {@link #stopped} once they have ended. Implemented by whatever a host embeds (the NGSI-LD
 * broker is one); its methods are called by the server, each once, on the thread that starts or
 * stops it.
 */
public interface CorRestService {
    /** The application the server runs: its "can this wait?" answers and its handler. */
    CorRestApplication application();

    /** Whether a request may wait as a coroutine of its loop (rather than on a worker). */
    CorRestCoroutineHook coroutineHook();

    /** The same decision for the post-response phase. */
    CorRestFinishCoroutineHook finishCoroutineHook();

    /** The server's loops run: work the service schedules on loops of its own may start. Default: nothing. */
    default void started(List<CorCoLoop> loops) {
    }

    /** The server has stopped - no request runs any more: the service releases what it holds. Default: nothing. */
    default void stopped() {
    }
}
