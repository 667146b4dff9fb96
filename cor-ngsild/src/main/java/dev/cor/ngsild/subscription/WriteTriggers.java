package dev.cor.ngsild.subscription;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.store.EntityWrite;

/**
 * What one write did to an entity's attributes, as a subscription's triggers (Table 5.2.12-1
 * {@code notificationTrigger}) and its {@code watchedAttributes} see it: which attributes it
 * created, updated or deleted - per instance, since the editor keeps the instances a write did
 * not touch (§ 4.5.5) - and the instances it deleted. CPU alone on the records given: it runs
 * inside the entity's critical section ({@link Subscriptions}). Stateless.
 */
final class WriteTriggers {
    private WriteTriggers() {
    }

    /** Whether the write is one of the subscription's triggers, on one of its watched attributes. */
    static boolean triggered(Subscription d, EntityWrite w) {
        Set<Subscription.Trigger> tr = d.triggers();
        Set<String> watched = d.watchedAttributes();
        Entity before = w.before();
        Entity after = w.after();
        if (after == null) {
            // deleting an entity deletes its attributes too: attributeDeleted on a watched one notifies
            return tr.contains(Subscription.Trigger.ENTITY_DELETED)
                    || (tr.contains(Subscription.Trigger.ATTRIBUTE_DELETED)
                            && (watched == null || intersects(before.attributes().keySet(), watched)));
        }
        if (before == null) {
            boolean watchedThere = watched == null || intersects(after.attributes().keySet(), watched);
            return watchedThere && (tr.contains(Subscription.Trigger.ENTITY_CREATED)
                    || tr.contains(Subscription.Trigger.ATTRIBUTE_CREATED));
        }
        boolean created = false;
        boolean updated = false;
        boolean deleted = false;
        for (Map.Entry<String, AttributeList> a : after.attributes().entrySet()) {
            if (watched != null && !watched.contains(a.getKey())) {
                continue;
            }
            AttributeList old = before.attributes().get(a.getKey());
            if (old == null) {
                created = true;
            } else if (old != a.getValue()) {
                // the editor keeps the instances it did not touch: a new instance is an update, even to
                // the same value; an instance gone (its datasetId deleted, § 4.5.5) is a deletion
                boolean lost = lostInstance(old, a.getValue());
                deleted |= lost;
                updated |= newInstance(old, a.getValue()) || !lost;
            }
        }
        for (String name : before.attributes().keySet()) {
            if ((watched == null || watched.contains(name)) && !after.attributes().containsKey(name)) {
                deleted = true;
                break;
            }
        }
        return (created && tr.contains(Subscription.Trigger.ATTRIBUTE_CREATED))
                || (updated && tr.contains(Subscription.Trigger.ATTRIBUTE_UPDATED))
                || (deleted && tr.contains(Subscription.Trigger.ATTRIBUTE_DELETED))
                || ((created || updated || deleted) && tr.contains(Subscription.Trigger.ENTITY_UPDATED));
    }

    /** Whether {@code now} has an instance {@code was} had not: one of another datasetId, or a new one in its place. */
    private static boolean newInstance(AttributeList was, AttributeList now) {
        for (Attribute i : now.instances()) {
            if (was.instance(i.datasetId()) != i) {
                return true;
            }
        }
        return false;
    }

    /** Whether an instance of {@code was} has no instance of its datasetId in {@code now}. */
    private static boolean lostInstance(AttributeList was, AttributeList now) {
        for (Attribute i : was.instances()) {
            if (now.instance(i.datasetId()) == null) {
                return true;
            }
        }
        return false;
    }

    /**
     * The attribute instances the write deleted (all of them with the entity), by attribute,
     * narrowed to the watched attributes: an attribute deleted whole with all its instances, one
     * that lost some datasetIds (§ 4.5.5) with those.
     */
    static Map<String, AttributeList> deletedAttributes(Subscription d, EntityWrite w) {
        Entity before = w.before();
        if (before == null) {
            return Map.of();
        }
        Map<String, AttributeList> out = null;
        for (Map.Entry<String, AttributeList> a : before.attributes().entrySet()) {
            if (d.watchedAttributes() != null && !d.watchedAttributes().contains(a.getKey())) {
                continue;
            }
            AttributeList still = w.after() == null ? null : w.after().attributes().get(a.getKey());
            AttributeList gone = a.getValue();
            if (still == gone) {
                continue; // kept as it was
            }
            if (still != null) {
                List<Attribute> lost = new ArrayList<>(1);
                for (Attribute i : gone.instances()) {
                    if (still.instance(i.datasetId()) == null) {
                        lost.add(i);
                    }
                }
                if (lost.isEmpty()) {
                    continue;
                }
                gone = AttributeList.of(lost);
            }
            if (out == null) {
                out = new java.util.LinkedHashMap<>();
            }
            out.put(a.getKey(), gone);
        }
        return out == null ? Map.of() : out;
    }

    private static boolean intersects(Set<String> a, Set<String> b) {
        for (String x : b) {
            if (a.contains(x)) {
                return true;
            }
        }
        return false;
    }
}
