package dev.cor.ngsild.model;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The instances of one attribute: at most one default instance (no datasetId) and any number
 * with distinct datasetIds (ETSI GS CIM 009 § 4.5.5). Immutable. It is its own list of instances
 * ({@link #instances()} is itself), holding one instance without an array: most attributes have
 * one, and a store holds millions of them.
 */
public final class AttributeList extends AbstractList<Attribute> {
    /** The one {@link Attribute}, or an {@code Attribute[]} of two or more. */
    private final Object instances;

    private AttributeList(Object instances) {
        this.instances = instances;
    }

    /** One instance. */
    public static AttributeList of(Attribute one) {
        return new AttributeList(Objects.requireNonNull(one, "instance"));
    }

    /** The instances as given; the caller has checked that their datasetIds are distinct. */
    public static AttributeList of(List<Attribute> instances) {
        if (instances.isEmpty()) {
            throw new IllegalArgumentException("an attribute has at least one instance");
        }
        return of(instances.toArray(Attribute[]::new));
    }

    private static AttributeList of(Attribute[] a) {
        for (Attribute i : a) {
            Objects.requireNonNull(i, "instance");
        }
        return new AttributeList(a.length == 1 ? a[0] : a);
    }

    /** Every instance, the default one among them if there is one. Unmodifiable: this list itself. */
    public List<Attribute> instances() {
        return this;
    }

    /** How many instances. */
    @Override
    public int size() {
        return instances instanceof Attribute[] a ? a.length : 1;
    }

    /** The instance at {@code index}, in the order they were given. */
    @Override
    public Attribute get(int index) {
        if (instances instanceof Attribute[] a) {
            return a[index];
        }
        Objects.checkIndex(index, 1);
        return (Attribute) instances;
    }

    /** The instance with {@code datasetId} ({@code null}: the default instance), or {@code null}. */
    public Attribute instance(String datasetId) {
        if (instances instanceof Attribute one) {
            return Objects.equals(one.datasetId(), datasetId) ? one : null;
        }
        for (Attribute a : (Attribute[]) instances) {
            if (Objects.equals(a.datasetId(), datasetId)) {
                return a;
            }
        }
        return null;
    }

    /** This list with {@code a} in place of the instance of the same datasetId, or added after the others. */
    public AttributeList with(Attribute a) {
        List<Attribute> l = new ArrayList<>(size() + 1);
        boolean replaced = false;
        for (Attribute i : this) {
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
        return of(l.toArray(Attribute[]::new));
    }

    /** This list without the instance of {@code datasetId}; {@code null} when none would be left. */
    public AttributeList without(String datasetId) {
        List<Attribute> l = new ArrayList<>(size());
        for (Attribute i : this) {
            if (!Objects.equals(i.datasetId(), datasetId)) {
                l.add(i);
            }
        }
        return l.isEmpty() ? null : of(l.toArray(Attribute[]::new));
    }
}
