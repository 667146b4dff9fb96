package dev.cor.ngsild.store;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;

import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.query.ValueKey;
import dev.cor.ngsild.query.ValueLookup;

/**
 * One attribute's values in one tenant, ordered: an entry (key, id) per distinct key of each
 * entity's attribute ({@link ValueKey#forEach}). Written only inside the store's per-id critical
 * section of the id it moves ({@link #move}) - so one id's entries have one writer at a time -
 * and read by any thread without a lock: a write touches only the keys it adds or removes, so a
 * reader never misses an entity whose keys the write left as they were (a value moving within a
 * range while it is read may be seen at both places or, in passing, at neither: as a concurrent
 * write, it is before or after the read).
 */
final class ValueIndex {
    /** Heap bytes one entry takes, estimated: its key, the entry, the skip list's node and index share. */
    static final long ENTRY_BYTES = ValueKey.BYTES + 24 + 32;

    enum State { BUILDING, READY, DROPPED }

    final String attribute;
    private final ConcurrentSkipListSet<Entry> entries = new ConcurrentSkipListSet<>();
    private final AtomicLong size = new AtomicLong();
    volatile State state;

    ValueIndex(String attribute, State state) {
        this.attribute = attribute;
        this.state = state;
    }

    /** An entry: the key, then the id; a {@code null} id is above every id (a range's top). */
    private record Entry(ValueKey key, String id) implements Comparable<Entry> {
        @Override
        public int compareTo(Entry o) {
            int c = key.compareTo(o.key);
            if (c != 0) {
                return c;
            }
            if (id == null || o.id == null) {
                return id == o.id ? 0 : id == null ? 1 : -1;
            }
            return id.compareTo(o.id);
        }
    }

    /** How many entries it holds. */
    long size() {
        return size.get();
    }

    /**
     * Moves the id's entries from the keys of {@code before} to those of {@code after} (either
     * {@code null}: the entity lacks the attribute); answers how many entries it added less how
     * many it removed. Inside the critical section of {@code id}.
     */
    long move(String id, AttributeList before, AttributeList after) {
        Set<ValueKey> old = keys(before);
        Set<ValueKey> now = keys(after);
        long delta = 0;
        for (ValueKey k : now) {
            if (!old.contains(k) && entries.add(new Entry(k, id))) {
                delta++;
            }
        }
        for (ValueKey k : old) {
            if (!now.contains(k) && entries.remove(new Entry(k, id))) {
                delta--;
            }
        }
        size.addAndGet(delta);
        return delta;
    }

    private static Set<ValueKey> keys(AttributeList l) {
        if (l == null) {
            return Set.of();
        }
        Set<ValueKey> out = new HashSet<>(4);
        ValueKey.forEach(l, out::add);
        return out;
    }

    /**
     * The ids with a key in one of the lookup's ranges, in id order, each once; {@code null} when
     * the ranges hold more than {@code max} entries (the caller takes another way) - found out
     * after reading at most {@code max + 1} of them.
     */
    List<String> ids(ValueLookup lookup, int max) {
        ArrayList<String> out = new ArrayList<>();
        for (ValueLookup.Range r : lookup.ranges()) {
            if (r.low().compareTo(r.high()) > 0) {
                continue;
            }
            for (Entry e : entries.subSet(new Entry(r.low(), ""), true, new Entry(r.high(), null), true)) {
                if (out.size() >= max) {
                    return null;
                }
                out.add(e.id);
            }
        }
        // an id with several keys in the ranges (array items, instances, overlapping ranges) is visited once
        out.sort(null);
        int n = 0;
        for (int i = 0; i < out.size(); i++) {
            if (n == 0 || !out.get(i).equals(out.get(n - 1))) {
                out.set(n++, out.get(i));
            }
        }
        return out.subList(0, n);
    }
}
