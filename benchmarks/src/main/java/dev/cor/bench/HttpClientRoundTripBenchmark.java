package dev.cor.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.HttpServer;

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
 * One GET round trip of the HTTP client to a local in-process server (the JDK's HttpServer on
 * 127.0.0.1, two threads), on a kept-alive connection. The benchmark thread hands the request
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

    private HttpServer server;
    private ExecutorService serverThreads;
    private CorRestClient client;
    private CorRestClientRequest request;
    private CorCoLoop loop;
    private CorRestWorkers workers;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        byte[] body = "{\"id\":\"urn:ngsi-ld:Bench:1\",\"type\":\"Bench\"}".getBytes(StandardCharsets.UTF_8);
        server = HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), 128);
        serverThreads = Executors.newFixedThreadPool(2);
        server.setExecutor(serverThreads);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        client = CorRestClient.builder().build();
        request = CorRestClientRequest.get("http://127.0.0.1:" + server.getAddress().getPort() + "/entities/1");
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
        server.stop(0);
        serverThreads.shutdownNow();
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
}
