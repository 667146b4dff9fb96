package dev.cor.ngsild.query;

import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityRenderer;

/**
 * An attribute path of q (§ 4.9): an attribute, then sub-attributes ({@code a.b.c}) or, last, one
 * of the instance's metadata ({@code a.observedAt}, {@code unitCode}, {@code datasetId},
 * {@code createdAt}, {@code modifiedAt}), then a trailing member path into the value
 * ({@code a[b.c]}; of a LanguageProperty: {@code a[en]} or {@code a[*]}). Resolves to the target
 * values of an entity: one per instance (any instance may satisfy a term). Immutable.
 */
final class QPath {
    enum Meta {
        NONE, OBSERVED_AT, UNIT_CODE, DATASET_ID, CREATED_AT, MODIFIED_AT;

        static Meta of(String name) {
            return switch (name) {
                case "observedAt" -> OBSERVED_AT;
                case "unitCode" -> UNIT_CODE;
                case "datasetId" -> DATASET_ID;
                case "createdAt" -> CREATED_AT;
                case "modifiedAt" -> MODIFIED_AT;
                default -> NONE;
            };
        }
    }

    /** What a term does with one target value. */
    @FunctionalInterface
    interface Target {
        boolean test(JsonNode value, AttributeKind kind);
    }

    final String attribute;
    /** The entity's own createdAt/modifiedAt when the path is that name alone and no attribute has it. */
    final Meta entityTime;
    final String[] subs;
    final Meta meta;
    final String[] members;
    /** {@code attribute{Type,...:path}}: the path read on the entities the relationship names, or {@code null}. */
    final Link link;

    /** A relationship followed to its objects: their types must be one of {@code types} (none: any). */
    record Link(java.util.Set<String> types, QPath inner) {
    }

    QPath(String attribute, Meta entityTime, String[] subs, Meta meta, String[] members, Link link) {
        this.attribute = attribute;
        this.entityTime = entityTime;
        this.subs = subs;
        this.meta = meta;
        this.members = members;
        this.link = link;
    }

    boolean exists(Entity e, java.util.function.Function<String, Entity> linked) {
        return any(e, linked, (v, k) -> true);
    }

    /** Whether any target value of {@code e} passes {@code t}; a link is not followed. */
    boolean any(Entity e, Target t) {
        return any(e, id -> null, t);
    }

    /** Whether any target value of {@code e} passes {@code t}, following a link through {@code linked}. */
    boolean any(Entity e, java.util.function.Function<String, Entity> linked, Target t) {
        if (link != null) {
            return anyLinked(e, linked, t);
        }
        AttributeList l = e.attributes().get(attribute);
        if (l == null) {
            if (entityTime == Meta.CREATED_AT) {
                return t.test(time(e.createdAt()), AttributeKind.PROPERTY);
            }
            if (entityTime == Meta.MODIFIED_AT) {
                return t.test(time(e.modifiedAt()), AttributeKind.PROPERTY);
            }
            return false;
        }
        return any(l, 0, t);
    }

    private boolean anyLinked(Entity e, java.util.function.Function<String, Entity> linked, Target t) {
        AttributeList l = e.attributes().get(attribute);
        if (l == null) {
            return false;
        }
        for (Attribute a : l.instances()) {
            if (a.kind() != AttributeKind.RELATIONSHIP && a.kind() != AttributeKind.LIST_RELATIONSHIP) {
                continue;
            }
            JsonNode objects = a.value();
            for (JsonNode o : objects.isArray() ? objects : java.util.List.of(objects)) {
                Entity target = o.isTextual() ? linked.apply(o.textValue()) : null;
                if (target != null && target != e && (link.types().isEmpty() || typed(target))
                        && link.inner().any(target, linked, t)) {
                    return true;
                }
            }
        }
        return false;
    }

    private boolean typed(Entity target) {
        for (String type : target.types()) {
            if (link.types().contains(type)) {
                return true;
            }
        }
        return false;
    }

    private boolean any(AttributeList l, int depth, Target t) {
        for (Attribute a : l.instances()) {
            if (depth < subs.length) {
                AttributeList s = a.sub().get(subs[depth]);
                if (s != null && any(s, depth + 1, t)) {
                    return true;
                }
                continue;
            }
            if (meta != Meta.NONE) {
                JsonNode m = meta(a);
                if (m != null && t.test(m, AttributeKind.PROPERTY)) {
                    return true;
                }
                continue;
            }
            if (value(a, t)) {
                return true;
            }
        }
        return false;
    }

    private boolean value(Attribute a, Target t) {
        JsonNode v = a.value();
        AttributeKind k = a.kind();
        if (k == AttributeKind.LANGUAGE_PROPERTY) {
            // no language, or [*]: any of the map's values; [tag]: that language's
            if (members.length == 0 || members[0].equals("*")) {
                for (Map.Entry<String, JsonNode> e : v.properties()) {
                    if (t.test(e.getValue(), k)) {
                        return true;
                    }
                }
                return false;
            }
            JsonNode m = v.get(members[0]);
            return m != null && t.test(m, k);
        }
        if (members.length == 0) {
            return t.test(v, k);
        }
        for (String m : members) {
            // ECMA-262 member access: an object's member, or an array's index
            v = v.isObject() ? v.get(m) : v.isArray() ? arrayItem(v, m) : null;
            if (v == null) {
                return false;
            }
        }
        // a member of a compound value is a plain value whatever the attribute's kind
        return t.test(v, AttributeKind.PROPERTY);
    }

    private static JsonNode arrayItem(JsonNode array, String index) {
        if (index.isEmpty() || index.length() > 9) {
            return null;
        }
        for (int i = 0; i < index.length(); i++) {
            if (index.charAt(i) < '0' || index.charAt(i) > '9') {
                return null;
            }
        }
        return array.get(Integer.parseInt(index));
    }

    private JsonNode meta(Attribute a) {
        return switch (meta) {
            case OBSERVED_AT -> a.observedAt() == null ? null : TextNode.valueOf(a.observedAt());
            case UNIT_CODE -> a.unitCode() == null ? null : TextNode.valueOf(a.unitCode());
            case DATASET_ID -> a.datasetId() == null ? null : TextNode.valueOf(a.datasetId());
            case CREATED_AT -> time(a.createdAt());
            case MODIFIED_AT -> time(a.modifiedAt());
            case NONE -> null;
        };
    }

    /** A broker time as the broker shows it (milliseconds always written): texts of it order in time. */
    private static JsonNode time(long millis) {
        return TextNode.valueOf(EntityRenderer.time(millis));
    }
}
