package dev.cor.ngsild.ld;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Estimates the heap that what the {@code @context} caches keep holds - processed contexts,
 * hosted and downloaded documents - so that each cache is bounded in bytes, not in entries. It
 * adds up the objects as HotSpot lays them out on a 64-bit JVM with compressed references and
 * class pointers (the default under 32 GiB of heap): 12-byte headers, 4-byte references, 8-byte
 * alignment; a string, a JSON node reached twice is counted once, and those of {@code shared}
 * (the core context's, kept anyway) not at all. Without compressed references the heap is larger
 * than this says (references of 8 bytes). The estimate is measured against the heap in
 * {@code RetainedSizeTest}. One instance per estimate; not thread-safe.
 */
final class RetainedSize {
    private static final int HEADER = 12;
    private static final int REF = 4;
    private static final int ARRAY_HEADER = 16;
    private static final int HASH_MAP = 48;
    private static final int HASH_NODE = 32;
    private static final int LINKED_HASH_MAP = 56;
    private static final int LINKED_NODE = 40;

    private final Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Set<Object> shared;
    private long bytes;

    RetainedSize() {
        this(Set.of());
    }

    /** @param shared objects kept by someone else anyway, compared by identity: not counted */
    RetainedSize(Set<Object> shared) {
        this.shared = shared;
    }

    long bytes() {
        return bytes;
    }

    /** The objects seen so far (to pass as another estimate's {@code shared}). */
    Set<Object> seen() {
        return Collections.unmodifiableSet(seen);
    }

    /** An object of {@code refs} references and {@code primitives} bytes of primitive fields. */
    static long object(int refs, int primitives) {
        return align(HEADER + (long) REF * refs + primitives);
    }

    void add(long n) {
        bytes += n;
    }

    /** A string, once: the object and its bytes (Latin-1 one byte a character, else two). */
    void string(String s) {
        if (s != null && first(s)) {
            bytes += stringBytes(s);
        }
    }

    /** What a string holds: its object and its bytes. */
    static long stringBytes(String s) {
        boolean latin1 = true;
        for (int i = 0; i < s.length() && latin1; i++) {
            latin1 = s.charAt(i) <= 0xFF;
        }
        return object(1, 6) + align(ARRAY_HEADER + (long) s.length() * (latin1 ? 1 : 2));
    }

    /** An array of {@code n} references. */
    void array(int n) {
        bytes += align(ARRAY_HEADER + (long) REF * n);
    }

    /** A {@link java.util.HashMap} and its nodes, its keys and values strings. */
    void hashMap(Map<String, String> m) {
        bytes += HASH_MAP + (m.isEmpty() ? 0 : align(ARRAY_HEADER + (long) REF * tableSize(m.size())))
                + (long) HASH_NODE * m.size();
        for (Map.Entry<String, String> e : m.entrySet()) {
            string(e.getKey());
            string(e.getValue());
        }
    }

    /** The table, nodes and object of a {@link java.util.concurrent.ConcurrentHashMap} of {@code n} entries (not its keys and values). */
    void concurrentMap(int n) {
        bytes += object(6, 20) + (n == 0 ? 0 : align(ARRAY_HEADER + (long) REF * tableSize(n))) + (long) HASH_NODE * n;
    }

    /** What {@code Map.copyOf} builds for {@code n} entries: the object and its table of 4 n references. */
    void immutableMap(int n) {
        bytes += object(1, 4) + align(ARRAY_HEADER + (long) REF * 4 * n);
    }

    /** A {@link TermDefinition}, once, with its strings. */
    void termDefinition(TermDefinition d) {
        if (!first(d)) {
            return;
        }
        bytes += object(7, 5);
        string(d.iri);
        string(d.typeMapping);
        string(d.container);
        string(d.language);
        string(d.direction);
        string(d.index);
        string(d.nest);
    }

    /** A Jackson tree, as its nodes hold it: objects in {@link java.util.LinkedHashMap}s, arrays in {@link java.util.ArrayList}s. */
    void json(JsonNode n) {
        if (n == null || n.isNull() || n.isBoolean() || n.isMissingNode() || !first(n)) {
            return; // null, true, false and missing are singletons
        }
        if (n.isObject()) {
            int size = n.size();
            bytes += object(2, 0) + LINKED_HASH_MAP + (size == 0 ? 0 : align(ARRAY_HEADER + (long) REF * tableSize(size)))
                    + (long) LINKED_NODE * size;
            for (Map.Entry<String, JsonNode> e : n.properties()) {
                string(e.getKey());
                json(e.getValue());
            }
        } else if (n.isArray()) {
            int size = n.size();
            bytes += object(1, 0) + object(1, 8) + align(ARRAY_HEADER + (long) REF * (size + size / 4));
            for (JsonNode item : n) {
                json(item);
            }
        } else if (n.isTextual()) {
            bytes += object(1, 0);
            string(n.textValue());
        } else if (n.isInt() || n.isShort() || n.isFloat()) {
            bytes += object(0, 4);
        } else if (n.isBigInteger() || n.isBigDecimal()) {
            bytes += object(1, 0) + 48;
        } else {
            bytes += object(0, 8); // long, double, binary and POJO nodes alike
        }
    }

    private boolean first(Object o) {
        return !shared.contains(o) && seen.add(o);
    }

    /** The table a hash map has for {@code n} entries, grown from 16 as it is at a load factor of 0.75. */
    private static int tableSize(int n) {
        int cap = 16;
        while (n > cap * 3 / 4) {
            cap <<= 1;
        }
        return cap;
    }

    private static long align(long n) {
        return (n + 7) & ~7L;
    }
}
