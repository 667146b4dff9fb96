package dev.cor.bench.netty;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.cor.bench.cli.Endpoint;
import io.netty.channel.EventLoop;

/**
 * Where a chain node forwards: the next hop's address and one {@link NextHopPool} per event loop,
 * made the first time that loop forwards. Shared by all the node's connections; thread-safe.
 */
final class NextHops {
    private final Endpoint next;
    private final long timeoutMs;
    private final Map<EventLoop, NextHopPool> pools = new ConcurrentHashMap<>();

    NextHops(Endpoint next, long timeoutMs) {
        this.next = next;
        this.timeoutMs = timeoutMs;
    }

    Endpoint next() {
        return next;
    }

    /** The pool of {@code loop}; call it on that loop and keep it for the channel's life. */
    NextHopPool poolOf(EventLoop loop) {
        return pools.computeIfAbsent(loop, l -> new NextHopPool(l, next, timeoutMs));
    }
}
