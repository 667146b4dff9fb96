package dev.cor.ngsild.federation;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityInput;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.policy.NgsildLimits;

/**
 * The pieces of one entity from this broker and its sources put together (ETSI GS CIM 009
 * § 5.7.1.4, § 4.5.5.3): types, scopes and attributes unioned; for an attribute instance
 * (name and datasetId) given by two, the one with the newest {@code observedAt}, else the newest
 * {@code modifiedAt}, wins, and on a tie the first one given stays (this broker's own, as
 * Orion-LD keeps its local one); an auxiliary source's attribute is taken only when nobody else
 * gave that attribute. Pure functions on immutable records; any thread.
 */
public final class EntityMerge {
    private EntityMerge() {
    }

    /**
     * {@code base} and {@code more} as one entity ({@code base} may be {@code null}: {@code more}
     * alone). With {@code auxiliary}, {@code more} only adds attributes {@code base} lacks.
     */
    public static Entity merge(Entity base, Entity more, boolean auxiliary) {
        if (base == null) {
            return more;
        }
        if (more == null) {
            return base;
        }
        Map<String, AttributeList> attrs = new LinkedHashMap<>(base.attributes());
        for (Map.Entry<String, AttributeList> a : more.attributes().entrySet()) {
            AttributeList have = attrs.get(a.getKey());
            if (have == null) {
                attrs.put(a.getKey(), a.getValue());
                continue;
            }
            if (auxiliary) {
                continue;
            }
            AttributeList merged = have;
            for (Attribute i : a.getValue().instances()) {
                Attribute mine = merged.instance(i.datasetId());
                if (mine == null || newer(i, mine)) {
                    merged = merged.with(i);
                }
            }
            attrs.put(a.getKey(), merged);
        }
        return new Entity(base.id(), EntityEditor.mergedTypes(base.types(), more.types()),
                EntityEditor.mergedTypes(base.scopes(), more.scopes()),
                Collections.unmodifiableMap(attrs), Math.min(base.createdAt(), more.createdAt()),
                Math.max(base.modifiedAt(), more.modifiedAt()));
    }

    /** {@code e} without the attributes {@code names} (a proxied registration's: never served from here, § 4.3.6.3). */
    public static Entity without(Entity e, Set<String> names) {
        if (e == null || names == null) {
            return null; // null names: the whole entity is the source's
        }
        Map<String, AttributeList> attrs = new LinkedHashMap<>(e.attributes());
        if (!attrs.keySet().removeAll(names)) {
            return e;
        }
        return new Entity(e.id(), e.types(), e.scopes(), Collections.unmodifiableMap(attrs), e.createdAt(), e.modifiedAt());
    }

    /** {@code e} with only the attributes {@code names} (what a registration provides for it, § 4.3.6.1). */
    public static Entity only(Entity e, Set<String> names) {
        Map<String, AttributeList> attrs = new LinkedHashMap<>(e.attributes());
        if (!attrs.keySet().retainAll(names)) {
            return e;
        }
        return new Entity(e.id(), e.types(), e.scopes(), Collections.unmodifiableMap(attrs), e.createdAt(), e.modifiedAt());
    }

    /** § 4.5.5.3: the newer observedAt, and without one on both the newer modifiedAt. */
    static boolean newer(Attribute candidate, Attribute current) {
        long co = epoch(candidate.observedAt());
        long cu = epoch(current.observedAt());
        if (co != Syntax.NOT_A_DATE_TIME || cu != Syntax.NOT_A_DATE_TIME) {
            return co > cu;
        }
        return candidate.modifiedAt() > current.modifiedAt();
    }

    private static long epoch(String instant) {
        return instant == null ? Syntax.NOT_A_DATE_TIME : Syntax.epochMillis(instant);
    }

    /**
     * An entity a source answered (normalized, with its system attributes), read with the
     * {@code @context} it was asked with: names expanded as this broker keeps them, each
     * attribute's {@code createdAt}/{@code modifiedAt} as the source gave them (0 when it gave
     * none), so that § 4.5.5.3 can compare them.
     *
     * @throws dev.cor.ngsild.error.NgsiLdException when it is no entity (the caller reports a 111 warning)
     */
    public static Entity fromSource(JsonNode json, LdContext context, NgsildLimits limits) {
        EntityParser parser = new EntityParser(context, limits);
        EntityInput in = parser.entity(json, true, EntityParser.Mode.WHOLE);
        Entity e = EntityEditor.create(in, 0);
        Map<String, AttributeList> attrs = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> m : json.properties()) {
            String key = m.getKey();
            if (!m.getValue().isObject() && !m.getValue().isArray()) {
                continue;
            }
            String name;
            try {
                name = parser.attributeName(key);
            } catch (RuntimeException notAnAttribute) {
                continue;
            }
            AttributeList list = e.attributes().get(name);
            if (list == null) {
                continue;
            }
            List<Attribute> timed = new ArrayList<>(list.size());
            for (Attribute a : list.instances()) {
                JsonNode given = instanceJson(m.getValue(), a.datasetId());
                long created = given == null ? 0 : time(given.get("createdAt"));
                long modified = given == null ? 0 : time(given.get("modifiedAt"));
                timed.add(new Attribute(a.kind(), a.value(), a.datasetId(), a.observedAt(), a.unitCode(), a.valueType(),
                        a.objectType(), a.sub(), created, modified));
            }
            attrs.put(name, AttributeList.of(timed));
        }
        for (Map.Entry<String, AttributeList> a : e.attributes().entrySet()) {
            attrs.putIfAbsent(a.getKey(), a.getValue());
        }
        return new Entity(e.id(), e.types(), e.scopes(), Collections.unmodifiableMap(attrs), time(json.get("createdAt")),
                time(json.get("modifiedAt")));
    }

    private static JsonNode instanceJson(JsonNode attr, String datasetId) {
        for (JsonNode i : attr.isArray() ? attr : List.of(attr)) {
            JsonNode d = i.get("datasetId");
            String ds = d == null || d.asText().equals("@none") ? null : d.asText();
            if (java.util.Objects.equals(ds, datasetId)) {
                return i;
            }
        }
        return null;
    }

    private static long time(JsonNode n) {
        if (n == null || !n.isTextual()) {
            return 0;
        }
        long t = epoch(n.asText());
        return t == Syntax.NOT_A_DATE_TIME ? 0 : t;
    }
}
