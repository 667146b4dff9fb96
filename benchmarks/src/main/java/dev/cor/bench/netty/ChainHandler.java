package dev.cor.bench.netty;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;

/**
 * One inbound connection of a chain node: {@code GET /entities/{id}} is answered from the local
 * entities or forwarded to the next hop through this loop's {@link NextHopPool}, and the next
 * hop's status, Content-Type and body are relayed. Requests are answered one at a time in the
 * order they came (a pipelining client gets its answers in order), at most
 * {@link #MAX_WAITING} queued. Runs on the connection's event loop only.
 */
final class ChainHandler extends ChannelInboundHandlerAdapter {
    static final String ENTITIES = "/entities/";
    /** Pipelined requests a connection may queue behind a forward; past it the connection is closed. */
    static final int MAX_WAITING = 64;
    // Headers that belong to one connection, not to the request (RFC 9110 7.6.1).
    private static final List<CharSequence> HOP_BY_HOP = List.of(HttpHeaderNames.CONNECTION,
            HttpHeaderNames.KEEP_ALIVE, HttpHeaderNames.PROXY_CONNECTION, HttpHeaderNames.TE,
            HttpHeaderNames.TRAILER, HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderNames.UPGRADE);

    private final Map<String, ByteBuf> entities;
    private final NextHops nextHops;
    private final ArrayDeque<FullHttpRequest> waiting = new ArrayDeque<>();
    private NextHopPool pool;
    private boolean forwarding;

    /** {@code entities}: read-only buffers, duplicated per answer; {@code nextHops} may be null (no next hop). */
    ChainHandler(Map<String, ByteBuf> entities, NextHops nextHops) {
        this.entities = entities;
        this.nextHops = nextHops;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            io.netty.util.ReferenceCountUtil.release(msg);
            return;
        }
        if (waiting.size() >= MAX_WAITING) {
            request.release();
            ctx.close();
            return;
        }
        waiting.addLast(request);
        answerWaiting(ctx);
    }

    /** Answers queued requests until one has to wait for the next hop. */
    private void answerWaiting(ChannelHandlerContext ctx) {
        FullHttpRequest request;
        while (!forwarding && (request = waiting.pollFirst()) != null) {
            try {
                forwarding = handle(ctx, request);
            } finally {
                if (!forwarding) {
                    request.release();
                }
            }
        }
    }

    /** Answers {@code request} now, or starts forwarding it and returns true (it is released when answered). */
    private boolean handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (!request.decoderResult().isSuccess()) {
            NettyAnswers.error(ctx, HttpResponseStatus.BAD_REQUEST, "malformed request");
            return false;
        }
        String path = new QueryStringDecoder(request.uri()).path();
        if (!path.startsWith(ENTITIES) || path.length() == ENTITIES.length()
                || path.indexOf('/', ENTITIES.length()) >= 0) {
            NettyAnswers.error(ctx, HttpResponseStatus.NOT_FOUND, "no resource " + path + " (try /entities/{id})");
            return false;
        }
        if (!request.method().equals(HttpMethod.GET)) {
            NettyAnswers.error(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "/entities/{id} takes GET");
            return false;
        }
        String id = path.substring(ENTITIES.length());
        ByteBuf local = entities.get(id);
        if (local != null) {
            NettyAnswers.send(ctx, HttpResponseStatus.OK, NettyAnswers.JSON, local.duplicate());
            return false;
        }
        if (nextHops == null) {
            NettyAnswers.error(ctx, HttpResponseStatus.NOT_FOUND, "entity " + id + " not found");
            return false;
        }
        forward(ctx, request);
        return true;
    }

    private void forward(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (pool == null) {
            pool = nextHops.poolOf(ctx.channel().eventLoop());
        }
        pool.send(new NextHopExchange(() -> outbound(request), new NextHopExchange.Outcome() {
            @Override
            public void answered(FullHttpResponse response) {
                String type = response.headers().get(HttpHeaderNames.CONTENT_TYPE);
                NettyAnswers.send(ctx, response.status(), type, response.content().retain());
                forwarded(ctx, request);
            }

            @Override
            public void failed(String reason) {
                NettyAnswers.error(ctx, HttpResponseStatus.BAD_GATEWAY, reason);
                forwarded(ctx, request);
            }
        }));
    }

    private void forwarded(ChannelHandlerContext ctx, FullHttpRequest request) {
        request.release();
        forwarding = false;
        if (ctx.channel().isActive()) {
            answerWaiting(ctx);
        }
    }

    /** The request as the next hop gets it: same method, target, headers and body, its own Host. */
    private FullHttpRequest outbound(FullHttpRequest in) {
        FullHttpRequest out = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, in.method(), in.uri(),
                in.content().retainedDuplicate());
        out.headers().set(in.headers());
        for (CharSequence name : HOP_BY_HOP) {
            out.headers().remove(name);
        }
        out.headers().set(HttpHeaderNames.HOST, nextHops.next().authority());
        if (out.content().isReadable()) {
            out.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, out.content().readableBytes());
        } else {
            out.headers().remove(HttpHeaderNames.CONTENT_LENGTH);
        }
        return out;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        FullHttpRequest r;
        while ((r = waiting.pollFirst()) != null) {
            r.release();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
