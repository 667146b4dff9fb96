package dev.cor.bench.load;

/**
 * A bounded FIFO of ints without boxing: the callers waiting for one connection. Its capacity is
 * the number of callers that share the connection, each of which waits at most once. Not
 * thread-safe; owned by one {@link HttpConnection}.
 */
final class IntQueue {
    private final int[] items;
    private int head;
    private int size;

    IntQueue(int capacity) {
        items = new int[Math.max(1, capacity)];
    }

    void add(int v) {
        if (size == items.length) {
            throw new IllegalStateException("queue full: a caller sent twice without an outcome");
        }
        items[(head + size) % items.length] = v;
        size++;
    }

    /** Removes and returns the oldest; the queue must not be empty. */
    int poll() {
        if (size == 0) {
            throw new IllegalStateException("queue empty");
        }
        int v = items[head];
        head = (head + 1) % items.length;
        size--;
        return v;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }
}
