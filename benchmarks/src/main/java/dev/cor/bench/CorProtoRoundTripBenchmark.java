package dev.cor.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoListener;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTask;
import dev.cor.rest.CorRest;
import dev.cor.http.CorHttpServer;
import dev.cor.rest.CorRestJson;
import dev.cor.rest.client.CorRestClient;
import dev.cor.rest.client.CorRestClientRequest;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestDispatcher;
import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.CorRestWorkers;
import dev.cor.rest.proto.CorProtoClient;
import dev.cor.rest.proto.CorProtoServer;
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
 * Request/response round trips on one multiplexed {@code cor://} connection to an in-process
 * server: the benchmark thread hands {@code inFlight} requests to the client's loop - one
 * coroutine each, all on the one connection - and waits until every answer is in. One operation
 * is that whole batch: divide by {@code inFlight} for a request. The server answers inline on its
 * own loop (a small entity in, 200 with a small body out), so what is measured is the protocol,
 * the loops and the coroutines, not an application.
 * <p>
 * {@code transport=http} is the comparison in the same run: the same requests through
 * {@code CorRestClient} to the built-in HTTP server on one loop - HTTP/1.1 cannot multiplex, so
 * {@code inFlight} requests take that many keep-alive connections.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Benchmark)
public class CorProtoRoundTripBenchmark {
    /** Requests in flight at once on the one connection. */
    @Param({"1", "16"})
    public int inFlight;

    /** How the requests travel: {@code cor://} to the cor:// server, or HTTP/1.1 to cor-http. */
    @Param({"cor", "http"})
    public String transport;

    private static final byte[] ANSWER = "{\"ok\":true}".getBytes(java.nio.charset.StandardCharsets.UTF_8);

    private CorCoLoop serverLoop;
    private CorCoLoop clientLoop;
    private CorRestWorkers workers;
    private CorProtoServer server;
    private CorProtoClient client;
    private CorHttpServer http;
    private CorRestClient httpClient;
    private CorCoTask sender;
    private int port;
    private ObjectNode body;
    private final CorRestHeaders headers = new CorRestHeaders().add("Content-Type", "application/json");

    // The batch: started and counted on the client loop, waited for by the benchmark thread.
    private volatile Thread benchThread;
    private volatile boolean batchDone;
    private volatile Throwable failure;
    private int remaining;
    private final CorCoTask request = this::request;
    private final CorCoListener answered = this::answered;
    private final Runnable startBatch = this::startBatch;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        serverLoop = CorCoLoop.builder().name("bench-cor-server").watchdogMs(0).build().start();
        clientLoop = CorCoLoop.builder().name("bench-cor-client").watchdogMs(0).build().start();
        workers = CorRestWorkers.create("bench-worker", 1, 64);
        body = CorProtoCodecBenchmark.entity(CorRestJson.mapper(), 3);
        CorRestApplication app = new CorRestApplication() {
            @Override
            public boolean canWait(CorRest r) {
                return false;
            }

            @Override
            public void handle(CorRest r) {
                r.respond(200, "application/json", ANSWER);
            }
        };
        switch (transport) {
            case "cor" -> {
                server = CorProtoServer.builder().name("bench-server").loops(serverLoop)
                        .dispatcher(CorRestDispatcher.builder().application(app).workers(workers).build()).build().start();
                port = server.port();
                client = CorProtoClient.builder().name("bench-client").build();
                sender = () -> client.send("POST", "127.0.0.1", port, "/ngsi-ld/v1/entities", null, headers, body, null).status();
            }
            case "http" -> {
                http = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).application(app).workers(workers).build().start();
                httpClient = CorRestClient.builder().build();
                byte[] text = CorRestJson.mapper().writeValueAsBytes(body);
                String url = "http://127.0.0.1:" + http.port() + "/ngsi-ld/v1/entities";
                sender = () -> httpClient.send(CorRestClientRequest.post(url, "application/json", text)).status();
            }
            default -> throw new IllegalArgumentException("unknown transport " + transport);
        }
        benchThread = Thread.currentThread();
        roundTrip(); // opens the connection
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        if (client != null) {
            client.close();
            server.stop();
        }
        if (http != null) {
            httpClient.close();
            http.stop();
        }
        clientLoop.stop();
        serverLoop.stop();
        clientLoop.awaitTermination(5, TimeUnit.SECONDS);
        serverLoop.awaitTermination(5, TimeUnit.SECONDS);
        workers.close();
    }

    private void startBatch() {
        remaining = inFlight;
        for (int i = 0; i < inFlight; i++) {
            if (CorCo.start(request, answered) == null) {
                failure = new IllegalStateException("coroutines are off in this JVM: run it with the flags of BenchMain");
                batchDone = true;
                return;
            }
        }
    }

    private Object request() throws Exception {
        return sender.run();
    }

    private void answered(CorCo co) {
        if (co.error() != null) {
            failure = co.error();
        }
        if (--remaining == 0) {
            batchDone = true;
            LockSupport.unpark(benchThread);
        }
    }

    @Benchmark
    public void roundTrip() {
        benchThread = Thread.currentThread();
        batchDone = false;
        clientLoop.execute(startBatch);
        while (!batchDone) {
            LockSupport.park(this);
        }
        if (failure != null) {
            throw new IllegalStateException("a request failed", failure);
        }
    }
}
