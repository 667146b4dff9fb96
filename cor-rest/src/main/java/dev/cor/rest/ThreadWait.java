package dev.cor.rest;

import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;

/**
 * {@link CorRest#waitFd} outside a coroutine: a blocking wait of this thread on one channel,
 * through a selector of the thread's own (the channel stays in non-blocking mode, as the clients
 * need it). The selector belongs to the thread, not to a request: nothing of it is live across a
 * yield, because nothing here yields.
 */
final class ThreadWait {
    private static final ThreadLocal<Selector> SELECTOR = new ThreadLocal<>();

    private ThreadWait() {
    }

    static int await(SelectableChannel channel, int ops, long timeoutMs) throws IOException {
        if (channel.isBlocking()) {
            throw new IllegalArgumentException("waitFd needs a channel in non-blocking mode");
        }
        Selector sel = SELECTOR.get();
        if (sel == null || !sel.isOpen()) {
            sel = Selector.open();
            SELECTOR.set(sel);
        }
        SelectionKey key = channel.keyFor(sel);
        if (key == null) {
            key = channel.register(sel, ops);
        } else {
            key.interestOps(ops);
        }
        try {
            long deadline = timeoutMs < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutMs * 1_000_000;
            while (true) {
                long left = deadline == Long.MAX_VALUE ? 0 : (deadline - System.nanoTime() + 999_999) / 1_000_000;
                if (deadline != Long.MAX_VALUE && left <= 0) {
                    return sel.selectNow() > 0 && key.isValid() ? key.readyOps() : 0;
                }
                int n = sel.select(left);
                sel.selectedKeys().clear();
                if (n > 0 && key.isValid()) {
                    return key.readyOps();
                }
                if (!key.isValid()) {
                    throw new java.nio.channels.ClosedChannelException();
                }
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("interrupted while waiting on a channel");
                }
            }
        } finally {
            if (key.isValid()) {
                key.interestOps(0);
            }
        }
    }
}
