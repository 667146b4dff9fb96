package dev.cor.base;

import java.io.IOException;
import java.nio.channels.SelectionKey;

/**
 * The owner of a channel registered on a loop with
 * {@link CorCoLoop#register(java.nio.channels.SelectableChannel, int, CorCoLoopHandler)}:
 * called on the loop's thread whenever the channel is ready for the interest set on its key.
 * A server's connections plug into the loop this way.
 * <p>
 * A failure of {@link #onReady} goes back to its owner: the loop logs it, then calls
 * {@link #failed} so that the owner closes the channel through its own close, releasing
 * whatever it holds for it (a table entry, a count, buffers). The loop goes on either way.
 */
@FunctionalInterface
public interface CorCoLoopHandler {
    /**
     * @param key the channel's current key on the loop's selector (a loop that rebuilds its
     *            selector re-registers every channel, so do not hold on to an older key)
     */
    void onReady(SelectionKey key) throws IOException;

    /**
     * Called on the loop's thread, once per failure, after {@link #onReady} threw {@code failure}
     * (already logged by the loop): close the channel the way the owner closes it. The default
     * only closes the key's channel, which is enough for a handler that holds nothing else;
     * an owner that keeps state for the channel overrides it with its own close. If this throws
     * in turn, the loop logs that and closes the channel itself.
     *
     * @param key     the channel's current key (it may have been cancelled by {@code onReady})
     * @param failure what {@code onReady} threw
     */
    default void failed(SelectionKey key, Throwable failure) {
        try {
            key.channel().close();
        } catch (IOException e) {
            // closing after a failure: nothing more to do
        }
    }
}
