package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

/**
 * The temporal API against a plain computation, over real sockets: random histories of random
 * entities (seeded; the seed is in every failure, {@code -Dcor.temporal.seed=N} replays it) are
 * provided - every other one long (hundreds to 1 500 instances) and in time order, so that a
 * store's aggregation takes the summaries of whole chunks (§ 4.5.19), the others short and in no
 * order -, then random queries - a timerel window or none, lastN or not, a q on the values or
 * not, the normalized and the aggregated representations - are asked, and each answer is checked
 * against what a direct computation over the same instances gives: which entities, which
 * instances in which order, which periods with which averages, maxima and counts.
 */
class TemporalDifferentialTest extends ConformanceTest {
    private static final long DAY = 86_400_000L;
    private static final long T0 = Instant.parse("2026-03-01T00:00:00Z").toEpochMilli();

    private record Point(long t, int v) {
    }

    @Test
    void queries_and_aggregations_answer_what_a_plain_computation_over_the_instances_gives() {
        long seed = Long.getLong("cor.temporal.seed", System.nanoTime());
        Random rnd = new Random(seed);
        String tenant = Entities.tenant();
        String type = "Probe" + Math.abs(seed % 100_000);
        Map<String, List<Point>> truth = new TreeMap<>();
        int entities = 3 + rnd.nextInt(6);
        for (int e = 0; e < entities; e++) {
            String id = "urn:ngsi-ld:" + type + ":" + e;
            TreeSet<Long> minutes = new TreeSet<>();
            // every other entity long and provided in time order: a store summarises its chunks (128 instances)
            boolean inOrder = e % 2 == 1;
            int n = inOrder ? 300 + rnd.nextInt(1200) : 1 + rnd.nextInt(60);
            while (minutes.size() < n) {
                minutes.add((long) rnd.nextInt(10 * 24 * 60)); // distinct minutes over ten days
            }
            List<Point> points = new ArrayList<>();
            StringBuilder body = new StringBuilder();
            List<Long> shuffled = new ArrayList<>(minutes);
            if (!inOrder) {
                java.util.Collections.shuffle(shuffled, rnd); // provided in no particular order
            }
            for (long m : shuffled) {
                Point p = new Point(T0 + m * 60_000L, rnd.nextInt(101));
                points.add(p);
                body.append(body.isEmpty() ? "" : ",").append("{\"type\":\"Property\",\"value\":").append(p.v())
                        .append(",\"observedAt\":\"").append(Instant.ofEpochMilli(p.t())).append("\"}");
            }
            points.sort(java.util.Comparator.comparingLong(Point::t));
            truth.put(id, points);
            Checks.status(api.post("/temporal/entities").tenant(tenant).json(Json.parse(
                    "{\"id\":\"" + id + "\",\"type\":\"" + type + "\",\"v\":[" + body + "]}")).send(), 201);
        }
        for (int k = 0; k < 60; k++) {
            String why = "seed " + seed + ", query " + k;
            long from = Long.MIN_VALUE;
            long to = Long.MAX_VALUE;
            List<String> params = new ArrayList<>(List.of("type", type, "attrs", "v", "limit", "100"));
            int rel = rnd.nextInt(4);
            // half the time the window's bounds are instants that instances have: the bounds' inclusion shows
            List<Point> some = new ArrayList<>(truth.values()).get(rnd.nextInt(truth.size()));
            long a = rnd.nextBoolean() ? some.get(rnd.nextInt(some.size())).t() : T0 + (long) (rnd.nextDouble() * 10 * DAY);
            long b = rnd.nextBoolean() && some.get(some.size() - 1).t() > a ? some.get(some.size() - 1).t()
                    : a + (long) (rnd.nextDouble() * 5 * DAY) + 60_000L;
            switch (rel) {
                case 1 -> {
                    params.addAll(List.of("timerel", "before", "timeAt", Instant.ofEpochMilli(a).toString()));
                    to = a;
                }
                case 2 -> {
                    params.addAll(List.of("timerel", "after", "timeAt", Instant.ofEpochMilli(a).toString()));
                    from = a;
                }
                case 3 -> {
                    params.addAll(List.of("timerel", "between", "timeAt", Instant.ofEpochMilli(a).toString(), "endTimeAt",
                            Instant.ofEpochMilli(b).toString()));
                    from = a;
                    to = b;
                }
                default -> { }
            }
            int q = rnd.nextInt(4);
            int x = rnd.nextInt(101);
            String qText = switch (q) {
                case 1 -> "v>" + x;
                case 2 -> "v<=" + x;
                case 3 -> "v==" + x;
                default -> null;
            };
            if (qText != null) {
                params.addAll(List.of("q", qText));
            }
            boolean aggregate = rel == 3 && rnd.nextInt(3) == 0;
            long period = List.of(3_600_000L, 6 * 3_600_000L, DAY).get(rnd.nextInt(3));
            int lastN = !aggregate && rnd.nextBoolean() ? 1 + rnd.nextInt(10) : 0;
            if (lastN > 0) {
                params.addAll(List.of("lastN", Integer.toString(lastN)));
            }
            if (aggregate) {
                params.addAll(List.of("options", "aggregatedValues", "aggrMethods", "avg,max,totalCount", "aggrPeriodDuration",
                        period == DAY ? "P1D" : "PT" + period / 3_600_000L + "H"));
            }
            why += " " + params;

            // the plain computation
            Map<String, List<Point>> expected = new LinkedHashMap<>();
            for (Map.Entry<String, List<Point>> e : truth.entrySet()) {
                List<Point> window = new ArrayList<>();
                for (Point p : e.getValue()) {
                    if (p.t() >= from && p.t() < to) {
                        window.add(p);
                    }
                }
                if (rel != 0 && window.isEmpty()) {
                    continue;
                }
                if (qText != null && window.stream().noneMatch(p -> switch (q) {
                    case 1 -> p.v() > x;
                    case 2 -> p.v() <= x;
                    default -> p.v() == x;
                })) {
                    continue;
                }
                if (lastN > 0 && window.size() > lastN) {
                    window = window.subList(window.size() - lastN, window.size());
                }
                expected.put(e.getKey(), window);
            }

            Ngsi.Request r = api.get("/temporal/entities").tenant(tenant);
            for (int i = 0; i < params.size(); i += 2) {
                r.query(params.get(i), params.get(i + 1));
            }
            JsonNode got = Checks.okJson(r.send());
            List<String> ids = new ArrayList<>();
            got.forEach(e -> ids.add(e.path("id").asText()));
            assertEquals(new ArrayList<>(expected.keySet()), ids, why);
            for (JsonNode e : got) {
                List<Point> want = expected.get(e.path("id").asText());
                if (!aggregate) {
                    List<Point> have = new ArrayList<>();
                    e.path("v").forEach(i -> have.add(new Point(Instant.parse(i.path("observedAt").asText()).toEpochMilli(),
                            i.path("value").asInt())));
                    assertEquals(want, have, why + " " + e.path("id"));
                    continue;
                }
                // periods from timeAt, each [start, start + period) cut at endTimeAt, empty ones left out
                List<List<Object>> avg = new ArrayList<>();
                List<List<Object>> max = new ArrayList<>();
                List<List<Object>> count = new ArrayList<>();
                for (long start = from; start < to; start += period) {
                    long end = Math.min(start + period, to);
                    long s = start;
                    List<Point> in = want.stream().filter(p -> p.t() >= s && p.t() < end).toList();
                    if (in.isEmpty()) {
                        continue;
                    }
                    String st = Instant.ofEpochMilli(start).toString();
                    String en = Instant.ofEpochMilli(end).toString();
                    avg.add(List.of(in.stream().mapToInt(Point::v).average().orElseThrow(), st, en));
                    max.add(List.of((double) in.stream().mapToInt(Point::v).max().orElseThrow(), st, en));
                    count.add(List.of(in.size(), st, en));
                }
                JsonNode v = e.path("v");
                assertEquals(avg.size(), v.path("avg").size(), why + " " + v);
                for (int i = 0; i < avg.size(); i++) {
                    JsonNode p = v.path("avg").path(i);
                    assertEquals((double) avg.get(i).get(0), p.path(0).asDouble(), 1e-9, why + " avg " + v);
                    assertEquals(avg.get(i).get(1), p.path(1).asText(), why + " avg " + v);
                    assertEquals(avg.get(i).get(2), p.path(2).asText(), why + " avg " + v);
                    assertEquals((double) max.get(i).get(0), v.path("max").path(i).path(0).asDouble(), why + " max " + v);
                    assertEquals((int) count.get(i).get(0), v.path("totalCount").path(i).path(0).asInt(), why + " count " + v);
                }
            }
        }
    }
}
