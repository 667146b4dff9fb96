package dev.cor.base;

import java.io.IOException;
import java.nio.channels.SelectionKey;

/**
 * The owner of a channel registered on a loop with
 * {@link CorCoLoop#register(java.nio.channels.SelectableChannel, int, CorCoLoopHandler)}:
 * called on the loop's thread whenever the channel is ready for the interest set on its key.
 * A server's connections plug into the loop this way. An exception thrown here closes the
 * channel and is logged; the loop goes on.
 */
@FunctionalInterface
public interface CorCoLoopHandler {
    /**
     * @param key the channel's current key on the loop's selector (a loop that rebuilds its
     *            selector re-registers every channel, so do not hold on to an older key)
     */
    void onReady(SelectionKey key) throws IOException;
}
