package dev.cor.base;

/**
 * The body of a coroutine. It runs on its loop's thread, and may wait (through
 * {@link CorCo}'s waits) as often as it likes; whatever it returns or throws is its
 * result, reported to the starter.
 */
@FunctionalInterface
public interface CorCoTask {
    Object run() throws Exception;
}
