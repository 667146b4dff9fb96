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
 * {@code inFlight} requests take that many keep-alive connections. {@code transport=cors} is
 * {@code cor://} inside TLS (a self-signed EC certificate made by keytool at setup). At the end
 * of a trial it prints the CPU the two loop threads spent per request (server and client
 * together): what TLS adds to a call, beside the time.
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
    @Param({"cor", "cors", "http"})
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

    private final java.util.concurrent.atomic.LongAdder requests = new java.util.concurrent.atomic.LongAdder();
    private long[] loopThreads;
    private long cpuAtStart;
    private long requestsAtStart;

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
            case "cor", "cors" -> {
                javax.net.ssl.SSLContext[] tls = transport.equals("cors") ? selfSigned() : new javax.net.ssl.SSLContext[2];
                server = CorProtoServer.builder().name("bench-server").loops(serverLoop).tls(tls[0])
                        .dispatcher(CorRestDispatcher.builder().application(app).workers(workers).build()).build().start();
                port = server.port();
                client = CorProtoClient.builder().name("bench-client").tls(tls[1]).build();
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
        loopThreads = new long[] {threadOf(serverLoop), threadOf(clientLoop)};
    }

    /** CPU per request is counted over the measurement only: from the first measured iteration on. */
    @Setup(Level.Iteration)
    public void markIteration(org.openjdk.jmh.infra.IterationParams iteration) {
        if (cpuAtStart == 0 && iteration.getType() == org.openjdk.jmh.runner.IterationType.MEASUREMENT) {
            cpuAtStart = loopCpuNanos();
            requestsAtStart = requests.sum();
        }
    }

    private static long threadOf(CorCoLoop loop) throws Exception {
        java.util.concurrent.CompletableFuture<Long> id = new java.util.concurrent.CompletableFuture<>();
        loop.execute(() -> id.complete(Thread.currentThread().threadId()));
        return id.get(5, TimeUnit.SECONDS);
    }

    private long loopCpuNanos() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long t : loopThreads) {
            sum += Math.max(0, mx.getThreadCpuTime(t));
        }
        return sum;
    }

    /** A server context with a self-signed EC certificate for 127.0.0.1, and a client context trusting it alone. */
    private static javax.net.ssl.SSLContext[] selfSigned() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("cor-bench-tls");
        java.nio.file.Path store = dir.resolve("bench.p12");
        char[] pass = "bench-only".toCharArray();
        Process keytool = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "bench", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
                "-ext", "san=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12",
                "-keystore", store.toString(), "-storepass", new String(pass), "-keypass", new String(pass))
                .redirectErrorStream(true).start();
        keytool.getInputStream().readAllBytes();
        if (!keytool.waitFor(60, TimeUnit.SECONDS) || keytool.exitValue() != 0) {
            throw new IllegalStateException("keytool failed");
        }
        java.security.KeyStore keys = java.security.KeyStore.getInstance("PKCS12");
        try (var in = java.nio.file.Files.newInputStream(store)) {
            keys.load(in, pass);
        }
        javax.net.ssl.KeyManagerFactory kmf = javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, pass);
        javax.net.ssl.SSLContext server = javax.net.ssl.SSLContext.getInstance("TLS");
        server.init(kmf.getKeyManagers(), null, null);
        java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("bench", keys.getCertificate("bench"));
        javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        javax.net.ssl.SSLContext client = javax.net.ssl.SSLContext.getInstance("TLS");
        client.init(null, tmf.getTrustManagers(), null);
        java.nio.file.Files.delete(store);
        java.nio.file.Files.delete(dir);
        return new javax.net.ssl.SSLContext[] {server, client};
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        long n = requests.sum() - requestsAtStart;
        if (n > 0) {
            System.out.printf("%n%s inFlight=%d: %.2f us of loop CPU per request (server and client loops, %d requests)%n",
                    transport, inFlight, (loopCpuNanos() - cpuAtStart) / 1000.0 / n, n);
        }
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
        requests.increment();
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
