package dev.cor.bench.netty;

import java.nio.charset.StandardCharsets;
import java.util.Set;

import dev.cor.bench.cli.Cli;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * The Netty peer of {@code examples/hello}: {@code GET /hello} answers {@code {"hello":"world"}}
 * as {@code application/json} on keep-alive connections, anything else 404 (405 for another
 * method). Run: {@code java -cp benchmarks.jar dev.cor.bench.netty.NettyHello [--host H]
 * [--port N] [--threads N]}; it prints {@code listening on http://HOST:PORT} and stops on SIGTERM.
 */
public final class NettyHello {
    static final String USAGE = """
            usage: NettyHello [--host H] [--port N] [--threads N]
              --host H      address to bind (default 127.0.0.1)
              --port N      port (default 8080; 0 = any free port)
              --threads N   event loop threads, the acceptor included (default 1)""";

    private static final byte[] HELLO = "{\"hello\":\"world\"}".getBytes(StandardCharsets.UTF_8);
    // One read-only buffer shared by every answer: a duplicate per write costs no copy.
    private static final ByteBuf HELLO_BUF = Unpooled.unreleasableBuffer(Unpooled.wrappedBuffer(HELLO).asReadOnly());

    private NettyHello() {
    }

    public static void main(String[] args) throws InterruptedException {
        PeerOptions o = Cli.parseOrExit("NettyHello", USAGE, args, a -> PeerOptions.parse(a, Set.of(), Set.of()));
        if (o == null) {
            return;
        }
        NettyPeer.serve("NettyHello", o.host(), o.port(), o.threads(), HelloHandler::new);
    }

    /** Starts a hello peer in this JVM (tests, in-process comparisons); the caller closes it. */
    public static NettyPeer start(String host, int port, int threads) throws InterruptedException {
        return NettyPeer.start(host, port, threads, HelloHandler::new);
    }

    /** Answers one connection's requests, on its event loop. */
    private static final class HelloHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            String path = request.uri();
            int q = path.indexOf('?');
            if (q >= 0) {
                path = path.substring(0, q);
            }
            if (!path.equals("/hello")) {
                NettyAnswers.error(ctx, HttpResponseStatus.NOT_FOUND, "no resource " + path + " (try /hello)");
            } else if (!request.method().equals(HttpMethod.GET)) {
                NettyAnswers.error(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "/hello takes GET");
            } else {
                NettyAnswers.send(ctx, HttpResponseStatus.OK, NettyAnswers.JSON, HELLO_BUF.duplicate());
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
