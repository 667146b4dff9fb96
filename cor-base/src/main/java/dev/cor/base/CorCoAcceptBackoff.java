package dev.cor.base;

import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;

/**
 * What an acceptor does when {@code accept()} fails - out of file descriptors, above all. The
 * pending connection stays in the backlog and the listening key stays ready, so an acceptor that
 * only logs and returns is called again at once: its loop spins at 100 %, a stack trace per
 * round. Instead {@link #failed} disarms OP_ACCEPT and arms it again after a pause, through the
 * loop's deadlines - 50 ms, doubling to 1 s while accept keeps failing, back to 50 ms after one
 * succeeds - and logs at most one line per 5 s, with the count of failures held back.
 * <p>
 * One per listening socket, used by its acceptor (a {@link CorCoLoopHandler} of the loop that
 * accepts): that loop's thread only.
 */
public final class CorCoAcceptBackoff {
    /** The first pause after a failed accept, in milliseconds. */
    public static final long FIRST_PAUSE_MS = 50;
    /** The longest pause, in milliseconds. */
    public static final long MAX_PAUSE_MS = 1000;
    /** At most one log line per this many milliseconds. */
    public static final long LOG_INTERVAL_MS = 5000;

    private static final System.Logger LOG = System.getLogger(CorCoAcceptBackoff.class.getName());

    private final String owner;
    private final CorCoLogLimiter log = new CorCoLogLimiter(LOG, LOG_INTERVAL_MS);
    private long pauseMs = FIRST_PAUSE_MS;
    private CorCoTimer rearm;
    private long failures;

    /** @param owner names the server in the log lines (e.g. {@code "cor-http"}) */
    public CorCoAcceptBackoff(String owner) {
        this.owner = java.util.Objects.requireNonNull(owner, "owner");
    }

    /**
     * {@code accept()} on {@code key}'s channel threw {@code failure}: stop accepting for a pause,
     * then accept again. On the key's loop, from its acceptor.
     */
    public void failed(SelectionKey key, IOException failure) {
        CorCoLoop loop = CorCoLoop.current();
        if (loop == null) {
            throw new IllegalStateException("an acceptor's backoff runs on its loop, not on " + Thread.currentThread().getName());
        }
        failures++;
        long pause = pauseMs;
        pauseMs = Math.min(MAX_PAUSE_MS, pauseMs * 2);
        log.log(System.Logger.Level.WARNING, () -> owner + ": accept on " + address(key.channel()) + " failed; not accepting for "
                + pause + " ms", failure);
        if (key.isValid()) {
            key.interestOps(0);
        }
        if (rearm == null || !rearm.pending()) {
            SelectableChannel channel = key.channel();
            rearm = loop.schedule(pause, () -> rearm(loop, channel));
        }
    }

    /** An accept succeeded: the next failure pauses briefly again. Cheap enough to call for each. */
    public void accepted() {
        pauseMs = FIRST_PAUSE_MS;
    }

    /** Failed accepts since this backoff was made. Its loop's thread. */
    public long failures() {
        return failures;
    }

    private static void rearm(CorCoLoop loop, SelectableChannel channel) {
        if (!channel.isOpen()) {
            return; // closed meanwhile (the server stopped)
        }
        SelectionKey current = loop.keyFor(channel); // the selector may have been rebuilt meanwhile
        if (current != null && current.isValid()) {
            current.interestOps(SelectionKey.OP_ACCEPT);
        }
    }

    private static String address(SelectableChannel channel) {
        try {
            return channel instanceof java.nio.channels.NetworkChannel n ? String.valueOf(n.getLocalAddress()) : String.valueOf(channel);
        } catch (IOException e) {
            return String.valueOf(channel);
        }
    }
}
