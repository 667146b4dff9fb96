package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.junit.jupiter.api.Test;

import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * The binary form reads back what was written: every JSON node type as the same Jackson type
 * (an API body only makes ints, longs, big integers and doubles, a context or a future writer
 * may make the others), names shared between records, and anything cut short is refused.
 */
class EntityCodecTest {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private static JsonNode roundTrip(JsonNode n) throws ByteSource.Malformed {
        ByteSink out = new ByteSink(16);
        EntityCodec.writeJson(out, n);
        ByteSource in = new ByteSource(out.array(), 0, out.position());
        JsonNode back = new EntityCodec().readJson(in, 0);
        assertEquals(0, in.remaining());
        return back;
    }

    @Test
    void everyJsonNodeTypeReadsBackAsItself() throws Exception {
        List<JsonNode> nodes = List.of(F.nullNode(), F.booleanNode(true), F.booleanNode(false), F.numberNode(-3),
                F.numberNode((short) 7), F.numberNode(Long.MIN_VALUE), F.numberNode(new BigInteger("-98765432109876543210")),
                F.numberNode(1.5f), F.numberNode(-0.0), F.numberNode(Double.MAX_VALUE), F.numberNode(new BigDecimal("1.50")),
                F.textNode(""), F.textNode("\u00e9\u6771\ud83d\ude00"), F.arrayNode().add(1).add("a").addNull(),
                F.objectNode().put("k", 1).set("o", F.objectNode().putArray("a").add(2.5)), F.binaryNode(new byte[] {1, 2}));
        for (JsonNode n : nodes) {
            JsonNode back = roundTrip(n);
            if (n.isBinary()) {
                assertEquals(F.textNode("AQI="), back, "a binary value comes back as its JSON text reads");
                continue;
            }
            assertEquals(n, back);
            assertSame(n.getClass(), back.getClass(), n + " read back as " + back.getClass().getSimpleName());
        }
        assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(roundTrip(F.numberNode(-0.0)).doubleValue()));
    }

    /**
     * An encoder keeps the bytes of the names it wrote: the second record must be the bytes a fresh
     * encoder writes, and a string that turns out not to be ASCII halfway must be re-encoded as
     * UTF-8 from its start (a mutation keeping the ASCII prefix fails both checks).
     */
    @Test
    void aNameWrittenAgainIsTheSameBytesAndNonAsciiIsWrittenWhole() throws Exception {
        String attr = StoreFiles.ATTR + "-caf\u00e9-\u6771";
        dev.cor.ngsild.model.Attribute a = StoreFiles.entity("x", 5).attributes().get(StoreFiles.ATTR).instances().get(0);
        Entity e = new Entity("urn:ngsi-ld:T:abc\u00e9\ud83d\ude00", List.of(StoreFiles.TYPE, "urn:t:\u00fc"), List.of(),
                java.util.Map.of(attr, dev.cor.ngsild.model.AttributeList.of(a)), 1_000, 2_000);
        EntityCodec writer = new EntityCodec();
        ByteSink first = new ByteSink(16);
        writer.writeEntity(first, e);
        ByteSink again = new ByteSink(16);
        writer.writeEntity(again, e);
        assertEquals(java.util.Arrays.toString(java.util.Arrays.copyOf(first.array(), first.position())),
                java.util.Arrays.toString(java.util.Arrays.copyOf(again.array(), again.position())));
        Entity back = new EntityCodec().readEntity(new ByteSource(again.array(), 0, again.position()));
        assertEquals(e.id(), back.id());
        assertEquals(e.types(), back.types());
        assertEquals(java.util.Set.of(attr), back.attributes().keySet());
        assertEquals(5, back.attributes().get(attr).instances().get(0).value().intValue());
    }

    @Test
    void aDecoderSharesRepeatedNamesAndRefusesWhatIsCutShort() throws Exception {
        ByteSink out = new ByteSink(16);
        EntityCodec writer = new EntityCodec();
        writer.writeEntity(out, StoreFiles.entity("urn:ngsi-ld:T:a", 1));
        int firstEnd = out.position();
        writer.writeEntity(out, StoreFiles.entity("urn:ngsi-ld:T:b", 2));
        EntityCodec codec = new EntityCodec();
        ByteSource in = new ByteSource(out.array(), 0, out.position());
        Entity a = codec.readEntity(in);
        Entity b = codec.readEntity(in);
        assertEquals(1, StoreFiles.value(a));
        assertEquals(2, StoreFiles.value(b));
        assertSame(a.types().get(0), b.types().get(0));
        assertSame(a.attributes().keySet().iterator().next(), b.attributes().keySet().iterator().next());
        for (int cut = 0; cut < firstEnd; cut++) {
            ByteSource shortOne = new ByteSource(out.array(), 0, cut);
            assertThrows(ByteSource.Malformed.class, () -> new EntityCodec().readEntity(shortOne), "cut at " + cut);
        }
        ObjectNode deep = F.objectNode();
        ObjectNode at = deep;
        for (int i = 0; i < 600; i++) {
            at = at.putObject("d");
        }
        ByteSink d = new ByteSink(16);
        EntityCodec.writeJson(d, deep);
        assertThrows(ByteSource.Malformed.class, () -> new EntityCodec().readJson(new ByteSource(d.array(), 0, d.position()), 0));
    }
}
