package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * Builds the history's index at open from the segments ({@link HistoryFiles#scan}): per chunk
 * number the newest version wins; a chunk is dead when it is empty, or older than its entity's or
 * attribute's deletion frame; an entity's head is its newest frame's. The counters go on after
 * the greatest instance and chunk numbers seen. One thread (the recovery).
 */
final class HistoryIndexReader {
    private HistoryIndexReader() {
    }

    private record Seen(long version, long segment, long offset, int length, HistoryFormat.ChunkHeader header) {
    }

    private record HeadSeen(long version, String tenant, String entityId, HistoryFormat.Head head) {
    }

    static void read(DurableTemporalStore store, boolean repair) throws IOException {
        Map<Long, Seen> chunks = new HashMap<>();
        Map<String, Long> entityGone = new HashMap<>();
        Map<String, Long> seriesGone = new HashMap<>();
        Map<String, HeadSeen> heads = new HashMap<>();
        Map<String, Long> sealedMax = new HashMap<>();
        long[] counters = {0, 0}; // greatest instance number, chunk number
        EntityCodec codec = new EntityCodec();
        store.files.scan(repair, (segment, offset, length, version, type, in) -> {
            switch (type) {
                case HistoryFormat.CHUNK, HistoryFormat.SUMMARISED_CHUNK -> {
                    HistoryFormat.ChunkHeader h = HistoryFormat.readChunkHeader(in, length, type, codec);
                    Seen before = chunks.get(h.chunkId());
                    if (before == null || before.version() <= version) {
                        chunks.put(h.chunkId(), new Seen(version, segment, offset, length, h));
                    }
                    head(heads, new HeadSeen(version, h.tenant(), h.entityId(), h.head()));
                    sealedMax.merge(key(h.tenant(), h.entityId(), h.attribute()), h.maxN(), Math::max);
                    counters[0] = Math.max(counters[0], h.maxN());
                    counters[1] = Math.max(counters[1], h.chunkId());
                }
                case HistoryFormat.HEAD -> {
                    String tenant = codec.name(in.string());
                    String id = in.string();
                    head(heads, new HeadSeen(version, tenant, id, HistoryFormat.readHead(in, codec)));
                }
                case HistoryFormat.ENTITY_GONE -> entityGone.merge(key(codec.name(in.string()), in.string()), version, Math::max);
                case HistoryFormat.SERIES_GONE -> {
                    String tenant = codec.name(in.string());
                    String id = in.string();
                    seriesGone.merge(key(tenant, id, codec.name(in.string())), version, Math::max);
                }
                case HistoryFormat.MARK -> {
                    counters[0] = Math.max(counters[0], in.varlong() - 1);
                    counters[1] = Math.max(counters[1], in.varlong() - 1);
                }
                default -> throw new ByteSource.Malformed("no history frame of type " + type);
            }
        }, store.notes);
        for (Seen c : chunks.values()) {
            HistoryFormat.ChunkHeader h = c.header();
            long gone = Math.max(entityGone.getOrDefault(key(h.tenant(), h.entityId()), 0L),
                    seriesGone.getOrDefault(key(h.tenant(), h.entityId(), h.attribute()), 0L));
            EntityHistory eh = store.entityFor(h.tenant(), h.entityId());
            EntityHistory.Series s = eh.series.computeIfAbsent(h.attribute(), EntityHistory.Series::new);
            if (c.version() <= gone || h.ranges().count() == 0) {
                continue;
            }
            s.chunks.add(new EntityHistory.ChunkState(h.chunkId(), h.minN(), h.maxN(), c.version(), h.ranges(),
                    new EntityHistory.ChunkRef(c.segment(), c.offset(), c.length()), null, h.summary()));
            eh.writtenVersion = Math.max(eh.writtenVersion, c.version());
        }
        for (var e : sealedMax.entrySet()) {
            String[] k = e.getKey().split("\0", -1);
            EntityHistory eh = store.entityFor(k[0], k[1]);
            eh.series.computeIfAbsent(k[2], EntityHistory.Series::new).sealedMaxN = e.getValue();
        }
        for (HeadSeen h : heads.values()) {
            EntityHistory eh = store.entityFor(h.tenant(), h.entityId());
            eh.writtenVersion = Math.max(eh.writtenVersion, h.version());
            if (h.version() > entityGone.getOrDefault(key(h.tenant(), h.entityId()), 0L)) {
                eh.head(h.head(), h.version());
            } else {
                eh.headVersion = h.version();
                eh.lastSeq = Math.max(eh.lastSeq, h.version());
            }
        }
        for (var e : entityGone.entrySet()) {
            String[] k = e.getKey().split("\0", -1);
            EntityHistory eh = store.entityFor(k[0], k[1]);
            eh.headVersion = Math.max(eh.headVersion, e.getValue());
            eh.lastSeq = Math.max(eh.lastSeq, e.getValue());
        }
        for (EntityHistory eh : store.allEntities()) {
            for (EntityHistory.Series s : eh.series.values()) {
                s.chunks.sort((a, b) -> Long.compare(a.id(), b.id()));
            }
        }
        store.nextN.set(counters[0] + 1);
        store.nextChunk.set(counters[1] + 1);
        store.recoveredN = counters[0] + 1;
        store.recoveredChunk = counters[1] + 1;
    }

    private static void head(Map<String, HeadSeen> heads, HeadSeen h) {
        heads.merge(key(h.tenant(), h.entityId()), h, (a, b) -> a.version() >= b.version() ? a : b);
    }

    static String key(String tenant, String id) {
        return tenant + '\0' + id;
    }

    static String key(String tenant, String id, String attribute) {
        return tenant + '\0' + id + '\0' + attribute;
    }
}
