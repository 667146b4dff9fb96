package dev.cor.ngsild.query;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityRenderer;
import dev.cor.ngsild.model.Syntax;
import dev.cor.rest.CorRestJson;

/**
 * Linked entity retrieval (ETSI GS CIM 009 V1.8 § 4.5.23; Retrieve Entity § 5.7.1, Query
 * Entities § 5.7.2): with {@code join=inline} each Relationship of an entity carries the entity it
 * points to - as the member {@code entity} of the relationship in the normalized and concise
 * representations, as the relationship's value in the simplified one; with {@code join=flat} the
 * answer is an array of the entities asked for followed by the entities they point to, each once.
 * {@code joinLevel} (default 1) is how many hops are followed; an entity already in the answer's
 * chain, or named in {@code containedBy} (the ids the asker already holds), is not followed again,
 * so a cycle of relationships ends. Linked entities are the tenant's, read from the store; one that
 * does not exist is left out. Only a relationship that is shown is followed; pick and omit shape
 * the entities asked for, and - with braces, {@code locatedAt{id,name}} - the entities reached
 * through a relationship (§ 4.21); a relationship they do not brace shows its entities whole.
 * Retrieve Entity, Query Entities and the notifications of a subscription whose
 * {@code notification} asks a join (Table 5.2.14-1) all join here. One instance per answer or
 * notification, touched by the thread that makes it; it reads linked entities through the lookup
 * it is given (the tenant's store).
 */
public final class LinkedEntities {
    /** How many linked entities one answer may gather: past it, the rest are left out. */
    public static final int MAX_LINKED = 1_000;

    /** What is asked: {@code inline} or {@code flat}, how many hops, what the asker holds already. */
    public record Join(boolean inline, int level, Set<String> containedBy) {
        /**
         * The join asked ({@code join} as written, {@code null} when absent), or {@code null} when
         * it asks none ({@code @none}); BadRequestData when one is wrong. The same rules for a
         * request's parameters and a subscription's {@code notification} members.
         */
        public static Join of(String join, int level, List<String> containedByIds) {
            if (join == null || join.equals("@none")) {
                return null;
            }
            if (!join.equals("inline") && !join.equals("flat")) {
                throw NgsiLdException.badData("join is inline, flat or @none, not '" + join + "'");
            }
            if (level < 1) {
                throw NgsiLdException.badData("joinLevel is a positive integer, not " + level);
            }
            Set<String> containedBy = new LinkedHashSet<>();
            for (String id : containedByIds) {
                if (!Syntax.isUri(id)) {
                    throw NgsiLdException.badData("containedBy lists entity ids (URIs), and '" + id + "' is none");
                }
                containedBy.add(id);
            }
            return new Join(join.equals("inline"), level, containedBy);
        }
    }

    /**
     * How entities at one place of the answer are shown: the render options, and for each
     * relationship (expanded name) the shape of the entities it reaches; one it does not name shows
     * them whole.
     */
    public record Shape(EntityRenderer.Options options, Map<String, Shape> via) {
    }

    private final Function<String, Entity> lookup;
    private final LdContext ctx;
    private final Shape root;
    /** A linked entity nothing braces: shown whole, in the representation of the answer. */
    private final Shape whole;
    private final Join join;
    private final JsonNode bodyContext;
    private int linked;

    /**
     * {@code lookup}: an entity of the tenant by id, {@code null} when there is none;
     * {@code root}: how the entities asked for are shown, and through which relationships braces
     * reach; {@code bodyContext}: the {@code @context} each top-level entity carries, or
     * {@code null}.
     */
    public LinkedEntities(Function<String, Entity> lookup, LdContext ctx, Shape root, Join join, JsonNode bodyContext) {
        this.lookup = lookup;
        this.ctx = ctx;
        EntityRenderer.Options o = root.options();
        this.root = root;
        this.whole = new Shape(new EntityRenderer.Options(o.format(), o.sysAttrs(), null, null, true, true, true, o.lang(),
                null), Map.of());
        this.join = join;
        this.bodyContext = bodyContext;
    }

    private Shape through(Shape s, String relationship) {
        Shape nested = s.via().get(relationship);
        return nested != null ? nested : whole;
    }

    /**
     * The answer: {@code roots} with their linked entities - for a retrieval of one entity
     * ({@code single}) an object with {@code join=inline}, and with {@code join=flat} too when it
     * links nothing that exists; else an array.
     */
    public JsonNode render(List<Entity> roots, boolean single) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        if (join.inline()) {
            for (Entity e : roots) {
                out.add(inline(e));
            }
            return single && out.size() == 1 ? out.get(0) : out;
        }
        Map<String, ObjectNode> flat = new LinkedHashMap<>();
        for (Entity e : roots) {
            flat.put(e.id(), withContext(tree(e, root.options())));
        }
        for (ObjectNode linkedEntity : linkedOf(roots)) {
            flat.put(linkedEntity.path("id").asText(), linkedEntity);
        }
        if (single && flat.size() == 1) {
            return flat.values().iterator().next(); // nothing linked: the entity as a retrieval gives it (the suite's 018_14)
        }
        flat.values().forEach(out::add);
        return out;
    }

    /** {@code e} as the root shape shows it, each shown relationship carrying the entities it reaches (join=inline). */
    public ObjectNode inline(Entity e) {
        Set<String> chain = new LinkedHashSet<>(join.containedBy());
        chain.add(e.id());
        return withContext(inline(e, root, chain, 1));
    }

    /**
     * join=flat: the entities {@code roots} reach within the join's hops, each once, in the order
     * of the hops - none of the roots themselves, nor one in {@code containedBy}.
     */
    public List<ObjectNode> linkedOf(List<Entity> roots) {
        record Reached(Entity entity, Shape shape) {
        }
        List<ObjectNode> flat = new ArrayList<>();
        List<Reached> level = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>(join.containedBy());
        for (Entity e : roots) {
            seen.add(e.id());
            level.add(new Reached(e, root));
        }
        for (int hop = 1; hop <= join.level() && !level.isEmpty(); hop++) {
            List<Reached> next = new ArrayList<>();
            for (Reached r : level) {
                for (Map.Entry<String, AttributeList> a : r.entity().attributes().entrySet()) {
                    if (!r.shape().options().shows(a.getKey())) {
                        continue; // a relationship left out of the answer is not followed
                    }
                    Shape shape = through(r.shape(), a.getKey());
                    for (String target : targets(a.getValue())) {
                        if (seen.add(target) && linked < MAX_LINKED) {
                            Entity t = lookup.apply(target);
                            if (t != null) {
                                linked++;
                                flat.add(withContext(tree(t, shape.options())));
                                next.add(new Reached(t, shape));
                            }
                        }
                    }
                }
            }
            level = next;
        }
        return flat;
    }

    /** {@code e} rendered as {@code shape} says, its relationships carrying their targets, {@code hop} hops from the root. */
    private ObjectNode inline(Entity e, Shape shape, Set<String> chain, int hop) {
        ObjectNode tree = tree(e, shape.options());
        if (hop > join.level()) {
            return tree;
        }
        for (Map.Entry<String, AttributeList> a : e.attributes().entrySet()) {
            String name = ctx.compactName(a.getKey());
            JsonNode shown = tree.get(name);
            if (shown == null || !relationship(a.getValue())) {
                continue;
            }
            Shape next = through(shape, a.getKey());
            List<Attribute> instances = a.getValue().instances();
            boolean simplified = shape.options().format() == EntityRenderer.Format.SIMPLIFIED;
            for (int i = 0; i < instances.size(); i++) {
                Attribute instance = instances.get(i);
                if (instance.kind() != AttributeKind.RELATIONSHIP) {
                    continue;
                }
                List<ObjectNode> linkedTrees = new ArrayList<>();
                for (String target : ids(instance.value())) {
                    if (chain.contains(target) || linked >= MAX_LINKED) {
                        continue;
                    }
                    Entity t = lookup.apply(target);
                    if (t != null) {
                        linked++;
                        Set<String> deeper = new LinkedHashSet<>(chain);
                        deeper.add(target);
                        linkedTrees.add(inline(t, next, deeper, hop + 1));
                    }
                }
                if (linkedTrees.isEmpty()) {
                    continue;
                }
                // one instance: the attribute is it; several (datasetIds): an array of them, in order
                boolean several = instances.size() > 1 && shown.isArray();
                JsonNode holder = several ? shown.get(i) : shown;
                JsonNode value = linkedTrees.size() == 1 ? linkedTrees.get(0) : arrayOf(linkedTrees);
                if (simplified) {
                    if (several) {
                        ((ArrayNode) shown).set(i, value);
                    } else {
                        tree.set(name, value); // the relationship's value is the entity it points to
                    }
                } else if (holder instanceof ObjectNode o) {
                    o.set("entity", value);
                }
            }
        }
        return tree;
    }

    private static boolean relationship(AttributeList list) {
        for (Attribute a : list.instances()) {
            if (a.kind() == AttributeKind.RELATIONSHIP) {
                return true;
            }
        }
        return false;
    }

    /** The ids an attribute's Relationship instances point to, in instance order. */
    private static List<String> targets(AttributeList list) {
        List<String> out = new ArrayList<>();
        for (Attribute a : list.instances()) {
            if (a.kind() == AttributeKind.RELATIONSHIP) {
                out.addAll(ids(a.value()));
            }
        }
        return out;
    }

    /** A relationship's object: one id, or an array of them. */
    private static List<String> ids(JsonNode object) {
        List<String> out = new ArrayList<>();
        if (object.isTextual()) {
            out.add(object.asText());
        } else if (object.isArray()) {
            object.forEach(o -> {
                if (o.isTextual()) {
                    out.add(o.asText());
                }
            });
        }
        return out;
    }

    private ObjectNode tree(Entity e, EntityRenderer.Options options) {
        try {
            return (ObjectNode) CorRestJson.mapper().readTree(EntityRenderer.render(e, ctx, options, null));
        } catch (IOException impossible) {
            throw new IllegalStateException("the renderer wrote JSON the mapper cannot read", impossible);
        }
    }

    private ObjectNode withContext(ObjectNode entity) {
        if (bodyContext != null) {
            entity.set("@context", bodyContext);
        }
        return entity;
    }

    private static ArrayNode arrayOf(List<ObjectNode> trees) {
        ArrayNode a = JsonNodeFactory.instance.arrayNode();
        trees.forEach(a::add);
        return a;
    }

}
