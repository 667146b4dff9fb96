package dev.cor.bench.netty;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpUtil;

/**
 * The last handler of one outbound connection to the next hop: it carries at most one
 * {@link NextHopExchange} at a time (no pipelining), hands the answer to it and gives the
 * connection back to its {@link NextHopPool}. A connection that closes under an exchange fails
 * it, or retries it once on a fresh connection when it was an idle pooled one that went stale.
 * Runs on the pool's event loop only.
 */
final class NextHopConnection extends SimpleChannelInboundHandler<FullHttpResponse> {
    private final NextHopPool pool;
    private NextHopExchange current;

    NextHopConnection(NextHopPool pool) {
        this.pool = pool;
    }

    /** Sends {@code exchange}'s request on this connection; it must be idle. */
    void send(ChannelHandlerContext ctx, NextHopExchange exchange) {
        if (current != null) {
            throw new IllegalStateException("a next-hop connection carries one request at a time");
        }
        current = exchange;
        ctx.writeAndFlush(exchange.request.get()).addListener(f -> {
            if (!f.isSuccess()) {
                ctx.close(); // channelInactive fails or retries the exchange
            }
        });
    }

    /** Drops the exchange without touching the connection: its deadline passed, the caller closes us. */
    void abandon() {
        current = null;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
        NextHopExchange e = current;
        current = null;
        if (e == null) {
            ctx.close(); // an answer nobody asked for: the connection can no longer be trusted
            return;
        }
        if (!response.decoderResult().isSuccess()) {
            ctx.close();
            e.fail("bad answer from the next hop: " + response.decoderResult().cause());
            return;
        }
        if (HttpUtil.isKeepAlive(response)) {
            pool.release(ctx.channel());
        } else {
            ctx.close();
        }
        e.answer(response);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        pool.forget(ctx.channel());
        NextHopExchange e = current;
        current = null;
        if (e != null && !e.finished()) {
            if (e.onReusedConnection && !e.retried) {
                e.retried = true;
                pool.connectAndSend(e);
            } else {
                e.fail("the next hop closed the connection");
            }
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
