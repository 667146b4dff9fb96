package dev.cor.ngsild.query;

import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;

/**
 * A regular expression from a request or from what a client keeps ({@code idPattern}, a q
 * {@code ~=} pattern) whose matching cost is bounded. Its text is at most {@value #MAX_LENGTH}
 * characters. A match <em>finds</em> the pattern in its input (anchors as written: POSIX
 * {@code regexec}, as Orion-LD and Scorpio match idPattern and q patterns).
 * <p>
 * Its cost is counted in steps: each character the matcher reads costs the pattern's
 * {@linkplain #weight() weight} - one, plus one per group, quantifier and alternative - since
 * between two reads the matcher walks at most that many of the pattern's nodes (a pattern of
 * nested groups spends microseconds per character read, a plain one nanoseconds). One match may
 * take at most {@link MatchBudget#MATCH_STEPS}, whatever its input's length, and no more than
 * its {@link MatchBudget} has left: a backtracking blow-up (say {@code ((a+)+)+b}) stops there
 * with TooComplexQuery instead of holding the loop. A leading {@code .*} is not tried again at
 * every position of an input without line terminators (it could only find what it found from
 * the first), so {@code .*downtown$} costs a read per character, not one per pair. Immutable;
 * any thread (the budget is the caller's own).
 */
public final class BoundedPattern {
    static final int MAX_LENGTH = 256;

    private final Pattern pattern;
    private final String what;
    private final int weight;
    /** Whether the pattern begins with {@code .*}: found anywhere iff found from the first character (one line). */
    private final boolean leadingAny;

    private BoundedPattern(Pattern pattern, String what) {
        this.pattern = pattern;
        this.what = what;
        this.weight = weigh(pattern.pattern());
        this.leadingAny = pattern.pattern().startsWith(".*");
    }

    /**
     * The text every match starts with, when the pattern is anchored at the start ({@code ^})
     * and literal characters follow; {@code null} otherwise. A character a quantifier may take
     * away ({@code ?}, {@code *}, <code>{</code>) is not part of it.
     */
    public String literalPrefix() {
        String p = pattern.pattern();
        if (!p.startsWith("^")) {
            return null;
        }
        int end = 1;
        while (end < p.length() && ".[]{}()*+?^$|\\".indexOf(p.charAt(end)) < 0) {
            end++;
        }
        if (end < p.length() && "?*{".indexOf(p.charAt(end)) >= 0) {
            end--;
        }
        return end > 1 ? p.substring(1, end) : null;
    }

    /** Compiles {@code regex}; BadRequestData naming {@code what} when it is too long or invalid. */
    public static BoundedPattern compile(String regex, String what) {
        if (regex.length() > MAX_LENGTH) {
            throw NgsiLdException.badData(what + " is longer than " + MAX_LENGTH + " characters");
        }
        return compileKept(regex, what);
    }

    /**
     * Compiles a pattern the broker accepted and kept (a registration's, a subscription's, read
     * back at start), whatever its length - one kept before the length bound must not make its
     * owner vanish; its matches are bounded all the same.
     */
    public static BoundedPattern compileKept(String regex, String what) {
        try {
            return new BoundedPattern(Pattern.compile(regex), what);
        } catch (PatternSyntaxException e) {
            throw NgsiLdException.badData(what + " is not a regular expression: " + e.getDescription()
                    + (e.getIndex() >= 0 ? " at character " + (e.getIndex() + 1) : ""));
        } catch (StackOverflowError e) {
            throw NgsiLdException.badData(what + " nests too deeply");
        }
    }

    /** {@link #compile} of {@code regex}, or {@code null} for none. */
    public static BoundedPattern compileOrNull(String regex, String what) {
        return regex == null ? null : compile(regex, what);
    }

    /**
     * The steps one character read costs: one, plus one for each group (lookarounds included),
     * quantifier and alternative of the text, escapes and the insides of character classes
     * aside - an upper bound of the nodes the matcher walks between two reads.
     */
    static int weigh(String regex) {
        int w = 1;
        boolean inClass = false;
        for (int i = 0; i < regex.length(); i++) {
            char c = regex.charAt(i);
            if (c == '\\') {
                i++;
                continue;
            }
            if (inClass) {
                inClass = c != ']';
                continue;
            }
            switch (c) {
                case '[' -> {
                    inClass = true;
                    w++;
                }
                case '(', '*', '+', '?', '{', '|' -> w++;
                default -> {
                }
            }
        }
        return w;
    }

    /** The steps one character read costs. */
    public int weight() {
        return weight;
    }

    /**
     * Whether the pattern occurs in {@code s}, within what {@code budget} allows.
     *
     * @throws NgsiLdException TooComplexQuery when the match takes more than {@link MatchBudget#MATCH_STEPS},
     *         or more than the budget had left (which it then has spent)
     */
    public boolean find(String s, MatchBudget budget) {
        long cap = budget.nextCap();
        Budgeted in = new Budgeted(s, cap, weight);
        try {
            java.util.regex.Matcher m = pattern.matcher(in);
            return leadingAny && oneLine(s) ? m.lookingAt() : m.find();
        } catch (Exhausted e) {
            throw cap < MatchBudget.MATCH_STEPS ? budgetSpent(budget) : tooCostly();
        } catch (StackOverflowError e) {
            throw tooCostly();
        } finally {
            budget.spend(cap - in.left);
        }
    }

    /** Whether {@code s} holds no line terminator (where {@code .} stops, § Pattern "Line terminators"). */
    private static boolean oneLine(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\n' || c == '\r' || c == '\u0085' || c == '\u2028' || c == '\u2029') {
                return false;
            }
        }
        return true;
    }

    /** {@link #find(String, MatchBudget)} with a budget of one match. */
    public boolean find(String s) {
        return find(s, MatchBudget.oneMatch());
    }

    /** The text of the regular expression. */
    public String pattern() {
        return pattern.pattern();
    }

    private NgsiLdException tooCostly() {
        return new NgsiLdException(ErrorType.TOO_COMPLEX_QUERY, what + " '" + pattern.pattern()
                + "' costs too much to match: one match may take " + MatchBudget.MATCH_STEPS + " steps (a character read"
                + " costs " + weight + " for this pattern; it backtracks without bound, or its input is too long)");
    }

    private NgsiLdException budgetSpent(MatchBudget budget) {
        return new NgsiLdException(ErrorType.TOO_COMPLEX_QUERY, "the regular expressions of this request took more than "
                + budget.total() + " steps together (" + what + " '" + pattern.pattern() + "' ran out)");
    }

    @Override
    public String toString() {
        return pattern.pattern();
    }

    private static final class Exhausted extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Exhausted() {
            super(null, null, false, false);
        }
    }

    /** The input as the matcher reads it, each read costing the pattern's weight, until its cap is spent. */
    private static final class Budgeted implements CharSequence {
        private final String s;
        private final int weight;
        long left;

        Budgeted(String s, long cap, int weight) {
            this.s = s;
            this.left = cap;
            this.weight = weight;
        }

        @Override
        public char charAt(int index) {
            if (left < weight) {
                throw new Exhausted();
            }
            left -= weight;
            return s.charAt(index);
        }

        @Override
        public int length() {
            return s.length();
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            return s.subSequence(start, end);
        }

        @Override
        public String toString() {
            return s;
        }
    }
}
