package dev.cor.ngsild.store.durable;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.store.TemporalStore;

/** What the history's tests share: instances, a store to record into, and the plain computation reads are checked against. */
final class HistoryTesting {
    static final String T = "https://uri.etsi.org/ngsi-ld/default-context/T";
    static final String A = "https://uri.etsi.org/ngsi-ld/default-context/a";
    static final String B = "https://uri.etsi.org/ngsi-ld/default-context/b";

    private HistoryTesting() {
    }

    /** An instance of {@code attribute} with value {@code v}, observed and created at the times given. */
    static TemporalInstance instance(String attribute, int v, long observedMs, long createdMs, String datasetId) {
        Attribute a = new Attribute(AttributeKind.PROPERTY, JsonNodeFactory.instance.numberNode(v), datasetId,
                observedMs == TemporalInstance.NO_TIME ? null : Instant.ofEpochMilli(observedMs).toString(), null, null, null,
                Map.of(), createdMs, createdMs);
        return TemporalInstance.of(attribute, a, TemporalInstance.NO_TIME);
    }

    static DurableEntityStore.Builder builder(Path dir) {
        return DurableEntityStore.builder(dir).historySegmentBytes(64 << 10);
    }

    static TemporalStore history(DurableEntityStore s) {
        return s.temporal().orElseThrow();
    }

    /** Records one instance and waits until it is durable, as a request does. */
    static TemporalInstance record(DurableEntityStore s, String tenant, String entity, TemporalInstance i) {
        TemporalInstance r = history(s).record(tenant, entity, List.of(T), List.of(), List.of(i), TemporalInstance.NO_TIME)
                .getFirst();
        s.sync();
        return r;
    }

    static int value(TemporalInstance i) {
        return i.value().value().intValue();
    }

    static List<Integer> values(List<TemporalInstance> l) {
        return l.stream().map(HistoryTesting::value).toList();
    }

    /** What a read must answer, computed plainly over every instance recorded (in the order recorded). */
    static List<TemporalInstance> expected(List<TemporalInstance> recorded, InstanceQuery q, int limit) {
        List<TemporalInstance> in = new ArrayList<>();
        for (TemporalInstance i : recorded) {
            if (q.admits(i)) {
                in.add(i);
            }
        }
        List<TemporalInstance> sorted = new ArrayList<>(in);
        sorted.sort(Comparator.comparingLong(i -> i.time(q.property()))); // stable: as recorded among equals
        if (q.lastN() > 0) {
            int k = Math.min(q.lastN(), limit);
            return sorted.subList(Math.max(0, sorted.size() - k), sorted.size());
        }
        return sorted.subList(0, Math.min(limit, sorted.size()));
    }
}
