package dev.cor.bench;

import java.util.concurrent.TimeUnit;

import dev.cor.examples.gateway.BenchEntities;
import dev.cor.ngsild.CorNgsild;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * The broker's own work for one {@code GET /ngsi-ld/v1/entities/{id}} of a bench entity, with no
 * socket: the "can this wait?" answer and the handler, as a server's loop runs them for a request
 * it read (the answer's bytes come from the entity's render cache after the first). What a GET
 * costs on top of the HTTP server's parsing and writing, which the gateway pays too.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class NgsildGetBenchmark {
    @Param({"small", "attrs20"})
    public String entity;

    private CorNgsild broker;
    private CorRestApplication app;
    private String path;

    @Setup
    public void setUp() throws Exception {
        broker = CorNgsild.builder().build();
        app = broker.application();
        for (byte[] e : new byte[][] {BenchEntities.SMALL, BenchEntities.ATTRS20}) {
            CorRest create = CorRest.builder("POST", "/ngsi-ld/v1/entities").header("Host", "127.0.0.1")
                    .header("Content-Type", "application/json").header("Content-Length", Integer.toString(e.length))
                    .body(e).build();
            app.canWait(create);
            app.handle(create);
            if (create.status() != 201) {
                throw new IllegalStateException("create answered " + create.status());
            }
        }
        path = "/ngsi-ld/v1/entities/" + (entity.equals("small") ? BenchEntities.SMALL_ID : BenchEntities.ATTRS20_ID);
    }

    @TearDown
    public void tearDown() {
        broker.close();
    }

    @Benchmark
    public byte[] get() throws Exception {
        CorRest r = CorRest.builder("GET", path).header("Host", "127.0.0.1").header("User-Agent", "corRequest").build();
        app.canWait(r);
        app.handle(r);
        return r.responseBody();
    }
}
