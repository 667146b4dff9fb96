package dev.cor.ngsild.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.cor.ngsild.error.NgsiLdException;

/**
 * The NGSI-LD write operations on one entity record (ETSI GS CIM 009 § 5.6, with the partial
 * update patch of § 5.5.8 and the merge patch of § 5.5.12): each builds the next immutable
 * record from the current one and the request's input, and never changes either. Pure and
 * fast - they run inside the store's critical section for the entity - so they never wait.
 * {@code now} is the time of the write (epoch milliseconds), the same for every change it makes.
 */
public final class EntityEditor {
    /** The scope's IRI: how an UpdateResult names it. */
    public static final String SCOPE = "https://uri.etsi.org/ngsi-ld/scope";

    private EntityEditor() {
    }

    /** What an append or an update did not do, attribute by attribute (an UpdateResult's notUpdated). */
    public record NotUpdated(String attributeIri, String reason) {
    }

    /** An entity and the attributes an operation left alone. */
    public record Result(Entity entity, List<String> updated, List<NotUpdated> notUpdated) {
    }

    // ---------------------------------------------------------------- entities

    /** A new entity (create, 5.6.1). */
    public static Entity create(EntityInput in, long now) {
        return new Entity(in.id(), in.types(), in.scopes(), attributes(in, now), now, now);
    }

    /** The input's attributes, completed with the broker's times. */
    private static Map<String, AttributeList> attributes(EntityInput in, long now) {
        Map<String, AttributeList> attrs = new LinkedHashMap<>();
        for (Map.Entry<String, List<AttributeInput>> e : in.attributes().entrySet()) {
            attrs.put(e.getKey(), complete(e.getKey(), e.getValue(), now));
        }
        return Collections.unmodifiableMap(attrs);
    }

    /**
     * The entity with every attribute replaced by the input's (replace, 5.6.18); its types and
     * scopes too when the input gives them. createdAt stays.
     */
    public static Entity replace(Entity current, EntityInput in, long now) {
        // the body of a replace may leave its id out: the path names the entity
        return new Entity(current.id(), in.types() != null ? in.types() : current.types(),
                in.scopes() != null ? in.scopes() : current.scopes(), attributes(in, now), current.createdAt(), now);
    }

    /**
     * Append (5.6.3): each attribute instance is added, or replaces the instance of the same
     * datasetId - unless {@code noOverwrite}, which leaves existing ones and reports them. Types
     * in the fragment are added.
     */
    public static Result append(Entity current, EntityInput in, boolean noOverwrite, long now) {
        Map<String, AttributeList> attrs = new LinkedHashMap<>(current.attributes());
        List<String> updated = new ArrayList<>();
        List<NotUpdated> notUpdated = new ArrayList<>();
        for (Map.Entry<String, List<AttributeInput>> e : in.attributes().entrySet()) {
            String name = e.getKey();
            AttributeList have = attrs.get(name);
            boolean changed = false;
            for (AttributeInput i : requireInstances(name, e.getValue())) {
                Attribute existing = have == null ? null : have.instance(i.datasetId());
                if (existing != null && noOverwrite) {
                    notUpdated.add(new NotUpdated(name, "the attribute exists and noOverwrite was asked"
                            + (i.datasetId() != null ? " (datasetId " + i.datasetId() + ")" : "")));
                    continue;
                }
                Attribute next = toAttribute(name, i, existing == null ? now : existing.createdAt(), now);
                have = have == null ? AttributeList.of(next) : have.with(next);
                changed = true;
            }
            if (changed) {
                attrs.put(name, have);
                updated.add(name);
            }
        }
        List<String> scopes = current.scopes();
        if (in.scopes() != null) {
            // noOverwrite adds the scopes to the entity's, an overwrite replaces them (4.18)
            scopes = noOverwrite ? union(current.scopes(), in.scopes()) : in.scopes();
            updated.add(SCOPE);
        }
        List<String> types = mergedTypes(current.types(), in.types());
        return new Result(withAttributes(current, types, scopes, attrs, now), updated, notUpdated);
    }

    /**
     * Update attributes (5.6.2, partial update patch 5.5.8): each given instance replaces the
     * existing one of the same name and datasetId; one that does not exist is not added but
     * reported; NGSI-LD Null deletes.
     */
    public static Result update(Entity current, EntityInput in, long now) {
        Map<String, AttributeList> attrs = new LinkedHashMap<>(current.attributes());
        List<String> updated = new ArrayList<>();
        List<NotUpdated> notUpdated = new ArrayList<>();
        for (Map.Entry<String, List<AttributeInput>> e : in.attributes().entrySet()) {
            String name = e.getKey();
            AttributeList have = attrs.get(name);
            if (e.getValue() == null) { // the whole attribute is NGSI-LD Null
                if (have == null) {
                    notUpdated.add(new NotUpdated(name, "the attribute does not exist"));
                } else {
                    attrs.remove(name);
                    updated.add(name);
                }
                continue;
            }
            if (have == null) {
                notUpdated.add(new NotUpdated(name, "the attribute does not exist"));
                continue;
            }
            boolean changed = false;
            for (AttributeInput i : e.getValue()) {
                Attribute existing = have == null ? null : have.instance(i.datasetId());
                if (i.isNull()) {
                    if (existing == null) {
                        notUpdated.add(new NotUpdated(name, "the attribute has no instance"
                                + (i.datasetId() != null ? " with datasetId " + i.datasetId() : " without datasetId")));
                        continue;
                    }
                    have = have.without(i.datasetId());
                } else {
                    // an instance of another datasetId is added beside the others (5.5.8)
                    Attribute next = toAttribute(name, i, existing == null ? now : existing.createdAt(), now);
                    have = have == null ? AttributeList.of(next) : have.with(next);
                }
                changed = true;
            }
            if (changed) {
                if (have == null) {
                    attrs.remove(name);
                } else {
                    attrs.put(name, have);
                }
                updated.add(name);
            }
        }
        List<String> scopes = current.scopes();
        if (in.scopes() != null) {
            // an update replaces the scopes the entity has, and adds none where it has none (4.18)
            if (current.scopes().isEmpty()) {
                notUpdated.add(new NotUpdated(SCOPE, "the entity has no scope to update"));
            } else {
                scopes = in.scopes();
                updated.add(SCOPE);
            }
        }
        return new Result(withAttributes(current, mergedTypes(current.types(), in.types()), scopes, attrs, now),
                updated, notUpdated);
    }

    /**
     * Merge (5.6.17, merge patch 5.5.12): attributes that do not exist are added, existing
     * instances are merged member by member (a JSON object value deeply, RFC 7396), NGSI-LD Null
     * removes; types are added; scopes are replaced.
     */
    public static Entity merge(Entity current, EntityInput in, long now) {
        Map<String, AttributeList> attrs = new LinkedHashMap<>(current.attributes());
        mergeAll(attrs, in.attributes(), true, now);
        return withAttributes(current, mergedTypes(current.types(), in.types()), in.scopes(), attrs, now);
    }

    // ---------------------------------------------------------------- one attribute

    /**
     * Partial attribute update (5.6.4, 5.5.8): the given members overwrite those of the existing
     * instance of the same datasetId, the others stay; NGSI-LD Null as the value deletes it.
     *
     * @throws NgsiLdException ResourceNotFound when the entity has no such attribute instance
     */
    public static Entity partialUpdate(Entity current, String name, List<AttributeInput> in, long now) {
        AttributeList have = current.attributes().get(name);
        if (have == null) {
            throw NgsiLdException.notFound("entity " + current.id() + " has no attribute " + name);
        }
        if (in == null) {
            return removeAttribute(current, name, now);
        }
        for (AttributeInput i : in) {
            Attribute existing = have == null ? null : have.instance(i.datasetId());
            if (existing == null) {
                throw NgsiLdException.notFound("entity " + current.id() + " has no attribute " + name
                        + (i.datasetId() != null ? " with datasetId " + i.datasetId() : " without datasetId"));
            }
            have = i.isNull() ? have.without(i.datasetId()) : have.with(mergeInto(name, existing, i, false, now));
        }
        return withAttribute(current, name, have, now);
    }

    /**
     * Replace attribute (5.6.19): the instance of the same datasetId is replaced whole.
     *
     * @throws NgsiLdException ResourceNotFound when the entity has no such attribute instance
     */
    public static Entity replaceAttribute(Entity current, String name, List<AttributeInput> in, long now) {
        AttributeList have = current.attributes().get(name);
        if (have == null) {
            throw NgsiLdException.notFound("entity " + current.id() + " has no attribute " + name);
        }
        for (AttributeInput i : requireInstances(name, in)) {
            Attribute existing = have.instance(i.datasetId());
            if (existing == null) {
                throw NgsiLdException.notFound("entity " + current.id() + " has no attribute " + name
                        + (i.datasetId() != null ? " with datasetId " + i.datasetId() : " without datasetId"));
            }
            have = have.with(toAttribute(name, i, existing.createdAt(), now));
        }
        return withAttribute(current, name, have, now);
    }

    /**
     * {@code current} without the attributes {@code drop} selects (Purge Entities with drop or
     * keep, § 5.6.21.4), modified at {@code now}; {@code current} itself when none is dropped.
     */
    public static Entity withoutAttributes(Entity current, java.util.function.Predicate<String> drop, long now) {
        Map<String, AttributeList> kept = new LinkedHashMap<>();
        for (var a : current.attributes().entrySet()) {
            if (!drop.test(a.getKey())) {
                kept.put(a.getKey(), a.getValue());
            }
        }
        if (kept.size() == current.attributes().size()) {
            return current;
        }
        return new Entity(current.id(), current.types(), current.scopes(), Collections.unmodifiableMap(kept),
                current.createdAt(), now);
    }

    /**
     * Delete attribute (5.6.5): the default instance, the one of {@code datasetId}, or every
     * instance ({@code deleteAll}).
     *
     * @throws NgsiLdException ResourceNotFound when there is no such attribute or instance
     */
    public static Entity deleteAttribute(Entity current, String name, String datasetId, boolean deleteAll, long now) {
        if (name.equals(SCOPE)) {
            if (current.scopes().isEmpty()) {
                throw NgsiLdException.notFound("entity " + current.id() + " has no scope");
            }
            return new Entity(current.id(), current.types(), List.of(), current.attributes(), current.createdAt(), now);
        }
        AttributeList have = current.attributes().get(name);
        if (have == null) {
            throw NgsiLdException.notFound("entity " + current.id() + " has no attribute " + name);
        }
        if (deleteAll) {
            return removeAttribute(current, name, now);
        }
        if (have.instance(datasetId) == null) {
            throw NgsiLdException.notFound("entity " + current.id() + " has no instance of " + name
                    + (datasetId != null ? " with datasetId " + datasetId : " without datasetId"));
        }
        return withAttribute(current, name, have.without(datasetId), now);
    }

    // ---------------------------------------------------------------- building attributes

    private static AttributeList complete(String name, List<AttributeInput> instances, long now) {
        List<Attribute> l = new ArrayList<>(requireInstances(name, instances).size());
        for (AttributeInput i : instances) {
            l.add(toAttribute(name, i, now, now));
        }
        return AttributeList.of(l);
    }

    private static List<AttributeInput> requireInstances(String name, List<AttributeInput> instances) {
        if (instances == null) {
            throw NgsiLdException.badData("attribute " + name + " is NGSI-LD Null, which this operation cannot apply");
        }
        for (AttributeInput i : instances) {
            if (i.isNull()) {
                throw NgsiLdException.badData("attribute " + name + " has an NGSI-LD Null value, which this operation cannot apply");
            }
        }
        return instances;
    }

    /**
     * A whole attribute instance from its input, made at {@code now} (a temporal instance: its
     * kind and value must be there).
     */
    public static Attribute attribute(String name, AttributeInput i, long now) {
        if (i.isNull()) {
            throw NgsiLdException.badData("attribute " + name + " has an NGSI-LD Null value, which this operation cannot apply");
        }
        return toAttribute(name, i, now, now);
    }

    /**
     * An instance of a temporal representation as provided (§ 5.6.11): the attribute, or, for an
     * input whose value is the NGSI-LD Null, the deleted instance (§ 4.5.7), recorded at {@code now}.
     */
    public static TemporalInstance temporalInstance(String name, AttributeInput i, long now) {
        if (i.isNull()) {
            Attribute gone = new Attribute(i.kind(), TextNode.valueOf(Syntax.NGSI_LD_NULL), i.datasetId(), text(i.observedAt()),
                    null, null, null, Map.of(), now, now);
            return TemporalInstance.of(name, gone, now);
        }
        return TemporalInstance.of(name, attribute(name, i, now), TemporalInstance.NO_TIME);
    }

    /** A whole attribute from its input: its kind and value must be there. */
    static Attribute toAttribute(String name, AttributeInput i, long created, long now) {
        if (i.kind() == null || i.value() == null) {
            throw NgsiLdException.badData("attribute " + name + " has no "
                    + (i.kind() == null ? "type nor value member" : i.kind().valueMember()));
        }
        Map<String, AttributeList> sub = new LinkedHashMap<>();
        for (Map.Entry<String, List<AttributeInput>> s : i.sub().entrySet()) {
            sub.put(s.getKey(), complete(s.getKey(), s.getValue(), now));
        }
        return new Attribute(i.kind(), i.value(), i.datasetId(), text(i.observedAt()), text(i.unitCode()),
                present(i.valueType()), present(i.objectType()), Collections.unmodifiableMap(sub), created, now);
    }

    /**
     * Merges an input into an existing instance: members given overwrite (or, {@code deep}, a JSON
     * object value is merged as RFC 7396 does), NGSI-LD Null removes a member, the rest stay.
     */
    private static Attribute mergeInto(String name, Attribute existing, AttributeInput i, boolean deep, long now) {
        if (!deep && i.kind() != null && i.kind() != existing.kind()) {
            throw NgsiLdException.badData("attribute " + name + " is a " + existing.kind().typeName()
                    + "; a partial update cannot make it a " + i.kind().typeName());
        }
        AttributeKind kind = i.kind() != null ? i.kind() : existing.kind();
        JsonNode value;
        if (i.value() != null) {
            value = deep && kind == existing.kind() && i.value().isObject() && existing.value().isObject()
                    ? mergePatch(existing.value(), i.value()) : i.value();
        } else if (kind != existing.kind()) {
            throw NgsiLdException.badData("attribute " + name + " changes to a " + kind.typeName() + " without its "
                    + kind.valueMember());
        } else {
            value = existing.value();
        }
        Map<String, AttributeList> sub = new LinkedHashMap<>(existing.sub());
        mergeAll(sub, i.sub(), deep, now);
        return new Attribute(kind, value, existing.datasetId(),
                member(i.observedAt(), existing.observedAt()), member(i.unitCode(), existing.unitCode()),
                memberNode(i.valueType(), existing.valueType()), memberNode(i.objectType(), existing.objectType()),
                Collections.unmodifiableMap(sub), existing.createdAt(), now);
    }

    /**
     * Applies a patch's attributes (or sub-attributes) to {@code into}, instance by instance:
     * NGSI-LD Null removes an attribute or an instance, a new one is added, an existing one is
     * merged member by member ({@code deep}: a merge patch, into values too) or - for a partial
     * update's sub-attributes - replaced whole, keeping its createdAt.
     */
    private static void mergeAll(Map<String, AttributeList> into, Map<String, List<AttributeInput>> patch, boolean deep,
            long now) {
        for (Map.Entry<String, List<AttributeInput>> e : patch.entrySet()) {
            String name = e.getKey();
            if (e.getValue() == null) {
                into.remove(name);
                continue;
            }
            AttributeList have = into.get(name);
            for (AttributeInput i : e.getValue()) {
                Attribute existing = have == null ? null : have.instance(i.datasetId());
                if (i.isNull()) {
                    if (have != null) {
                        have = have.without(i.datasetId());
                    }
                    continue;
                }
                Attribute next = existing != null && deep ? mergeInto(name, existing, i, true, now)
                        : toAttribute(name, i, existing != null ? existing.createdAt() : now, now);
                have = have == null ? AttributeList.of(next) : have.with(next);
            }
            if (have == null) {
                into.remove(name);
            } else {
                into.put(name, have);
            }
        }
    }

    /** RFC 7396 merge of two JSON objects, with NGSI-LD Null (and JSON null) removing a member. */
    static JsonNode mergePatch(JsonNode target, JsonNode patch) {
        if (!patch.isObject()) {
            return patch;
        }
        ObjectNode out = target.isObject() ? ((ObjectNode) target).deepCopy() : JsonNodeFactory.instance.objectNode();
        for (Map.Entry<String, JsonNode> e : patch.properties()) {
            JsonNode v = e.getValue();
            if (v.isNull() || EntityParser.isNgsiLdNull(v)) {
                out.remove(e.getKey());
            } else {
                JsonNode t = out.get(e.getKey());
                out.set(e.getKey(), t != null && t.isObject() && v.isObject() ? mergePatch(t, v) : v);
            }
        }
        return out;
    }

    private static String member(JsonNode given, String existing) {
        if (given == null) {
            return existing;
        }
        return EntityParser.isNgsiLdNull(given) ? null : given.asText();
    }

    private static JsonNode memberNode(JsonNode given, JsonNode existing) {
        if (given == null) {
            return existing;
        }
        return EntityParser.isNgsiLdNull(given) ? null : given;
    }

    private static String text(JsonNode n) {
        return n == null || EntityParser.isNgsiLdNull(n) ? null : n.asText();
    }

    private static JsonNode present(JsonNode n) {
        return n == null || EntityParser.isNgsiLdNull(n) ? null : n;
    }

    // ---------------------------------------------------------------- helpers

    private static List<String> union(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        for (String x : b) {
            if (!out.contains(x)) {
                out.add(x);
            }
        }
        return out;
    }

    /** {@code current} with what {@code added} has beyond it appended, each once (types, scopes). */
    public static List<String> mergedTypes(List<String> current, List<String> added) {
        if (added == null || current.containsAll(added)) {
            return current;
        }
        List<String> types = new ArrayList<>(current);
        for (String t : added) {
            if (!types.contains(t)) {
                types.add(t);
            }
        }
        return types;
    }

    private static Entity withAttributes(Entity e, List<String> types, List<String> scopes,
            Map<String, AttributeList> attrs, long now) {
        return new Entity(e.id(), types, scopes != null ? scopes : e.scopes(), Collections.unmodifiableMap(attrs),
                e.createdAt(), now);
    }

    private static Entity withAttribute(Entity e, String name, AttributeList list, long now) {
        Map<String, AttributeList> attrs = new LinkedHashMap<>(e.attributes());
        if (list == null) {
            attrs.remove(name);
        } else {
            attrs.put(name, list);
        }
        return withAttributes(e, e.types(), null, attrs, now);
    }

    private static Entity removeAttribute(Entity e, String name, long now) {
        return withAttribute(e, name, null, now);
    }
}
