package dev.cor.rest;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;

import org.jctools.queues.atomic.MpmcAtomicArrayQueue;

/**
 * {@link CorRest#waitFd} outside a coroutine: a blocking wait of this thread on one channel
 * (the channel stays in non-blocking mode, as the clients need it).
 * <p>
 * The selector is borrowed for the wait from a pool shared by every thread that is not a loop,
 * and the channel leaves it before the wait returns ({@code cancel} and a {@code selectNow} that
 * completes the deregistration). So between waits a channel is registered nowhere: one closed on
 * any thread - its own, another, one that ended - releases its file descriptor at once, rather
 * than at the next select of a selector that may never select again (the JDK defers the real
 * close of a registered channel until its last key is deregistered). And a connection may move
 * between threads (virtual threads sharing a keep-alive pool), and a virtual thread owns no
 * selector. The price: an {@code epoll_ctl} pair and a zero-timeout {@code epoll_wait} per wait
 * that has to wait at all - the clients read first, and wait only when nothing is there.
 * <p>
 * Any thread but a loop's; nothing here is per request, and nothing here yields.
 */
final class ThreadWait {
    /** Selectors idle between waits; more than this many waiting at once open their own and close them after. */
    private static final MpmcAtomicArrayQueue<Selector> IDLE = new MpmcAtomicArrayQueue<>(64);

    private ThreadWait() {
    }

    static int await(SelectableChannel channel, int ops, long timeoutMs) throws IOException {
        if (channel.isBlocking()) {
            throw new IllegalArgumentException("waitFd needs a channel in non-blocking mode");
        }
        Selector sel = IDLE.poll();
        if (sel == null) {
            sel = Selector.open();
        }
        SelectionKey key = null;
        try {
            key = channel.register(sel, ops);
            long deadline = timeoutMs < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutMs * 1_000_000;
            while (true) {
                long left = deadline == Long.MAX_VALUE ? 0 : (deadline - System.nanoTime() + 999_999) / 1_000_000;
                if (deadline != Long.MAX_VALUE && left <= 0) {
                    return sel.selectNow() > 0 && key.isValid() ? key.readyOps() : 0;
                }
                int n = sel.select(left);
                if (n > 0 && key.isValid()) {
                    return key.readyOps();
                }
                if (!key.isValid()) {
                    throw new ClosedChannelException();
                }
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("interrupted while waiting on a channel");
                }
            }
        } finally {
            release(sel, key);
        }
    }

    /** The channel leaves the selector now (its deregistration completed), and the selector goes back to the pool. */
    private static void release(Selector sel, SelectionKey key) {
        try {
            if (key != null) {
                key.cancel();
            }
            sel.selectNow(); // completes the deregistration: a closed channel's fd is released here
            sel.selectedKeys().clear();
            if (IDLE.offer(sel)) {
                return;
            }
        } catch (IOException | RuntimeException e) {
            // a selector that fails is not pooled
        }
        try {
            sel.close();
        } catch (IOException e) {
            // nothing more to do
        }
    }
}
