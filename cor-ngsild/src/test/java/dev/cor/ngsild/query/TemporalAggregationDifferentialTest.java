package dev.cor.ngsild.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.MathContext;
import java.time.Duration;
import java.time.Instant;
import java.time.Period;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import org.junit.jupiter.api.Test;

/**
 * Differential test of {@link TemporalAggregation}: on seeded random histories (integers, doubles,
 * decimals, large longs, texts and typed date-times, booleans, objects, Relationships and
 * JsonProperties, deletions, instances without the compared time, equal times), random windows
 * ({@code before}, {@code after}, {@code between}, none) and random periods (fixed, calendar
 * months and years, mixed, the whole window), every method agrees with a plain computation
 * written here: the periods enumerated one by one from the definition, each period's values
 * found by a filter over every instance, and the methods computed exactly in {@link BigDecimal}.
 * The seed is printed on failure; {@code -Dcor.aggr.seed=N} replays one.
 */
class TemporalAggregationDifferentialTest {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final String[] WORDS = {"red", "green", "blue", "2020-01-01T00:00:00Z", "2019-06-30T12:00:00Z", ""};
    private static final String[] DURATIONS = {"PT1S", "PT10S", "PT1M", "PT7M", "PT1H", "PT5H", "P1D", "P1W", "P1M", "P2M", "P1Y",
        "P1M2DT3H", "PT1.5S", "P1DT12H", "PT0S", null};
    private static final long BASE = Instant.parse("2020-01-29T22:00:00Z").toEpochMilli();
    private static final TimeProperty[] PROPERTIES = {TimeProperty.OBSERVED_AT, TimeProperty.CREATED_AT, TimeProperty.MODIFIED_AT};

    @Test
    void everyMethodAgreesWithAPlainExactComputation() {
        long seed = Long.getLong("cor.aggr.seed", System.nanoTime());
        try {
            run(seed, 1000);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed " + seed + " (replay with -Dcor.aggr.seed=" + seed + "): " + e.getMessage(), e);
        }
    }

    private static void run(long seed, int cases) {
        Random r = new Random(seed);
        int periodsSeen = 0;
        for (int c = 0; c < cases; c++) {
            String duration = DURATIONS[r.nextInt(DURATIONS.length)];
            TemporalAggregation agg = TemporalAggregation.parse(randomMethods(r), duration);
            long stepMs = approxStep(duration);
            TimeProperty property = PROPERTIES[r.nextInt(PROPERTIES.length)];
            List<TemporalInstance> all = randomHistory(r, stepMs, property);
            long[] window = randomWindow(r, all, property, stepMs);
            long from = window[0];
            long to = window[1];
            // as the store answers: the window's instances, unless the case hands over all of them
            List<TemporalInstance> given = r.nextInt(4) == 0 ? all : all.stream().filter(i -> inWindow(i.time(property), from, to)).toList();
            String what = "case " + c + ": " + agg + ", window [" + iso(from) + ", " + iso(to) + ") on " + property + ", " + all.size()
                    + " instances";
            Map<AggregationMethod, List<AggregatedPeriod>> actual = agg.aggregate(given, from, to, i -> i.time(property),
                    TemporalAggregationTest::valueOf);
            Map<AggregationMethod, List<Expected>> expected = reference(agg, duration, all, from, to, property);
            assertEquals(agg.methods(), List.copyOf(actual.keySet()), what);
            for (AggregationMethod m : agg.methods()) {
                compare(m, expected.get(m), actual.get(m), what);
                periodsSeen += expected.get(m).size();
            }
        }
        assertTrue(periodsSeen > cases, "the cases hold periods: " + periodsSeen);
    }

    // ---- the plain computation

    /** What a period of a method should hold, within {@code tolerance} for a computed double. */
    private record Expected(AggregatedPeriod period, double tolerance) {
    }

    private static Map<AggregationMethod, List<Expected>> reference(TemporalAggregation agg, String duration,
            List<TemporalInstance> all, long from, long to, TimeProperty property) {
        List<TemporalInstance> values = new ArrayList<>();
        for (TemporalInstance i : all) {
            if (!i.deleted() && inWindow(i.time(property), from, to)) {
                values.add(i);
            }
        }
        Map<AggregationMethod, List<Expected>> out = new java.util.LinkedHashMap<>();
        for (AggregationMethod m : agg.methods()) {
            out.put(m, new ArrayList<>());
        }
        if (values.isEmpty()) {
            return out;
        }
        long first = values.stream().mapToLong(i -> i.time(property)).min().orElseThrow();
        long last = values.stream().mapToLong(i -> i.time(property)).max().orElseThrow();
        long origin = from == Long.MIN_VALUE ? first : from;
        List<long[]> periods = new ArrayList<>();
        if (agg.wholeWindow()) {
            periods.add(new long[] {origin, to == Long.MAX_VALUE ? last + 1 : to});
        } else {
            int t = duration.toUpperCase().indexOf('T');
            Period calendar = t == 1 ? Period.ZERO : Period.parse(t < 0 ? duration : duration.substring(0, t));
            Duration fixed = t < 0 ? Duration.ZERO : Duration.parse("PT" + duration.substring(t + 1));
            ZonedDateTime o = Instant.ofEpochMilli(origin).atZone(ZoneOffset.UTC);
            for (int k = 0; ; k++) {
                long start = o.plus(calendar.multipliedBy(k)).plus(fixed.multipliedBy(k)).toInstant().toEpochMilli();
                long next = o.plus(calendar.multipliedBy(k + 1)).plus(fixed.multipliedBy(k + 1)).toInstant().toEpochMilli();
                if (start >= to || start > last) {
                    break;
                }
                periods.add(new long[] {start, Math.min(next, to)});
            }
        }
        for (long[] p : periods) {
            List<TemporalInstance> in = values.stream().filter(i -> i.time(property) >= p[0] && i.time(property) < p[1]).toList();
            if (in.isEmpty()) {
                continue;
            }
            for (AggregationMethod m : agg.methods()) {
                JsonNode v = method(m, in);
                if (v != null) {
                    out.get(m).add(new Expected(new AggregatedPeriod(v, p[0], p[1]), tolerance(m, in, v)));
                }
            }
        }
        return out;
    }

    private static JsonNode method(AggregationMethod m, List<TemporalInstance> in) {
        List<BigDecimal> numbers = new ArrayList<>();
        List<JsonNode> texts = new ArrayList<>();
        Set<Object> distinct = new HashSet<>();
        for (TemporalInstance i : in) {
            JsonNode v = i.value().value();
            distinct.add(v.isNumber() ? exact(v).stripTrailingZeros() : v);
            if (i.value().kind() != AttributeKind.PROPERTY) {
                continue;
            }
            if (v.isNumber()) {
                numbers.add(new BigDecimal(v.doubleValue())); // numbers are computed on as doubles
            } else if (v.isBoolean()) {
                numbers.add(v.booleanValue() ? BigDecimal.ONE : BigDecimal.ZERO);
            } else if (text(v) != null) {
                texts.add(v);
            }
        }
        int n = numbers.size();
        BigDecimal sum = numbers.stream().reduce(BigDecimal.ZERO, BigDecimal::add);
        return switch (m) {
            case TOTAL_COUNT -> F.numberNode((long) in.size());
            case DISTINCT_COUNT -> F.numberNode((long) distinct.size());
            case SUM -> n == 0 ? null : DoubleNode.valueOf(sum.doubleValue());
            case AVG -> n == 0 ? null : DoubleNode.valueOf(sum.divide(BigDecimal.valueOf(n), MathContext.DECIMAL128).doubleValue());
            case SUMSQ -> n == 0 ? null : DoubleNode.valueOf(numbers.stream().map(x -> x.multiply(x)).reduce(BigDecimal.ZERO,
                    BigDecimal::add).doubleValue());
            case STDDEV -> {
                if (n < 2) {
                    yield null;
                }
                BigDecimal mean = sum.divide(BigDecimal.valueOf(n), MathContext.DECIMAL128);
                BigDecimal squares = numbers.stream().map(x -> x.subtract(mean).pow(2)).reduce(BigDecimal.ZERO, BigDecimal::add);
                yield DoubleNode.valueOf(squares.divide(BigDecimal.valueOf(n - 1), MathContext.DECIMAL128)
                        .sqrt(MathContext.DECIMAL128).doubleValue());
            }
            case MIN, MAX -> {
                boolean min = m == AggregationMethod.MIN;
                if (n > 0) {
                    BigDecimal best = numbers.get(0);
                    for (BigDecimal x : numbers) {
                        best = min ? best.min(x) : best.max(x);
                    }
                    yield DoubleNode.valueOf(best.doubleValue());
                }
                JsonNode best = null;
                for (JsonNode t : texts) {
                    int cmp = best == null ? 0 : text(t).compareTo(text(best));
                    if (best == null || (min ? cmp < 0 : cmp > 0)) {
                        best = t; // the first of equal texts stays
                    }
                }
                yield best;
            }
        };
    }

    /**
     * How far a sum of doubles in time order may be from the exact result: the rounding of n
     * additions, relative to the sum of magnitudes (and, for stddev, of squared spreads).
     */
    private static double tolerance(AggregationMethod m, List<TemporalInstance> in, JsonNode v) {
        List<Double> xs = new ArrayList<>();
        for (TemporalInstance i : in) {
            JsonNode x = i.value().value();
            if (i.value().kind() == AttributeKind.PROPERTY && (x.isNumber() || x.isBoolean())) {
                xs.add(x.isBoolean() ? (x.booleanValue() ? 1.0 : 0.0) : x.doubleValue());
            }
        }
        int n = xs.size();
        double abs = xs.stream().mapToDouble(Math::abs).sum();
        double squares = xs.stream().mapToDouble(x -> x * x).sum();
        double ulps = v.isNumber() ? 4 * Math.ulp(v.doubleValue()) : 0;
        return ulps + switch (m) {
            case SUM -> 1e-15 * n * abs;
            case AVG -> 1e-15 * abs;
            case SUMSQ -> 1e-15 * n * squares;
            case STDDEV -> {
                double x0 = xs.get(0);
                double spread = xs.stream().mapToDouble(x -> (x - x0) * (x - x0)).sum();
                yield Math.sqrt(1e-14 * n * spread / (n - 1));
            }
            default -> 0;
        };
    }

    private static BigDecimal exact(JsonNode v) {
        return v.isDouble() || v.isFloat() ? new BigDecimal(v.doubleValue()) : v.decimalValue();
    }

    private static String text(JsonNode v) {
        if (v.isTextual()) {
            return v.textValue();
        }
        return v.isObject() && v.size() == 2 && v.has("@type") && v.path("@value").isTextual() ? v.get("@value").textValue() : null;
    }

    private static void compare(AggregationMethod m, List<Expected> expected, List<AggregatedPeriod> actual, String what) {
        String where = what + ", " + m.parameterName() + "\n expected " + show(expected.stream().map(Expected::period).toList())
                + "\n actual   " + show(actual);
        assertEquals(expected.size(), actual.size(), where);
        for (int k = 0; k < expected.size(); k++) {
            AggregatedPeriod e = expected.get(k).period();
            AggregatedPeriod a = actual.get(k);
            assertEquals(e.startAt(), a.startAt(), where);
            assertEquals(e.endAt(), a.endAt(), where);
            JsonNode ev = e.value();
            JsonNode av = a.value();
            switch (m) {
                case TOTAL_COUNT, DISTINCT_COUNT -> {
                    assertTrue(av.isIntegralNumber(), where);
                    assertEquals(ev.longValue(), av.longValue(), where);
                }
                case MIN, MAX -> assertEquals(ev, av, where);
                default -> {
                    assertTrue(av.isDouble(), where);
                    assertEquals(ev.doubleValue(), av.doubleValue(), expected.get(k).tolerance(), where);
                }
            }
        }
    }

    private static String show(List<AggregatedPeriod> periods) {
        StringBuilder b = new StringBuilder();
        for (AggregatedPeriod p : periods) {
            b.append('[').append(p.value()).append(", ").append(iso(p.startAt())).append(", ").append(iso(p.endAt())).append("] ");
        }
        return b.toString();
    }

    // ---- random cases

    private static String randomMethods(Random r) {
        List<String> names = new ArrayList<>();
        for (AggregationMethod m : AggregationMethod.values()) {
            if (r.nextInt(3) > 0) {
                names.add(m.parameterName());
            }
        }
        if (names.isEmpty()) {
            names.add("avg");
        }
        java.util.Collections.shuffle(names, r);
        return String.join(",", names);
    }

    /** About how long a period is, to spread a history over a handful of them. */
    private static long approxStep(String duration) {
        if (duration == null || duration.equals("PT0S")) {
            return 3_600_000;
        }
        int t = duration.indexOf('T');
        Period p = t == 1 ? Period.ZERO : Period.parse(t < 0 ? duration : duration.substring(0, t));
        Duration d = t < 0 ? Duration.ZERO : Duration.parse("PT" + duration.substring(t + 1));
        return p.toTotalMonths() * 2_629_746_000L + p.getDays() * 86_400_000L + d.toMillis();
    }

    private static List<TemporalInstance> randomHistory(Random r, long stepMs, TimeProperty property) {
        int n = r.nextInt(8) == 0 ? r.nextInt(3) : r.nextInt(120);
        List<TemporalInstance> out = new ArrayList<>();
        if (property == TimeProperty.OBSERVED_AT && r.nextInt(5) == 0) {
            // instances without observedAt come first in a store's answer
            for (int k = r.nextInt(3); k > 0; k--) {
                out.add(new TemporalInstance("a", attribute(r, AttributeKind.PROPERTY, randomValue(r), null, BASE), null,
                        TemporalInstance.NO_TIME, TemporalInstance.NO_TIME));
            }
        }
        long t = BASE + (long) (r.nextDouble() * stepMs * 3) - stepMs;
        double density = 1 + r.nextInt(12);
        for (int k = 0; k < n; k++) {
            int gap = r.nextInt(10);
            t += gap == 0 ? 0 : gap == 1 ? (long) (r.nextDouble() * stepMs * 4) : (long) (r.nextDouble() * stepMs / density);
            if (r.nextInt(20) == 0) {
                t += Math.floorMod(-t, 1000L); // up to a whole second: often a period's boundary
            }
            String observedAt = Instant.ofEpochMilli(t).toString();
            boolean deleted = r.nextInt(15) == 0;
            AttributeKind kind = r.nextInt(12) == 0 ? AttributeKind.RELATIONSHIP
                    : r.nextInt(12) == 0 ? AttributeKind.JSON_PROPERTY : AttributeKind.PROPERTY;
            JsonNode value = deleted ? TextNode.valueOf(Syntax.NGSI_LD_NULL)
                    : kind == AttributeKind.RELATIONSHIP ? TextNode.valueOf("urn:ngsi-ld:T:" + r.nextInt(3)) : randomValue(r);
            Attribute a = attribute(r, kind, value, observedAt, t);
            out.add(new TemporalInstance("a", a, null, TemporalInstance.observedMillis(a), deleted ? t : TemporalInstance.NO_TIME));
        }
        return out;
    }

    private static Attribute attribute(Random r, AttributeKind kind, JsonNode value, String observedAt, long t) {
        return new Attribute(kind, value, null, observedAt, null, null, null, null, t, t);
    }

    private static JsonNode randomValue(Random r) {
        return switch (r.nextInt(14)) {
            case 0, 1, 2 -> IntNode.valueOf(r.nextInt(21) - 10);
            case 3, 4 -> DoubleNode.valueOf(Math.round(r.nextDouble() * 2000 - 1000) / 8.0);
            case 5 -> DoubleNode.valueOf(r.nextGaussian() * 1e6);
            case 6 -> DoubleNode.valueOf(r.nextInt(5)); // 2.0 beside 2
            case 7 -> F.numberNode(new BigDecimal(r.nextInt(5) + ".50")); // 1.50 beside 1.5
            case 8 -> LongNode.valueOf((1L << 53) + r.nextInt(4)); // beyond what a double holds exactly
            case 9 -> BooleanNode.valueOf(r.nextBoolean());
            case 10, 11 -> TextNode.valueOf(WORDS[r.nextInt(WORDS.length)]);
            case 12 -> F.objectNode().put("@type", "DateTime").put("@value", "2020-0" + (1 + r.nextInt(9)) + "-01T00:00:00Z");
            default -> r.nextBoolean() ? F.objectNode().put("a", r.nextInt(2)) : F.arrayNode().add(1).add(r.nextInt(2));
        };
    }

    /** [from, to): none, after, before or between, around the history. */
    private static long[] randomWindow(Random r, List<TemporalInstance> all, TimeProperty property, long stepMs) {
        long lo = BASE - stepMs * 2;
        long hi = all.isEmpty() ? BASE + stepMs : Math.max(lo + 1, all.get(all.size() - 1).time(property) + stepMs);
        long a = lo + (long) (r.nextDouble() * (hi - lo));
        long b = lo + (long) (r.nextDouble() * (hi - lo));
        if (r.nextInt(6) == 0 && !all.isEmpty()) {
            a = all.get(r.nextInt(all.size())).time(property); // exactly on an instance
        }
        if (a == TemporalInstance.NO_TIME) {
            a = BASE;
        }
        return switch (r.nextInt(4)) {
            case 0 -> new long[] {Long.MIN_VALUE, Long.MAX_VALUE};
            case 1 -> new long[] {a, Long.MAX_VALUE};
            case 2 -> new long[] {Long.MIN_VALUE, a};
            default -> new long[] {Math.min(a, b), Math.max(a, b) + 1};
        };
    }

    private static boolean inWindow(long t, long from, long to) {
        return t != TemporalInstance.NO_TIME && t >= from && t < to;
    }

    private static String iso(long t) {
        return t == Long.MIN_VALUE ? "-inf" : t == Long.MAX_VALUE ? "+inf" : Instant.ofEpochMilli(t).toString();
    }
}
