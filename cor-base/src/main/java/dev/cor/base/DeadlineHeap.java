package dev.cor.base;

import java.util.Arrays;

/**
 * A binary min-heap of {@link Deadline}s ordered by time, with O(log n) removal of any entry
 * (each entry knows its index). Single-threaded: the owning loop's thread only.
 * <p>
 * Ours rather than Agrona's: Agrona has no heap, and its timer wheel ({@code DeadlineTimerWheel})
 * rounds every deadline up to a tick and allocates an id per timer, where a wait here is armed and
 * cancelled once per request with the exact deadline and no allocation.
 */
final class DeadlineHeap {
    private Deadline[] heap = new Deadline[64];
    private int size;

    int size() {
        return size;
    }

    /** The earliest deadline, or {@link Long#MAX_VALUE} when there is none. */
    long nextWhen() {
        return size == 0 ? Long.MAX_VALUE : heap[0].when;
    }

    void add(Deadline d, long when) {
        if (d.armed()) {
            remove(d);
        }
        d.when = when;
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        d.heapIndex = size;
        heap[size++] = d;
        siftUp(d.heapIndex);
    }

    void remove(Deadline d) {
        int i = d.heapIndex;
        if (i < 0) {
            return;
        }
        d.heapIndex = -1;
        Deadline last = heap[--size];
        heap[size] = null;
        if (i == size) {
            return;
        }
        heap[i] = last;
        last.heapIndex = i;
        siftDown(i);
        if (last.heapIndex == i) {
            siftUp(i);
        }
    }

    /** Removes and returns the earliest entry if it is due at {@code now}, else {@code null}. */
    Deadline pollDue(long now) {
        if (size == 0 || heap[0].when - now > 0) {
            return null;
        }
        Deadline d = heap[0];
        remove(d);
        return d;
    }

    /** Removes and returns any entry (the cheapest to take), or {@code null} when there is none. */
    Deadline pollAny() {
        if (size == 0) {
            return null;
        }
        Deadline d = heap[size - 1];
        remove(d);
        return d;
    }

    private void siftUp(int i) {
        Deadline d = heap[i];
        while (i > 0) {
            int p = (i - 1) >>> 1;
            Deadline parent = heap[p];
            if (parent.when - d.when <= 0) {
                break;
            }
            heap[i] = parent;
            parent.heapIndex = i;
            i = p;
        }
        heap[i] = d;
        d.heapIndex = i;
    }

    private void siftDown(int i) {
        Deadline d = heap[i];
        int half = size >>> 1;
        while (i < half) {
            int c = 2 * i + 1;
            int r = c + 1;
            if (r < size && heap[c].when - heap[r].when > 0) {
                c = r;
            }
            if (d.when - heap[c].when <= 0) {
                break;
            }
            heap[i] = heap[c];
            heap[i].heapIndex = i;
            i = c;
        }
        heap[i] = d;
        d.heapIndex = i;
    }
}
