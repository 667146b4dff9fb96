package dev.cor.ngsild.query;

import java.util.ArrayList;
import java.util.List;

import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.model.Entity;

/**
 * A parsed scope query ({@code scopeQ}, ETSI GS CIM 009 § 4.19): scope patterns - levels
 * separated by {@code /}, {@code +} standing for one level, a trailing {@code #} for the scope
 * and everything below it - joined by {@code ;} (and) and {@code ,} (or), grouped with
 * parentheses. An entity matches a pattern when one of its scopes does. Immutable, thread-safe.
 */
public final class ScopeQuery {
    private sealed interface Node permits Pattern, All, Any {
    }

    private record Pattern(String[] levels, boolean subtree) implements Node {
    }

    private record All(List<Node> all) implements Node {
    }

    private record Any(List<Node> any) implements Node {
    }

    private final Node root;

    private ScopeQuery(Node root) {
        this.root = root;
    }

    public static ScopeQuery parse(String text) {
        int[] pos = {0};
        Node root = or(text, pos, 0);
        if (pos[0] < text.length()) {
            throw error(text, pos[0], "unexpected '" + text.charAt(pos[0]) + "'");
        }
        return new ScopeQuery(root);
    }

    @Override
    public String toString() {
        return root.toString();
    }

    public boolean test(Entity e) {
        return test(root, e.scopes());
    }

    /** The query against a list of scopes (a registration's, § 5.10.2). */
    public boolean testScopes(List<String> scopes) {
        return test(root, scopes);
    }

    private static boolean test(Node n, List<String> scopes) {
        return switch (n) {
            case Pattern p -> {
                for (String s : scopes) {
                    if (matches(p, s)) {
                        yield true;
                    }
                }
                yield false;
            }
            case All a -> a.all().stream().allMatch(x -> test(x, scopes));
            case Any a -> a.any().stream().anyMatch(x -> test(x, scopes));
        };
    }

    private static boolean matches(Pattern p, String scope) {
        String[] levels = scope.substring(1).split("/", -1);
        String[] want = p.levels();
        if (p.subtree() ? levels.length < want.length : levels.length != want.length) {
            return false;
        }
        for (int i = 0; i < want.length; i++) {
            if (!want[i].equals("+") && !want[i].equals(levels[i])) {
                return false;
            }
        }
        return true;
    }

    private static Node or(String text, int[] pos, int depth) {
        List<Node> any = new ArrayList<>();
        any.add(and(text, pos, depth));
        while (pos[0] < text.length() && (text.charAt(pos[0]) == ',' || text.charAt(pos[0]) == '|')) {
            pos[0]++;
            any.add(and(text, pos, depth));
        }
        return any.size() == 1 ? any.get(0) : new Any(any);
    }

    private static Node and(String text, int[] pos, int depth) {
        List<Node> all = new ArrayList<>();
        all.add(atom(text, pos, depth));
        while (pos[0] < text.length() && text.charAt(pos[0]) == ';') {
            pos[0]++;
            all.add(atom(text, pos, depth));
        }
        return all.size() == 1 ? all.get(0) : new All(all);
    }

    private static Node atom(String text, int[] pos, int depth) {
        if (pos[0] < text.length() && text.charAt(pos[0]) == '(') {
            if (depth >= 32) {
                throw error(text, pos[0], "parentheses nest deeper than 32");
            }
            pos[0]++;
            Node inner = or(text, pos, depth + 1);
            if (pos[0] >= text.length() || text.charAt(pos[0]) != ')') {
                throw error(text, pos[0], "a '(' is not closed");
            }
            pos[0]++;
            return inner;
        }
        int start = pos[0];
        if (start >= text.length() || text.charAt(start) != '/') {
            throw error(text, start, "a scope starts with '/'");
        }
        List<String> levels = new ArrayList<>();
        boolean subtree = false;
        while (pos[0] < text.length() && text.charAt(pos[0]) == '/') {
            if (subtree) {
                throw error(text, pos[0], "'#' ends a scope pattern");
            }
            pos[0]++;
            int s = pos[0];
            while (pos[0] < text.length() && ",|;()/".indexOf(text.charAt(pos[0])) < 0) {
                pos[0]++;
            }
            String level = text.substring(s, pos[0]);
            if (level.equals("#")) {
                subtree = true;
                continue;
            }
            if (!level.equals("+") && !validLevel(level)) {
                throw error(text, s, "'" + level + "' is not a scope level (a letter, then letters, digits, '_'),"
                        + " '+' or '#'");
            }
            levels.add(level);
        }
        return new Pattern(levels.toArray(String[]::new), subtree);
    }

    private static boolean validLevel(String l) {
        if (l.isEmpty() || !Character.isLetter(l.codePointAt(0))) {
            return false;
        }
        return l.codePoints().allMatch(c -> Character.isLetterOrDigit(c) || c == '_');
    }

    private static NgsiLdException error(String text, int at, String what) {
        return NgsiLdException.badData("scopeQ: " + what + " at character " + (at + 1) + " of '" + text + "'");
    }
}
