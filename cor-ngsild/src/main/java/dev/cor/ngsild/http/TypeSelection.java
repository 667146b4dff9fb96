package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;

import dev.cor.ngsild.error.NgsiLdException;

/**
 * The entity type selection language (ETSI GS CIM 009 § 4.17): type names joined by {@code ,}
 * or {@code |} (or) and {@code ;} (and), grouped with parentheses - {@code (A;B),C}. Parsed once
 * per request into a small tree, its names expanded; every syntax error is a BadRequestData
 * naming the character. Immutable.
 */
final class TypeSelection {
    private sealed interface Node permits Type, And, Or {
    }

    private record Type(String iri) implements Node {
    }

    private record And(List<Node> all) implements Node {
    }

    private record Or(List<Node> any) implements Node {
    }

    private final Node root;
    private final Set<String> types;

    private TypeSelection(Node root, Set<String> types) {
        this.root = root;
        this.types = types;
    }

    /** Parses {@code text}, expanding each type name with {@code expand}. */
    static TypeSelection parse(String text, UnaryOperator<String> expand) {
        Parser p = new Parser(text, expand);
        Node root = p.or();
        if (p.pos < text.length()) {
            throw p.error("unexpected '" + text.charAt(p.pos) + "'");
        }
        return new TypeSelection(root, p.types);
    }

    @Override
    public String toString() {
        return root.toString();
    }

    /** Every type the selection names: an entity it selects has at least one of them. */
    Set<String> types() {
        return types;
    }

    boolean matches(List<String> entityTypes) {
        return matches(root, entityTypes);
    }

    private static boolean matches(Node n, List<String> have) {
        return switch (n) {
            case Type t -> have.contains(t.iri());
            case And a -> a.all().stream().allMatch(x -> matches(x, have));
            case Or o -> o.any().stream().anyMatch(x -> matches(x, have));
        };
    }

    /** Recursive descent: or := and ((','|'|') and)*; and := atom (';' atom)*; atom := '(' or ')' | name. */
    private static final class Parser {
        final String text;
        final UnaryOperator<String> expand;
        final Set<String> types = new LinkedHashSet<>();
        int pos;
        int depth;

        Parser(String text, UnaryOperator<String> expand) {
            this.text = text;
            this.expand = expand;
        }

        Node or() {
            List<Node> any = new ArrayList<>();
            any.add(and());
            while (pos < text.length() && (text.charAt(pos) == ',' || text.charAt(pos) == '|')) {
                pos++;
                any.add(and());
            }
            return any.size() == 1 ? any.get(0) : new Or(any);
        }

        Node and() {
            List<Node> all = new ArrayList<>();
            all.add(atom());
            while (pos < text.length() && text.charAt(pos) == ';') {
                pos++;
                all.add(atom());
            }
            return all.size() == 1 ? all.get(0) : new And(all);
        }

        Node atom() {
            if (pos < text.length() && text.charAt(pos) == '(') {
                if (++depth > 32) {
                    throw error("parentheses nest deeper than 32");
                }
                pos++;
                Node inner = or();
                if (pos >= text.length() || text.charAt(pos) != ')') {
                    throw error("a '(' is not closed");
                }
                pos++;
                depth--;
                return inner;
            }
            int start = pos;
            while (pos < text.length() && ",|;()".indexOf(text.charAt(pos)) < 0) {
                pos++;
            }
            if (pos == start) {
                throw error("a type name is missing");
            }
            String iri = expand.apply(text.substring(start, pos).trim());
            types.add(iri);
            return new Type(iri);
        }

        NgsiLdException error(String what) {
            return NgsiLdException.badData("type: " + what + " at character " + (pos + 1) + " of '" + text + "'");
        }
    }
}
