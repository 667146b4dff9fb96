package dev.cor.ngsild.store;

import static dev.cor.ngsild.store.SummaryHistories.ATTRIBUTE;
import static dev.cor.ngsild.store.SummaryHistories.ENTITY;
import static dev.cor.ngsild.store.SummaryHistories.TENANT;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import dev.cor.ngsild.model.TemporalInstance;
import org.junit.jupiter.api.Test;

/**
 * The memory store's aggregations (ETSI GS CIM 009 V1.8 § 4.5.19, § 5.7.3/5.7.4) take the
 * summaries of its 128-instance blocks where a period holds a block whole, and answer what reading
 * every instance answers - on long random histories (thousands of instances: dozens of blocks),
 * after appends, out-of-order instances, Modify and Delete Attribute Instance (§ 5.6.15/5.6.16),
 * Delete Attribute of one datasetId (§ 5.6.14) and the retention dropping the oldest (a cut through
 * a block). The seed is in every failure; {@code -Dcor.summary.seed=N} replays it.
 */
class MemoryTemporalSummaryTest {

    @Test
    void aggregationsOverSummariesAnswerWhatTheInstancesAnswer() {
        long seed = Long.getLong("cor.summary.seed", System.nanoTime());
        Random r = new Random(seed);
        int summarised = 0;
        for (int round = 0; round < 12; round++) {
            String why = "seed " + seed + " (-Dcor.summary.seed), round " + round;
            AtomicLong clock = new AtomicLong(1_000_000);
            // an hour of age kept: an expiry a little more than an hour on drops the batches recorded before then
            MemoryTemporalStore s = new MemoryTemporalStore(new TemporalRetention(3_600_000L, Long.MAX_VALUE), clock::get);
            SummaryHistories h = new SummaryHistories(r);
            boolean disorder = round % 4 == 3;
            for (int step = 0; step < 8; step++) {
                s.record(TENANT, ENTITY, List.of("https://example.org/Sensor"), List.of(), h.batch(50 + r.nextInt(700), disorder),
                        TemporalInstance.NO_TIME);
                clock.addAndGet(1_000_000);
                summarised += s.summarised(TENANT, ENTITY, ATTRIBUTE);
                h.check(s, 15, why + ", step " + step + " (appended)");
                for (int e = r.nextInt(4); e > 0; e--) {
                    TemporalInstance i = h.anyInstance(s);
                    if (i == null) {
                        break;
                    }
                    String op;
                    switch (r.nextInt(10)) {
                        case 0, 1, 2, 3 -> {
                            s.modifyInstance(TENANT, ENTITY, ATTRIBUTE, i.instanceId(), h.modified(i));
                            op = "modify";
                        }
                        case 4, 5, 6 -> {
                            s.deleteInstance(TENANT, ENTITY, ATTRIBUTE, i.instanceId());
                            op = "delete instance";
                        }
                        case 7 -> {
                            s.deleteAttribute(TENANT, ENTITY, ATTRIBUTE, "urn:ds:1", false);
                            op = "delete urn:ds:1";
                        }
                        default -> {
                            // the batches recorded more than an hour before: the oldest of the series, through a block
                            s.expire(clock.get() + 3_600_000L - 1_500_000);
                            op = "expire";
                        }
                    }
                    h.check(s, 10, why + ", step " + step + " (" + op + " " + i.instanceId() + ")");
                }
            }
        }
        assertTrue(summarised > 100, "the histories hold summarised blocks: " + summarised);
    }
}
