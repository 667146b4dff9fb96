package dev.cor.ngsild.query;

import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import dev.cor.ngsild.api.ErrorType;
import dev.cor.ngsild.api.NgsiLdException;

/**
 * A regular expression from a request ({@code idPattern}, a q {@code ~=} pattern) whose matching
 * cost is bounded: its text is at most {@value #MAX_LENGTH} characters, and one match may read at
 * most {@code 10 000 + 100 x input length} characters of its input - a backtracking blow-up (say
 * {@code (a+)+$}) stops there with TooComplexQuery instead of holding the loop. Immutable; any
 * thread.
 */
public final class BoundedPattern {
    static final int MAX_LENGTH = 256;

    private final Pattern pattern;
    private final String what;

    private BoundedPattern(Pattern pattern, String what) {
        this.pattern = pattern;
        this.what = what;
    }

    /** Compiles {@code regex}; BadRequestData naming {@code what} when it is too long or invalid. */
    public static BoundedPattern compile(String regex, String what) {
        if (regex.length() > MAX_LENGTH) {
            throw NgsiLdException.badData(what + " is longer than " + MAX_LENGTH + " characters");
        }
        try {
            return new BoundedPattern(Pattern.compile(regex), what);
        } catch (PatternSyntaxException e) {
            throw NgsiLdException.badData(what + " is not a regular expression: " + e.getDescription()
                    + (e.getIndex() >= 0 ? " at character " + (e.getIndex() + 1) : ""));
        } catch (StackOverflowError e) {
            throw NgsiLdException.badData(what + " nests too deeply");
        }
    }

    /** Whether the whole of {@code s} matches. */
    public boolean matches(String s) {
        return run(s, true);
    }

    /** Whether some part of {@code s} matches (a q pattern: anchors say where). */
    public boolean find(String s) {
        return run(s, false);
    }

    private boolean run(String s, boolean whole) {
        try {
            var m = pattern.matcher(new Budgeted(s));
            return whole ? m.matches() : m.find();
        } catch (Exhausted | StackOverflowError e) {
            throw tooCostly();
        }
    }

    private NgsiLdException tooCostly() {
        return new NgsiLdException(ErrorType.TOO_COMPLEX_QUERY, what + " '" + pattern.pattern()
                + "' costs too much to match (it backtracks without bound)");
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

    /** The input as the matcher reads it, one read at a time, until the budget is spent. */
    private static final class Budgeted implements CharSequence {
        private final String s;
        private long budget;

        Budgeted(String s) {
            this.s = s;
            this.budget = 10_000L + 100L * s.length();
        }

        @Override
        public char charAt(int index) {
            if (--budget < 0) {
                throw new Exhausted();
            }
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
