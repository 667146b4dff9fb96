package dev.cor.base;

import java.util.concurrent.TimeoutException;

/**
 * Thrown out of {@link CorCo#blocking(java.util.concurrent.Callable, long)} when the call did not
 * return by its deadline: the caller goes on, and the helper thread running the call is
 * interrupted (a call not yet begun never runs); and out of
 * {@link CorCo#await(java.util.concurrent.CompletableFuture, long)} when the future was not done
 * by then (it goes on). Its own type, so that a caller tells the deadline passing from a
 * {@link TimeoutException} the call itself threw.
 */
public final class CorCoTimeoutException extends TimeoutException {
    private static final long serialVersionUID = 1L;

    CorCoTimeoutException(String message) {
        super(message);
    }
}
