package dev.cor.ngsild.query;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.Period;
import java.time.ZoneOffset;

/**
 * The periods of one aggregation: period {@code k} (from 0) is [{@link #start}(k),
 * {@link #start}(k + 1)), where {@code start(k)} is the origin advanced {@code k} times by the
 * step - its calendar part ({@link Period}: years, months, days) on the UTC calendar, then its
 * fixed part in milliseconds. Each boundary is computed from the origin, not from the previous
 * boundary, so months do not drift: from January 31st, {@code P1M} gives February 29th (or 28th),
 * March 31st, April 30th, ... Immutable, built per aggregation; any thread.
 */
final class PeriodGrid {
    /** Roughly a Gregorian month, to guess a period's index before correcting the guess. */
    private static final long AVERAGE_MONTH_MS = 2_629_746_000L;
    private static final long DAY_MS = 86_400_000L;

    private final long origin;
    private final Period calendar;
    private final long fixedMs;
    /** {@code origin} on the UTC calendar, or {@code null} when the step has no calendar part. */
    private final LocalDateTime originDate;
    private final long approxStepMs;

    /**
     * @param origin   the first period's start, epoch milliseconds
     * @param calendar the step's calendar part (not negative)
     * @param fixedMs  the step's fixed part (not negative); the step as a whole is not zero
     */
    PeriodGrid(long origin, Period calendar, long fixedMs) {
        this.origin = origin;
        this.calendar = calendar;
        this.fixedMs = fixedMs;
        boolean hasCalendar = !calendar.isZero();
        this.originDate = hasCalendar ? LocalDateTime.ofInstant(Instant.ofEpochMilli(origin), ZoneOffset.UTC) : null;
        this.approxStepMs = calendar.toTotalMonths() * AVERAGE_MONTH_MS + calendar.getDays() * DAY_MS + fixedMs;
        if (approxStepMs <= 0) {
            throw new IllegalArgumentException("a zero step");
        }
    }

    /** The start of period {@code k} (0 is the origin), epoch milliseconds. */
    long start(long k) {
        if (originDate == null) {
            return origin + k * fixedMs;
        }
        Period p = calendar.multipliedBy(Math.toIntExact(k));
        return originDate.plus(p).toInstant(ZoneOffset.UTC).toEpochMilli() + k * fixedMs;
    }

    /** The index of the period that holds {@code t}, which is not before period {@code from}'s start. */
    long indexOf(long t, long from) {
        if (originDate == null) {
            return Math.floorDiv(t - origin, fixedMs);
        }
        // a guess from the average step, a few periods early, then corrected forward and back
        long k = Math.max(from, Math.floorDiv(t - origin, approxStepMs) - 2);
        while (start(k + 1) <= t) {
            k++;
        }
        while (k > from && start(k) > t) {
            k--;
        }
        return k;
    }
}
