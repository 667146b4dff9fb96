package dev.cor.ngsild.query;

import java.util.List;

/**
 * What a value index is asked for one q condition: the keys ({@link ValueKey}) of one attribute
 * that lie in any of some closed ranges. Every entity the condition matches has a key in one of
 * them; not every entity that has one matches (the caller tests each). Immutable.
 *
 * @param attribute the attribute's expanded name
 * @param ranges    closed ranges of keys, {@code [low, high]} each
 */
public record ValueLookup(String attribute, List<Range> ranges) {

    /** Keys from {@code low} to {@code high}, both included. */
    public record Range(ValueKey low, ValueKey high) {
    }

    public ValueLookup {
        ranges = List.copyOf(ranges);
    }

    @Override
    public String toString() {
        return attribute + ranges;
    }
}
