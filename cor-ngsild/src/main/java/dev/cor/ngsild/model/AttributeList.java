package dev.cor.ngsild.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The instances of one attribute: at most one default instance (no datasetId) and any number
 * with distinct datasetIds (ETSI GS CIM 009 § 4.5.5). Immutable.
 */
public final class AttributeList {
    private final List<Attribute> instances;

    private AttributeList(List<Attribute> instances) {
        this.instances = instances;
    }

    /** One instance. */
    public static AttributeList of(Attribute one) {
        return new AttributeList(List.of(one));
    }

    /** The instances as given; the caller has checked that their datasetIds are distinct. */
    public static AttributeList of(List<Attribute> instances) {
        if (instances.isEmpty()) {
            throw new IllegalArgumentException("an attribute has at least one instance");
        }
        return new AttributeList(List.copyOf(instances));
    }

    /** Every instance, the default one among them if there is one. Unmodifiable. */
    public List<Attribute> instances() {
        return instances;
    }

    /** How many instances. */
    public int size() {
        return instances.size();
    }

    /** The instance with {@code datasetId} ({@code null}: the default instance), or {@code null}. */
    public Attribute instance(String datasetId) {
        for (Attribute a : instances) {
            if (Objects.equals(a.datasetId(), datasetId)) {
                return a;
            }
        }
        return null;
    }

    /** This list with {@code a} in place of the instance of the same datasetId, or added after the others. */
    public AttributeList with(Attribute a) {
        List<Attribute> l = new ArrayList<>(instances.size() + 1);
        boolean replaced = false;
        for (Attribute i : instances) {
            if (Objects.equals(i.datasetId(), a.datasetId())) {
                l.add(a);
                replaced = true;
            } else {
                l.add(i);
            }
        }
        if (!replaced) {
            l.add(a);
        }
        return new AttributeList(Collections.unmodifiableList(l));
    }

    /** This list without the instance of {@code datasetId}; {@code null} when none would be left. */
    public AttributeList without(String datasetId) {
        List<Attribute> l = new ArrayList<>(instances.size());
        for (Attribute i : instances) {
            if (!Objects.equals(i.datasetId(), datasetId)) {
                l.add(i);
            }
        }
        return l.isEmpty() ? null : new AttributeList(Collections.unmodifiableList(l));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AttributeList l && instances.equals(l.instances);
    }

    @Override
    public int hashCode() {
        return instances.hashCode();
    }

    @Override
    public String toString() {
        return instances.toString();
    }
}
