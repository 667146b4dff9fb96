package dev.cor.ngsild.query;

/**
 * How many steps the regular expressions of one piece of work may still take together: one
 * query request (its q patterns and its idPattern over every entity it scans), one registration
 * lookup, one periodic tick of a subscription, one subscription tested against one write. Every
 * {@link BoundedPattern} match draws on it and is also capped at {@link #MATCH_STEPS}; when it is
 * spent the match throws TooComplexQuery. A step is a character the matcher reads, weighted by the
 * pattern ({@link BoundedPattern#weight()}); measured on the project's machines a step costs
 * between 1 and 30 ns whatever the pattern ({@code doc/broker.md}), so the bounds are bounds in
 * time that do not depend on the machine's load - the same request is refused or not, every time.
 * <p>
 * Mutable and not thread-safe: it belongs to the work that made it and is used by the thread
 * running that work (a loop, a coroutine of it, or a worker), never shared.
 */
public final class MatchBudget {
    /** The most steps one match may take, whatever the length of its input. */
    public static final long MATCH_STEPS = 100_000;
    /** The most steps the matches of one request (or one tick) may take together. */
    public static final long REQUEST_STEPS = 10_000_000;

    private final long total;
    private long left;

    private MatchBudget(long chars) {
        this.total = chars;
        this.left = chars;
    }

    /** The budget of one request: {@link #REQUEST_STEPS}. */
    public static MatchBudget request() {
        return new MatchBudget(REQUEST_STEPS);
    }

    /** The budget of one match alone: {@link #MATCH_STEPS} (a subscription tested against one write). */
    public static MatchBudget oneMatch() {
        return new MatchBudget(MATCH_STEPS);
    }

    /** What it started with. */
    public long total() {
        return total;
    }

    /** What is left. */
    public long left() {
        return left;
    }

    /** The cap of the next match: what is left, at most {@link #MATCH_STEPS}. */
    long nextCap() {
        return Math.min(MATCH_STEPS, left);
    }

    void spend(long chars) {
        left -= chars;
    }
}
