package dev.cor.ngsild.store;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.query.AggregationRun;
import dev.cor.ngsild.query.TemporalAggregation;

/**
 * One attribute's instances in a window, gathered by datasetId for an aggregation (§ 4.5.19: an
 * aggregated attribute has one object per datasetId, in the order they first appear): instances
 * one by one and the chunks a store summarised, in time order, become each dataset's
 * {@link AggregationRun}s. What {@link TemporalStore#aggregate} does by default, and what a store
 * with summaries feeds its chunks to. One owner: not thread-safe.
 */
public final class AggregationGroups {
    private final InstanceQuery window;
    private final Set<String> datasetIds;
    private final Map<String, Group> groups = new LinkedHashMap<>();

    private static final class Group {
        final List<AggregationRun<TemporalInstance>> runs = new ArrayList<>();
        /** The run instances are appended to, while no summarised run came after it. */
        List<TemporalInstance> open;
        String type;
    }

    /**
     * @param window     the window the instances given are in (its datasetId is applied here too)
     * @param datasetIds the datasetIds asked for ({@link InstanceQuery#DEFAULT_DATASET}: the
     *                   default instances), or {@code null}: all
     */
    public AggregationGroups(InstanceQuery window, Set<String> datasetIds) {
        this.window = window;
        this.datasetIds = datasetIds;
    }

    private boolean admits(String d) {
        String w = window.datasetId();
        if (w != null && !(w.equals(InstanceQuery.DEFAULT_DATASET) ? d == null : w.equals(d))) {
            return false;
        }
        return datasetIds == null || datasetIds.contains(d == null ? InstanceQuery.DEFAULT_DATASET : d);
    }

    private Group group(String d) {
        return groups.computeIfAbsent(d == null ? "" : d, k -> new Group());
    }

    /** Takes instances of the window, next in time order. */
    public void instances(List<TemporalInstance> instances) {
        for (TemporalInstance i : instances) {
            String d = i.value().datasetId();
            if (!admits(d)) {
                continue;
            }
            Group g = group(d);
            if (g.open == null) {
                g.open = new ArrayList<>();
                g.runs.add(AggregationRun.of(g.open));
            }
            g.open.add(i);
            g.type = i.value().kind().typeName();
        }
    }

    /**
     * Takes a summarised chunk, next in time order, whole in the window's time; {@code reader}
     * answers its instances in time order. A chunk of mixed datasetIds is read at once.
     */
    public void summarised(ChunkSummary s, Supplier<List<TemporalInstance>> reader) {
        summarised(s, reader, null);
    }

    /**
     * {@link #summarised(ChunkSummary, Supplier)}, with {@code numbers} reading the chunk's
     * instances as their numbers only ({@link AggregationRun}), or answering {@code null}.
     */
    public void summarised(ChunkSummary s, Supplier<List<TemporalInstance>> reader, Supplier<List<TemporalInstance>> numbers) {
        if (s.mixed()) {
            instances(reader.get());
            return;
        }
        if (!admits(s.datasetId())) {
            return;
        }
        Group g = group(s.datasetId());
        g.open = null;
        g.runs.add(AggregationRun.summarised(s.aggregate(), s.first(), s.last(), reader, numbers));
        g.type = s.lastType();
    }

    /** Each dataset's periods, in the order the datasets first appeared; empty when no instance was taken. */
    public List<DatasetAggregate> aggregate(TemporalAggregation aggregation) {
        TimeProperty p = window.property();
        List<DatasetAggregate> out = new ArrayList<>(groups.size());
        for (Map.Entry<String, Group> e : groups.entrySet()) {
            Group g = e.getValue();
            out.add(new DatasetAggregate(e.getKey().isEmpty() ? null : e.getKey(), g.type, aggregation.aggregateRuns(g.runs,
                    window.from(), window.to(), i -> i.time(p), i -> i.deleted() ? null : i.value())));
        }
        return out;
    }
}
