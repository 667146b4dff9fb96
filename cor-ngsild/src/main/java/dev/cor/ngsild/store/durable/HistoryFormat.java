package dev.cor.ngsild.store.durable;

import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.query.PartialAggregate;
import dev.cor.ngsild.store.ChunkSummary;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * The history's on-disk format ({@code doc/storage.md}, "History"): the payloads of the journal's
 * history records (types 12 to 16) and the frames of a history segment - a chunk, an entity's
 * head, a deletion's mark, the counters' mark. Frames are {@link Format}'s (length, CRC32C,
 * sequence number, type); in a history segment the sequence number is the frame's version: the
 * last journal record of the entity it reflects. Stateless; the codec and CRC it is given belong
 * to the calling thread.
 */
final class HistoryFormat {
    private HistoryFormat() {
    }

    /** A history segment's magic: "CORH". */
    static final int SEGMENT_MAGIC = 0x434F5248;
    static final String DIRECTORY = "history";
    static final String SEGMENT_PREFIX = "history-";
    static final String SEGMENT_SUFFIX = ".seg";

    // frame types of a history segment
    static final int CHUNK = 1;
    static final int HEAD = 2;
    static final int ENTITY_GONE = 3;
    static final int SERIES_GONE = 4;
    static final int MARK = 5;
    /** A chunk with its summary after its ranges (from 2026-12); a chunk frame (1) has none, and is still read. */
    static final int SUMMARISED_CHUNK = 6;

    static String segmentName(long number) {
        return SEGMENT_PREFIX + String.format("%020d", number) + SEGMENT_SUFFIX;
    }

    static String frameName(int type) {
        return switch (type) {
            case CHUNK -> "chunk";
            case HEAD -> "head";
            case ENTITY_GONE -> "entity deletion";
            case SERIES_GONE -> "attribute deletion";
            case MARK -> "mark";
            case SUMMARISED_CHUNK -> "summarised chunk";
            default -> "frame type " + type;
        };
    }

    /** What an entity's head says beside its instances. Immutable. */
    record Head(List<String> types, List<String> scopes, long createdAt, long modifiedAt, long deletedAt) {
        static final Head NONE = new Head(List.of(), List.of(), 0, 0, TemporalInstance.NO_TIME);
    }

    /**
     * How many instances a chunk holds, its bytes (encoded, or estimated while in the heap), and
     * the least and greatest of each time of its instances ({@link TemporalInstance#NO_TIME}, the
     * least long, for an instance without it). Immutable.
     */
    record Ranges(int count, long bytes, long minObserved, long maxObserved, long minCreated, long maxCreated,
            long minModified, long maxModified, long minDeleted, long maxDeleted) {
        static Ranges of(List<TemporalInstance> instances, long bytes) {
            long[] r = {Long.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE,
                Long.MAX_VALUE, Long.MIN_VALUE};
            TimeProperty[] props = TimeProperty.values();
            for (TemporalInstance i : instances) {
                for (int p = 0; p < 4; p++) {
                    long t = i.time(props[p]);
                    r[2 * p] = Math.min(r[2 * p], t);
                    r[2 * p + 1] = Math.max(r[2 * p + 1], t);
                }
            }
            return new Ranges(instances.size(), bytes, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
        }

        long min(TimeProperty p) {
            return switch (p) {
                case OBSERVED_AT -> minObserved;
                case CREATED_AT -> minCreated;
                case MODIFIED_AT -> minModified;
                case DELETED_AT -> minDeleted;
            };
        }

        long max(TimeProperty p) {
            return switch (p) {
                case OBSERVED_AT -> maxObserved;
                case CREATED_AT -> maxCreated;
                case MODIFIED_AT -> maxModified;
                case DELETED_AT -> maxDeleted;
            };
        }
    }

    /**
     * What a chunk frame says before its instances; {@code summary} {@code null} when it has none,
     * {@code numbersAt} and {@code numbersLength} where in the frame's array its numbers
     * ({@link #writeNumbers}) lie (length 0: it has none).
     */
    record ChunkHeader(String tenant, String entityId, String attribute, long chunkId, long minN, long maxN, Head head,
            Ranges ranges, ChunkSummary summary, int numbersAt, int numbersLength) {
    }

    // ---------------------------------------------------------------- the journal's records

    static void writeOp(ByteSink out, HistoryOp op, EntityCodec codec) {
        out.string(op.tenant());
        out.string(op.entityId());
        switch (op) {
            case HistoryOp.Recorded r -> {
                out.u8((r.types() != null ? 1 : 0) | (r.scopes() != null ? 2 : 0));
                if (r.types() != null) {
                    codec.writeNames(out, r.types());
                }
                if (r.scopes() != null) {
                    codec.writeNames(out, r.scopes());
                }
                out.zigzag(r.deletedAt());
                out.varlong(r.firstN());
                out.varint(r.instances().size());
                for (TemporalInstance i : r.instances()) {
                    out.string(i.attribute());
                    out.zigzag(i.deletedAt());
                    codec.writeAttribute(out, i.value());
                }
            }
            case HistoryOp.EntityDeleted d -> {
            }
            case HistoryOp.AttributeDeleted d -> {
                out.string(d.attribute());
                out.nullableString(d.datasetId());
                out.u8(d.all() ? 1 : 0);
            }
            case HistoryOp.InstanceModified m -> {
                out.string(m.attribute());
                out.varlong(m.n());
                codec.writeAttribute(out, m.value());
            }
            case HistoryOp.InstanceDeleted d -> {
                out.string(d.attribute());
                out.varlong(d.n());
            }
        }
    }

    static HistoryOp readOp(int type, ByteSource in, EntityCodec codec) throws ByteSource.Malformed {
        String tenant = codec.name(in.string());
        String entityId = in.string();
        return switch (type) {
            case Format.HISTORY_RECORD -> {
                int flags = in.u8();
                List<String> types = (flags & 1) != 0 ? List.copyOf(codec.readNames(in)) : null;
                List<String> scopes = (flags & 2) != 0 ? List.copyOf(codec.readNames(in)) : null;
                long deletedAt = in.zigzag();
                long firstN = in.varlong();
                int n = in.varint();
                if (n < 0 || n > in.remaining()) {
                    throw new ByteSource.Malformed("a history record of " + n + " instances");
                }
                List<TemporalInstance> instances = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    String attribute = codec.name(in.string());
                    long del = in.zigzag();
                    Attribute a = codec.readAttribute(in);
                    instances.add(instance(attribute, a, firstN + i, del));
                }
                yield new HistoryOp.Recorded(tenant, entityId, types, scopes, deletedAt, firstN, List.copyOf(instances));
            }
            case Format.HISTORY_ENTITY_DELETE -> new HistoryOp.EntityDeleted(tenant, entityId);
            case Format.HISTORY_ATTRIBUTE_DELETE -> {
                String attribute = codec.name(in.string());
                String datasetId = in.nullableString();
                yield new HistoryOp.AttributeDeleted(tenant, entityId, attribute, datasetId, in.u8() != 0);
            }
            case Format.HISTORY_INSTANCE_MODIFY -> {
                String attribute = codec.name(in.string());
                long n = in.varlong();
                yield new HistoryOp.InstanceModified(tenant, entityId, attribute, n, codec.readAttribute(in));
            }
            case Format.HISTORY_INSTANCE_DELETE -> {
                String attribute = codec.name(in.string());
                yield new HistoryOp.InstanceDeleted(tenant, entityId, attribute, in.varlong());
            }
            default -> throw new ByteSource.Malformed("no history record of type " + type);
        };
    }

    /** The instance numbered {@code n}, as recorded. */
    static TemporalInstance instance(String attribute, Attribute value, long n, long deletedAt) {
        return new TemporalInstance(attribute, value, TemporalInstance.idOf(n), TemporalInstance.observedMillis(value),
                deletedAt);
    }

    /** The number in an instance's id ({@link TemporalInstance#numberOf}), or -1 for an id that is none of this store's. */
    static long number(String instanceId) {
        return TemporalInstance.numberOf(instanceId);
    }

    // ---------------------------------------------------------------- a segment's frames

    static void writeHead(ByteSink out, Head h, EntityCodec codec) {
        codec.writeNames(out, h.types());
        codec.writeNames(out, h.scopes());
        out.zigzag(h.createdAt());
        out.zigzag(h.modifiedAt());
        out.zigzag(h.deletedAt());
    }

    static Head readHead(ByteSource in, EntityCodec codec) throws ByteSource.Malformed {
        return new Head(List.copyOf(codec.readNames(in)), List.copyOf(codec.readNames(in)), in.zigzag(), in.zigzag(),
                in.zigzag());
    }

    /**
     * A summarised chunk frame: its header, its summary ({@link #writeSummary}), its numbers
     * ({@link #writeNumbers}), then each instance's number, deletedAt and attribute.
     */
    static void writeChunk(ByteSink out, long version, String tenant, String entityId, String attribute, long chunkId,
            long minN, long maxN, Head head, List<TemporalInstance> instances, ChunkSummary summary, EntityCodec codec,
            CRC32C crc) {
        int start = Format.beginFrame(out, version, SUMMARISED_CHUNK);
        out.string(tenant);
        out.string(entityId);
        out.string(attribute);
        out.varlong(chunkId);
        out.varlong(minN);
        out.varlong(maxN);
        writeHead(out, head, codec);
        Ranges r = Ranges.of(instances, 0);
        out.varint(r.count());
        for (TimeProperty p : TimeProperty.values()) {
            out.zigzag(r.min(p));
            out.zigzag(r.max(p));
        }
        writeSummary(out, summary);
        writeNumbers(out, instances, summary != null);
        for (TemporalInstance i : instances) {
            out.varlong(number(i.instanceId()));
            out.zigzag(i.deletedAt());
            codec.writeAttribute(out, i.value());
        }
        Format.endFrame(out, start, crc);
    }

    /**
     * A chunk's summary: {@code u8} flags (1: there is one, 2: its datasetIds are mixed, 4: it has
     * a datasetId), then {@code varlong} count and numbers, {@code varint} n and n {@code u64}
     * double bits of the sum's partials, the same for the squares', {@code u64} min and max,
     * {@code varlong} texts, {@code zigzag} first and last value's time, least and greatest
     * observedAt, the datasetId ({@code string}, with flag 4) and the last instance's type.
     */
    static void writeSummary(ByteSink out, ChunkSummary s) {
        if (s == null) {
            out.u8(0);
            return;
        }
        out.u8(1 | (s.mixed() ? 2 : 0) | (s.datasetId() != null ? 4 : 0));
        PartialAggregate a = s.aggregate();
        out.varlong(a.count());
        out.varlong(a.numbers());
        for (double[] partials : new double[][] {a.sum(), a.sumsq()}) {
            out.varint(partials.length);
            for (double d : partials) {
                out.u64(Double.doubleToRawLongBits(d));
            }
        }
        out.u64(Double.doubleToRawLongBits(a.min()));
        out.u64(Double.doubleToRawLongBits(a.max()));
        out.varlong(a.texts());
        out.zigzag(a.firstValue());
        out.zigzag(a.lastValue());
        out.zigzag(s.first());
        out.zigzag(s.last());
        if (s.datasetId() != null) {
            out.string(s.datasetId());
        }
        out.string(s.lastType());
    }

    /**
     * A chunk's numbers: what an aggregation needs of its instances when a period boundary cuts
     * the chunk - so that it need not decode the attributes. {@code varint} their length in bytes
     * (0: none - an instance is neither a deletion nor a Property whose value is a number or a
     * boolean, or has no observedAt), then per instance in the chunk's order {@code zigzag} its
     * observedAt less the previous one's (the first: less 0) and {@code u8} 0 for a deletion, 1 for
     * a number followed by its {@code u64} double bits, 2 for false, 3 for true.
     */
    static void writeNumbers(ByteSink out, List<TemporalInstance> instances, boolean timed) {
        boolean numbers = timed;
        for (int k = 0; k < instances.size() && numbers; k++) {
            TemporalInstance i = instances.get(k);
            var v = i.value().value();
            numbers = i.observedAt() != TemporalInstance.NO_TIME && (i.deleted()
                    || (i.value().kind() == dev.cor.ngsild.model.AttributeKind.PROPERTY && (v.isNumber() || v.isBoolean())));
        }
        if (!numbers) {
            out.varint(0);
            return;
        }
        int at = out.position();
        out.u32(0); // the length, once known: a fixed 4 bytes in place of the varint
        long previous = 0;
        for (TemporalInstance i : instances) {
            out.zigzag(i.observedAt() - previous);
            previous = i.observedAt();
            var v = i.value().value();
            if (i.deleted()) {
                out.u8(0);
            } else if (v.isBoolean()) {
                out.u8(v.booleanValue() ? 3 : 2);
            } else {
                out.u8(1);
                out.u64(Double.doubleToRawLongBits(v.doubleValue()));
            }
        }
        int length = out.position() - at - 4;
        // a varint of 4 bytes (continuation bits set on the first three): readable as any varint
        byte[] b = out.array();
        b[at] = (byte) (0x80 | (length & 0x7F));
        b[at + 1] = (byte) (0x80 | ((length >>> 7) & 0x7F));
        b[at + 2] = (byte) (0x80 | ((length >>> 14) & 0x7F));
        b[at + 3] = (byte) ((length >>> 21) & 0x7F);
    }

    /**
     * The instances of a chunk as its numbers give them, in the chunk's order: observedAt, a
     * Property holding the number or the boolean (a double: what every aggregation method but
     * distinctCount reads of it), or a deletion; nothing else of them.
     */
    static List<TemporalInstance> readNumbers(ByteSource in, String attribute, String datasetId) throws ByteSource.Malformed {
        List<TemporalInstance> out = new ArrayList<>(128);
        long t = 0;
        while (in.remaining() > 0) {
            t += in.zigzag();
            int tag = in.u8();
            com.fasterxml.jackson.databind.JsonNode v = switch (tag) {
                case 0 -> com.fasterxml.jackson.databind.node.NullNode.instance;
                case 1 -> com.fasterxml.jackson.databind.node.DoubleNode.valueOf(Double.longBitsToDouble(in.u64()));
                case 2 -> com.fasterxml.jackson.databind.node.BooleanNode.FALSE;
                case 3 -> com.fasterxml.jackson.databind.node.BooleanNode.TRUE;
                default -> throw new ByteSource.Malformed("a chunk's number of tag " + tag);
            };
            Attribute a = new Attribute(dev.cor.ngsild.model.AttributeKind.PROPERTY, v, datasetId, null, null, null, null, null,
                    0, 0);
            out.add(new TemporalInstance(attribute, a, null, t, tag == 0 ? t : TemporalInstance.NO_TIME));
        }
        return out;
    }

    static ChunkSummary readSummary(ByteSource in, EntityCodec codec) throws ByteSource.Malformed {
        int flags = in.u8();
        if ((flags & 1) == 0) {
            return null;
        }
        long count = in.varlong();
        long numbers = in.varlong();
        double[][] partials = new double[2][];
        for (int j = 0; j < 2; j++) {
            int n = in.varint();
            if (n < 0 || n > in.remaining() / 8) {
                throw new ByteSource.Malformed("a summary of " + n + " partials");
            }
            partials[j] = new double[n];
            for (int k = 0; k < n; k++) {
                partials[j][k] = Double.longBitsToDouble(in.u64());
            }
        }
        double min = Double.longBitsToDouble(in.u64());
        double max = Double.longBitsToDouble(in.u64());
        PartialAggregate a = new PartialAggregate(count, numbers, partials[0], partials[1], min, max, in.varlong(), in.zigzag(),
                in.zigzag());
        long first = in.zigzag();
        long last = in.zigzag();
        String dataset = (flags & 4) != 0 ? codec.name(in.string()) : null;
        return new ChunkSummary(a, first, last, dataset, (flags & 2) != 0, codec.name(in.string()));
    }

    /**
     * Reads a chunk frame's header - of a {@link #CHUNK} or a {@link #SUMMARISED_CHUNK}, as
     * {@code type} says; {@code bytes} is the frame's length on disk.
     */
    static ChunkHeader readChunkHeader(ByteSource in, long bytes, int type, EntityCodec codec) throws ByteSource.Malformed {
        String tenant = codec.name(in.string());
        String entityId = in.string();
        String attribute = codec.name(in.string());
        long chunkId = in.varlong();
        long minN = in.varlong();
        long maxN = in.varlong();
        Head head = readHead(in, codec);
        int count = in.varint();
        long[] r = new long[8];
        for (int i = 0; i < 8; i++) {
            r[i] = in.zigzag();
        }
        ChunkSummary summary = null;
        int numbersAt = 0;
        int numbersLength = 0;
        if (type == SUMMARISED_CHUNK) {
            summary = readSummary(in, codec);
            numbersLength = in.varint();
            numbersAt = in.position();
            in.skip(numbersLength);
        }
        return new ChunkHeader(tenant, entityId, attribute, chunkId, minN, maxN, head,
                new Ranges(count, bytes, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]), summary, numbersAt, numbersLength);
    }

    /** Reads the instances after a chunk's header. */
    static List<TemporalInstance> readInstances(ByteSource in, ChunkHeader h, EntityCodec codec) throws ByteSource.Malformed {
        int n = h.ranges().count();
        if (n < 0 || n > in.remaining()) {
            throw new ByteSource.Malformed("a chunk of " + n + " instances");
        }
        List<TemporalInstance> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long number = in.varlong();
            long deletedAt = in.zigzag();
            out.add(instance(h.attribute(), codec.readAttribute(in), number, deletedAt));
        }
        if (in.remaining() != 0) {
            throw new ByteSource.Malformed(in.remaining() + " bytes left over after a chunk's instances");
        }
        return out;
    }

    /**
     * The instances after a chunk's header that a read of {@code window} needs, in the chunk's
     * order: every one {@code window} admits, perhaps others. When the chunk has its numbers
     * ({@link #writeNumbers}: each instance's observedAt) and the window is one by observedAt,
     * only those whose observedAt lies in it are decoded - the others are passed over
     * ({@link EntityCodec#skipAttribute}), and the read stops after the last of them: a read of
     * the first minutes of a chunk decodes those minutes, not the chunk. Otherwise every instance
     * ({@link #readInstances(ByteSource, ChunkHeader, EntityCodec)}).
     */
    static List<TemporalInstance> readInstances(ByteSource in, ChunkHeader h, EntityCodec codec, InstanceQuery window)
            throws ByteSource.Malformed {
        if (h.numbersLength() == 0 || window.unbounded() || window.property() != TimeProperty.OBSERVED_AT) {
            return readInstances(in, h, codec);
        }
        int n = h.ranges().count();
        if (n < 0 || n > h.numbersLength()) {
            throw new ByteSource.Malformed("a chunk of " + n + " instances with " + h.numbersLength() + " bytes of numbers");
        }
        boolean[] wanted = new boolean[n];
        int last = -1;
        int count = 0;
        ByteSource numbers = in.at(h.numbersAt(), h.numbersLength());
        long t = 0;
        for (int k = 0; k < n; k++) {
            t += numbers.zigzag();
            int tag = numbers.u8();
            if (tag == 1) {
                numbers.skip(8);
            } else if (tag > 3) {
                throw new ByteSource.Malformed("a chunk's number of tag " + tag);
            }
            if (t >= window.from() && t < window.to()) {
                wanted[k] = true;
                last = k;
                count++;
            }
        }
        if (numbers.remaining() != 0) {
            throw new ByteSource.Malformed("a chunk's numbers hold more than its " + n + " instances");
        }
        List<TemporalInstance> out = new ArrayList<>(count);
        for (int k = 0; k <= last; k++) {
            long number = in.varlong();
            long deletedAt = in.zigzag();
            if (wanted[k]) {
                out.add(instance(h.attribute(), codec.readAttribute(in), number, deletedAt));
            } else {
                codec.skipAttribute(in);
            }
        }
        return out;
    }

    static void writeHeadFrame(ByteSink out, long version, String tenant, String entityId, Head head, EntityCodec codec,
            CRC32C crc) {
        int start = Format.beginFrame(out, version, HEAD);
        out.string(tenant);
        out.string(entityId);
        writeHead(out, head, codec);
        Format.endFrame(out, start, crc);
    }

    /** An entity's deletion ({@code attribute} null) or one attribute's: every frame of it before {@code version} is dead. */
    static void writeGone(ByteSink out, long version, String tenant, String entityId, String attribute, CRC32C crc) {
        int start = Format.beginFrame(out, version, attribute == null ? ENTITY_GONE : SERIES_GONE);
        out.string(tenant);
        out.string(entityId);
        if (attribute != null) {
            out.string(attribute);
        }
        Format.endFrame(out, start, crc);
    }

    /** The counters: the next instance number and chunk number (so that neither is given twice). */
    static void writeMark(ByteSink out, long nextN, long nextChunk, CRC32C crc) {
        int start = Format.beginFrame(out, 0, MARK);
        out.varlong(nextN);
        out.varlong(nextChunk);
        Format.endFrame(out, start, crc);
    }

    /** A rough count of the bytes an instance takes encoded: what the tails' bound counts. */
    static long estimate(TemporalInstance i) {
        return 48 + i.attribute().length() / 4 + estimate(i.value().value(), 0) + i.value().sub().size() * 64L;
    }

    private static long estimate(com.fasterxml.jackson.databind.JsonNode n, int depth) {
        if (n.isTextual()) {
            return 2 + n.textValue().length();
        }
        if (n.isContainerNode() && depth < 4) {
            long s = 2;
            int k = 0;
            for (var it = n.fields(); it.hasNext() && k < 64; k++) {
                var f = it.next();
                s += f.getKey().length() + 1 + estimate(f.getValue(), depth + 1);
            }
            if (n.isArray()) {
                for (int j = 0; j < n.size() && j < 64; j++) {
                    s += estimate(n.get(j), depth + 1);
                }
            }
            return s + (n.size() > 64 ? (n.size() - 64) * 16L : 0);
        }
        return 9;
    }
}
