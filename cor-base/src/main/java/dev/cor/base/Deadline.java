package dev.cor.base;

/**
 * An entry of a loop's {@link DeadlineHeap}: a point in time ({@link System#nanoTime()}) at
 * which the loop calls {@link #expire()}. Owned by one loop; touched by its thread only.
 */
abstract class Deadline {
    long when;
    int heapIndex = -1;

    final boolean armed() {
        return heapIndex >= 0;
    }

    /** Called on the loop's thread once the deadline has passed; the entry is already out of the heap. */
    abstract void expire();
}
