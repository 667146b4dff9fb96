package dev.cor.ngsild.query;

import dev.cor.ngsild.error.NgsiLdException;

/**
 * A pattern a registration keeps and matches on others' behalf (an EntityInfo's
 * {@code idPattern}): compiled once, when the registration is built, and matched as any
 * {@link BoundedPattern} is - found in the id, in at most {@link MatchBudget#MATCH_STEPS} steps.
 * Its matches are paid by whoever asks (a request looking for sources, a write checked
 * against the registrations): they are not to blame for its cost, so a match that runs out of
 * budget fails none of them. The pattern is <em>spent</em> instead: it matches nothing from then
 * on, without running, and says so in the log once - until the registration is made again (an
 * update builds a new one). So a costly pattern costs the broker one match in its life.
 * Thread-safe: any loop or worker matches it.
 */
public final class StandingPattern {
    private static final System.Logger LOG = System.getLogger(StandingPattern.class.getName());

    private final BoundedPattern pattern;
    private final String owner;
    private volatile boolean spent;

    private StandingPattern(BoundedPattern pattern, String owner) {
        this.pattern = pattern;
        this.owner = owner;
    }

    /**
     * Compiles {@code regex} as {@link BoundedPattern#compileKept} does (its length was checked
     * when the registration was made); BadRequestData naming {@code what} when it is invalid.
     *
     * @param owner who keeps it, for the log ({@code registration urn:...})
     */
    public static StandingPattern compile(String regex, String what, String owner) {
        return new StandingPattern(BoundedPattern.compileKept(regex, what), owner);
    }

    /** Whether the pattern occurs in {@code s}; {@code false} once it is spent. */
    public boolean find(String s) {
        if (spent) {
            return false;
        }
        try {
            return pattern.find(s);
        } catch (NgsiLdException tooCostly) {
            spent = true;
            LOG.log(System.Logger.Level.WARNING, () -> owner + ": " + tooCostly.getMessage()
                    + "; it matches nothing until the registration is updated");
            return false;
        }
    }

    /** Whether a match ran out of budget: it matches nothing any more. */
    public boolean spent() {
        return spent;
    }

    /** The text of the regular expression. */
    public String pattern() {
        return pattern.pattern();
    }

    @Override
    public String toString() {
        return pattern.pattern();
    }
}
