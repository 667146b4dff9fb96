package dev.cor.ngsild.query;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Period;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToLongFunction;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.model.Attribute;

/**
 * The aggregated temporal representation's arithmetic (ETSI GS CIM 009 V1.8 § 4.5.19, parameters
 * {@code aggrMethods} and {@code aggrPeriodDuration} of § 5.7.3/5.7.4): parsed once per request,
 * then applied to the instances of one attribute at a time. Immutable; {@link #aggregate} may be
 * called from any thread, concurrently (its state is the call's own).
 *
 * <h2>Parameters</h2>
 * {@code aggrMethods} is a comma-separated list of {@link AggregationMethod} names (items trimmed,
 * a repeated one counted once, the order kept); an empty item or an unknown name is a
 * BadRequestData naming it. {@code aggrPeriodDuration} is an ISO 8601 duration
 * {@code P[n]Y[n]M[n]W[n]DT[n]H[n]M[n]S} (the seconds may have a fraction down to the millisecond):
 * its date part is a {@link Period} and advances on the UTC calendar (a month from January 31st
 * ends on the last day of February), its time part a {@link Duration}. A negative or malformed
 * duration is a BadRequestData naming {@code aggrPeriodDuration}; a zero one ({@code PT0S},
 * {@code P0D}) or none asks for one period over the whole window (§ 4.5.19).
 *
 * <h2>Periods</h2>
 * The window is the temporal query's [{@code from}, {@code to}), as {@code InstanceQuery} has it.
 * Periods start at {@code from} ({@code timeAt} of {@code after} and {@code between}); when the
 * window has no start ({@code before}, or no {@code timerel}) at the first instance that holds a
 * value. They follow each other without gap; an instance exactly at a period's start belongs to
 * that period, one at the window's end is outside. Then:
 * <ul>
 * <li>A period without any value is left out of every method's list: the ETSI suite's
 *     TP 021_17 ({@code after 2020-01-01T12:03:00Z}, {@code PT1H}, data from August) expects only
 *     the three hours that hold instances, and the spec's example C.5.14 ({@code between} 12:00
 *     and 13:00, {@code PT4M}) shows two periods of fifteen.</li>
 * <li>The last period: when the window has an end ({@code between}, {@code before}) it is cut
 *     there, so a period never claims time the query excluded; when it has none ({@code after},
 *     no {@code timerel}) it keeps its full length, as TP 020_11/021_17 expect
 *     ({@code [40.0, "2020-08-01T14:03:00Z", "2020-08-01T15:03:00Z"]} for a last instance at
 *     14:07).</li>
 * <li>The whole-window period ends at the window's end, or, without one, a millisecond after
 *     the last value: periods are half-open, so it still holds the last value.</li>
 * </ul>
 *
 * <h2>Values</h2>
 * An instance that records a deletion is not a value: no method sees it. Nor does one without
 * the compared time, or outside the window. Of the others:
 * <ul>
 * <li>{@code totalCount}: the number of values, whatever their kind; {@code distinctCount}: the
 *     number of distinct JSON values, numbers compared by value ({@code 1} and {@code 1.0} are
 *     one), other values by JSON equality (a number inside an object compared as written).</li>
 * <li>{@code sum}, {@code avg}, {@code sumsq}, {@code stddev}, and {@code min}/{@code max} when a
 *     period holds numbers: over the numbers and booleans ({@code true} is 1, {@code false} 0, as
 *     Stellio does) that Properties hold; other values are skipped. {@code stddev} is the sample
 *     standard deviation (n - 1, Stellio's {@code stddev_samp}); a period with a single number
 *     has none.</li>
 * <li>{@code min}/{@code max} of a period without numbers: over the Properties' strings and
 *     typed literals ({@code {"@type": "DateTime", "@value": "..."}}, compared by their
 *     {@code @value}) by UTF-16 code units - which orders ISO 8601 UTC date-times in time, as
 *     Stellio compares texts -, answering the value as it was written.</li>
 * <li>A method with nothing to work on in a period (no number for {@code avg}, a single one for
 *     {@code stddev}, a result that would not be finite) leaves that period out of its own list
 *     only. Relationships, GeoProperties, LanguageProperties, Vocab-, List- and JsonProperties
 *     count, and nothing more.</li>
 * <li>Numbers are taken as IEEE doubles: an integer beyond 2<sup>53</sup> loses its last digits
 *     (not in {@code distinctCount}, which compares exactly); the sums of those doubles are
 *     exact, rounded once to the nearest double.</li>
 * <li>Numeric results are JSON doubles ({@code min} of 120, 80, 100 is {@code 80.0}, as
 *     TP 021_17_04 expects), counts JSON integers.</li>
 * </ul>
 *
 * <h2>Cost</h2>
 * A store may hand runs of instances it summarised ({@link #aggregateRuns}): a period that holds
 * such a run whole takes its summary. For that the numbers are kept exactly: {@code sum},
 * {@code avg} and {@code sumsq} are the exact sums rounded once (to the nearest double),
 * {@code stddev} is computed from the exact sums as double-doubles, and {@code min}/{@code max}
 * are {@link Math#min}/{@link Math#max}'s (-0.0 below 0.0) - none depends on the order the
 * numbers come in, so a summary gives what the instances give. Otherwise one pass over the
 * instances: each period is accumulated for every method at once, without
 * boxing (numbers by their {@code double}); a period without instances costs nothing, so a fine
 * period over a long window with sparse data stays cheap. What is allocated is the answer, and
 * for {@code distinctCount} the set of distinct values of the largest period.
 */
public final class TemporalAggregation {
    private static final String DURATION_FORM = "an ISO 8601 duration such as P1D, PT1H, P1M or P1Y2M3DT4H5M6.5S";

    /** The longest period accepted, part by part: the calendar arithmetic then never overflows. */
    private static final Duration LONGEST = Duration.ofDays(36_525_000);
    private static final long LONGEST_MONTHS = 1_200_000;

    private final List<AggregationMethod> methods;
    private final Period calendar;
    private final long fixedMs;

    private TemporalAggregation(List<AggregationMethod> methods, Period calendar, long fixedMs) {
        this.methods = methods;
        this.calendar = calendar;
        this.fixedMs = fixedMs;
    }

    /**
     * The aggregation {@code aggrMethods} and {@code aggrPeriodDuration} ask for.
     *
     * @param aggrMethods        the comma-separated methods (required)
     * @param aggrPeriodDuration the period's duration, or {@code null}: the whole window
     * @throws NgsiLdException a BadRequestData naming the parameter and what is wrong with it
     */
    public static TemporalAggregation parse(String aggrMethods, String aggrPeriodDuration) {
        List<AggregationMethod> methods = parseMethods(aggrMethods);
        if (aggrPeriodDuration == null) {
            return new TemporalAggregation(methods, Period.ZERO, 0);
        }
        String d = aggrPeriodDuration;
        if (d.indexOf('-') >= 0 || d.indexOf('+') >= 0) {
            throw NgsiLdException.badData("aggrPeriodDuration: '" + shown(d) + "' is negative or signed; it is " + DURATION_FORM);
        }
        int t = Math.max(d.indexOf('T'), d.indexOf('t'));
        String datePart = t < 0 ? d : d.substring(0, t);
        Period calendar;
        Duration fixed;
        try {
            calendar = t >= 0 && datePart.equalsIgnoreCase("P") ? Period.ZERO : Period.parse(datePart);
            fixed = t < 0 ? Duration.ZERO : Duration.parse("PT" + d.substring(t + 1));
        } catch (DateTimeException e) {
            throw NgsiLdException.badData("aggrPeriodDuration: '" + shown(d) + "' is not " + DURATION_FORM);
        }
        if (fixed.getNano() % 1_000_000 != 0) {
            throw NgsiLdException.badData("aggrPeriodDuration: '" + shown(d) + "' is finer than a millisecond");
        }
        long fixedMs = fixed.compareTo(LONGEST) <= 0 ? fixed.toMillis() : -1;
        if (fixedMs < 0 || calendar.toTotalMonths() > LONGEST_MONTHS || calendar.getDays() > LONGEST.toDays()) {
            throw NgsiLdException.badData("aggrPeriodDuration: '" + shown(d) + "' is longer than 100000 years");
        }
        return new TemporalAggregation(methods, calendar, fixedMs);
    }

    /** The methods of {@code aggrMethods}, in the order given, each once. */
    static List<AggregationMethod> parseMethods(String aggrMethods) {
        if (aggrMethods == null || aggrMethods.isBlank()) {
            throw NgsiLdException.badData("aggrMethods: the aggregated representation needs at least one method, of "
                    + names());
        }
        List<AggregationMethod> methods = new ArrayList<>();
        String[] items = aggrMethods.split(",", -1);
        for (int i = 0; i < items.length; i++) {
            String name = items[i].strip();
            if (name.isEmpty()) {
                throw NgsiLdException.badData("aggrMethods: method " + (i + 1) + " of " + items.length + " is empty");
            }
            AggregationMethod m = AggregationMethod.of(name);
            if (m == null) {
                throw NgsiLdException.badData("aggrMethods: '" + shown(name) + "' is none of " + names());
            }
            if (!methods.contains(m)) {
                methods.add(m);
            }
        }
        return List.copyOf(methods);
    }

    /** A client's value as an error shows it: bounded, so that a long one is not sent back whole. */
    private static String shown(String v) {
        return v.length() <= 64 ? v : v.substring(0, 64) + "...";
    }

    private static String names() {
        StringBuilder b = new StringBuilder();
        for (AggregationMethod m : AggregationMethod.values()) {
            b.append(b.isEmpty() ? "" : ", ").append(m.parameterName());
        }
        return b.toString();
    }

    /** The methods asked for, in the order asked, each once. */
    public List<AggregationMethod> methods() {
        return methods;
    }

    /** Whether one period spans the whole window ({@code aggrPeriodDuration} absent or zero). */
    public boolean wholeWindow() {
        return calendar.isZero() && fixedMs == 0;
    }

    /**
     * Aggregates one attribute's instances: for each method asked, in the order asked, its
     * periods in time order, each holding a value (see the class's rules). Instances are read
     * through {@code time} and {@code value}, so that this package need not know the store's
     * record: with the store's {@code TemporalInstance}, {@code i -> i.time(property)} and
     * {@code i -> i.deleted() ? null : i.value()}.
     *
     * @param instances the attribute's instances, in ascending order of {@code time} (as a store
     *                  answers an {@code InstanceQuery}); those outside the window are skipped
     * @param from      the window's start, inclusive, or {@link Long#MIN_VALUE}: none
     * @param to        the window's end, exclusive, or {@link Long#MAX_VALUE}: none
     * @param time      an instance's time, epoch milliseconds; {@link Long#MIN_VALUE}: it has none
     * @param value     an instance's attribute, or {@code null} when it records a deletion
     * @throws IllegalArgumentException when the instances are not in time order
     */
    public <T> Map<AggregationMethod, List<AggregatedPeriod>> aggregate(List<? extends T> instances, long from, long to,
            ToLongFunction<? super T> time, Function<? super T, Attribute> value) {
        return aggregateRuns(List.of(AggregationRun.of(instances)), from, to, time, value);
    }

    /**
     * {@link #aggregate} over runs of instances, some of which a store summarised: a period that
     * holds a summarised run whole, and needs nothing its summary lacks, takes the summary instead
     * of the run's instances - with the same result, since a period's numbers are kept exactly
     * whatever the order they come in ({@link PeriodAccumulator}). Any other run is read.
     *
     * @param runs the attribute's instances, as runs that follow each other in time
     */
    public <T> Map<AggregationMethod, List<AggregatedPeriod>> aggregateRuns(List<AggregationRun<T>> runs, long from, long to,
            ToLongFunction<? super T> time, Function<? super T, Attribute> value) {
        if (from > to) {
            throw new IllegalArgumentException("window [" + from + ", " + to + ")");
        }
        int m = methods.size();
        List<List<AggregatedPeriod>> lists = new ArrayList<>(m);
        for (int j = 0; j < m; j++) {
            lists.add(new ArrayList<>());
        }
        // distinctCount compares values as written: only it needs more of an instance than its number
        Cursor<T> c = new Cursor<>(runs, time, !methods.contains(AggregationMethod.DISTINCT_COUNT));
        // the first value in the window: where periods start when the window does not say
        boolean found = false;
        long firstTime = 0;
        while (c.more()) {
            if (c.atRun()) {
                AggregationRun<T> run = c.run();
                PartialAggregate s = run.summary();
                if (s.count() == 0) {
                    c.next(); // deletions only: skipped, as each of them would be
                    continue;
                }
                if (run.first() >= to) {
                    break;
                }
                if (run.first() >= from && run.last() < to && s.firstValue() == run.first()) {
                    found = true;
                    firstTime = run.first();
                    break;
                }
                c.read();
                continue;
            }
            long t = c.time();
            if (t == Long.MIN_VALUE || t < from) {
                c.next();
                continue;
            }
            if (t >= to) {
                break;
            }
            if (value.apply(c.instance()) != null) {
                found = true;
                firstTime = t;
                break;
            }
            c.next();
        }
        if (found) {
            long origin = from == Long.MIN_VALUE ? firstTime : from;
            PeriodAccumulator acc = new PeriodAccumulator(methods.contains(AggregationMethod.DISTINCT_COUNT),
                    methods.contains(AggregationMethod.MIN) || methods.contains(AggregationMethod.MAX));
            if (wholeWindow()) {
                long last = accumulate(c, to, origin, value, acc);
                emit(acc, origin, to == Long.MAX_VALUE ? last + 1 : to, lists);
            } else {
                periods(c, to, new PeriodGrid(origin, calendar, fixedMs), value, acc, lists);
            }
        }
        Map<AggregationMethod, List<AggregatedPeriod>> out = new LinkedHashMap<>();
        for (int j = 0; j < m; j++) {
            out.put(methods.get(j), lists.get(j));
        }
        return out;
    }

    /**
     * The runs' instances one after the other, a summarised run standing as one item - its first
     * time - until {@link #read} opens it. Owned by one call: not thread-safe.
     */
    private static final class Cursor<T> {
        private final List<AggregationRun<T>> runs;
        private final ToLongFunction<? super T> time;
        private int r = -1;
        /** The current run's instances, or {@code null} while it is a summarised run not read. */
        private List<? extends T> items;
        private int i;
        /** How many instances were passed: a position for the messages. */
        private long passed;
        /** Whether a summarised run opened may give its numbers only. */
        private final boolean numbers;

        Cursor(List<AggregationRun<T>> runs, ToLongFunction<? super T> time, boolean numbers) {
            this.runs = runs;
            this.time = time;
            this.numbers = numbers;
            enter();
        }

        private void enter() {
            r++;
            i = 0;
            items = r < runs.size() && runs.get(r).summary() == null ? runs.get(r).instances() : null;
        }

        /** Whether an item is left; positions the cursor on it. */
        boolean more() {
            while (r < runs.size() && items != null && i >= items.size()) {
                enter();
            }
            return r < runs.size();
        }

        boolean atRun() {
            return items == null;
        }

        AggregationRun<T> run() {
            return runs.get(r);
        }

        /** The time of the item: the instance's, or the summarised run's first. */
        long time() {
            return items == null ? runs.get(r).first() : time.applyAsLong(items.get(i));
        }

        T instance() {
            return items.get(i);
        }

        void next() {
            if (items == null) {
                passed += runs.get(r).summary().count();
                enter();
            } else {
                i++;
                passed++;
            }
        }

        /** Opens the summarised run: its instances, read, are the next items. */
        void read() {
            items = runs.get(r).instances(numbers);
            i = 0;
        }

        IllegalArgumentException disorder() {
            return new IllegalArgumentException("instance " + passed + " is not in time order");
        }
    }

    /** Every period of {@code grid} that holds a value, from the cursor's item to the window's end. */
    private <T> void periods(Cursor<T> c, long to, PeriodGrid grid, Function<? super T, Attribute> value,
            PeriodAccumulator acc, List<List<AggregatedPeriod>> lists) {
        long k = 0;
        long previous = grid.start(0);
        while (c.more()) {
            long t = c.time();
            if (t >= to) {
                return;
            }
            if (t < previous) {
                throw c.disorder();
            }
            k = grid.indexOf(t, k);
            long start = grid.start(k);
            long limit = Math.min(grid.start(k + 1), to);
            acc.reset();
            // the inner loop: one period's instances and the summarised runs it holds whole
            while (c.more()) {
                t = c.time();
                if (t >= limit) {
                    break;
                }
                if (t < previous) {
                    throw c.disorder();
                }
                if (c.atRun()) {
                    AggregationRun<T> run = c.run();
                    if (run.last() < limit && acc.takes(run.summary())) {
                        acc.add(run.summary());
                        previous = run.last();
                        c.next();
                    } else {
                        c.read();
                    }
                    continue;
                }
                previous = t;
                Attribute a = value.apply(c.instance());
                if (a != null) {
                    acc.add(a);
                }
                c.next();
            }
            previous = limit;
            if (acc.count > 0) {
                emit(acc, start, limit, lists);
            }
            k++;
        }
    }

    /** Accumulates the values from the cursor's item to the window's end; answers the last value's time. */
    private static <T> long accumulate(Cursor<T> c, long to, long origin, Function<? super T, Attribute> value,
            PeriodAccumulator acc) {
        long previous = origin;
        long last = origin;
        while (c.more()) {
            long t = c.time();
            if (t >= to) {
                break;
            }
            if (t < previous) {
                throw c.disorder();
            }
            if (c.atRun()) {
                AggregationRun<T> run = c.run();
                PartialAggregate s = run.summary();
                if (run.last() < to && acc.takes(s)) {
                    acc.add(s);
                    previous = run.last();
                    if (s.count() > 0) {
                        last = s.lastValue();
                    }
                    c.next();
                } else {
                    c.read();
                }
                continue;
            }
            previous = t;
            Attribute a = value.apply(c.instance());
            if (a != null) {
                acc.add(a);
                last = t;
            }
            c.next();
        }
        return last;
    }

    /** Adds the period's result to each method's list, where the method has one. */
    private void emit(PeriodAccumulator acc, long start, long end, List<List<AggregatedPeriod>> lists) {
        for (int j = 0; j < methods.size(); j++) {
            JsonNode v = switch (methods.get(j)) {
                case TOTAL_COUNT -> PeriodAccumulator.integer(acc.count);
                case DISTINCT_COUNT -> PeriodAccumulator.integer(acc.distinctCount());
                case SUM -> acc.numbers > 0 ? finite(acc.sum.value()) : null;
                case AVG -> acc.numbers > 0 ? finite(acc.sum.value() / acc.numbers) : null;
                case MIN -> acc.min();
                case MAX -> acc.max();
                case STDDEV -> acc.numbers > 1 ? finite(acc.stddev()) : null;
                case SUMSQ -> acc.numbers > 0 ? finite(acc.sumsq.value()) : null;
            };
            if (v != null) {
                lists.get(j).add(new AggregatedPeriod(v, start, end));
            }
        }
    }

    /** {@code d} as JSON, or {@code null} when JSON cannot hold it (an overflow). */
    private static JsonNode finite(double d) {
        return Double.isFinite(d) ? DoubleNode.valueOf(d) : null;
    }

    @Override
    public String toString() {
        return "TemporalAggregation" + methods + (wholeWindow() ? " over the whole window" : " by " + calendar + " + " + fixedMs + " ms");
    }
}
