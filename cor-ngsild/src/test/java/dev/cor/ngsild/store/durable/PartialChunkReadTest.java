package dev.cor.ngsild.store.durable;

import static dev.cor.ngsild.store.durable.HistoryTesting.A;
import static dev.cor.ngsild.store.durable.HistoryTesting.T;
import static dev.cor.ngsild.store.durable.HistoryTesting.builder;
import static dev.cor.ngsild.store.durable.HistoryTesting.expected;
import static dev.cor.ngsild.store.durable.HistoryTesting.history;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.store.ChunkSummary;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.store.TemporalStore;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * A read of a window by observedAt decodes only the instances of a chunk its numbers place in the
 * window, passing over the others and stopping after the last of them (doc/storage.md, "History",
 * reads). It must find what decoding the whole chunk finds - the temporal evolution of § 5.7.3 and
 * § 5.7.4 (ETSI GS CIM 009 V1.8) - for windows that begin and end at each instance, at the edges
 * of chunks, with instances of one instant on both sides of an edge, of several datasetIds,
 * deletions among them, and chunks an edit wrote again.
 */
class PartialChunkReadTest {
    @TempDir
    Path dir;

    /**
     * An instance observed at {@code observedMs}: a number, or with {@code deletedAt} a deletion;
     * every fifth with sub-attributes holding text, an object and an array - what the read passes over.
     */
    private static TemporalInstance instance(int v, long observedMs, String datasetId, long deletedAt) {
        var nodes = JsonNodeFactory.instance;
        Map<String, AttributeList> sub = Map.of();
        if (v % 5 == 0) {
            var o = nodes.objectNode().put("s", "x" + v).put("d", v / 3.0);
            o.putArray("a").add(v).add("é").addNull().add(true);
            sub = Map.of("https://uri.etsi.org/ngsi-ld/default-context/note",
                    AttributeList.of(new Attribute(AttributeKind.PROPERTY, o, null, null, "CEL", null, null, Map.of(), 5, 6)));
        }
        Attribute a = new Attribute(AttributeKind.PROPERTY, v % 2 == 0 ? nodes.numberNode(v) : nodes.numberNode(v + 0.5), datasetId,
                Instant.ofEpochMilli(observedMs).toString(), v % 7 == 0 ? "WTT" : null, null, null, sub, 1_000 + v, 1_000 + v);
        return TemporalInstance.of(A, a, deletedAt);
    }

    /** 128 instances as one chunk holds them: times out of order, ties, datasetIds, deletions. */
    private static List<TemporalInstance> content() {
        List<TemporalInstance> out = new ArrayList<>();
        for (int k = 0; k < 128; k++) {
            long t = 10_000L + 1_000L * (k / 3) + (k % 11 == 0 ? -4_000 : 0); // three at each instant, some earlier
            TemporalInstance i = instance(k, t, k % 4 == 1 ? "urn:ds:x" : null, k % 9 == 4 ? t + 1 : TemporalInstance.NO_TIME);
            out.add(HistoryFormat.instance(A, i.value(), 100 + k, i.deletedAt()));
        }
        return out;
    }

    /** Every window from and to each instant of {@code instances}, one millisecond either side of it too. */
    private static List<InstanceQuery> windows(List<TemporalInstance> instances, String datasetId) {
        TreeSet<Long> edges = new TreeSet<>();
        for (TemporalInstance i : instances) {
            edges.add(i.observedAt() - 1);
            edges.add(i.observedAt());
            edges.add(i.observedAt() + 1);
        }
        List<InstanceQuery> out = new ArrayList<>();
        for (long from : edges) {
            for (long to : edges.tailSet(from, false)) {
                out.add(new InstanceQuery(TimeProperty.OBSERVED_AT, from, to, datasetId, 0));
            }
            out.add(new InstanceQuery(TimeProperty.OBSERVED_AT, from, Long.MAX_VALUE, datasetId, 0));
            out.add(new InstanceQuery(TimeProperty.OBSERVED_AT, Long.MIN_VALUE, from, datasetId, 0));
        }
        return out;
    }

    private static List<String> ids(List<TemporalInstance> l) {
        return l.stream().map(TemporalInstance::instanceId).toList();
    }

    private static List<TemporalInstance> admitted(List<TemporalInstance> l, InstanceQuery q) {
        return l.stream().filter(q::admits).toList();
    }

    @Test
    void aChunkReadUpToTheWindowFindsWhatTheWholeChunkHolds() throws Exception {
        List<TemporalInstance> content = content();
        ByteSink out = new ByteSink(1 << 14);
        HistoryFormat.writeChunk(out, 7, "", "urn:e:1", A, 3, 100, 227, HistoryFormat.Head.NONE, content,
                ChunkSummary.of(content), new EntityCodec(), new CRC32C());
        int checked = 0;
        for (InstanceQuery q : windows(content, null)) {
            ByteSource in = new ByteSource(out.array(), Format.FRAME_HEAD + Format.MIN_BODY - 1, out.position());
            EntityCodec codec = new EntityCodec();
            HistoryFormat.ChunkHeader h = HistoryFormat.readChunkHeader(in, out.position(), in.u8(), codec);
            assertTrue(h.numbersLength() > 0, "the chunk has its numbers");
            List<TemporalInstance> part = HistoryFormat.readInstances(in, h, codec, q);
            // exactly those of the window are decoded, the whole chunk's in its order
            List<TemporalInstance> inWindow = content.stream()
                    .filter(i -> i.observedAt() >= q.from() && i.observedAt() < q.to()).toList();
            assertEquals(inWindow, part, q.toString());
            assertEquals(admitted(content, q), admitted(part, q), q.toString());
            checked++;
        }
        assertTrue(checked > 5_000, "windows: " + checked);
    }

    @Test
    void storeReadsAtChunkEdgesAnswerAsThePlainComputation() throws Exception {
        List<TemporalInstance> recorded = new ArrayList<>();
        try (DurableEntityStore s = builder(dir).open()) {
            TemporalStore h = history(s);
            for (int k = 0; k < 420; k++) {
                // one instant for the last three of each chunk and the first three of the next
                int m = k % 128;
                long t = m >= 125 ? 1_000_000L * (k / 128 + 1) + 125_000 : m < 3 ? 1_000_000L * (k / 128) + 125_000
                        : 1_000_000L * (k / 128) + 1_000L * m;
                if (k % 13 == 0) {
                    t -= 30_000; // out of order
                }
                recorded.add(h.record("", "urn:e:1", List.of(T), List.of(), List.of(instance(k, t, k % 4 == 1 ? "urn:ds:x" : null,
                        k % 9 == 4 ? t + 1 : TemporalInstance.NO_TIME)), TemporalInstance.NO_TIME).getFirst());
            }
            s.sync();
            DurableTemporalStoreTest.awaitWritten(s);
            // edits that write chunks again: a value changed in the first, an instance gone from the second
            TemporalInstance old = recorded.get(126);
            Attribute c = instance(9_999, old.observedAt(), null, TemporalInstance.NO_TIME).value();
            // as modified: the value changes, the instance keeps its createdAt
            Attribute changed = new Attribute(c.kind(), c.value(), null, c.observedAt(), null, null, null, Map.of(),
                    old.value().createdAt(), c.modifiedAt());
            assertTrue(h.modifyInstance("", "urn:e:1", A, old.instanceId(), changed));
            recorded.set(126, new TemporalInstance(A, changed, old.instanceId(), old.observedAt(), old.deletedAt()));
            assertTrue(h.deleteInstance("", "urn:e:1", A, recorded.get(129).instanceId()));
            recorded.remove(129);
            s.sync();
            DurableTemporalStoreTest.awaitWritten(s);
            for (String dataset : new String[] {null, "urn:ds:x", InstanceQuery.DEFAULT_DATASET}) {
                List<TemporalInstance> nearEdges = new ArrayList<>(recorded.subList(118, 138));
                nearEdges.addAll(recorded.subList(246, 266));
                List<InstanceQuery> ws = windows(nearEdges, dataset);
                for (int w = 0; w < ws.size(); w += 3) {
                    InstanceQuery q = ws.get(w);
                    for (int limit : new int[] {Integer.MAX_VALUE, 1, 3, 40}) {
                        List<TemporalInstance> want = expected(recorded, q, limit);
                        List<TemporalInstance> got = h.instances("", "urn:e:1", A, q, limit);
                        assertEquals(ids(want), ids(got), q + " limit " + limit);
                        for (int k = 0; k < want.size(); k++) {
                            assertEquals(want.get(k), got.get(k), q + " limit " + limit);
                        }
                    }
                    InstanceQuery last = new InstanceQuery(q.property(), q.from(), q.to(), dataset, 3);
                    assertEquals(expected(recorded, last, 100), h.instances("", "urn:e:1", A, last, 100), last.toString());
                }
            }
        }
    }
}
