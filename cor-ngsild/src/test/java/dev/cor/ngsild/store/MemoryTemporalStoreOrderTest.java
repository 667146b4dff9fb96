package dev.cor.ngsild.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.node.DoubleNode;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;

/**
 * The memory store's reads of a series recorded in observedAt order (found by binary search)
 * answer what the scan of every instance ({@link MemoryTemporalStore#select}) answers: windows,
 * lastN, limits and datasetIds, on series in order, with equal times, and out of order.
 */
class MemoryTemporalStoreOrderTest {
    private static final String T = "tenant";
    private static final String ATTR = "https://example.org/temperature";

    private static TemporalInstance instance(long observedAt, String datasetId) {
        Attribute a = new Attribute(AttributeKind.PROPERTY, DoubleNode.valueOf(observedAt % 97), datasetId,
                observedAt == TemporalInstance.NO_TIME ? null : Instant.ofEpochMilli(observedAt).toString(), null, null, null,
                null, 0, 0);
        return TemporalInstance.of(ATTR, a, TemporalInstance.NO_TIME);
    }

    @Test
    void orderedReadsAnswerAsTheScan() {
        Random r = new Random(7);
        for (int round = 0; round < 200; round++) {
            MemoryTemporalStore store = new MemoryTemporalStore();
            String id = "urn:ngsi-ld:S:" + round;
            int n = 1 + r.nextInt(300);
            boolean inOrder = round % 3 != 0;
            long t = 1_700_000_000_000L;
            List<TemporalInstance> all = new ArrayList<>();
            for (int k = 0; k < n; k++) {
                t += inOrder ? r.nextInt(3) * 1000L : (r.nextInt(5) - 2) * 1000L;
                String ds = r.nextInt(4) == 0 ? "urn:ds:" + r.nextInt(2) : null;
                TemporalInstance i = instance(!inOrder && r.nextInt(50) == 0 ? TemporalInstance.NO_TIME : t, ds);
                List<TemporalInstance> batch = List.of(i);
                all.addAll(store.record(T, id, List.of("https://example.org/S"), List.of(), batch, TemporalInstance.NO_TIME));
            }
            TemporalInstance[] items = all.toArray(new TemporalInstance[0]);
            for (int q = 0; q < 30; q++) {
                long from = r.nextBoolean() ? Long.MIN_VALUE : 1_700_000_000_000L + r.nextInt(n + 1) * 1000L;
                long to = r.nextBoolean() ? Long.MAX_VALUE : Math.max(from, 1_700_000_000_000L) + r.nextInt(n + 1) * 1000L;
                if (from > to) {
                    continue;
                }
                String ds = switch (r.nextInt(4)) {
                    case 0 -> "urn:ds:0";
                    case 1 -> InstanceQuery.DEFAULT_DATASET;
                    default -> null;
                };
                InstanceQuery query = new InstanceQuery(TimeProperty.OBSERVED_AT, from, to, ds, r.nextInt(3) == 0 ? 0 : 1 + r.nextInt(20));
                int limit = r.nextBoolean() ? Integer.MAX_VALUE : 1 + r.nextInt(30);
                assertEquals(MemoryTemporalStore.select(items, items.length, query, limit),
                        store.instances(T, id, ATTR, query, limit), "round " + round + ", " + query + ", limit " + limit);
            }
        }
    }

    @Test
    void retentionDropsWhatIsOlderThanTheAgeAndOverTheBytes() {
        MemoryTemporalStore store = new MemoryTemporalStore(new TemporalRetention(60_000, Long.MAX_VALUE));
        for (int k = 0; k < 1000; k++) { // one series written to many times a second
            store.record(T, "urn:ngsi-ld:S:r", List.of("https://example.org/S"), List.of(),
                    List.of(instance(1_700_000_000_000L + k, null)), TemporalInstance.NO_TIME);
        }
        long now = System.currentTimeMillis();
        assertEquals(0, store.expire(now), "nothing is a minute old");
        assertEquals(1000, store.instances(T, "urn:ngsi-ld:S:r", ATTR, InstanceQuery.ALL, Integer.MAX_VALUE).size());
        assertEquals(1000, store.expire(now + 62_000), "all of them are");
        assertEquals(0, store.instances(T, "urn:ngsi-ld:S:r", ATTR, InstanceQuery.ALL, Integer.MAX_VALUE).size());
        assertEquals(0, store.bytes());

        MemoryTemporalStore small = new MemoryTemporalStore(new TemporalRetention(Long.MAX_VALUE, 1));
        small.record(T, "urn:ngsi-ld:S:b", List.of("https://example.org/S"), List.of(),
                List.of(instance(1_700_000_000_000L, null)), TemporalInstance.NO_TIME);
        assertEquals(1, small.expire(System.currentTimeMillis()), "over the bytes kept");
        small.record(T, "urn:ngsi-ld:S:b", List.of("https://example.org/S"), List.of(),
                List.of(instance(1_700_000_001_000L, null)), TemporalInstance.NO_TIME);
        assertEquals(1, small.instances(T, "urn:ngsi-ld:S:b", ATTR, InstanceQuery.ALL, Integer.MAX_VALUE).size(),
                "a write after the retention took its group opens a new one");
        assertEquals(1, small.expire(System.currentTimeMillis()));
    }
}
