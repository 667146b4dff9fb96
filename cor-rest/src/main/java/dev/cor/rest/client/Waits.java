package dev.cor.rest.client;

import java.io.IOException;
import java.nio.channels.SelectableChannel;

import dev.cor.rest.CorRest;

/**
 * The client's only way to wait: {@link CorRest#waitFd} against a deadline. Inside a coroutine it
 * yields to the loop, on a worker or plain thread it blocks that thread, on a loop thread outside a
 * coroutine it refuses - the same client code everywhere, with no flag. Nothing else in this
 * package waits on a channel.
 */
final class Waits {
    private Waits() {
    }

    /**
     * Waits until {@code channel} is ready for {@code ops} or {@code deadlineNanos} passes.
     *
     * @param what what is being waited for, for the timeout's message ("the response of ...")
     * @return the ready operations (never 0)
     * @throws CorRestClientException {@link CorRestClientException.Kind#TIMEOUT} once the deadline has passed
     */
    static int await(SelectableChannel channel, int ops, long deadlineNanos, Phase what) throws IOException {
        while (true) {
            long ms = CorRest.remainingMs(deadlineNanos);
            if (ms == 0) {
                throw new CorRestClientException(CorRestClientException.Kind.TIMEOUT, what.timeoutMessage());
            }
            int ready = CorRest.waitFd(channel, ops, ms);
            if (ready != 0) {
                return ready;
            }
        }
    }

    /** What a wait is for: names the timeout. */
    interface Phase {
        String timeoutMessage();
    }
}
