package dev.cor.bench.netty;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

import dev.cor.bench.cli.Endpoint;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;

/**
 * The keep-alive connections one event loop holds to the next hop. Its connections are
 * registered on that same loop, so a forward never leaves the thread that read the inbound
 * request (no hop). Idle connections wait in a LIFO stack (the warmest first), at most
 * {@link #MAX_IDLE}; each carries one request at a time. Touched only on its loop; one per loop,
 * made by {@link NextHops}.
 */
final class NextHopPool {
    /** Idle connections kept per loop; more are closed on release. */
    static final int MAX_IDLE = 512;

    private final EventLoop loop;
    private final long timeoutMs;
    private final Bootstrap bootstrap;
    private final ArrayDeque<Channel> idle = new ArrayDeque<>();

    NextHopPool(EventLoop loop, Endpoint next, long timeoutMs) {
        this.loop = loop;
        this.timeoutMs = timeoutMs;
        this.bootstrap = new Bootstrap().group(loop).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(timeoutMs, Integer.MAX_VALUE))
                .remoteAddress(next.host(), next.port())
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(NettyPeer.MAX_BODY_BYTES),
                                new NextHopConnection(NextHopPool.this));
                    }
                });
    }

    /** Sends the exchange on an idle connection, or on a new one; its outcome follows on this loop. */
    void send(NextHopExchange exchange) {
        assert loop.inEventLoop();
        exchange.deadline = loop.schedule(() -> timedOut(exchange), timeoutMs, TimeUnit.MILLISECONDS);
        Channel ch;
        while ((ch = idle.pollFirst()) != null) {
            if (ch.isActive()) {
                exchange.onReusedConnection = true;
                sendOn(ch, exchange);
                return;
            }
        }
        connectAndSend(exchange);
    }

    /** Opens a fresh connection for the exchange (first use, or the retry after a stale one). */
    void connectAndSend(NextHopExchange exchange) {
        exchange.onReusedConnection = false;
        ChannelFuture f = bootstrap.connect();
        f.addListener(done -> {
            if (exchange.finished()) {
                f.channel().close(); // its deadline passed while connecting
            } else if (done.isSuccess()) {
                sendOn(f.channel(), exchange);
            } else {
                exchange.fail("cannot connect to the next hop: " + done.cause().getMessage());
            }
        });
    }

    private void sendOn(Channel ch, NextHopExchange exchange) {
        exchange.channel = ch;
        NextHopConnection handler = ch.pipeline().get(NextHopConnection.class);
        handler.send(ch.pipeline().context(handler), exchange);
    }

    private void timedOut(NextHopExchange exchange) {
        if (exchange.finished()) {
            return;
        }
        Channel ch = exchange.channel;
        if (ch != null) {
            NextHopConnection handler = ch.pipeline().get(NextHopConnection.class);
            if (handler != null) {
                handler.abandon();
            }
            ch.close(); // a late answer could not be told from the next request's
        }
        exchange.fail("the next hop did not answer within " + timeoutMs + " ms");
    }

    /** Takes an answered connection back for the next forward. */
    void release(Channel ch) {
        if (ch.isActive() && idle.size() < MAX_IDLE) {
            idle.addFirst(ch);
        } else {
            ch.close();
        }
    }

    /** Drops a closed connection from the idle stack. */
    void forget(Channel ch) {
        idle.remove(ch);
    }
}
