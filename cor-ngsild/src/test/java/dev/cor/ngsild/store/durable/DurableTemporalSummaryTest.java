package dev.cor.ngsild.store.durable;

import static dev.cor.ngsild.store.SummaryHistories.ATTRIBUTE;
import static dev.cor.ngsild.store.SummaryHistories.ENTITY;
import static dev.cor.ngsild.store.SummaryHistories.TENANT;
import static dev.cor.ngsild.store.durable.HistoryTesting.builder;
import static dev.cor.ngsild.store.durable.HistoryTesting.history;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.query.TemporalAggregation;
import dev.cor.ngsild.store.DatasetAggregate;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.store.SummaryHistories;
import dev.cor.ngsild.store.TemporalRetention;
import dev.cor.ngsild.store.TemporalStore;

/**
 * The durable store's aggregations (ETSI GS CIM 009 V1.8 § 4.5.19, § 5.7.3/5.7.4) take the
 * summaries its chunks carry - in the heap's index, written in the chunk frame, read back at
 * recovery - and answer what reading every instance answers: on long random histories, with
 * chunks waiting for the writer and written, after Modify and Delete Attribute Instance
 * (§ 5.6.15/5.6.16), Delete Attribute of one datasetId (§ 5.6.14), retention, out-of-order
 * instances, and after a clean stop and a crash (the same answers before and after, where no
 * expiry makes a restart bring dropped chunks back). The seed is
 * in every failure; {@code -Dcor.summary.seed=N} replays it.
 */
class DurableTemporalSummaryTest {
    private static final long DAY = 86_400_000L;

    @TempDir
    Path root;

    private record Asked(InstanceQuery window, Set<String> datasetIds, TemporalAggregation aggregation) {
    }

    @Test
    void aggregationsOverSummariesAnswerWhatTheInstancesAnswerAlsoAfterARestart() throws Exception {
        long seed = Long.getLong("cor.summary.seed", System.nanoTime());
        Random r = new Random(seed);
        long summarised = 0;
        for (int round = 0; round < 4; round++) {
            String why = "seed " + seed + " (-Dcor.summary.seed), round " + round;
            Path dir = Files.createDirectory(root.resolve("r" + round));
            SummaryHistories h = new SummaryHistories(r);
            DurableEntityStore.Builder b = builder(dir).historySegmentBytes(256 << 10)
                    .temporalRetention(new TemporalRetention(DAY, Long.MAX_VALUE));
            DurableEntityStore s = b.open();
            // a chunk retention dropped is back after a restart until the next expiry (doc/storage.md,
            // "Retention": more, never less): answers before and after compare only without one
            boolean expired = false;
            try {
                for (int step = 0; step < 6; step++) {
                    List<TemporalInstance> batch = h.batch(100 + r.nextInt(900), round == 3);
                    history(s).record(TENANT, ENTITY, List.of("https://example.org/Sensor"), List.of(), batch,
                            TemporalInstance.NO_TIME);
                    s.sync();
                    if (r.nextBoolean()) {
                        DurableTemporalStoreTest.awaitWritten(s); // the summaries of written chunks, not only pending ones
                    }
                    summarised += ((DurableTemporalStore) history(s)).summarised();
                    h.check(history(s), 12, why + ", step " + step + " (appended)");
                    for (int e = r.nextInt(4); e > 0; e--) {
                        TemporalInstance i = h.anyInstance(history(s));
                        if (i == null) {
                            break;
                        }
                        String op;
                        switch (r.nextInt(10)) {
                            case 0, 1, 2, 3 -> {
                                history(s).modifyInstance(TENANT, ENTITY, ATTRIBUTE, i.instanceId(), h.modified(i));
                                op = "modify";
                            }
                            case 4, 5, 6 -> {
                                history(s).deleteInstance(TENANT, ENTITY, ATTRIBUTE, i.instanceId());
                                op = "delete instance";
                            }
                            case 7 -> {
                                history(s).deleteAttribute(TENANT, ENTITY, ATTRIBUTE, "urn:ds:1", false);
                                op = "delete urn:ds:1";
                            }
                            default -> {
                                // the written chunks whose instances were all created a day before i's
                                DurableTemporalStoreTest.awaitWritten(s);
                                history(s).expire(i.value().createdAt() + DAY);
                                expired = true;
                                op = "expire";
                            }
                        }
                        s.sync();
                        h.check(history(s), 8, why + ", step " + step + " (" + op + " " + i.instanceId() + ")");
                    }
                    if (r.nextInt(3) == 0) {
                        // the same answers after a restart: the summaries read back from the chunk frames
                        List<Asked> asked = new ArrayList<>();
                        List<List<DatasetAggregate>> before = new ArrayList<>();
                        for (int q = 0; q < 10; q++) {
                            Asked a = new Asked(h.window(), h.datasetIds(), h.aggregation());
                            asked.add(a);
                            before.add(history(s).aggregate(TENANT, ENTITY, ATTRIBUTE, a.window(), a.datasetIds(),
                                    a.aggregation()));
                        }
                        boolean crash = r.nextBoolean();
                        if (crash) {
                            s.crash();
                        } else {
                            s.close();
                        }
                        s = b.open();
                        for (int q = 0; q < asked.size() && !expired; q++) {
                            Asked a = asked.get(q);
                            assertEquals(before.get(q), history(s).aggregate(TENANT, ENTITY, ATTRIBUTE, a.window(),
                                    a.datasetIds(), a.aggregation()), why + ", after a " + (crash ? "crash" : "stop") + ": " + a);
                        }
                        h.check(history(s), 8, why + ", step " + step + " (reopened)");
                    }
                }
            } finally {
                s.close();
            }
        }
        assertTrue(summarised > 50, "the histories hold summarised chunks: " + summarised);
    }

}
