package dev.cor.ngsild.model;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * The attributes (or sub-attributes) of a record by expanded name, in the order given: an
 * immutable map in one array of names and values, with a small table of positions by hash when
 * there are more than {@link #LINEAR} of them. A million entities each keep one; the
 * unmodifiable {@code LinkedHashMap} the writers build costs ~40 bytes per attribute and ~250
 * per map more (its nodes, its table, the views it caches). The names are shared
 * ({@link SharedNames}). Its views are made on demand and never kept.
 */
final class AttributeMap extends AbstractMap<String, AttributeList> {
    /** Up to this many names a look-up compares them in turn; past it, through the hash table. */
    private static final int LINEAR = 8;

    /** No attributes (it answers a null name as a {@code LinkedHashMap} does, where {@link Map#of()} throws). */
    static final AttributeMap EMPTY = new AttributeMap(new Object[0]);

    /** name 0, value 0, name 1, value 1, ... */
    private final Object[] items;
    /** Past {@link #LINEAR}: 1 + the position of a name at its hash's slot (open addressing), 0 for none. */
    private final byte[] small;
    private final int[] large;

    private AttributeMap(Object[] items) {
        this.items = items;
        int n = items.length / 2;
        if (n <= LINEAR) {
            small = null;
            large = null;
            return;
        }
        int slots = Integer.highestOneBit(n * 2 - 1) << 1; // a power of two, at least twice n
        int[] table = new int[slots];
        for (int i = 0; i < n; i++) {
            int s = spread(items[2 * i].hashCode()) & (slots - 1);
            while (table[s] != 0) {
                s = (s + 1) & (slots - 1);
            }
            table[s] = i + 1;
        }
        if (n < 255) {
            small = new byte[slots];
            for (int s = 0; s < slots; s++) {
                small[s] = (byte) table[s];
            }
            large = null;
        } else {
            small = null;
            large = table;
        }
    }

    /**
     * {@code m} as a compact, immutable map with shared names: itself when it is one already,
     * {@link #EMPTY} when empty or {@code null}. A null name or value is refused, as {@link Map#of} does.
     */
    static Map<String, AttributeList> of(Map<String, AttributeList> m) {
        if (m == null || m.isEmpty()) {
            return EMPTY;
        }
        if (m instanceof AttributeMap) {
            return m;
        }
        SharedNames names = SharedNames.instance();
        Object[] items = new Object[m.size() * 2];
        int i = 0;
        for (Map.Entry<String, AttributeList> e : m.entrySet()) {
            if (e.getKey() == null || e.getValue() == null) {
                throw new NullPointerException("an attribute without a name or an instance");
            }
            items[i++] = names.name(e.getKey());
            items[i++] = e.getValue();
        }
        if (i != items.length) {
            throw new IllegalStateException("the map changed while it was copied");
        }
        return new AttributeMap(items);
    }

    /** The high bits of a hash folded into the low ones the table uses (as {@code HashMap} does). */
    private static int spread(int h) {
        return h ^ (h >>> 16);
    }

    private int position(Object key) {
        if (key == null) {
            return -1;
        }
        int n = items.length / 2;
        if (small == null && large == null) {
            for (int i = 0; i < n; i++) {
                if (key.equals(items[2 * i])) {
                    return i;
                }
            }
            return -1;
        }
        int slots = small != null ? small.length : large.length;
        int s = spread(key.hashCode()) & (slots - 1);
        while (true) {
            int p = small != null ? small[s] & 0xff : large[s];
            if (p == 0) {
                return -1;
            }
            if (key.equals(items[2 * (p - 1)])) {
                return p - 1;
            }
            s = (s + 1) & (slots - 1);
        }
    }

    @Override
    public AttributeList get(Object key) {
        int p = position(key);
        return p < 0 ? null : (AttributeList) items[2 * p + 1];
    }

    @Override
    public boolean containsKey(Object key) {
        return position(key) >= 0;
    }

    @Override
    public int size() {
        return items.length / 2;
    }

    @Override
    public boolean isEmpty() {
        return items.length == 0;
    }

    @Override
    public void forEach(BiConsumer<? super String, ? super AttributeList> action) {
        for (int i = 0; i < items.length; i += 2) {
            action.accept((String) items[i], (AttributeList) items[i + 1]);
        }
    }

    @Override
    public Set<String> keySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<String> iterator() {
                return new Walk<>(0);
            }

            @Override
            public int size() {
                return items.length / 2;
            }

            @Override
            public boolean contains(Object o) {
                return containsKey(o);
            }
        };
    }

    @Override
    public java.util.Collection<AttributeList> values() {
        return new java.util.AbstractCollection<>() {
            @Override
            public Iterator<AttributeList> iterator() {
                return new Walk<>(1);
            }

            @Override
            public int size() {
                return items.length / 2;
            }
        };
    }

    @Override
    public Set<Map.Entry<String, AttributeList>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Map.Entry<String, AttributeList>> iterator() {
                return new Walk<>(-1);
            }

            @Override
            public int size() {
                return items.length / 2;
            }
        };
    }

    /** The names (0), the values (1) or the entries (-1), in order; removal refused. */
    private final class Walk<T> implements Iterator<T> {
        private final int what;
        private int next;

        Walk(int what) {
            this.what = what;
        }

        @Override
        public boolean hasNext() {
            return next < items.length;
        }

        @Override
        @SuppressWarnings("unchecked")
        public T next() {
            if (next >= items.length) {
                throw new NoSuchElementException();
            }
            int i = next;
            next += 2;
            return (T) switch (what) {
                case 0 -> items[i];
                case 1 -> items[i + 1];
                default -> new AbstractMap.SimpleImmutableEntry<>((String) items[i], (AttributeList) items[i + 1]);
            };
        }
    }
}
