package dev.cor.ngsild.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.node.TextNode;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.model.TemporalInstance;

/**
 * What one write of the current state adds to the entity's history: an instance for every
 * attribute instance the write made or changed (a write that sets the same value again is an
 * observation too), and one saying so for every attribute instance it deleted - the NGSI-LD Null
 * in the kind it had, with {@code deletedAt} - all of them when it deleted the entity, which
 * the entity's head then says too. Each instance's createdAt and modifiedAt are when it was
 * recorded (the write's time).
 * <p>
 * A {@link WriteObserver}: {@link #applied} runs inside the entity's critical section, so the
 * history takes the writes of one entity in the order they were applied. One per write, on the
 * writer's thread.
 */
public final class WriteHistory implements WriteObserver {
    private static final TextNode NULL = TextNode.valueOf(Syntax.NGSI_LD_NULL);

    private final TemporalStore store;
    private final String tenant;

    /** Records into {@code store}, for {@code tenant}. */
    public WriteHistory(TemporalStore store, String tenant) {
        this.store = store;
        this.tenant = tenant;
    }

    @Override
    public void applied(Entity before, Entity after) {
        long now = after != null ? after.modifiedAt() : System.currentTimeMillis();
        List<TemporalInstance> instances = instances(before, after, now);
        if (instances.isEmpty() && after != null && before != null && before.types().equals(after.types())
                && before.scopes().equals(after.scopes())) {
            return; // nothing the history shows changed
        }
        Entity e = after != null ? after : before;
        store.record(tenant, e.id(), e.types(), e.scopes(), instances, after == null ? now : TemporalInstance.NO_TIME);
    }

    /** The instances a write from {@code before} to {@code after} records, at {@code now}. */
    static List<TemporalInstance> instances(Entity before, Entity after, long now) {
        List<TemporalInstance> out = new ArrayList<>();
        if (after != null) {
            for (Map.Entry<String, AttributeList> a : after.attributes().entrySet()) {
                AttributeList was = before == null ? null : before.attributes().get(a.getKey());
                if (was == a.getValue()) {
                    continue; // the write kept this attribute as it was: the same instances
                }
                for (Attribute i : a.getValue().instances()) {
                    Attribute old = was == null ? null : was.instance(i.datasetId());
                    if (old != i) {
                        out.add(TemporalInstance.of(a.getKey(), recordedAt(i, now), TemporalInstance.NO_TIME));
                    }
                }
            }
        }
        if (before != null) {
            for (Map.Entry<String, AttributeList> a : before.attributes().entrySet()) {
                AttributeList still = after == null ? null : after.attributes().get(a.getKey());
                if (still == a.getValue()) {
                    continue; // kept as it was: nothing of it deleted
                }
                for (Attribute i : a.getValue().instances()) {
                    if (still == null || still.instance(i.datasetId()) == null) {
                        Attribute gone = new Attribute(i.kind(), NULL, i.datasetId(), null, null, null, null, Map.of(), now, now);
                        out.add(TemporalInstance.of(a.getKey(), gone, now));
                    }
                }
            }
        }
        return out;
    }

    private static Attribute recordedAt(Attribute a, long now) {
        return new Attribute(a.kind(), a.value(), a.datasetId(), a.observedAt(), a.unitCode(), a.valueType(), a.objectType(),
                a.sub(), now, now);
    }
}
