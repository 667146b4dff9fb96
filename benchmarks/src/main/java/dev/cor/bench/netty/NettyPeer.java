package dev.cor.bench.netty;

import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;

/**
 * One running Netty HTTP/1.1 peer: its event loop group (NIO, the 4.2 API), the listening channel
 * on it and the standard server pipeline (codec, keep-alive, aggregation up to
 * {@link #MAX_BODY_BYTES}) ending in the application's handler. The acceptor shares the group
 * with the connections, as cor-http's first loop does, so {@code --threads 1} is one thread in
 * all. The peers' mains start one with {@link #start} and {@link #runUntilStopped()}.
 */
public final class NettyPeer implements AutoCloseable {
    /** Largest request body a peer aggregates (413 past it): the benchmarks send small bodies. */
    public static final int MAX_BODY_BYTES = 1024 * 1024;

    private final EventLoopGroup group;
    private final Channel listener;
    private final CountDownLatch closed = new CountDownLatch(1);

    private NettyPeer(EventLoopGroup group, Channel listener) {
        this.group = group;
        this.listener = listener;
    }

    /**
     * Binds {@code host:port} with {@code threads} event loops; each new connection gets its own
     * handler from {@code handlers}. Prints nothing: {@link #announce} does.
     *
     * @throws IllegalStateException when the port cannot be bound (the loops are ended again)
     * @throws InterruptedException  when interrupted while binding
     */
    public static NettyPeer start(String host, int port, int threads, Supplier<ChannelHandler> handlers)
            throws InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory());
        boolean started = false;
        try {
            ServerBootstrap b = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 1024).option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new HttpServerCodec(), new HttpServerKeepAliveHandler(),
                                    new HttpObjectAggregator(MAX_BODY_BYTES), handlers.get());
                        }
                    });
            // await, not sync: sync rethrows a bind failure as an undeclared checked exception.
            ChannelFuture bound = b.bind(host, port).await();
            if (!bound.isSuccess()) {
                throw new IllegalStateException("cannot listen on " + host + ":" + port + ": " + bound.cause().getMessage(),
                        bound.cause());
            }
            started = true;
            return new NettyPeer(group, bound.channel());
        } finally {
            if (!started) {
                group.shutdownGracefully(0, 0, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * What a peer's main does: starts, prints {@code listening on http://HOST:PORT}, serves until
     * SIGTERM. A port that cannot be bound ends the JVM with status 1 and a one-line reason.
     */
    static void serve(String tool, String host, int port, int threads, Supplier<ChannelHandler> handlers)
            throws InterruptedException {
        NettyPeer peer;
        try {
            peer = start(host, port, threads, handlers);
        } catch (IllegalStateException e) {
            System.err.println(tool + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        peer.announce(host);
        peer.runUntilStopped();
    }

    /** The bound port (the real one when 0 was asked for). */
    public int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /** Prints the one line scripts wait for: {@code listening on http://HOST:PORT}. */
    public void announce(String host) {
        String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        System.out.println("listening on http://" + h + ":" + port());
        System.out.flush();
    }

    /** Blocks until {@link #close()}; SIGTERM and Ctrl-C close the peer and so end the wait. */
    public void runUntilStopped() throws InterruptedException {
        Runtime.getRuntime().addShutdownHook(new Thread(this::close, "netty-peer-stop"));
        closed.await();
    }

    /** Closes the listener and ends the event loops (in-flight work gets a short grace). Idempotent. */
    @Override
    public void close() {
        try {
            listener.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        } finally {
            closed.countDown();
        }
    }
}
