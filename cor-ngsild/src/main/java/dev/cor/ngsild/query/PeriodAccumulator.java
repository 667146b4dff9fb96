package dev.cor.ngsild.query;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.HashSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NumericNode;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;

/**
 * What one period of an aggregation has seen so far, for every method at once: the count, the
 * numeric sums, the extremes, the texts' extremes and the distinct values. Reset and reused from
 * one period to the next, so a period costs no allocation but its results (and the distinct set's
 * growth). The rules for which value counts where are {@link TemporalAggregation}'s.
 * <p>
 * What it keeps of numbers does not depend on the order they came in - exact sums
 * ({@link ExactSum}), extremes by {@link Math#min}/{@link Math#max} (-0.0 below 0.0) - so that a
 * {@link PartialAggregate} a store kept for a chunk, {@link #add(PartialAggregate) added} whole,
 * gives the period what its instances one by one would. The texts' extremes and the distinct
 * values have no such summary. Owned by the one call of {@link TemporalAggregation#aggregate}
 * that made it (or by a {@link PartialAggregate.Builder}): not thread-safe.
 */
final class PeriodAccumulator {
    /** The longs up to this, in magnitude, are exact doubles. */
    private static final long EXACT_LONG_LIMIT = 1L << 53;

    private final boolean distinct;
    private final boolean lexical;

    long count;
    long numbers;
    final ExactSum sum = new ExactSum();
    final ExactSum sumsq = new ExactSum();
    double min;
    double max;
    private final ExactSum scratch = new ExactSum();

    /** The Properties' texts seen (their extremes only kept when {@code lexical}). */
    long texts;
    private String minText;
    private String maxText;
    private JsonNode minTextNode;
    private JsonNode maxTextNode;

    private final DoubleSet distinctNumbers;
    private final HashSet<Object> distinctOthers;

    /**
     * @param distinct whether to keep the distinct values (distinctCount is asked)
     * @param lexical  whether to keep the texts' extremes (min or max is asked)
     */
    PeriodAccumulator(boolean distinct, boolean lexical) {
        this.distinct = distinct;
        this.lexical = lexical;
        this.distinctNumbers = distinct ? new DoubleSet() : null;
        this.distinctOthers = distinct ? new HashSet<>() : null;
    }

    /** Forgets the period: ready for the next. */
    void reset() {
        count = 0;
        numbers = 0;
        sum.reset();
        sumsq.reset();
        texts = 0;
        minText = maxText = null;
        minTextNode = maxTextNode = null;
        if (distinct) {
            distinctNumbers.clear();
            if (!distinctOthers.isEmpty()) {
                distinctOthers.clear();
            }
        }
    }

    /** Takes one instance's attribute (not a deletion) into the period. */
    void add(Attribute a) {
        count++;
        JsonNode v = a.value();
        boolean property = a.kind() == AttributeKind.PROPERTY;
        if (v instanceof NumericNode) {
            if (property) {
                number(v.doubleValue());
            }
            if (distinct) {
                distinctNumber(v);
            }
            return;
        }
        if (distinct) {
            distinctOthers.add(v);
        }
        if (!property) {
            return;
        }
        if (v.isBoolean()) {
            number(v.booleanValue() ? 1 : 0);
        } else {
            String text = v.isTextual() ? v.textValue() : typedLiteral(v);
            if (text != null) {
                if (lexical) {
                    text(text, v);
                } else {
                    texts++;
                }
            }
        }
    }

    /**
     * Takes a chunk's summary into the period, as if its instances came one by one. The caller
     * sees to it that the period needs nothing the summary lacks: no distinct values, and no
     * texts' extremes where the chunk has texts and no number ({@link #takes}).
     */
    void add(PartialAggregate p) {
        count += p.count(); // not its texts: with them and no number, takes() said no
        if (p.numbers() > 0) {
            if (numbers == 0) {
                min = p.min();
                max = p.max();
            } else {
                min = Math.min(min, p.min());
                max = Math.max(max, p.max());
            }
            numbers += p.numbers();
            sum.addAll(p.sum());
            sumsq.addAll(p.sumsq());
        }
    }

    /** Whether {@link #add(PartialAggregate)} gives this period all it needs of {@code p}'s instances. */
    boolean takes(PartialAggregate p) {
        return !distinct && !(lexical && p.texts() > 0 && p.numbers() == 0);
    }

    private void number(double x) {
        if (numbers++ == 0) {
            min = x;
            max = x;
        } else {
            min = Math.min(min, x);
            max = Math.max(max, x);
        }
        sum.add(x);
        sumsq.addSquare(x);
    }

    private void text(String text, JsonNode node) {
        if (texts++ == 0) {
            minText = maxText = text;
            minTextNode = maxTextNode = node;
        } else if (text.compareTo(minText) < 0) {
            minText = text;
            minTextNode = node;
        } else if (text.compareTo(maxText) > 0) {
            maxText = text;
            maxTextNode = node;
        }
    }

    /** The lexical form of a typed literal ({@code {"@type": "DateTime", "@value": "..."}}), or {@code null}. */
    private static String typedLiteral(JsonNode v) {
        if (v.isObject() && v.size() == 2 && v.has("@type")) {
            JsonNode value = v.get("@value");
            return value != null && value.isTextual() ? value.textValue() : null;
        }
        return null;
    }

    /** Numbers are distinct by value: 1, 1.0 and 1e0 are one value. */
    private void distinctNumber(JsonNode v) {
        if (v.isInt() || v.isDouble() || v.isFloat() || v.isShort()) {
            distinctNumbers.add(v.doubleValue());
            return;
        }
        if (v.isLong()) {
            long l = v.longValue();
            double d = l;
            if ((l >= -EXACT_LONG_LIMIT && l <= EXACT_LONG_LIMIT) || (d != 0x1p63 && (long) d == l)) {
                distinctNumbers.add(d);
                return;
            }
            distinctOthers.add(BigDecimal.valueOf(l).stripTrailingZeros());
            return;
        }
        BigDecimal exact = v.decimalValue();
        double d = exact.doubleValue();
        if (Double.isFinite(d) && new BigDecimal(d).compareTo(exact) == 0) {
            distinctNumbers.add(d);
        } else {
            distinctOthers.add(exact.stripTrailingZeros());
        }
    }

    /** The number of distinct values seen. */
    long distinctCount() {
        return distinctNumbers.size() + distinctOthers.size();
    }

    /**
     * The sample standard deviation of the numbers; at least two are needed:
     * sqrt((n S2 - S1^2) / (n (n - 1))) with the numerator computed exactly from the exact sums
     * S1 and S2 - from their partials, every product split exactly by {@code fma}, or in
     * {@link BigDecimal} where a partial is so small or large that a product could leave the
     * doubles' range - and rounded once. So it is the exact sums' alone, and a large mean costs
     * nothing of its accuracy. NaN when it is beyond doubles.
     */
    double stddev() {
        double n = numbers;
        double numerator;
        if (sum.tame() && sumsq.tame()) {
            double[] s1 = sum.partials();
            double[] s2 = sumsq.partials();
            scratch.reset();
            for (double y : s2) {
                double p = n * y;
                scratch.add(p);
                scratch.add(Math.fma(n, y, -p));
            }
            for (double x : s1) {
                for (double y : s1) {
                    double p = x * y;
                    scratch.add(-p);
                    scratch.add(-Math.fma(x, y, -p));
                }
            }
            numerator = scratch.value();
        } else {
            BigDecimal s1 = sum.toBigDecimal();
            numerator = sumsq.toBigDecimal().multiply(BigDecimal.valueOf(numbers)).subtract(s1.multiply(s1)).doubleValue();
        }
        if (!Double.isFinite(numerator)) {
            return Double.NaN;
        }
        return Math.sqrt(Math.max(0, numerator / (n * (n - 1))));
    }

    /** The smallest value: the smallest number, else the first text in order, else {@code null}. */
    JsonNode min() {
        return numbers > 0 ? DoubleNode.valueOf(min) : minTextNode;
    }

    /** The largest value: the largest number, else the last text in order, else {@code null}. */
    JsonNode max() {
        return numbers > 0 ? DoubleNode.valueOf(max) : maxTextNode;
    }

    /** {@code n} as a JSON integer. */
    static JsonNode integer(long n) {
        return JsonNodeFactory.instance.numberNode(n);
    }

    /**
     * A set of doubles by value (-0.0 is 0.0), open addressing over their bits: no boxing, and
     * clearing costs only what was filled.
     */
    static final class DoubleSet {
        private long[] slots = new long[16];
        private int size;
        /** Whether 0.0 is in: its bits are the empty slot's. */
        private boolean zero;

        void add(double d) {
            if (d == 0) {
                if (!zero) {
                    zero = true;
                    size++;
                }
                return;
            }
            long bits = Double.doubleToRawLongBits(d);
            int mask = slots.length - 1;
            int i = mix(bits) & mask;
            while (slots[i] != 0) {
                if (slots[i] == bits) {
                    return;
                }
                i = (i + 1) & mask;
            }
            slots[i] = bits;
            if (++size * 2 > slots.length) {
                grow();
            }
        }

        int size() {
            return size;
        }

        void clear() {
            if (size > 0) {
                Arrays.fill(slots, 0);
                size = 0;
                zero = false;
            }
        }

        private void grow() {
            long[] old = slots;
            slots = new long[old.length * 2];
            int mask = slots.length - 1;
            for (long bits : old) {
                if (bits != 0) {
                    int i = mix(bits) & mask;
                    while (slots[i] != 0) {
                        i = (i + 1) & mask;
                    }
                    slots[i] = bits;
                }
            }
        }

        /** Spreads the bits: a small integer's double has its low forty bits zero. */
        private static int mix(long bits) {
            long h = (bits ^ (bits >>> 33)) * 0xFF51AFD7ED558CCDL;
            h = (h ^ (h >>> 33)) * 0xC4CEB9FE1A85EC53L;
            return (int) (h ^ (h >>> 33));
        }
    }
}
