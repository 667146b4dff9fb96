package dev.cor.ngsild.model;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One instance of each name the records repeat - expanded types and attribute names, datasetIds,
 * unit codes, short lists of types, an attribute's group of metadata - shared by every record that holds it: a million entities of
 * one type hold one copy of its IRI, however many requests, contexts or recoveries read them.
 * <p>
 * Bounded, because the names come from clients: at most {@link #MAX_ENTRIES} names of at most
 * {@link #MAX_LENGTH} characters each (a few MiB). Past the bound a name is returned as given,
 * unshared - still right, only not smaller - so a client sending endless distinct names cannot
 * grow it. Nothing is ever removed: a name once shared stays (names of deleted entities included).
 * Thread-safe and lock-free on a hit.
 */
public final class SharedNames {
    /** How many names are shared at most (a race may pass it by one per thread). */
    static final int MAX_ENTRIES = 1 << 16;
    /** A longer name is never shared: bounds the bytes as well as the count. */
    static final int MAX_LENGTH = 256;
    /** A list of more names than this is copied, not shared. */
    private static final int MAX_LIST = 4;

    private static final SharedNames INSTANCE = new SharedNames(MAX_ENTRIES, MAX_LENGTH);

    private final ConcurrentHashMap<Object, Object> shared = new ConcurrentHashMap<>();
    private final AtomicInteger size = new AtomicInteger();
    private final int maxEntries;
    private final int maxLength;

    SharedNames(int maxEntries, int maxLength) {
        this.maxEntries = maxEntries;
        this.maxLength = maxLength;
    }

    /** The process's one instance (a name is shared across tenants and stores). */
    public static SharedNames instance() {
        return INSTANCE;
    }

    /** The shared instance of {@code s}; {@code s} itself when it is new and the bound is reached ({@code null} for {@code null}). */
    public String name(String s) {
        if (s == null || s.length() > maxLength) {
            return s;
        }
        return (String) share(s);
    }

    /**
     * An unmodifiable list of the shared instances of {@code names}, itself shared when short
     * (every entity of one type holds the same list).
     */
    public List<String> names(List<String> names) {
        int n = names.size();
        if (n == 0) {
            return List.of();
        }
        if (n <= MAX_LIST) {
            // a record built from another (every write) gives the shared list again: no copy
            Object found = shared.get(names);
            if (found != null) {
                @SuppressWarnings("unchecked")
                List<String> l = (List<String>) found;
                return l;
            }
        }
        if (n == 1) {
            return list(List.of(name(names.get(0))));
        }
        String[] a = new String[n];
        for (int i = 0; i < n; i++) {
            a[i] = name(names.get(i));
        }
        List<String> l = List.of(a);
        return n <= MAX_LIST ? list(l) : l;
    }

    private List<String> list(List<String> l) {
        for (String s : l) {
            if (s.length() > maxLength) {
                return l;
            }
        }
        @SuppressWarnings("unchecked")
        List<String> shared = (List<String>) share(l);
        return shared;
    }

    /**
     * The shared instance of {@code o}, an immutable value whose names come to {@code length}
     * characters: a record's group of names (an attribute's metadata). {@code o} itself when it is
     * new and the bound is reached, or when it is too long to share.
     */
    <T> T shared(T o, int length) {
        if (length > maxLength) {
            return o;
        }
        @SuppressWarnings("unchecked")
        T shared = (T) share(o);
        return shared;
    }

    /** How many names (and lists) it shares. */
    int size() {
        return size.get();
    }

    private Object share(Object o) {
        Object found = shared.get(o);
        if (found != null) {
            return found;
        }
        if (size.get() >= maxEntries) {
            return o;
        }
        found = shared.putIfAbsent(o, o);
        if (found != null) {
            return found;
        }
        size.incrementAndGet();
        return o;
    }
}
