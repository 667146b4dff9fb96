package dev.cor.ngsild.query;

import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.Entity;

/**
 * One query term (§ 4.9): an attribute path alone (existence), or with an operator and a value,
 * a list of values ({@code ==}/{@code !=} any of them), a range ({@code a..b}, both included) or a
 * pattern. A target that is an array matches {@code ==} when one of its items does, and
 * {@code !=} when none does; so do an attribute's instances and a language map's values.
 * {@code expand}: the attribute is one of the request's {@code expandValues}, whose values are
 * compared expanded as vocab terms (4.9 example 12). Immutable.
 */
record QTerm(QPath path, Op op, QValue[] values, boolean range, BoundedPattern pattern, boolean expand) implements QNode {

    enum Op { EXISTS, EQ, NE, GT, GE, LT, LE, MATCH, NO_MATCH }

    @Override
    public boolean test(Entity e, java.util.function.Function<String, Entity> linked, MatchBudget budget) {
        return switch (op) {
            case EXISTS -> path.exists(e, linked);
            // != and !~= hold when the target exists and none of its values (instances, items,
            // languages) equals or matches: the negation of == and ~= over an existing target
            case NE -> path.exists(e, linked) && !path.any(e, linked, this::equalsAny);
            case NO_MATCH -> path.any(e, linked, (v, k) -> anyItem(v, JsonNode::isTextual))
                    && !path.any(e, linked, (v, k) -> matches(v, budget));
            case MATCH -> path.any(e, linked, (v, k) -> matches(v, budget));
            default -> path.any(e, linked, this::accepts);
        };
    }

    @Override
    public void required(Set<String> out) {
        if (path.entityTime == QPath.Meta.NONE) {
            out.add(path.attribute);
        }
    }

    private boolean accepts(JsonNode v, AttributeKind k) {
        return switch (op) {
            case EQ -> equalsAny(v, k);
            case GT, GE, LT, LE -> !isRelationship(k) && ordered(v, k);
            case EXISTS, NE, MATCH, NO_MATCH -> throw new IllegalStateException(op.name());
        };
    }

    private static boolean isRelationship(AttributeKind k) {
        return k == AttributeKind.RELATIONSHIP || k == AttributeKind.LIST_RELATIONSHIP;
    }

    /** Whether the target (or one of its items) equals one of the values, or lies in the range. */
    private boolean equalsAny(JsonNode v, AttributeKind k) {
        return anyItem(v, item -> equalsOne(item, k));
    }

    /** Whether {@code v} - or, when it is an array, one of its items - passes {@code p}. */
    private static boolean anyItem(JsonNode v, java.util.function.Predicate<JsonNode> p) {
        if (v.isArray()) {
            for (JsonNode item : v) {
                if (p.test(item)) {
                    return true;
                }
            }
            return false;
        }
        return p.test(v);
    }

    private boolean equalsOne(JsonNode v, AttributeKind k) {
        boolean vocab = expand;
        if (range) {
            Integer lo = values[0].compare(v, vocab);
            Integer hi = values[1].compare(v, vocab);
            return lo != null && hi != null && lo >= 0 && hi <= 0;
        }
        for (QValue q : values) {
            Integer c = q.compare(v, vocab);
            if (c != null && c == 0) {
                return true;
            }
        }
        return false;
    }

    private boolean ordered(JsonNode v, AttributeKind k) {
        return anyItem(v, item -> orderedOne(item, k));
    }

    private boolean orderedOne(JsonNode v, AttributeKind k) {
        Integer c = values[0].compare(v, expand);
        if (c == null) {
            return false;
        }
        return switch (op) {
            case GT -> c > 0;
            case GE -> c >= 0;
            case LT -> c < 0;
            case LE -> c <= 0;
            default -> false;
        };
    }

    /** A pattern applies to strings only: any other target matches neither ~= nor !~= (§ 4.9). */
    private boolean matches(JsonNode v, MatchBudget budget) {
        return anyItem(v, item -> item.isTextual() && pattern.find(item.textValue(), budget));
    }
}
