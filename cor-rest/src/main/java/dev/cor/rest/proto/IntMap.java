package dev.cor.rest.proto;

import java.util.Arrays;
import java.util.function.Consumer;

/**
 * The streams in flight on one connection: an open-addressing map from a stream number to its
 * record, with no boxing and no garbage once grown (linear probing, deletion by backward shift).
 * Key 0 is never a stream (spec § 3.3), so it marks a free slot. One thread.
 */
final class IntMap<V> {
    private int[] keys;
    private Object[] values;
    private int size;
    private int mask;

    IntMap(int expected) {
        int cap = Integer.highestOneBit(Math.max(8, expected * 2 - 1)) << 1;
        keys = new int[cap];
        values = new Object[cap];
        mask = cap - 1;
    }

    int size() {
        return size;
    }

    private static int slot(int key, int mask) {
        int h = key * 0x9E3779B9;
        return (h ^ (h >>> 16)) & mask;
    }

    @SuppressWarnings("unchecked")
    V get(int key) {
        for (int i = slot(key, mask);; i = (i + 1) & mask) {
            int k = keys[i];
            if (k == key) {
                return (V) values[i];
            }
            if (k == 0) {
                return null;
            }
        }
    }

    boolean containsKey(int key) {
        return get(key) != null;
    }

    /** Adds a stream; the key must be non-zero and absent. */
    void put(int key, V value) {
        if (key == 0 || value == null) {
            throw new IllegalArgumentException("stream 0 or no value");
        }
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        int i = slot(key, mask);
        while (keys[i] != 0) {
            if (keys[i] == key) {
                values[i] = value;
                return;
            }
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = value;
        size++;
    }

    @SuppressWarnings("unchecked")
    V remove(int key) {
        int i = slot(key, mask);
        while (keys[i] != key) {
            if (keys[i] == 0) {
                return null;
            }
            i = (i + 1) & mask;
        }
        V old = (V) values[i];
        // Backward shift: pull later entries of the probe run into the hole.
        int hole = i;
        for (int j = (hole + 1) & mask; keys[j] != 0; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                keys[hole] = keys[j];
                values[hole] = values[j];
                hole = j;
            }
        }
        keys[hole] = 0;
        values[hole] = null;
        size--;
        return old;
    }

    /** How many slots a walk with {@link #valueAt} covers; nothing is allocated for it. */
    int slots() {
        return values.length;
    }

    /** The value in {@code slot}, or {@code null}: a walk over the map that must not change it. */
    @SuppressWarnings("unchecked")
    V valueAt(int slot) {
        return (V) values[slot];
    }

    /** Calls {@code action} for every value, then empties the map. */
    @SuppressWarnings("unchecked")
    void drain(Consumer<V> action) {
        Object[] snapshot = new Object[size];
        int n = 0;
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] != 0) {
                snapshot[n++] = values[i];
            }
        }
        Arrays.fill(keys, 0);
        Arrays.fill(values, null);
        size = 0;
        for (int i = 0; i < n; i++) {
            action.accept((V) snapshot[i]);
        }
    }

    private void grow() {
        int[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new int[oldKeys.length * 2];
        values = new Object[oldKeys.length * 2];
        mask = keys.length - 1;
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != 0) {
                put(oldKeys[i], oldValues[i] == null ? null : cast(oldValues[i]));
            }
        }
    }

    @SuppressWarnings("unchecked")
    private V cast(Object o) {
        return (V) o;
    }
}
