package dev.cor.bench.netty;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import dev.cor.examples.gateway.BenchEntities;
import dev.cor.bench.cli.Cli;
import dev.cor.bench.cli.Endpoint;
import dev.cor.bench.cli.Flags;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;

/**
 * The Netty peer of the project's gateway example: one node of a forwarding chain.
 * {@code GET /entities/{id}} answers from a local in-memory map when the id is in it, else
 * forwards the same request to {@code --next} and relays the answer (status, Content-Type, body);
 * 404 with no next hop, 502 when the next hop fails. Forwards go through a pooled keep-alive
 * Netty client on the inbound connection's own event loop (no thread hop). Run:
 * {@code java -cp benchmarks.jar dev.cor.bench.netty.NettyChainNode [--host H] [--port N]
 * [--threads N] [--next http://host:port] [--next-timeout-ms N] [--preload]}; it prints
 * {@code listening on http://HOST:PORT} and stops on SIGTERM.
 */
public final class NettyChainNode {
    static final String USAGE = """
            usage: NettyChainNode [--host H] [--port N] [--threads N] [--next http://host:port]
                                  [--next-timeout-ms N] [--preload]
              --host H              address to bind (default 127.0.0.1)
              --port N              port (default 8080; 0 = any free port)
              --threads N           event loop threads, the acceptor included (default 1)
              --next URL            the next hop, http://host:port: unknown ids are forwarded there
              --next-timeout-ms N   time the next hop has to answer, connect included, before a 502 (default 10000)
              --preload             serve the benchmark entities urn:ngsi-ld:Bench:small and urn:ngsi-ld:Bench:attrs20""";

    static final long DEFAULT_NEXT_TIMEOUT_MS = 10_000;

    private NettyChainNode() {
    }

    public static void main(String[] args) throws InterruptedException {
        Config c = Cli.parseOrExit("NettyChainNode", USAGE, args, Config::parse);
        if (c == null) {
            return;
        }
        NettyPeer.serve("NettyChainNode", c.peer.host(), c.peer.port(), c.peer.threads(),
                handlers(c.next, c.nextTimeoutMs, c.preload));
    }

    /**
     * Starts a chain node in this JVM (tests, in-process comparisons); the caller closes it.
     *
     * @param next null for none: unknown ids are then 404
     */
    public static NettyPeer start(String host, int port, int threads, Endpoint next, long nextTimeoutMs, boolean preload)
            throws InterruptedException {
        return NettyPeer.start(host, port, threads, handlers(next, nextTimeoutMs, preload));
    }

    private static Supplier<ChannelHandler> handlers(Endpoint next, long nextTimeoutMs, boolean preload) {
        Map<String, ByteBuf> entities = preload ? preloaded() : Map.of();
        NextHops hops = next == null ? null : new NextHops(next, nextTimeoutMs);
        return () -> new ChainHandler(entities, hops);
    }

    private static Map<String, ByteBuf> preloaded() {
        Map<String, ByteBuf> m = new HashMap<>();
        m.put(BenchEntities.SMALL_ID, readOnly(BenchEntities.SMALL_JSON));
        m.put(BenchEntities.ATTRS20_ID, readOnly(BenchEntities.ATTRS20_JSON));
        return Map.copyOf(m);
    }

    // Shared by every connection and loop: answers write a duplicate, never the buffer itself.
    private static ByteBuf readOnly(String json) {
        return Unpooled.unreleasableBuffer(Unpooled.wrappedBuffer(BenchEntities.bytes(json)).asReadOnly());
    }

    /** The parsed command line. */
    private record Config(PeerOptions peer, Endpoint next, long nextTimeoutMs, boolean preload) {
        static Config parse(String[] args) {
            PeerOptions p = PeerOptions.parse(args, Set.of("next", "next-timeout-ms"), Set.of("preload"));
            Flags f = p.flags();
            String nextUrl = f.string("next", null);
            Endpoint next = null;
            if (nextUrl != null) {
                next = Endpoint.parse(nextUrl, "--next");
                if (!next.scheme().equals("http")) {
                    throw new Flags.FlagException("--next takes an http:// URL, not " + nextUrl);
                }
                if (!next.requestTarget().equals("/")) {
                    throw new Flags.FlagException("--next takes http://host:port only (the path is the request's): " + nextUrl);
                }
            }
            long timeout = f.number("next-timeout-ms", DEFAULT_NEXT_TIMEOUT_MS, 1, 600_000);
            return new Config(p, next, timeout, f.has("preload"));
        }
    }
}
