package dev.cor.ngsild.ld;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.stream.Stream;

/**
 * A read-only map that is a shared {@code base} map (the core context's terms or compactions)
 * with a few entries of its own over it: what a processed context keeps instead of a copy of the
 * core's, which every request's context ends with. Immutable once built; any thread may read it.
 */
final class OverlayMap<V> extends AbstractMap<String, V> {
    final Map<String, V> base;
    /** The entries that are not the base's: added, or with another value. */
    final Map<String, V> own;
    private final int size;

    private OverlayMap(Map<String, V> base, Map<String, V> own, int size) {
        this.base = base;
        this.own = own;
        this.size = size;
    }

    /**
     * {@code full} as an overlay on {@code base} when it holds every key of {@code base} (an
     * overlay cannot remove one); else {@code full} itself. Values {@code same} says are equal
     * are taken from {@code base}.
     */
    static <V> Map<String, V> over(Map<String, V> base, Map<String, V> full, BiPredicate<V, V> same) {
        if (base == null || !full.keySet().containsAll(base.keySet())) {
            return full;
        }
        Map<String, V> own = new HashMap<>();
        for (Map.Entry<String, V> e : full.entrySet()) {
            V b = base.get(e.getKey());
            if (b == null || !same.test(b, e.getValue())) {
                own.put(e.getKey(), e.getValue());
            }
        }
        int added = 0;
        for (String k : own.keySet()) {
            if (!base.containsKey(k)) {
                added++;
            }
        }
        return new OverlayMap<>(base, Map.copyOf(own), base.size() + added);
    }

    @Override
    public V get(Object key) {
        V v = own.get(key);
        return v != null ? v : base.get(key);
    }

    @Override
    public boolean containsKey(Object key) {
        return own.containsKey(key) || base.containsKey(key);
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public Set<Entry<String, V>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Entry<String, V>> iterator() {
                Stream<Entry<String, V>> fromBase = base.keySet().stream().map(k -> Map.entry(k, get(k)));
                Stream<Entry<String, V>> added = own.entrySet().stream().filter(e -> !base.containsKey(e.getKey()));
                return Stream.concat(fromBase, added).iterator();
            }

            @Override
            public int size() {
                return size;
            }
        };
    }
}
