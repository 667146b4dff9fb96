package dev.cor.bench.netty;

import java.nio.charset.StandardCharsets;

import dev.cor.bench.JsonText;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

/**
 * How the Netty peers write an answer: a full HTTP/1.1 response with its Content-Length, so
 * {@link io.netty.handler.codec.http.HttpServerKeepAliveHandler} keeps the connection open (or
 * closes it after this answer when the request asked so). Errors are small problem-details JSON.
 * Called on the connection's event loop only.
 */
final class NettyAnswers {
    static final String JSON = "application/json";

    private NettyAnswers() {
    }

    /** Writes {@code body} (ownership passes to Netty) with {@code status} and {@code contentType}. */
    static void send(ChannelHandlerContext ctx, HttpResponseStatus status, String contentType, ByteBuf body) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        if (contentType != null) {
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        }
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        ctx.writeAndFlush(response);
    }

    /** Writes a JSON error: {@code {"type":..,"title":..,"status":..,"detail":..}}. */
    static void error(ChannelHandlerContext ctx, HttpResponseStatus status, String detail) {
        String json = "{\"type\":\"about:blank\",\"title\":" + JsonText.quote(status.reasonPhrase()) + ",\"status\":"
                + status.code() + ",\"detail\":" + JsonText.quote(detail) + "}";
        send(ctx, status, JSON, Unpooled.wrappedBuffer(json.getBytes(StandardCharsets.UTF_8)));
    }
}
