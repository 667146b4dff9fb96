package dev.cor.ngsild.store.durable;

import static dev.cor.ngsild.store.durable.HistoryTesting.A;
import static dev.cor.ngsild.store.durable.HistoryTesting.instance;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;

import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.store.ChunkSummary;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * Both versions of a chunk frame read (doc/storage.md, "History"): a summarised chunk (type 6)
 * gives back the summary and the numbers it was written with, and a chunk of type 1 - as written before chunks
 * carried one - reads as it always did, without a summary (an aggregation then reads its instances).
 */
class ChunkFrameVersionsTest {
    private static List<TemporalInstance> chunk() {
        List<TemporalInstance> out = new ArrayList<>();
        for (int k = 0; k < 128; k++) {
            out.add(HistoryFormat.instance(A, instance(A, k % 17, 1_000L * k, 5_000 + k, null).value(), 100 + k,
                    TemporalInstance.NO_TIME));
        }
        return out;
    }

    @Test
    void aSummarisedChunkGivesBackItsSummary() throws Exception {
        List<TemporalInstance> content = chunk();
        ChunkSummary summary = ChunkSummary.of(content);
        ByteSink out = new ByteSink(1 << 12);
        HistoryFormat.writeChunk(out, 7, "", "urn:e:1", A, 3, 100, 227, HistoryFormat.Head.NONE, content, summary,
                new EntityCodec(), new CRC32C());
        ByteSource in = new ByteSource(out.array(), Format.FRAME_HEAD + Format.MIN_BODY - 1, out.position());
        EntityCodec codec = new EntityCodec();
        int type = in.u8();
        assertEquals(HistoryFormat.SUMMARISED_CHUNK, type);
        HistoryFormat.ChunkHeader h = HistoryFormat.readChunkHeader(in, out.position(), type, codec);
        assertNotNull(h.summary());
        assertEquals(summary, h.summary());
        assertEquals(content, HistoryFormat.readInstances(in, h, codec));
        // its numbers: each instance's observedAt and number, without its attribute
        List<TemporalInstance> numbers = HistoryFormat.readNumbers(in.at(h.numbersAt(), h.numbersLength()), A, null);
        assertEquals(content.size(), numbers.size());
        for (int k = 0; k < content.size(); k++) {
            assertEquals(content.get(k).observedAt(), numbers.get(k).observedAt());
            assertEquals(content.get(k).value().value().doubleValue(), numbers.get(k).value().value().doubleValue());
        }
    }

    @Test
    void aChunkOfTheFirstVersionReadsWithoutASummary() throws Exception {
        List<TemporalInstance> content = chunk();
        // the frame as it was written before the summary: header, ranges, instances
        ByteSink out = new ByteSink(1 << 12);
        EntityCodec codec = new EntityCodec();
        int start = Format.beginFrame(out, 7, HistoryFormat.CHUNK);
        out.string("");
        out.string("urn:e:1");
        out.string(A);
        out.varlong(3);
        out.varlong(100);
        out.varlong(227);
        HistoryFormat.writeHead(out, HistoryFormat.Head.NONE, codec);
        HistoryFormat.Ranges r = HistoryFormat.Ranges.of(content, 0);
        out.varint(r.count());
        for (TimeProperty p : TimeProperty.values()) {
            out.zigzag(r.min(p));
            out.zigzag(r.max(p));
        }
        for (TemporalInstance i : content) {
            out.varlong(HistoryFormat.number(i.instanceId()));
            out.zigzag(i.deletedAt());
            codec.writeAttribute(out, i.value());
        }
        Format.endFrame(out, start, new CRC32C());
        ByteSource in = new ByteSource(out.array(), Format.FRAME_HEAD + Format.MIN_BODY - 1, out.position());
        EntityCodec reader = new EntityCodec();
        int type = in.u8();
        assertEquals(HistoryFormat.CHUNK, type);
        HistoryFormat.ChunkHeader h = HistoryFormat.readChunkHeader(in, out.position(), type, reader);
        assertNull(h.summary());
        assertEquals(128, h.ranges().count());
        assertEquals(content, HistoryFormat.readInstances(in, h, reader));
    }
}
