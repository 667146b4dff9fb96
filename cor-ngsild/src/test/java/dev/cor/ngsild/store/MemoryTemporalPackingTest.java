package dev.cor.ngsild.store;

import static dev.cor.ngsild.store.SummaryHistories.ATTRIBUTE;
import static dev.cor.ngsild.store.SummaryHistories.ENTITY;
import static dev.cor.ngsild.store.SummaryHistories.T0;
import static dev.cor.ngsild.store.SummaryHistories.TENANT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.node.IntNode;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import org.junit.jupiter.api.Test;

/**
 * The memory store keeps a series' instances packed in blocks of {@value PackedSeries#BLOCK}
 * ({@link PackedSeries}): what it answers must be what it was given, instance for instance
 * (value, datasetId, every time, instanceId), through appends that seal blocks, Modify and Delete
 * Attribute Instance (ETSI GS CIM 009 V1.8 § 5.6.15/5.6.16) in and out of blocks, Delete
 * Attribute of one datasetId (§ 5.6.14) and the retention cutting through a block - checked
 * against a plain list of the instances, with queries by each time property, windows, lastN,
 * limits and datasetIds. The seed is in every failure; {@code -Dcor.packing.seed=N} replays it.
 */
class MemoryTemporalPackingTest {

    @Test
    void packedSeriesAnswerWhatAPlainListOfTheirInstancesAnswers() {
        long seed = Long.getLong("cor.packing.seed", System.nanoTime());
        Random r = new Random(seed);
        int sealed = 0;
        for (int round = 0; round < 10; round++) {
            String why = "seed " + seed + " (-Dcor.packing.seed), round " + round;
            AtomicLong clock = new AtomicLong(1_000_000);
            MemoryTemporalStore s = new MemoryTemporalStore(new TemporalRetention(3_600_000L, Long.MAX_VALUE), clock::get);
            SummaryHistories h = new SummaryHistories(r);
            List<TemporalInstance> truth = new ArrayList<>();
            Deque<int[]> batches = new ArrayDeque<>(); // per batch recorded: its count, as the retention drops it
            for (int step = 0; step < 14; step++) {
                List<TemporalInstance> batch = h.batch(1 + r.nextInt(r.nextBoolean() ? 40 : 400), round % 3 == 2);
                if (round % 4 == 1) { // some without observedAt: not in observedAt order, read by scanning
                    batch.replaceAll(i -> r.nextInt(20) == 0 ? withoutObservedAt(i) : i);
                }
                truth.addAll(s.record(TENANT, ENTITY, List.of("https://example.org/Sensor"), List.of(), batch,
                        TemporalInstance.NO_TIME));
                batches.add(new int[] {batch.size()});
                clock.addAndGet(1_000_000);
                check(s, truth, r, why + ", step " + step + " (appended " + batch.size() + ")");
                for (int e = r.nextInt(5); e > 0 && !truth.isEmpty(); e--) {
                    TemporalInstance i = truth.get(r.nextInt(truth.size()));
                    String op;
                    switch (r.nextInt(10)) {
                        case 0, 1, 2, 3 -> {
                            Attribute to = h.modified(i);
                            s.modifyInstance(TENANT, ENTITY, ATTRIBUTE, i.instanceId(), to);
                            truth.set(truth.indexOf(i), i.modifiedTo(to));
                            op = "modify";
                        }
                        case 4, 5, 6 -> {
                            s.deleteInstance(TENANT, ENTITY, ATTRIBUTE, i.instanceId());
                            truth.remove(i);
                            op = "delete instance";
                        }
                        case 7 -> {
                            s.deleteAttribute(TENANT, ENTITY, ATTRIBUTE, "urn:ds:1", false);
                            truth.removeIf(x -> Objects.equals(x.value().datasetId(), "urn:ds:1"));
                            op = "delete urn:ds:1";
                        }
                        default -> {
                            // the batches recorded more than an hour before go: each drops as many of the oldest as it held
                            long now = clock.get() + 3_600_000L - 2_500_000;
                            s.expire(now);
                            long recordedAt = clock.get() - 1_000_000L * batches.size();
                            while (!batches.isEmpty() && recordedAt + 1_000 <= now - 3_600_000L) {
                                int n = Math.min(batches.poll()[0], truth.size());
                                truth.subList(0, n).clear();
                                recordedAt += 1_000_000;
                            }
                            op = "expire";
                        }
                    }
                    check(s, truth, r, why + ", step " + step + " (" + op + " " + i.instanceId() + ")");
                }
                sealed += s.summarised(TENANT, ENTITY, ATTRIBUTE);
            }
            s.deleteEntity(TENANT, ENTITY);
            assertEquals(0, s.bytes(), why + ": a deleted history counts for nothing");
        }
        assertTrue(sealed > 100, "the histories held sealed blocks: " + sealed);
    }

    private static TemporalInstance withoutObservedAt(TemporalInstance i) {
        Attribute v = i.value();
        Attribute a = new Attribute(AttributeKind.PROPERTY, IntNode.valueOf(7), v.datasetId(), null, null, null, null, null,
                v.createdAt(), v.modifiedAt());
        return TemporalInstance.of(i.attribute(), a, i.deletedAt());
    }

    /** Every instance read back whole, then random queries against {@link MemoryTemporalStore#select} over the list. */
    private static void check(MemoryTemporalStore s, List<TemporalInstance> truth, Random r, String why) {
        TemporalInstance[] all = truth.toArray(new TemporalInstance[0]);
        assertEquals(s.recount(), s.bytes(), why + ": the bytes counted as each change went are those held");
        same(MemoryTemporalStore.select(all, all.length, InstanceQuery.ALL, Integer.MAX_VALUE),
                s.instances(TENANT, ENTITY, ATTRIBUTE, InstanceQuery.ALL, Integer.MAX_VALUE), why + ": all of them");
        for (int q = 0; q < 12; q++) {
            TimeProperty p = TimeProperty.values()[r.nextInt(4)];
            long a = pick(all, p, r);
            long b = pick(all, p, r);
            long from = r.nextInt(4) == 0 ? Long.MIN_VALUE : Math.min(a, b);
            long to = r.nextInt(4) == 0 ? Long.MAX_VALUE : Math.max(a, b) + r.nextInt(2);
            String ds = switch (r.nextInt(5)) {
                case 0 -> "urn:ds:1";
                case 1 -> InstanceQuery.DEFAULT_DATASET;
                default -> null;
            };
            InstanceQuery query = new InstanceQuery(p, from, to, ds, r.nextInt(3) == 0 ? 1 + r.nextInt(300) : 0);
            int limit = r.nextBoolean() ? Integer.MAX_VALUE : 1 + r.nextInt(300);
            same(MemoryTemporalStore.select(all, all.length, query, limit), s.instances(TENANT, ENTITY, ATTRIBUTE, query, limit),
                    why + ", " + query + ", limit " + limit);
        }
    }

    /** {@code expected} and {@code actual} equal, or a failure naming the first instance where they differ (not both lists). */
    private static void same(List<TemporalInstance> expected, List<TemporalInstance> actual, String why) {
        for (int k = 0; k < Math.min(expected.size(), actual.size()); k++) {
            assertEquals(expected.get(k), actual.get(k), why + ": instance " + k + " of " + expected.size());
        }
        assertEquals(expected.size(), actual.size(), why + ": how many");
    }

    /** A time of {@code p} that an instance has, or one near them. */
    private static long pick(TemporalInstance[] all, TimeProperty p, Random r) {
        if (all.length > 0 && r.nextInt(4) > 0) {
            long t = all[r.nextInt(all.length)].time(p);
            if (t != TemporalInstance.NO_TIME) {
                return t;
            }
        }
        return T0 + r.nextInt(3_000_000);
    }

    @Test
    void anInstanceIdTheStoreDidNotGiveIsNoneOfItsInstances() {
        MemoryTemporalStore s = new MemoryTemporalStore();
        SummaryHistories h = new SummaryHistories(new Random(1));
        List<TemporalInstance> got = s.record(TENANT, ENTITY, List.of("https://example.org/Sensor"), List.of(),
                h.batch(300, false), TemporalInstance.NO_TIME);
        TemporalInstance tenth = got.get(9); // in the first sealed block
        String upper = tenth.instanceId().toUpperCase(java.util.Locale.ROOT).replace("URN:NGSI-LD:ATTRIBUTE:INSTANCE:",
                TemporalInstance.ID_PREFIX);
        String padded = TemporalInstance.ID_PREFIX + "0" + tenth.instanceId().substring(TemporalInstance.ID_PREFIX.length());
        assertEquals(TemporalInstance.ID_PREFIX + "a", tenth.instanceId());
        for (String id : List.of(upper, padded, TemporalInstance.ID_PREFIX + "zz", tenth.instanceId() + " ")) {
            assertFalse(s.deleteInstance(TENANT, ENTITY, ATTRIBUTE, id), id);
        }
        assertTrue(s.deleteInstance(TENANT, ENTITY, ATTRIBUTE, tenth.instanceId()));
        List<TemporalInstance> left = s.instances(TENANT, ENTITY, ATTRIBUTE, InstanceQuery.ALL, Integer.MAX_VALUE);
        assertEquals(299, left.size());
        assertFalse(left.contains(tenth));
    }
}
