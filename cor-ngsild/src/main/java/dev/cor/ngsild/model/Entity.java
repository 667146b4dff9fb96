package dev.cor.ngsild.model;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One entity as the store keeps it: its id, its types and attribute names as expanded IRIs, its
 * scopes, its attributes and the times the broker keeps. Immutable - a write builds the new
 * record and the store swaps it in - so a reader holds a consistent snapshot without a lock, and
 * what was rendered of it can be reused while it is current ({@link #renderCache()}).
 */
public final class Entity {
    private final String id;
    private final List<String> types;
    private final List<String> scopes;
    private final Map<String, AttributeList> attributes;
    private final long createdAt;
    private final long modifiedAt;
    /** Made by the first render: many records are never read before the next write replaces them. */
    private volatile RenderCache renderCache;

    /**
     * @param types      the expanded type IRIs; kept as a shared list ({@link SharedNames})
     * @param attributes by expanded name, in the order to render them; kept in a compact form
     *                   with shared names ({@link AttributeMap})
     */
    public Entity(String id, List<String> types, List<String> scopes, Map<String, AttributeList> attributes,
            long createdAt, long modifiedAt) {
        this.id = Objects.requireNonNull(id, "id");
        this.types = SharedNames.instance().names(types);
        this.scopes = scopes == null ? List.of() : List.copyOf(scopes);
        this.attributes = AttributeMap.of(Objects.requireNonNull(attributes, "attributes"));
        this.createdAt = createdAt;
        this.modifiedAt = modifiedAt;
    }

    /** The entity's id (a URI). */
    public String id() {
        return id;
    }

    /** The expanded type IRIs, in the order given, without duplicates. */
    public List<String> types() {
        return types;
    }

    /** Its scopes (ETSI GS CIM 009 § 4.18), empty when none. Unmodifiable. */
    public List<String> scopes() {
        return scopes;
    }

    /** The attributes by expanded name. Unmodifiable. */
    public Map<String, AttributeList> attributes() {
        return attributes;
    }

    /** When the broker created it (epoch milliseconds). */
    public long createdAt() {
        return createdAt;
    }

    /** When the broker last changed it (epoch milliseconds). */
    public long modifiedAt() {
        return modifiedAt;
    }

    /** What was rendered of this record, reusable while it is the current one. */
    public RenderCache renderCache() {
        RenderCache c = renderCache;
        if (c == null) {
            // two first renders at once may each make one: the last stays, the other's bytes are only not kept
            c = new RenderCache();
            renderCache = c;
        }
        return c;
    }

    @Override
    public String toString() {
        return "Entity[" + id + " " + types + " " + attributes.keySet() + "]";
    }
}
