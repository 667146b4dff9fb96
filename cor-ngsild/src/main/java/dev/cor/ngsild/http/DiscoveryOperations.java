package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.store.EntityStore.Index;
import dev.cor.rest.CorRestJson;

/**
 * Discovery of what a tenant holds (ETSI GS CIM 009 § 5.7.5-5.7.10): the entity types
 * ({@code GET /types}, {@code details=true}, {@code /types/{type}}) and the attributes
 * ({@code GET /attributes}, {@code details=true}, {@code /attributes/{attr}}). The lists come
 * from the store's index keys - and, unless {@code local=true}, the lists of the sources whose
 * registrations take {@code retrieveEntityTypes} / {@code retrieveAttrTypes} (§ 4.3.6); the
 * details walk this broker's entities of the one type or attribute (or of each, for
 * {@code details=true}). Names are compacted with the request's context; ids stay
 * expanded, as the test suite's expectations have them.
 */
final class DiscoveryOperations {
    private final Config config;
    private final DistributedReads distributed;

    DiscoveryOperations(Config config, DistributedReads distributed) {
        this.config = config;
        this.distributed = distributed;
    }

    void run(Exchange x) {
        LdContext ctx = x.context;
        JsonNode body = switch (x.operation()) {
            case LIST_TYPES -> x.params.bool("details", false) ? typeDetails(x) : typeList(x);
            case RETRIEVE_TYPE -> typeInfo(x, new EntityParser(ctx, config.limits()).typeName(x.route.attribute()));
            case LIST_ATTRIBUTES -> x.params.bool("details", false) ? attributeDetails(x) : attributeList(x);
            case RETRIEVE_ATTRIBUTE -> attributeInfo(x, attributeIri(x));
            default -> throw new IllegalStateException(x.operation().name());
        };
        if (x.accept == MediaType.LD_JSON) {
            if (body instanceof ObjectNode o) {
                o.set("@context", ctx.echo());
            } else {
                body.forEach(n -> ((ObjectNode) n).set("@context", ctx.echo()));
            }
        }
        try {
            x.answer(200, x.accept, CorRestJson.mapper().writeValueAsBytes(body), ctx);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private String attributeIri(Exchange x) {
        String name = x.route.attribute();
        String iri = x.context.expand(name);
        if (iri == null) {
            throw NgsiLdException.notFound("no attribute " + name);
        }
        return iri;
    }

    /** 5.7.5: {"type": "EntityTypeList", "typeList": [names]}. */
    private JsonNode typeList(Exchange x) {
        return nameList(x, Index.TYPE, "EntityTypeList", "typeList");
    }

    /** A list of the index's keys, compacted: {"id": "urn:ngsi-ld:{type}:{uuid}", "type", member: [names]}. */
    private JsonNode nameList(Exchange x, Index index, String type, String member) {
        ObjectNode o = CorRestJson.mapper().createObjectNode();
        o.put("id", "urn:ngsi-ld:" + type + ":" + UUID.randomUUID());
        o.put("type", type);
        ArrayNode list = o.putArray(member);
        TreeSet<String> keys = new TreeSet<>(config.store().keys(x.tenant, index));
        if (x.forwards != null && distributed != null) {
            keys.addAll(distributed.names(x, index == Index.TYPE ? "types" : "attributes", member, index == Index.TYPE));
        }
        for (String k : keys) {
            list.add(index == Index.TYPE ? x.context.compactIri(k) : x.context.compactName(k));
        }
        return o;
    }

    /** 5.7.6: [{"type": "EntityType", "typeName", "attributeNames"}] for every type. */
    private JsonNode typeDetails(Exchange x) {
        ArrayNode out = CorRestJson.mapper().createArrayNode();
        for (String t : new TreeSet<>(config.store().keys(x.tenant, Index.TYPE))) {
            Set<String> attrs = new LinkedHashSet<>();
            config.store().scan(x.tenant, Index.TYPE, t, e -> {
                attrs.addAll(e.attributes().keySet());
                return true;
            });
            ObjectNode o = out.addObject();
            o.put("id", t);
            o.put("type", "EntityType");
            o.put("typeName", x.context.compactIri(t));
            ArrayNode names = o.putArray("attributeNames");
            attrs.forEach(a -> names.add(x.context.compactName(a)));
        }
        return out;
    }

    /** 5.7.7: {"type": "EntityTypeInfo", "typeName", "entityCount", "attributeDetails"}; 404 for a type no entity has. */
    private JsonNode typeInfo(Exchange x, String type) {
        Map<String, Set<String>> kinds = new TreeMap<>();
        int[] count = {0};
        config.store().scan(x.tenant, Index.TYPE, type, e -> {
            count[0]++;
            collectKinds(e, kinds);
            return true;
        });
        if (count[0] == 0) {
            throw NgsiLdException.notFound("no entity of type " + x.route.attribute());
        }
        ObjectNode o = CorRestJson.mapper().createObjectNode();
        o.put("id", type);
        o.put("type", "EntityTypeInfo");
        o.put("typeName", x.context.compactIri(type));
        o.put("entityCount", count[0]);
        ArrayNode details = o.putArray("attributeDetails");
        kinds.forEach((a, k) -> {
            ObjectNode d = details.addObject();
            d.put("id", a);
            d.put("type", "Attribute");
            d.put("attributeName", x.context.compactName(a));
            strings(d.putArray("attributeTypes"), k);
        });
        return o;
    }

    /** 5.7.8: {"type": "AttributeList", "attributeList": [names]}. */
    private JsonNode attributeList(Exchange x) {
        return nameList(x, Index.ATTRIBUTE, "AttributeList", "attributeList");
    }

    /** 5.7.9: [{"type": "Attribute", "attributeName", "typeNames"}] for every attribute. */
    private JsonNode attributeDetails(Exchange x) {
        ArrayNode out = CorRestJson.mapper().createArrayNode();
        for (String a : new TreeSet<>(config.store().keys(x.tenant, Index.ATTRIBUTE))) {
            Set<String> types = new TreeSet<>();
            config.store().scan(x.tenant, Index.ATTRIBUTE, a, e -> {
                types.addAll(e.types());
                return true;
            });
            ObjectNode o = out.addObject();
            o.put("id", a);
            o.put("type", "Attribute");
            o.put("attributeName", x.context.compactName(a));
            compacted(o.putArray("typeNames"), types, x.context);
        }
        return out;
    }

    /** 5.7.10: {"type": "Attribute", "attributeName", "attributeCount", "attributeTypes", "typeNames"}; 404 when none has it. */
    private JsonNode attributeInfo(Exchange x, String attr) {
        Set<String> kinds = new TreeSet<>();
        Set<String> types = new TreeSet<>();
        int[] count = {0};
        config.store().scan(x.tenant, Index.ATTRIBUTE, attr, e -> {
            AttributeList l = e.attributes().get(attr);
            count[0]++;
            for (Attribute i : l.instances()) {
                kinds.add(i.kind().typeName());
            }
            types.addAll(e.types());
            return true;
        });
        if (count[0] == 0) {
            throw NgsiLdException.notFound("no entity has attribute " + x.route.attribute());
        }
        ObjectNode o = CorRestJson.mapper().createObjectNode();
        o.put("id", attr);
        o.put("type", "Attribute");
        o.put("attributeName", x.context.compactName(attr));
        o.put("attributeCount", count[0]);
        strings(o.putArray("attributeTypes"), kinds);
        compacted(o.putArray("typeNames"), types, x.context);
        return o;
    }

    private static void collectKinds(Entity e, Map<String, Set<String>> kinds) {
        for (Map.Entry<String, AttributeList> a : e.attributes().entrySet()) {
            Set<String> k = kinds.computeIfAbsent(a.getKey(), n -> new TreeSet<>());
            for (Attribute i : a.getValue().instances()) {
                k.add(i.kind().typeName());
            }
        }
    }

    private static void strings(ArrayNode out, Collection<String> values) {
        values.forEach(out::add);
    }

    private static void compacted(ArrayNode out, Collection<String> types, LdContext ctx) {
        List<String> names = new ArrayList<>(types.size());
        types.forEach(t -> names.add(ctx.compactIri(t)));
        names.forEach(out::add);
    }
}
