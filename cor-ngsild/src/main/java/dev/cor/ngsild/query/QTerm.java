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

    /**
     * The value-index lookup whose keys bound this term's matches ({@link ValueKey}), or
     * {@code null} when none does: {@code !=} and {@code !~=} (they hold where a value differs),
     * a path into sub-attributes, metadata, members or linked entities, an entity's own times,
     * a date or a time of day (each has more than one spelling), a pattern without a literal
     * prefix ({@code ^abc}).
     */
    ValueLookup lookup() {
        if (path.link != null || path.subs.length > 0 || path.meta != QPath.Meta.NONE || path.members.length > 0
                || path.entityTime != QPath.Meta.NONE) {
            return null;
        }
        java.util.List<ValueLookup.Range> out = new java.util.ArrayList<>(values == null ? 1 : values.length);
        boolean bounded = switch (op) {
            case EQ -> {
                if (range) {
                    yield ranges(values[0], values[1], out);
                }
                for (QValue v : values) {
                    if (!ranges(v, v, out)) {
                        yield false;
                    }
                }
                yield true;
            }
            case GT, GE -> ranges(values[0], null, out);
            case LT, LE -> ranges(null, values[0], out);
            case MATCH -> {
                String prefix = pattern.literalPrefix();
                if (prefix == null) {
                    yield false;
                }
                out.add(new ValueLookup.Range(ValueKey.text(prefix), textAbove(prefix)));
                yield true;
            }
            default -> false;
        };
        return bounded ? new ValueLookup(path.attribute, out) : null;
    }

    /**
     * Adds the key ranges that hold every value from {@code low} to {@code high} as
     * {@link QValue#compare} orders them ({@code null}: unbounded on that side); {@code false}
     * when keys cannot bound them.
     */
    private boolean ranges(QValue low, QValue high, java.util.List<ValueLookup.Range> out) {
        QValue any = low != null ? low : high;
        switch (any.kind) {
            case NUMBER -> out.add(new ValueLookup.Range(low == null ? ValueKey.lowest(ValueKey.NUMBER) : ValueKey.number(low.number),
                    high == null ? ValueKey.highest(ValueKey.NUMBER) : ValueKey.number(high.number)));
            case BOOLEAN -> out.add(new ValueLookup.Range(low == null ? ValueKey.lowest(ValueKey.BOOLEAN) : ValueKey.bool(low.bool),
                    high == null ? ValueKey.highest(ValueKey.BOOLEAN) : ValueKey.bool(high.bool)));
            case TEXT -> {
                if (expand) {
                    out.add(textRange(low == null ? null : expanded(low), high == null ? null : expanded(high)));
                    return true;
                }
                switch (any.temporal) {
                    case NONE -> out.add(textRange(low == null ? null : low.text, high == null ? null : high.text));
                    case DATE_TIME -> {
                        out.add(new ValueLookup.Range(
                                low == null ? ValueKey.lowest(ValueKey.TIME) : ValueKey.time(ValueKey.instantMillis(low.text)),
                                high == null ? ValueKey.highest(ValueKey.TIME) : ValueKey.time(ValueKey.instantMillis(high.text))));
                        // a quoted date-time also compares as a text with a text that is no date-time
                        if ((low != null && low.quoted) || (high != null && high.quoted)) {
                            out.add(textRange(low == null ? null : low.text, high == null ? null : high.text));
                        }
                    }
                    default -> {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    private static String expanded(QValue v) {
        return v.expanded != null ? v.expanded : v.text;
    }

    private static ValueLookup.Range textRange(String low, String high) {
        return new ValueLookup.Range(low == null ? ValueKey.lowest(ValueKey.TEXT) : ValueKey.text(low),
                high == null ? ValueKey.highest(ValueKey.TEXT) : ValueKey.text(high));
    }

    /** A key at or above every text that starts with {@code prefix}. */
    private static ValueKey textAbove(String prefix) {
        StringBuilder b = new StringBuilder(prefix);
        while (!b.isEmpty()) {
            char last = b.charAt(b.length() - 1);
            if (last != Character.MAX_VALUE) {
                b.setCharAt(b.length() - 1, (char) (last + 1));
                return ValueKey.text(b.toString());
            }
            b.setLength(b.length() - 1);
        }
        return ValueKey.highest(ValueKey.TEXT);
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
