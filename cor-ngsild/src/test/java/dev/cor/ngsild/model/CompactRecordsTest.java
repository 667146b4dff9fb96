package dev.cor.ngsild.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.TextNode;
import org.junit.jupiter.api.Test;

/**
 * The compact forms the records keep - {@link AttributeMap}, {@link AttributeList} as its own
 * list, {@link Attribute} with its shared metadata - answer every question as the collections and
 * the record they replace did: the same order, look-ups, equality, hash and immutability.
 */
class CompactRecordsTest {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private static Attribute property(double v, String datasetId) {
        return new Attribute(AttributeKind.PROPERTY, NODES.numberNode(v), datasetId, null, null, null, null, null, 1, 2);
    }

    /** n attributes in an order that is not the names' sorted or hashed order. */
    private static Map<String, AttributeList> given(int n) {
        Map<String, AttributeList> m = new LinkedHashMap<>();
        for (int i = n - 1; i >= 0; i--) {
            m.put("https://example.org/attr" + (i * 7919 % (n + 13)) + "-" + i, AttributeList.of(property(i, null)));
        }
        return Collections.unmodifiableMap(m);
    }

    @Test
    void anAttributeMapAnswersAsTheLinkedHashMapItReplaces() {
        for (int n : new int[] {0, 1, 2, 8, 9, 20, 254, 255, 300}) { // linear, byte table, int table
            Map<String, AttributeList> given = given(n);
            Map<String, AttributeList> m = AttributeMap.of(given);
            assertEquals(given, m, n + " attributes");
            assertEquals(m, given);
            assertEquals(given.hashCode(), m.hashCode());
            assertEquals(given.toString(), m.toString());
            assertEquals(n, m.size());
            assertEquals(List.copyOf(given.keySet()), List.copyOf(m.keySet()), "the order given");
            assertEquals(List.copyOf(given.values()), List.copyOf(m.values()));
            assertEquals(List.copyOf(given.entrySet()), List.copyOf(m.entrySet()));
            for (String k : given.keySet()) {
                assertSame(given.get(k), m.get(new String(k.toCharArray())));
                assertTrue(m.containsKey(k));
                assertTrue(m.keySet().contains(k));
            }
            assertNull(m.get("https://example.org/none"));
            assertFalse(m.containsKey("https://example.org/none"));
            assertNull(m.get(null), "a null name is absent, not an error");
            assertFalse(m.containsKey(null));
            List<String> walked = new ArrayList<>();
            m.forEach((k, v) -> walked.add(k));
            assertEquals(List.copyOf(given.keySet()), walked);
        }
    }

    @Test
    void anAttributeMapCannotBeChanged() {
        Map<String, AttributeList> m = AttributeMap.of(given(3));
        AttributeList any = m.values().iterator().next();
        assertThrows(UnsupportedOperationException.class, () -> m.put("x", any));
        assertThrows(UnsupportedOperationException.class, () -> m.remove(m.keySet().iterator().next()));
        assertThrows(UnsupportedOperationException.class, m::clear);
        Iterator<Map.Entry<String, AttributeList>> it = m.entrySet().iterator();
        Map.Entry<String, AttributeList> e = it.next();
        assertThrows(UnsupportedOperationException.class, it::remove);
        assertThrows(UnsupportedOperationException.class, () -> e.setValue(any));
        assertThrows(UnsupportedOperationException.class, () -> m.keySet().remove(e.getKey()));
        assertEquals(3, m.size());
        assertSame(m, AttributeMap.of(m), "compact already: kept as is");
    }

    @Test
    void theNamesOfTheRecordsAreShared() {
        String name = "https://example.org/shared-" + System.nanoTime();
        Entity a = new Entity("urn:a", List.of("https://example.org/T"), null,
                Map.of(new String(name.toCharArray()), AttributeList.of(property(1, null))), 1, 1);
        Entity b = new Entity("urn:b", List.of(new String("https://example.org/T".toCharArray())), null,
                Map.of(new String(name.toCharArray()), AttributeList.of(property(2, null))), 1, 1);
        assertSame(a.attributes().keySet().iterator().next(), b.attributes().keySet().iterator().next());
        assertSame(a.types(), b.types());
        assertThrows(UnsupportedOperationException.class, () -> a.types().add("x"));
    }

    @Test
    void anAttributeListIsItsInstances() {
        Attribute d = property(1, null);
        Attribute x = property(2, "urn:ds:x");
        Attribute y = property(3, "urn:ds:y");
        AttributeList one = AttributeList.of(d);
        assertEquals(List.of(d), one.instances());
        assertEquals(1, one.size());
        assertSame(d, one.instance(null));
        assertNull(one.instance("urn:ds:x"));
        AttributeList three = one.with(x).with(y);
        assertEquals(List.of(d, x, y), three.instances());
        assertSame(x, three.instance("urn:ds:x"));
        Attribute x2 = property(4, "urn:ds:x");
        assertEquals(List.of(d, x2, y), three.with(x2).instances(), "replaced in its place");
        assertEquals(List.of(d, y), three.without("urn:ds:x").instances());
        assertNull(one.without(null));
        assertEquals(AttributeList.of(List.of(d, x, y)), three);
        assertEquals(List.of(d, x, y).hashCode(), three.hashCode());
        assertEquals(List.of(d, x, y).toString(), three.toString());
        assertNotEquals(AttributeList.of(List.of(d, y, x)), three, "order counts");
        assertThrows(UnsupportedOperationException.class, () -> three.instances().add(d));
        assertThrows(UnsupportedOperationException.class, () -> three.instances().remove(0));
        assertThrows(IndexOutOfBoundsException.class, () -> one.get(1));
        assertThrows(IllegalArgumentException.class, () -> AttributeList.of(List.of()));
        assertThrows(NullPointerException.class, () -> AttributeList.of((Attribute) null));
    }

    @Test
    void anAttributeKeepsItsTenComponents() {
        ArrayNode objectTypes = NODES.arrayNode().add("https://example.org/A").add("https://example.org/B");
        Map<String, AttributeList> sub = Map.of("https://example.org/s", AttributeList.of(property(9, null)));
        Attribute a = new Attribute(AttributeKind.RELATIONSHIP, TextNode.valueOf("urn:x"), "urn:ds:1",
                "2026-01-01T00:00:00Z", "CEL", TextNode.valueOf("https://example.org/V"), objectTypes, sub, 5, 6);
        assertEquals(AttributeKind.RELATIONSHIP, a.kind());
        assertEquals(TextNode.valueOf("urn:x"), a.value());
        assertEquals("urn:ds:1", a.datasetId());
        assertEquals("2026-01-01T00:00:00Z", a.observedAt());
        assertEquals("CEL", a.unitCode());
        assertEquals(TextNode.valueOf("https://example.org/V"), a.valueType());
        assertSame(objectTypes, a.objectType(), "an array is kept as given, never shared");
        assertEquals(sub, a.sub());
        assertEquals(5, a.createdAt());
        assertEquals(6, a.modifiedAt());
        Attribute same = new Attribute(AttributeKind.RELATIONSHIP, TextNode.valueOf("urn:x"),
                new String("urn:ds:1".toCharArray()), "2026-01-01T00:00:00Z", "CEL", TextNode.valueOf("https://example.org/V"),
                objectTypes.deepCopy(), sub, 5, 6);
        assertEquals(a, same);
        assertEquals(a.hashCode(), same.hashCode());
        assertEquals(a.toString(), same.toString());
        assertSame(a.datasetId(), same.datasetId(), "the datasetId is shared");
        Attribute plain = property(1, null);
        assertNull(plain.datasetId());
        assertNull(plain.unitCode());
        assertNull(plain.valueType());
        assertNull(plain.objectType());
        assertTrue(plain.sub().isEmpty());
        for (Attribute other : List.of(
                new Attribute(AttributeKind.RELATIONSHIP, TextNode.valueOf("urn:x"), "urn:ds:2", "2026-01-01T00:00:00Z", "CEL",
                        TextNode.valueOf("https://example.org/V"), objectTypes, sub, 5, 6),
                new Attribute(AttributeKind.RELATIONSHIP, TextNode.valueOf("urn:x"), "urn:ds:1", "2026-01-01T00:00:00Z", "KEL",
                        TextNode.valueOf("https://example.org/V"), objectTypes, sub, 5, 6),
                new Attribute(AttributeKind.RELATIONSHIP, TextNode.valueOf("urn:x"), "urn:ds:1", null, "CEL",
                        TextNode.valueOf("https://example.org/V"), objectTypes, sub, 5, 6),
                new Attribute(AttributeKind.RELATIONSHIP, TextNode.valueOf("urn:x"), "urn:ds:1", "2026-01-01T00:00:00Z", "CEL",
                        TextNode.valueOf("https://example.org/V"), objectTypes, sub, 5, 7))) {
            assertNotEquals(a, other);
        }
    }
}
