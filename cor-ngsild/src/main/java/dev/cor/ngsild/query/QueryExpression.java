package dev.cor.ngsild.query;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Entity;

/**
 * A parsed NGSI-LD query ({@code q}, ETSI GS CIM 009 § 4.9): terms on attribute paths joined by
 * {@code ;} (and, binding tighter) and {@code |} (or), grouped with parentheses, its names
 * expanded with the request's {@code @context} once, at {@link #parse}. Immutable: parse once,
 * then {@link #test} any number of entities from any thread (a query, a subscription's
 * notifications). Every syntax error is a BadRequestData naming the character.
 */
public final class QueryExpression {
    /** The longest q accepted: a bound on parse and evaluation cost per entity. */
    static final int MAX_LENGTH = 4096;

    private final String text;
    private final QNode root;
    private final Set<String> required;

    QueryExpression(String text, QNode root) {
        this.text = text;
        this.root = root;
        Set<String> r = new LinkedHashSet<>();
        root.required(r);
        this.required = Set.copyOf(r);
    }

    /**
     * Parses {@code text}, expanding attribute names with {@code context}.
     *
     * @throws NgsiLdException BadRequestData pointing at the offending character
     */
    public static QueryExpression parse(String text, LdContext context) {
        return parse(text, context, Set.of());
    }

    /**
     * As {@link #parse(String, LdContext)}, the values compared with the attributes named in
     * {@code expandValues} (terms, as the request's {@code expandValues} lists them) expanded with
     * the context first, as vocab terms are (4.9 example 12); other values are compared as
     * written - so {@code category==commercial} matches a VocabProperty only under
     * {@code expandValues=category}.
     */
    public static QueryExpression parse(String text, LdContext context, Set<String> expandValues) {
        Set<String> iris = new java.util.HashSet<>();
        for (String term : expandValues) {
            String iri = context.expand(term);
            if (iri != null) {
                iris.add(iri);
            }
        }
        return new QueryExpression(text, new QParser(text, context, iris, "q").parse());
    }

    /**
     * Parses a q the broker accepted and kept before the 4.9 refusals of unquoted values (a
     * subscription's, read back at start): what was acknowledged then is not refused now.
     */
    public static QueryExpression parseKept(String text, LdContext context) {
        return new QueryExpression(text, new QParser(text, context, Set.of(), "q", true).parse());
    }

    /**
     * Whether {@code e} matches, its patterns reading at most what {@code budget} has left (a
     * pattern that backtracks without bound, or the budget spent, throws TooComplexQuery). A term
     * on a linked entity ({@code rel{attr}}) never matches here: see the other form.
     */
    public boolean test(Entity e, MatchBudget budget) {
        return root.test(e, id -> null, budget);
    }

    /**
     * Whether {@code e} matches, {@code linked} giving the entity a relationship's object names
     * (or {@code null}) for the terms on linked entities ({@code rel{Type:attr}}, 4.9 examples
     * 13/14) - the same tenant's store, say.
     */
    public boolean test(Entity e, java.util.function.Function<String, Entity> linked, MatchBudget budget) {
        return root.test(e, linked, budget);
    }

    /**
     * The expanded names of attributes every matching entity has (the first names of the terms
     * an entity must satisfy whatever the rest): a planner may start from the entities that
     * have one of them.
     */
    public Set<String> requiredAttributes() {
        return required;
    }

    /**
     * The value-index lookups that bound the matches, each alone (every matching entity has a
     * key in each): one per term that an and joins (or the one term), and one for an or whose
     * terms all bound the same attribute (their ranges joined). Empty when none does.
     */
    public List<ValueLookup> valueLookups() {
        List<ValueLookup> out = new ArrayList<>(2);
        if (root instanceof QNode.And a) {
            for (QNode n : a.all()) {
                ValueLookup l = lookup(n);
                if (l != null) {
                    out.add(l);
                }
            }
        } else {
            ValueLookup l = lookup(root);
            if (l != null) {
                out.add(l);
            }
        }
        return out;
    }

    private static ValueLookup lookup(QNode n) {
        if (n instanceof QTerm t) {
            return t.lookup();
        }
        if (n instanceof QNode.Or o) {
            List<ValueLookup.Range> ranges = new ArrayList<>();
            String attribute = null;
            for (QNode c : o.any()) {
                ValueLookup l = lookup(c);
                if (l == null || (attribute != null && !attribute.equals(l.attribute()))) {
                    return null;
                }
                attribute = l.attribute();
                ranges.addAll(l.ranges());
            }
            return new ValueLookup(attribute, ranges);
        }
        return null;
    }

    /**
     * Whether a term reads an attribute - not only the entity's own createdAt or modifiedAt (Purge
     * Entities, § 5.6.21.4 c, asks for "at least one non-system Attribute").
     */
    public boolean readsAnAttribute() {
        return anyPath(root, p -> p.entityTime == QPath.Meta.NONE);
    }

    /** Whether a term reads a linked entity ({@code rel{attr}}, 4.9), which Purge Entities refuses (§ 5.6.21.4). */
    public boolean readsLinkedEntities() {
        return anyPath(root, p -> p.link != null);
    }

    private static boolean anyPath(QNode n, java.util.function.Predicate<QPath> test) {
        return switch (n) {
            case QNode.And a -> java.util.Arrays.stream(a.all()).anyMatch(c -> anyPath(c, test));
            case QNode.Or o -> java.util.Arrays.stream(o.any()).anyMatch(c -> anyPath(c, test));
            case QNode.Absent a -> test.test(a.path());
            case QTerm t -> test.test(t.path());
        };
    }

    @Override
    public String toString() {
        return text;
    }

    /** The children of an and/or, for the parser. */
    static QNode and(List<QNode> all) {
        return all.size() == 1 ? all.get(0) : new QNode.And(all.toArray(QNode[]::new));
    }

    static QNode or(List<QNode> any) {
        return any.size() == 1 ? any.get(0) : new QNode.Or(any.toArray(QNode[]::new));
    }

    static List<QNode> list() {
        return new ArrayList<>(4);
    }
}
