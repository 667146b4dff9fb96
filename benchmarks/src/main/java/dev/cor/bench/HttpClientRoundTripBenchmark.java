package dev.cor.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.rest.CorRestWorkers;
import dev.cor.rest.client.CorRestClient;
import dev.cor.rest.client.CorRestClientRequest;
import dev.cor.rest.client.CorRestClientResponse;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One GET round trip of the HTTP client to a local in-process server on 127.0.0.1 - a tiny NIO
 * server on one thread that answers every request with the same small JSON, so the figure is the
 * client's and the hand-over's rather than a server's (the JDK's HttpServer alone costs several
 * times the client here) - on a kept-alive connection. The benchmark thread hands the request
 * over and waits for the response: either to a coroutine of a started loop (the client yields on
 * its socket and the loop resumes it), or to a worker of the hop (the client blocks the worker).
 * Same client, same server, same hand-over; only the waiting side differs.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Benchmark)
public class HttpClientRoundTripBenchmark {
    @Param({"coroutine", "worker"})
    public String caller;

    private TinyServer server;
    private CorRestClient client;
    private CorRestClientRequest request;
    private CorCoLoop loop;
    private CorRestWorkers workers;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        server = new TinyServer("{\"id\":\"urn:ngsi-ld:Bench:1\",\"type\":\"Bench\"}");
        client = CorRestClient.builder().build();
        request = CorRestClientRequest.get("http://127.0.0.1:" + server.port() + "/entities/1");
        if (caller.equals("coroutine")) {
            loop = CorCoLoop.builder().name("bench-loop").watchdogMs(0).build().start();
        } else {
            workers = CorRestWorkers.create("bench-worker", 1, 64);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        client.close();
        if (loop != null) {
            loop.stop();
            loop.awaitTermination(5, TimeUnit.SECONDS);
        }
        if (workers != null) {
            workers.close();
        }
        server.close();
    }

    private void sendInto(CompletableFuture<CorRestClientResponse> f) {
        try {
            f.complete(client.send(request));
        } catch (Throwable t) {
            f.completeExceptionally(t);
        }
    }

    @Benchmark
    public int roundTrip() throws Exception {
        CompletableFuture<CorRestClientResponse> f = new CompletableFuture<>();
        if (loop != null) {
            loop.execute(() -> {
                if (CorCo.start(() -> {
                    sendInto(f);
                    return null;
                }) == null) {
                    f.completeExceptionally(new IllegalStateException("coroutines are off in this JVM: run it with the flags of BenchMain"));
                }
            });
        } else if (!workers.submit(() -> sendInto(f))) {
            throw new IllegalStateException("the worker queue is full");
        }
        return f.get(10, TimeUnit.SECONDS).status();
    }

    /** Answers each GET on each keep-alive connection with one canned response; one thread, one selector. */
    static final class TinyServer implements AutoCloseable {
        private final ServerSocketChannel listener;
        private final Selector selector;
        private final ByteBuffer response;
        private final Thread thread;
        private volatile boolean running = true;

        TinyServer(String json) throws IOException {
            byte[] body = json.getBytes(StandardCharsets.UTF_8);
            byte[] head = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            response = ByteBuffer.allocateDirect(head.length + body.length).put(head).put(body).flip();
            listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), 128);
            listener.configureBlocking(false);
            selector = Selector.open();
            listener.register(selector, SelectionKey.OP_ACCEPT);
            thread = Thread.ofPlatform().daemon().name("bench-tiny-server").start(this::run);
        }

        int port() throws IOException {
            return ((InetSocketAddress) listener.getLocalAddress()).getPort();
        }

        private void run() {
            try {
                while (running) {
                    selector.select(key -> {
                        try {
                            if (key.isAcceptable()) {
                                SocketChannel ch = listener.accept();
                                if (ch != null) {
                                    ch.configureBlocking(false);
                                    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                                    ch.register(selector, SelectionKey.OP_READ, ByteBuffer.allocate(8192));
                                }
                            } else if (key.isReadable()) {
                                serve(key);
                            }
                        } catch (IOException e) {
                            key.cancel();
                            try {
                                key.channel().close();
                            } catch (IOException ignored) {
                                // closing
                            }
                        }
                    });
                }
            } catch (IOException e) {
                // closed at tear-down
            }
        }

        /** Answers every complete request head read so far (GETs: no body). */
        private void serve(SelectionKey key) throws IOException {
            SocketChannel ch = (SocketChannel) key.channel();
            ByteBuffer in = (ByteBuffer) key.attachment();
            if (ch.read(in) < 0) {
                throw new IOException("closed");
            }
            int consumed = 0;
            for (int i = 3; i < in.position(); i++) {
                if (in.get(i) == '\n' && in.get(i - 1) == '\r' && in.get(i - 2) == '\n' && in.get(i - 3) == '\r') {
                    ByteBuffer out = response.duplicate();
                    while (out.hasRemaining()) {
                        ch.write(out); // a few hundred bytes into an empty loopback buffer: never full here
                    }
                    consumed = i + 1;
                }
            }
            if (consumed > 0) {
                in.flip().position(consumed);
                in.compact();
            } else if (!in.hasRemaining()) {
                throw new IOException("a request head over 8 KiB");
            }
        }

        @Override
        public void close() throws Exception {
            running = false;
            selector.wakeup();
            thread.join(5000);
            for (SelectionKey k : selector.keys()) {
                k.channel().close();
            }
            selector.close();
            listener.close();
        }
    }
}
