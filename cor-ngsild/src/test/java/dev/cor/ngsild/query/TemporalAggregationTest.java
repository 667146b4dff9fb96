package dev.cor.ngsild.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import org.junit.jupiter.api.Test;

/**
 * {@link TemporalAggregation} on small, hand-made histories: the parameters and each of their
 * errors, the edges of periods and windows, the values each method takes or skips, and the
 * ETSI suite's expected answers (TP 020_11, TP 021_17).
 */
class TemporalAggregationTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long MIN = Long.MIN_VALUE;
    private static final long MAX = Long.MAX_VALUE;

    // ---- parameters

    @Test
    void methodsAreReadInTheirOrderEachOnceTrimmed() {
        TemporalAggregation a = TemporalAggregation.parse("max, avg,max,totalCount", null);
        assertEquals(List.of(AggregationMethod.MAX, AggregationMethod.AVG, AggregationMethod.TOTAL_COUNT), a.methods());
        assertTrue(a.wholeWindow());
    }

    @Test
    void everyMethodNameIsKnown() {
        TemporalAggregation a = TemporalAggregation.parse("totalCount,distinctCount,sum,avg,min,max,stddev,sumsq", "PT1H");
        assertEquals(List.of(AggregationMethod.values()), a.methods());
    }

    @Test
    void anUnknownMethodIsBadRequestDataNamingIt() {
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> TemporalAggregation.parse("avg,bogus", "PT1H"));
        assertEquals(ErrorType.BAD_REQUEST_DATA, e.type());
        assertTrue(e.detail().contains("aggrMethods") && e.detail().contains("'bogus'"), e.detail());
    }

    @Test
    void aMethodNameIsCaseSensitive() {
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> TemporalAggregation.parse("AVG", null));
        assertTrue(e.detail().contains("'AVG'"), e.detail());
    }

    @Test
    void anEmptyMethodIsBadRequestData() {
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> TemporalAggregation.parse("avg,,max", null));
        assertEquals(ErrorType.BAD_REQUEST_DATA, e.type());
        assertTrue(e.detail().contains("aggrMethods"), e.detail());
    }

    @Test
    void noMethodIsBadRequestData() {
        for (String methods : new String[] {null, "", "  "}) {
            NgsiLdException e = assertThrows(NgsiLdException.class, () -> TemporalAggregation.parse(methods, "PT1H"));
            assertEquals(ErrorType.BAD_REQUEST_DATA, e.type());
            assertTrue(e.detail().contains("aggrMethods"), e.detail());
        }
    }

    @Test
    void durationsOfDateAndTimePartsAreAccepted() {
        for (String d : new String[] {"P1D", "PT1H", "P1M", "P1Y", "P2W", "P1Y2M3DT4H5M6.5S", "PT0.001S", "pt1h", "PT36H"}) {
            assertTrue(!TemporalAggregation.parse("avg", d).wholeWindow(), d);
        }
    }

    @Test
    void aZeroDurationIsTheWholeWindow() {
        for (String d : new String[] {"PT0S", "P0D", "P0Y0M0DT0H0M0S", "PT0.000S"}) {
            assertTrue(TemporalAggregation.parse("avg", d).wholeWindow(), d);
        }
    }

    @Test
    void aMalformedDurationIsBadRequestDataNamingTheParameter() {
        for (String d : new String[] {"bogus", "", "P", "PT", "P1DT", "1D", "T1H", "P1H", "PT1D", "P1.5D", "P1T1H", "PT1H30",
            "-PT1H", "PT-1H", "P-1M", "+P1D", "PT0.0005S", "P1Y2M3DT4H5M6.5S7", "P999999999Y", "PT9999999999999999H"}) {
            NgsiLdException e = assertThrows(NgsiLdException.class, () -> TemporalAggregation.parse("avg", d), d);
            assertEquals(ErrorType.BAD_REQUEST_DATA, e.type(), d);
            assertTrue(e.detail().contains("aggrPeriodDuration"), e.detail());
        }
    }

    // ---- periods and windows

    @Test
    void noInstanceGivesAnEmptyListPerMethod() {
        var out = run("avg,totalCount", "PT1H", MIN, MAX, List.of());
        assertEquals(Map.of(AggregationMethod.AVG, List.of(), AggregationMethod.TOTAL_COUNT, List.of()), out);
    }

    @Test
    void onlyDeletionsGiveNoPeriod() {
        var out = run("totalCount", "PT1H", MIN, MAX, List.of(deleted(t("2020-08-01T12:00:00Z")), deleted(t("2020-08-01T13:00:00Z"))));
        assertEquals(List.of(), out.get(AggregationMethod.TOTAL_COUNT));
    }

    @Test
    void oneInstanceGivesOnePeriodStartingAtIt() {
        long t = t("2020-08-01T12:03:00Z");
        var out = run("avg,min,max,sum,sumsq,totalCount,distinctCount,stddev", "PT1H", MIN, MAX, List.of(prop(t, IntNode.valueOf(7))));
        long end = t("2020-08-01T13:03:00Z");
        assertEquals(List.of(new AggregatedPeriod(DoubleNode.valueOf(7), t, end)), out.get(AggregationMethod.AVG));
        assertEquals(List.of(new AggregatedPeriod(DoubleNode.valueOf(49), t, end)), out.get(AggregationMethod.SUMSQ));
        assertEquals(List.of(new AggregatedPeriod(JsonNodeFactory.instance.numberNode(1L), t, end)), out.get(AggregationMethod.TOTAL_COUNT));
        assertEquals(List.of(), out.get(AggregationMethod.STDDEV), "a single number has no sample standard deviation");
    }

    @Test
    void anInstanceExactlyAtAPeriodsStartBelongsToThatPeriod() {
        long from = t("2020-08-01T12:00:00Z");
        long at = t("2020-08-01T13:00:00Z");
        var out = run("totalCount", "PT1H", from, MAX, List.of(prop(at - 1, IntNode.valueOf(1)), prop(at, IntNode.valueOf(2))));
        assertEquals(List.of(count(1, from, at), count(1, at, t("2020-08-01T14:00:00Z"))), out.get(AggregationMethod.TOTAL_COUNT));
    }

    @Test
    void anInstanceExactlyAtTheWindowsEndIsOutside() {
        long from = t("2020-08-01T12:00:00Z");
        long to = t("2020-08-01T13:00:00Z");
        var out = run("totalCount", "PT1H", from, to, List.of(prop(from, IntNode.valueOf(1)), prop(to, IntNode.valueOf(2))));
        assertEquals(List.of(count(1, from, to)), out.get(AggregationMethod.TOTAL_COUNT));
    }

    @Test
    void aBoundedWindowCutsItsLastPeriod() {
        long from = t("2020-08-01T12:00:00Z");
        long to = t("2020-08-01T12:30:00Z");
        var out = run("totalCount", "PT7M", from, to, List.of(prop(t("2020-08-01T12:29:00Z"), IntNode.valueOf(1))));
        assertEquals(List.of(count(1, t("2020-08-01T12:28:00Z"), to)), out.get(AggregationMethod.TOTAL_COUNT));
    }

    @Test
    void periodsBeginAtTimeAtAndEmptyOnesAreLeftOut() {
        // example C.5.14 of the spec: between 12:00 and 13:00 by PT4M, speed 120, then 80 and 100
        long from = t("2018-08-01T12:00:00Z");
        long to = t("2018-08-01T13:00:00Z");
        var out = run("max,avg", "PT4M", from, to, List.of(prop(t("2018-08-01T12:03:00Z"), IntNode.valueOf(120)),
                prop(t("2018-08-01T12:05:00Z"), IntNode.valueOf(80)), prop(t("2018-08-01T12:07:00Z"), IntNode.valueOf(100))));
        assertEquals(List.of(new AggregatedPeriod(DoubleNode.valueOf(120), from, t("2018-08-01T12:04:00Z")),
                new AggregatedPeriod(DoubleNode.valueOf(100), t("2018-08-01T12:04:00Z"), t("2018-08-01T12:08:00Z"))),
                out.get(AggregationMethod.MAX));
        assertEquals(List.of(new AggregatedPeriod(DoubleNode.valueOf(120), from, t("2018-08-01T12:04:00Z")),
                new AggregatedPeriod(DoubleNode.valueOf(90), t("2018-08-01T12:04:00Z"), t("2018-08-01T12:08:00Z"))),
                out.get(AggregationMethod.AVG));
    }

    @Test
    void aWholeWindowWithoutEndClosesJustAfterTheLastValue() {
        long a = t("2020-08-01T12:03:00Z");
        long b = t("2020-08-01T14:07:00Z");
        var out = run("totalCount", "PT0S", t("2020-08-01T12:00:00Z"), MAX,
                List.of(prop(a, IntNode.valueOf(1)), prop(b, IntNode.valueOf(2)), deleted(b + 5)));
        assertEquals(List.of(count(2, t("2020-08-01T12:00:00Z"), b + 1)), out.get(AggregationMethod.TOTAL_COUNT));
    }

    @Test
    void aWholeWindowBeforeTimeAtSpansFromTheFirstValueToTimeAt() {
        long a = t("2020-08-01T12:03:00Z");
        long to = t("2020-08-02T00:00:00Z");
        var out = run("sum", null, MIN, to, List.of(deleted(a - 10), prop(a, IntNode.valueOf(1)), prop(a + 5, IntNode.valueOf(2))));
        assertEquals(List.of(new AggregatedPeriod(DoubleNode.valueOf(3), a, to)), out.get(AggregationMethod.SUM));
    }

    @Test
    void monthsAdvanceOnTheCalendarWithoutDrift() {
        long from = t("2020-01-31T00:00:00Z");
        var out = run("totalCount", "P1M", from, MAX, List.of(prop(t("2020-02-15T00:00:00Z"), IntNode.valueOf(1)),
                prop(t("2020-03-30T00:00:00Z"), IntNode.valueOf(1)), prop(t("2020-03-31T00:00:00Z"), IntNode.valueOf(1))));
        assertEquals(List.of(count(1, from, t("2020-02-29T00:00:00Z")),
                count(1, t("2020-02-29T00:00:00Z"), t("2020-03-31T00:00:00Z")),
                count(1, t("2020-03-31T00:00:00Z"), t("2020-04-30T00:00:00Z"))), out.get(AggregationMethod.TOTAL_COUNT));
    }

    @Test
    void aFinePeriodOverALongEmptyStretchIsCheap() {
        // one second periods from 1970: fifty years of empty periods are skipped, not walked
        var out = run("totalCount", "PT1S", 0, MAX, List.of(prop(t("2020-08-01T12:00:00.500Z"), IntNode.valueOf(1))));
        assertEquals(List.of(count(1, t("2020-08-01T12:00:00Z"), t("2020-08-01T12:00:01Z"))), out.get(AggregationMethod.TOTAL_COUNT));
    }

    @Test
    void instancesOutOfTimeOrderAreRefused() {
        long a = t("2020-08-01T12:00:00Z");
        TemporalAggregation agg = TemporalAggregation.parse("avg", "PT1H");
        assertThrows(IllegalArgumentException.class, () -> agg.aggregate(List.of(prop(a + 10, IntNode.valueOf(1)),
                prop(a, IntNode.valueOf(1))), MIN, MAX, i -> i.time(TimeProperty.CREATED_AT), TemporalAggregationTest::valueOf));
    }

    @Test
    void instancesWithoutTheTimeAreSkipped() {
        long a = t("2020-08-01T12:00:00Z");
        TemporalInstance noObservedAt = new TemporalInstance("speed", attr(AttributeKind.PROPERTY, IntNode.valueOf(5), a), null,
                TemporalInstance.NO_TIME, TemporalInstance.NO_TIME);
        TemporalInstance observed = TemporalInstance.of("speed", new Attribute(AttributeKind.PROPERTY, IntNode.valueOf(7), null,
                "2020-08-01T12:00:00Z", null, null, null, null, a, a), TemporalInstance.NO_TIME);
        var out = TemporalAggregation.parse("sum", "PT1H").aggregate(List.of(noObservedAt, observed), MIN, MAX,
                i -> i.time(TimeProperty.OBSERVED_AT), TemporalAggregationTest::valueOf);
        assertEquals(List.of(new AggregatedPeriod(DoubleNode.valueOf(7), a, a + 3_600_000)), out.get(AggregationMethod.SUM));
    }

    // ---- values

    @Test
    void booleansCountAsOneAndZeroAndTextsOnlyCount() {
        long a = t("2020-08-01T12:00:00Z");
        var out = run("sum,avg,totalCount,distinctCount", null, MIN, MAX, List.of(prop(a, BooleanNode.TRUE),
                prop(a + 1, BooleanNode.FALSE), prop(a + 2, BooleanNode.TRUE), prop(a + 3, TextNode.valueOf("x"))));
        assertEquals(DoubleNode.valueOf(2), only(out, AggregationMethod.SUM));
        assertEquals(DoubleNode.valueOf(2.0 / 3), only(out, AggregationMethod.AVG));
        assertEquals(4L, only(out, AggregationMethod.TOTAL_COUNT).longValue());
        assertEquals(3L, only(out, AggregationMethod.DISTINCT_COUNT).longValue());
    }

    @Test
    void minAndMaxOfTextsAreLexicalAndKeepTheValueAsWritten() {
        long a = t("2020-08-01T12:00:00Z");
        ObjectNode literal = JsonNodeFactory.instance.objectNode().put("@type", "DateTime").put("@value", "2021-01-01T00:00:00Z");
        var out = run("min,max,avg", null, MIN, MAX, List.of(prop(a, TextNode.valueOf("2020-06-01T00:00:00Z")),
                prop(a + 1, literal), prop(a + 2, TextNode.valueOf("2019-12-31T23:59:59Z"))));
        assertEquals(TextNode.valueOf("2019-12-31T23:59:59Z"), only(out, AggregationMethod.MIN));
        assertEquals(literal, only(out, AggregationMethod.MAX));
        assertEquals(List.of(), out.get(AggregationMethod.AVG), "no number, no average");
    }

    @Test
    void numbersWinOverTextsForMinAndMax() {
        long a = t("2020-08-01T12:00:00Z");
        var out = run("min,max", null, MIN, MAX, List.of(prop(a, TextNode.valueOf("a")), prop(a + 1, IntNode.valueOf(3))));
        assertEquals(DoubleNode.valueOf(3), only(out, AggregationMethod.MIN));
        assertEquals(DoubleNode.valueOf(3), only(out, AggregationMethod.MAX));
    }

    @Test
    void distinctNumbersCompareByValue() throws Exception {
        long a = t("2020-08-01T12:00:00Z");
        var out = run("distinctCount", null, MIN, MAX, List.of(prop(a, IntNode.valueOf(1)), prop(a + 1, DoubleNode.valueOf(1.0)),
                prop(a + 2, JSON.readTree("1.0e0")), prop(a + 3, JsonNodeFactory.instance.numberNode(new java.math.BigDecimal("1.000"))),
                prop(a + 4, DoubleNode.valueOf(-0.0)), prop(a + 5, IntNode.valueOf(0)), prop(a + 6, TextNode.valueOf("1"))));
        assertEquals(3L, only(out, AggregationMethod.DISTINCT_COUNT).longValue());
    }

    @Test
    void relationshipsAndJsonPropertiesOnlyCount() {
        long a = t("2020-08-01T12:00:00Z");
        var out = run("totalCount,sum,max", null, MIN, MAX, List.of(
                TemporalInstance.of("r", attr(AttributeKind.RELATIONSHIP, TextNode.valueOf("urn:a"), a), TemporalInstance.NO_TIME),
                TemporalInstance.of("r", attr(AttributeKind.JSON_PROPERTY, IntNode.valueOf(4), a + 1), TemporalInstance.NO_TIME)));
        assertEquals(2L, only(out, AggregationMethod.TOTAL_COUNT).longValue());
        assertEquals(List.of(), out.get(AggregationMethod.SUM));
        assertEquals(List.of(), out.get(AggregationMethod.MAX));
    }

    @Test
    void stddevIsTheSampleOne() {
        long a = t("2020-08-01T12:00:00Z");
        var out = run("stddev", null, MIN, MAX, List.of(prop(a, IntNode.valueOf(2)), prop(a + 1, IntNode.valueOf(4)),
                prop(a + 2, IntNode.valueOf(4)), prop(a + 3, IntNode.valueOf(4)), prop(a + 4, IntNode.valueOf(5)),
                prop(a + 5, IntNode.valueOf(5)), prop(a + 6, IntNode.valueOf(7)), prop(a + 7, IntNode.valueOf(9))));
        // population 2, sample sqrt(32 / 7)
        assertEquals(Math.sqrt(32.0 / 7), only(out, AggregationMethod.STDDEV).doubleValue(), 1e-12);
    }

    // ---- the ETSI suite's expectations

    /** TP 020_11_03: avg,max by PT1H, no timerel (vehicle-temporal-representation-aggregated-avg-max-PT1H.json). */
    @Test
    void tp020_11_03AverageAndMaximumByTheHourAsTheSuiteExpects() throws Exception {
        TemporalAggregation agg = TemporalAggregation.parse("avg,max", "PT1H");
        assertEquals(JSON.readTree("""
                {"avg": [[100.0, "2020-08-01T12:03:00Z", "2020-08-01T13:03:00Z"]],
                 "max": [[120.0, "2020-08-01T12:03:00Z", "2020-08-01T13:03:00Z"]]}"""), render(agg, MIN, MAX, speed()));
        assertEquals(JSON.readTree("""
                {"avg": [[67.0, "2020-08-01T12:03:00Z", "2020-08-01T13:03:00Z"],
                         [53.0, "2020-08-01T13:03:00Z", "2020-08-01T14:03:00Z"],
                         [40.0, "2020-08-01T14:03:00Z", "2020-08-01T15:03:00Z"]],
                 "max": [[67.0, "2020-08-01T12:03:00Z", "2020-08-01T13:03:00Z"],
                         [53.0, "2020-08-01T13:03:00Z", "2020-08-01T14:03:00Z"],
                         [40.0, "2020-08-01T14:03:00Z", "2020-08-01T15:03:00Z"]]}"""), render(agg, MIN, MAX, fuelLevel()));
    }

    /** TP 021_17_04: min,max by P1D, after 2020-01-01T12:03:00Z (vehicle-temporal-representation-aggregated-min-max-P1D.json). */
    @Test
    void tp021_17_04MinimumAndMaximumByTheDayAfterTimeAtAsTheSuiteExpects() throws Exception {
        TemporalAggregation agg = TemporalAggregation.parse("min,max", "P1D");
        long from = t("2020-01-01T12:03:00Z");
        assertEquals(JSON.readTree("""
                {"min": [[80.0, "2020-08-01T12:03:00Z", "2020-08-02T12:03:00Z"]],
                 "max": [[120.0, "2020-08-01T12:03:00Z", "2020-08-02T12:03:00Z"]]}"""), render(agg, from, MAX, speed()));
        assertEquals(JSON.readTree("""
                {"min": [[40.0, "2020-08-01T12:03:00Z", "2020-08-02T12:03:00Z"]],
                 "max": [[67.0, "2020-08-01T12:03:00Z", "2020-08-02T12:03:00Z"]]}"""), render(agg, from, MAX, fuelLevel()));
    }

    /** The speed of data/temporalEntities/2020-08-vehicle-temporal-representation.jsonld. */
    private static List<TemporalInstance> speed() {
        return List.of(prop(t("2020-08-01T12:03:00Z"), IntNode.valueOf(120)), prop(t("2020-08-01T12:05:00Z"), IntNode.valueOf(80)),
                prop(t("2020-08-01T12:07:00Z"), IntNode.valueOf(100)));
    }

    /** The fuelLevel of the same file. */
    private static List<TemporalInstance> fuelLevel() {
        return List.of(prop(t("2020-08-01T12:03:00Z"), IntNode.valueOf(67)), prop(t("2020-08-01T13:05:00Z"), IntNode.valueOf(53)),
                prop(t("2020-08-01T14:07:00Z"), IntNode.valueOf(40)));
    }

    /** The periods as the answer writes them: {@code {"avg": [[value, "startAt", "endAt"], ...], ...}}. */
    private static JsonNode render(TemporalAggregation agg, long from, long to, List<TemporalInstance> instances) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        agg.aggregate(instances, from, to, i -> i.time(TimeProperty.OBSERVED_AT), TemporalAggregationTest::valueOf)
                .forEach((m, periods) -> {
                    ArrayNode list = out.putArray(m.parameterName());
                    for (AggregatedPeriod p : periods) {
                        list.addArray().add(p.value()).add(Instant.ofEpochMilli(p.startAt()).toString())
                                .add(Instant.ofEpochMilli(p.endAt()).toString());
                    }
                });
        return out;
    }

    // ---- helpers

    private static Map<AggregationMethod, List<AggregatedPeriod>> run(String methods, String duration, long from, long to,
            List<TemporalInstance> instances) {
        return TemporalAggregation.parse(methods, duration).aggregate(instances, from, to, i -> i.time(TimeProperty.OBSERVED_AT),
                TemporalAggregationTest::valueOf);
    }

    private static JsonNode only(Map<AggregationMethod, List<AggregatedPeriod>> out, AggregationMethod m) {
        List<AggregatedPeriod> periods = out.get(m);
        assertEquals(1, periods.size(), m + ": " + periods);
        return periods.get(0).value();
    }

    static Attribute valueOf(TemporalInstance i) {
        return i.deleted() ? null : i.value();
    }

    private static AggregatedPeriod count(long n, long start, long end) {
        return new AggregatedPeriod(JsonNodeFactory.instance.numberNode(n), start, end);
    }

    private static long t(String dateTime) {
        long t = Syntax.epochMillis(dateTime);
        assertTrue(t != Syntax.NOT_A_DATE_TIME, dateTime);
        return t;
    }

    private static Attribute attr(AttributeKind kind, JsonNode value, long time) {
        return new Attribute(kind, value, null, Instant.ofEpochMilli(time).toString(), null, null, null, null, time, time);
    }

    private static TemporalInstance prop(long time, JsonNode value) {
        return TemporalInstance.of("speed", attr(AttributeKind.PROPERTY, value, time), TemporalInstance.NO_TIME);
    }

    private static TemporalInstance deleted(long time) {
        return TemporalInstance.of("speed", attr(AttributeKind.PROPERTY, TextNode.valueOf(Syntax.NGSI_LD_NULL), time), time);
    }
}
