package dev.cor.server;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The JWTs already verified, with their grants, so that a token's signature is checked once,
 * not on every request: bounded in entries and in bytes, and an entry serves only until its
 * token's expiry. Past a bound, expired entries go first, then any. Thread-safe, lock-free:
 * every loop reads and adds at once.
 */
final class VerifiedTokens {
    /** What one entry costs besides its token's characters (map node, entry, grant: a fair estimate). */
    static final int ENTRY_OVERHEAD = 256;

    private record Entry(Grant grant, long untilMs, long bytes) {
    }

    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    private final AtomicLong bytes = new AtomicLong();
    private final int maxEntries;
    private final long maxBytes;

    VerifiedTokens(int maxEntries, long maxBytes) {
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
    }

    /** The grant of {@code token} if it was verified and has not expired at {@code nowMs}, else {@code null}. */
    Grant get(String token, long nowMs) {
        Entry e = entries.get(token);
        if (e == null) {
            return null;
        }
        if (nowMs >= e.untilMs) {
            remove(token, e);
            return null;
        }
        return e.grant;
    }

    /** Keeps {@code token}'s grant until {@code untilMs} (its expiry). */
    void put(String token, Grant grant, long untilMs, long nowMs) {
        Entry e = new Entry(grant, untilMs, 2L * token.length() + ENTRY_OVERHEAD);
        if (e.bytes > maxBytes) {
            return;
        }
        if (entries.putIfAbsent(token, e) == null) {
            bytes.addAndGet(e.bytes);
            trim(nowMs);
        }
    }

    private void trim(long nowMs) {
        if (entries.size() <= maxEntries && bytes.get() <= maxBytes) {
            return;
        }
        for (Map.Entry<String, Entry> m : entries.entrySet()) {
            if (nowMs >= m.getValue().untilMs) {
                remove(m.getKey(), m.getValue());
            }
        }
        for (Iterator<Map.Entry<String, Entry>> it = entries.entrySet().iterator();
                it.hasNext() && (entries.size() > maxEntries || bytes.get() > maxBytes);) {
            Map.Entry<String, Entry> m = it.next();
            remove(m.getKey(), m.getValue());
        }
    }

    private void remove(String token, Entry e) {
        if (entries.remove(token, e)) {
            bytes.addAndGet(-e.bytes);
        }
    }

    int size() {
        return entries.size();
    }

    long bytes() {
        return bytes.get();
    }
}
