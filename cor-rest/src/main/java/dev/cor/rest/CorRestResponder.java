package dev.cor.rest;

/**
 * How a server sends a request's answer. The dispatcher calls it exactly once per request, on
 * the loop that read the request: before {@code dispatch} returns for an inline request; from
 * inside the request's coroutine when it is done (no inbox round trip, so it may wait for a full
 * socket buffer there); through the loop's inbox after the worker hop.
 */
@FunctionalInterface
public interface CorRestResponder {
    void respond(CorRest request);
}
