package dev.cor.ngsild.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.query.AggregationMethod;
import dev.cor.ngsild.query.TemporalAggregation;

/**
 * Random long histories of one attribute and random aggregations over them, to check a store's
 * {@link TemporalStore#aggregate} - which may take the summaries of its chunks - against the
 * default, which reads every instance of the window ({@link #plain}): the two must be equal, value
 * for value (ETSI GS CIM 009 V1.8 § 4.5.19, § 5.7.3/5.7.4). Used by the memory and the durable
 * stores' tests.
 */
public final class SummaryHistories {
    public static final String TENANT = "";
    public static final String ENTITY = "urn:ngsi-ld:Sensor:s";
    public static final String ATTRIBUTE = "https://example.org/temperature";
    public static final long T0 = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final String[] DURATIONS = {"PT1M", "PT5M", "PT10M", "PT1H", "P1D", null};

    private final Random r;
    /** Where the next in-order instance goes. */
    private long t = T0;
    /** The datasetId of the instances made now: it changes seldom, so that most chunks have one. */
    private String dataset;
    /** Whether the batch made now holds numbers, booleans and deletions only: chunks a store keeps the numbers of. */
    private boolean numbersOnly;

    public SummaryHistories(Random r) {
        this.r = r;
    }

    /** {@code n} instances, mostly in observedAt order a second or so apart (some equal), of every kind of value. */
    public List<TemporalInstance> batch(int n, boolean disorder) {
        List<TemporalInstance> out = new ArrayList<>(n);
        numbersOnly = r.nextBoolean();
        for (int k = 0; k < n; k++) {
            t += r.nextInt(4) * 1000L;
            long at = disorder && r.nextInt(40) == 0 ? t - r.nextInt(600) * 1000L : t;
            out.add(instance(at, k));
        }
        return out;
    }

    /** One instance at {@code at}: a number most of the time, sometimes a boolean, a text, a Relationship, a deletion. */
    public TemporalInstance instance(long at, int k) {
        if (r.nextInt(400) == 0) {
            dataset = dataset == null ? "urn:ds:1" : null;
        }
        String ds = r.nextInt(1000) == 0 ? "urn:ds:2" : dataset; // now and then one alone: a chunk of two datasetIds
        AttributeKind kind = r.nextInt(40) == 0 && !numbersOnly ? AttributeKind.RELATIONSHIP : AttributeKind.PROPERTY;
        boolean deleted = r.nextInt(30) == 0;
        JsonNode v = deleted ? TextNode.valueOf(Syntax.NGSI_LD_NULL)
                : kind == AttributeKind.RELATIONSHIP ? TextNode.valueOf("urn:ngsi-ld:T:" + r.nextInt(3)) : value(k);
        Attribute a = new Attribute(kind, v, ds, Instant.ofEpochMilli(at).toString(), null, null, null, null, at, at);
        return TemporalInstance.of(ATTRIBUTE, a, deleted ? at : TemporalInstance.NO_TIME);
    }

    private JsonNode value(int k) {
        int c = r.nextInt(200);
        if ((c == 199 && r.nextInt(20) > 0) || (numbersOnly && c >= 185 && c < 199)) {
            c = 0; // the huge ones rarer still: a chunk holding one is read, not summarised
        }
        if (c < 120) {
            return DoubleNode.valueOf((k % 1000) / 10.0); // what the benchmark records: sums that round
        }
        if (c < 160) {
            return IntNode.valueOf(r.nextInt(201) - 100);
        }
        if (c < 175) {
            return DoubleNode.valueOf(r.nextGaussian() * 1e9 + 1e12); // a large mean: stddev's cancellation
        }
        if (c < 185) {
            return BooleanNode.valueOf(r.nextBoolean());
        }
        if (c < 195) {
            return TextNode.valueOf(List.of("red", "green", "blue").get(r.nextInt(3)));
        }
        if (c < 197) {
            return DoubleNode.valueOf(r.nextBoolean() ? -0.0 : 0.0);
        }
        if (c < 199) {
            return F.objectNode().put("a", r.nextInt(2));
        }
        return DoubleNode.valueOf((r.nextBoolean() ? 1 : -1) * 1e300); // beyond what partials may sum
    }

    /** A new value for an instance, at its time or (sometimes) another. */
    public Attribute modified(TemporalInstance i) {
        long at = r.nextInt(10) == 0 ? i.observedAt() + (r.nextInt(7) - 3) * 60_000L : i.observedAt();
        TemporalInstance n = instance(at, r.nextInt(1000));
        return n.value();
    }

    /** A random window on observedAt over the history so far (unbounded on either side, or both). */
    public InstanceQuery window() {
        long span = t - T0 + 60_000;
        long a = T0 - 30_000 + (long) (r.nextDouble() * span);
        long b = T0 - 30_000 + (long) (r.nextDouble() * span);
        String ds = r.nextInt(8) == 0 ? (r.nextBoolean() ? InstanceQuery.DEFAULT_DATASET : "urn:ds:1") : null;
        return switch (r.nextInt(4)) {
            case 0 -> new InstanceQuery(TimeProperty.OBSERVED_AT, Long.MIN_VALUE, Long.MAX_VALUE, ds, 0);
            case 1 -> new InstanceQuery(TimeProperty.OBSERVED_AT, a, Long.MAX_VALUE, ds, 0);
            case 2 -> new InstanceQuery(TimeProperty.OBSERVED_AT, Long.MIN_VALUE, a, ds, 0);
            default -> new InstanceQuery(TimeProperty.OBSERVED_AT, Math.min(a, b), Math.max(a, b) + 1, ds, 0);
        };
    }

    /** Random methods (the summarised ones most often) and a random period. */
    public TemporalAggregation aggregation() {
        List<String> names = new ArrayList<>();
        for (AggregationMethod m : AggregationMethod.values()) {
            if (r.nextInt(m == AggregationMethod.DISTINCT_COUNT || m == AggregationMethod.MIN ? 6 : 2) == 0) {
                names.add(m.parameterName());
            }
        }
        if (names.isEmpty()) {
            names.add("avg");
        }
        return TemporalAggregation.parse(String.join(",", names), DURATIONS[r.nextInt(DURATIONS.length)]);
    }

    /** The datasetIds asked for: mostly all. */
    public Set<String> datasetIds() {
        return switch (r.nextInt(6)) {
            case 0 -> Set.of(InstanceQuery.DEFAULT_DATASET);
            case 1 -> Set.of("urn:ds:1");
            default -> null;
        };
    }

    /** What the default {@link TemporalStore#aggregate} answers: every instance of the window, read. */
    public static List<DatasetAggregate> plain(TemporalStore s, InstanceQuery window, Set<String> datasetIds,
            TemporalAggregation aggregation) {
        AggregationGroups g = new AggregationGroups(window, datasetIds);
        g.instances(s.instances(TENANT, ENTITY, ATTRIBUTE, window, Integer.MAX_VALUE));
        return g.aggregate(aggregation);
    }

    /** {@code queries} random aggregations: the store's answer is the plain one. */
    public void check(TemporalStore s, int queries, String why) {
        for (int q = 0; q < queries; q++) {
            InstanceQuery window = window();
            TemporalAggregation agg = aggregation();
            Set<String> ds = datasetIds();
            String what = why + ", query " + q + ": " + agg + " over " + window + ", datasetIds " + ds;
            assertEquals(plain(s, window, ds, agg), s.aggregate(TENANT, ENTITY, ATTRIBUTE, window, ds, agg), what);
        }
    }

    /** A random instance of the attribute as it is now, or {@code null}. */
    public TemporalInstance anyInstance(TemporalStore s) {
        List<TemporalInstance> all = s.instances(TENANT, ENTITY, ATTRIBUTE, InstanceQuery.ALL, Integer.MAX_VALUE);
        return all.isEmpty() ? null : all.get(r.nextInt(all.size()));
    }
}
