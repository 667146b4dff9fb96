package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import dev.cor.ngsild.store.TemporalRetention;

/**
 * The history's retention ({@link DurableTemporalStore#expire}): a written chunk whose instances
 * were all recorded (createdAt) before now minus the age kept leaves the index; then the oldest
 * segments are deleted - only ever a run of the oldest, never the one written to - while none of
 * their chunks is still kept by age, or while all segments together are over the byte bound. Only
 * the oldest go, so a newer version or a deletion frame never loses the older frame it hides.
 * One thread at a time (the store's monitor).
 */
final class HistoryRetention {
    private HistoryRetention() {
    }

    static long expire(DurableTemporalStore store, TemporalRetention retention, long nowMs) {
        long cutoff = retention.maxAgeMs() == Long.MAX_VALUE || nowMs - retention.maxAgeMs() > nowMs ? Long.MIN_VALUE
                : nowMs - retention.maxAgeMs();
        long dropped = 0;
        Set<Long> live = new HashSet<>();
        for (EntityHistory eh : store.allEntities()) {
            synchronized (eh) {
                for (EntityHistory.Series s : eh.series.values()) {
                    for (int k = s.chunks.size() - 1; k >= 0; k--) {
                        EntityHistory.ChunkState c = s.chunks.get(k);
                        if (c.pending() == null && c.ranges().count() > 0 && c.ranges().maxCreated() < cutoff) {
                            dropped += store.dropChunk(eh, s, k);
                        } else if (c.ref() != null) {
                            live.add(c.ref().segment());
                        }
                    }
                }
            }
        }
        // the oldest segments, as long as they hold nothing kept by age or the whole is over the bound
        long total = 0;
        for (long size : store.files.sizes.values()) {
            total += size;
        }
        Set<Long> delete = new HashSet<>();
        long active = store.files.active();
        for (Map.Entry<Long, Long> e : store.files.sizes.entrySet()) {
            long seg = e.getKey();
            if (seg == active || seg == store.files.sizes.lastKey()) {
                break;
            }
            if (live.contains(seg) && total <= retention.maxBytes()) {
                break;
            }
            delete.add(seg);
            total -= e.getValue();
        }
        if (!delete.isEmpty()) {
            for (EntityHistory eh : store.allEntities()) {
                synchronized (eh) {
                    for (EntityHistory.Series s : eh.series.values()) {
                        for (int k = s.chunks.size() - 1; k >= 0; k--) {
                            EntityHistory.ChunkState c = s.chunks.get(k);
                            if (c.pending() == null && c.ref() != null && delete.contains(c.ref().segment())) {
                                dropped += store.dropChunk(eh, s, k);
                            }
                        }
                    }
                }
            }
            for (long seg : delete) {
                try {
                    store.files.delete(seg);
                } catch (IOException e) {
                    DurableTemporalStore.log().log(System.Logger.Level.WARNING, "cor-store: history segment " + seg
                            + " could not be deleted (" + e + "); the next expiry tries again");
                }
            }
        }
        store.forgetEmptied();
        return dropped;
    }
}
