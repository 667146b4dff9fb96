package dev.cor.ngsild.query;

import java.math.BigDecimal;
import java.util.Arrays;

/**
 * The exact sum of doubles, rounded once when read: Shewchuk's non-overlapping expansion (the
 * partials of Python's {@code math.fsum}), in increasing magnitude. Why exact: an aggregation may
 * add a period's numbers one by one or take the sums a store kept per chunk, and only a sum that
 * does not depend on the order of its additions gives the same answer both ways. A sum of n
 * numbers keeps a few partials (two or three for sensor data), so an addition costs a few
 * floating-point operations.
 * <p>
 * A number of magnitude {@value #TAME_TEXT} or more (it could overflow a partial) moves the sum
 * to {@link BigDecimal}, which is as exact and only slower. Mutable, one owner: not thread-safe.
 */
final class ExactSum {
    /** Below this magnitude, with fewer than 2^50 numbers, no partial can overflow. */
    private static final double TAME = 0x1p969;
    private static final String TAME_TEXT = "2^969";

    private double[] partials = new double[4];
    private int n;
    /** The sum, once a number too large for the partials came; {@code null} before. */
    private BigDecimal big;

    void reset() {
        n = 0;
        big = null;
    }

    /** Adds {@code x} (finite) exactly. */
    void add(double x) {
        if (big != null) {
            big = big.add(new BigDecimal(x));
            return;
        }
        if (!(Math.abs(x) < TAME)) {
            big = toBigDecimal().add(new BigDecimal(x));
            return;
        }
        int i = 0;
        for (int j = 0; j < n; j++) {
            double y = partials[j];
            if (Math.abs(x) < Math.abs(y)) {
                double t = x;
                x = y;
                y = t;
            }
            double hi = x + y;
            double lo = y - (hi - x);
            if (lo != 0) {
                partials[i++] = lo;
            }
            x = hi;
        }
        if (i == partials.length) {
            partials = Arrays.copyOf(partials, i * 2);
        }
        partials[i++] = x;
        n = i;
    }

    /**
     * Adds {@code x * x}: as its rounded product and the product's error ({@code fma}), each
     * exact, so that what a number adds never depends on what came before it; a number whose
     * square could overflow a partial, as its exact square.
     */
    void addSquare(double x) {
        if (Math.abs(x) < 0x1p484) {
            double p = x * x;
            add(p);
            add(Math.fma(x, x, -p));
            return;
        }
        BigDecimal b = new BigDecimal(x);
        big = toBigDecimal().add(b.multiply(b));
    }

    /** Adds the partials a {@link #partials()} gave. */
    void addAll(double[] others) {
        for (double x : others) {
            add(x);
        }
    }

    /** Whether the sum left the partials for {@link BigDecimal} (it cannot be summarised as partials). */
    boolean big() {
        return big != null;
    }

    /** The partials, a copy; only when not {@link #big()}. */
    double[] partials() {
        return Arrays.copyOf(partials, n);
    }

    /** The exact sum. */
    BigDecimal toBigDecimal() {
        if (big != null) {
            return big;
        }
        BigDecimal s = BigDecimal.ZERO;
        for (int j = 0; j < n; j++) {
            s = s.add(new BigDecimal(partials[j]));
        }
        return s;
    }

    /** The sum rounded to the nearest double (ties to even); infinite when it is beyond doubles. */
    double value() {
        if (big != null) {
            return big.doubleValue();
        }
        return rounded(partials, n);
    }

    /** fsum's last step: the partials added from the largest, with a correction for a half-way case. */
    private static double rounded(double[] partials, int n) {
        if (n == 0) {
            return 0.0;
        }
        double hi = partials[--n];
        double lo = 0;
        while (n > 0) {
            double x = hi;
            double y = partials[--n];
            hi = x + y;
            double yr = hi - x;
            lo = y - yr;
            if (lo != 0) {
                break;
            }
        }
        if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
            double y = lo * 2;
            double x = hi + y;
            double yr = x - hi;
            if (y == yr) {
                hi = x;
            }
        }
        return hi;
    }

    /**
     * Whether every partial is 0 or of a magnitude in [2^-400, 2^400]: the products of two of
     * them, and of one with a count, are then exact as a double and its {@code fma} error.
     */
    boolean tame() {
        if (big != null) {
            return false;
        }
        for (int j = 0; j < n; j++) {
            double a = Math.abs(partials[j]);
            if (a != 0 && (a < 0x1p-400 || a > 0x1p400)) {
                return false;
            }
        }
        return true;
    }
}
