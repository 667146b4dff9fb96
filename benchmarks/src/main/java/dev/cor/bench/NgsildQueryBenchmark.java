package dev.cor.bench;

import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.ngsild.query.MatchBudget;
import dev.cor.ngsild.query.QueryExpression;
import dev.cor.rest.CorRestJson;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The q language on one entity: {@code parse} turns a five-clause expression (a comparison, a
 * range, a pattern, a compound member, a metadata time) into its tree with names expanded;
 * {@code evaluate} tests a parsed one against an entity that matches it (every clause is
 * evaluated); {@code parseAndEvaluate} is a query's per-request share plus one entity.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class NgsildQueryBenchmark {
    static final String Q = "speed>50;status==\"free\",\"reserved\";level==1..10;address[city]~=\"^Ber\";"
            + "speed.observedAt>=2020-01-01T00:00:00Z";

    private LdContext ctx;
    private Entity entity;
    private QueryExpression parsed;

    @Setup
    public void setUp() throws Exception {
        ctx = LdContexts.builder().build().core();
        JsonNode body = CorRestJson.mapper().readTree("""
                {"id": "urn:ngsi-ld:Car:1", "type": "Car",
                 "speed": {"type": "Property", "value": 80, "observedAt": "2021-03-01T10:00:00Z"},
                 "status": {"type": "Property", "value": "free"},
                 "level": {"type": "Property", "value": 4},
                 "address": {"type": "Property", "value": {"city": "Berlin", "street": "Unter den Linden"}},
                 "brand": {"type": "Property", "value": "Mercedes"}}""");
        entity = EntityEditor.create(new EntityParser(ctx, NgsildLimits.defaults()).entity(body, true,
                EntityParser.Mode.WHOLE), 0);
        parsed = QueryExpression.parse(Q, ctx);
        if (!parsed.test(entity, MatchBudget.oneMatch())) {
            throw new IllegalStateException("the benchmark entity must match every clause");
        }
    }

    @Benchmark
    public QueryExpression parse() {
        return QueryExpression.parse(Q, ctx);
    }

    @Benchmark
    public boolean evaluate() {
        return parsed.test(entity, MatchBudget.oneMatch());
    }

    @Benchmark
    public boolean parseAndEvaluate() {
        return QueryExpression.parse(Q, ctx).test(entity, MatchBudget.oneMatch());
    }
}
