package dev.cor.bench;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.examples.gateway.BenchEntities;
import dev.cor.ngsild.ld.ContextRef;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.EntityRenderer;
import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.rest.CorRestJson;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The broker's term work on the 20-attribute bench entity: {@code expand} reads it from its JSON
 * tree into the model (every name and the type expanded, every value checked), {@code compact}
 * writes the stored record back as normalized JSON bytes (every IRI compacted), {@code both} is
 * a write's and an uncached read's share of it. {@code context}: the core context alone, or a user
 * context defining each of the twenty names as a term (the expander's look-ups then hit the
 * user's definitions, not the core's {@code @vocab}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class NgsildEntityBenchmark {
    @Param({"core", "user"})
    public String context;

    private LdContext ctx;
    private JsonNode body;
    private Entity entity;
    private EntityParser parser;
    private final EntityRenderer.Options normalized = EntityRenderer.Options.normalized();

    @Setup
    public void setUp() throws IOException {
        LdContexts contexts = LdContexts.builder().build();
        if (context.equals("core")) {
            ctx = contexts.core();
        } else {
            StringBuilder terms = new StringBuilder("{\"Bench\": \"https://example.org/bench/Bench\"");
            for (int i = 1; i <= 20; i++) {
                terms.append(String.format(", \"attr%02d\": \"https://example.org/bench/attr%02d\"", i, i));
            }
            ctx = contexts.resolve(ContextRef.body(CorRestJson.mapper().readTree(terms.append('}').toString())), 1_000);
        }
        body = CorRestJson.mapper().readTree(BenchEntities.ATTRS20);
        parser = new EntityParser(ctx, NgsildLimits.defaults());
        entity = EntityEditor.create(parser.entity(body, true, EntityParser.Mode.WHOLE), 0);
    }

    @Benchmark
    public Entity expand() {
        return EntityEditor.create(parser.entity(body, true, EntityParser.Mode.WHOLE), 0);
    }

    @Benchmark
    public byte[] compact() {
        return EntityRenderer.render(entity, ctx, normalized, null);
    }

    @Benchmark
    public byte[] both() {
        return EntityRenderer.render(EntityEditor.create(parser.entity(body, true, EntityParser.Mode.WHOLE), 0), ctx, normalized, null);
    }
}
