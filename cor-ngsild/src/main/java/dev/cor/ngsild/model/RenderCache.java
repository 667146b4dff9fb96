package dev.cor.ngsild.model;

/**
 * The bytes last rendered of one entity record, with what they were rendered for (a context, a
 * representation, options). The record is immutable, so while it is current the bytes are right
 * for any request that asks the same. One slot: a new key replaces the old one. Racy by design
 * and safe: a reader sees an old or a new slot, each whole (the slot is one immutable object).
 */
public final class RenderCache {
    private volatile Slot slot;

    private record Slot(Object key, byte[] bytes) {
    }

    /** The bytes rendered for {@code key}, or {@code null}. */
    public byte[] get(Object key) {
        Slot s = slot;
        return s != null && s.key.equals(key) ? s.bytes : null;
    }

    /** Keeps {@code bytes} as rendered for {@code key}, in place of what was there. */
    public void put(Object key, byte[] bytes) {
        slot = new Slot(key, bytes);
    }
}
