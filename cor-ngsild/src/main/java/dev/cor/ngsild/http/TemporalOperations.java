package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeInput;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityInput;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.EntityParser.Mode;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.query.GeoQuery;
import dev.cor.ngsild.query.QueryExpression;
import dev.cor.ngsild.query.ScopeQuery;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.store.TemporalEntity;
import dev.cor.ngsild.store.TemporalStore;

/**
 * The temporal API (ETSI GS CIM 009 § 5.6.11-5.6.16 and § 5.7.3-5.7.4, bound in § 6.18-6.22): a
 * client's provision of instances - Create or Update Temporal Evolution, Add Attributes, and the
 * deletions and the modification of one instance - and the reads, which {@link TemporalReads}
 * serves. It works on the store's temporal side ({@link Config#temporal()}); without one every
 * temporal operation answers 501. Shared by every loop and worker; state lives in the request.
 */
final class TemporalOperations {
    private final Config config;
    private final TemporalReads reads;

    /** {@code distributed}: the forwards to context sources, or {@code null} when the broker forwards nothing. */
    TemporalOperations(Config config, DistributedTemporal distributed) {
        this.config = config;
        this.reads = new TemporalReads(config, distributed);
    }

    /** The store's temporal side, or 501: this broker keeps no history. */
    static TemporalStore store(Config config) {
        if (config.temporal() == null) {
            throw new NgsiLdException(ErrorType.NOT_IMPLEMENTED, "this broker keeps no history (started with"
                    + " --temporal off, or over a store without a temporal side)");
        }
        return config.temporal();
    }

    void run(Exchange x) {
        switch (x.operation()) {
            case CREATE_TEMPORAL -> create(x);
            case APPEND_TEMPORAL -> append(x);
            case DELETE_TEMPORAL -> delete(x);
            case DELETE_TEMPORAL_ATTRIBUTE -> deleteAttribute(x);
            case MODIFY_INSTANCE -> modifyInstance(x);
            case DELETE_INSTANCE -> deleteInstance(x);
            case RETRIEVE_TEMPORAL -> reads.retrieve(x);
            case QUERY_TEMPORAL -> reads.query(x);
            case QUERY_TEMPORAL_POST -> reads.queryPost(x);
            default -> throw new IllegalStateException("not a temporal operation: " + x.operation());
        }
    }

    private EntityParser parser(Exchange x) {
        return new EntityParser(x.context, config.limits());
    }

    private long now() {
        return config.clock().millis();
    }

    private static JsonNode objectBody(Exchange x) {
        if (!x.body.isObject()) {
            throw NgsiLdException.invalid("the body is a JSON object (a temporal evolution or a fragment of one), not "
                    + (x.body.isArray() ? "an array" : x.body.getNodeType().toString().toLowerCase(java.util.Locale.ROOT)));
        }
        return x.body;
    }

    // ---------------------------------------------------------------- provision

    /**
     * {@code POST /temporal/entities} (§ 5.6.11): the instances of the body added to the entity's
     * evolution - 201 with its Location when the evolution is new, 204 when it grew.
     */
    void create(Exchange x) {
        TemporalStore ts = store(config);
        EntityParser parser = parser(x);
        JsonNode body = objectBody(x);
        EntityInput head = head(parser, body, true);
        List<TemporalInstance> instances = instances(parser, body, now());
        boolean existed = ts.entity(x.tenant, head.id()) != null;
        ts.record(x.tenant, head.id(), head.types(), head.scopes(), replacing(ts, x.tenant, head.id(), instances),
                TemporalInstance.NO_TIME);
        if (existed) {
            x.noContent();
        } else {
            x.created("temporal/entities", head.id());
        }
    }

    /** {@code POST /temporal/entities/{id}/attrs} (§ 5.6.12): instances added to an evolution that exists. */
    void append(Exchange x) {
        TemporalStore ts = store(config);
        String id = EntityOperations.entityId(x);
        EntityParser parser = parser(x);
        JsonNode body = objectBody(x);
        EntityInput head = head(parser, body, false);
        if (head.id() != null && !head.id().equals(id)) {
            throw NgsiLdException.badData("the body's id " + head.id() + " is not the entity's id " + id);
        }
        List<TemporalInstance> instances = instances(parser, body, now());
        if (instances.isEmpty()) {
            throw NgsiLdException.badData("the body adds no attribute instance");
        }
        if (ts.entity(x.tenant, id) == null) {
            throw NgsiLdException.notFound("no temporal evolution of entity " + id);
        }
        ts.record(x.tenant, id, head.types(), head.scopes(), replacing(ts, x.tenant, id, instances), TemporalInstance.NO_TIME);
        x.noContent();
    }

    /** {@code DELETE /temporal/entities/{id}} (§ 5.6.13). */
    void delete(Exchange x) {
        TemporalStore ts = store(config);
        String id = EntityOperations.entityId(x);
        TemporalEntity e = ts.entity(x.tenant, id);
        String type = x.params.get("type");
        if (e != null && type != null && !TypeSelection.parse(type, parser(x)::typeName).matches(e.types())) {
            throw NgsiLdException.notFound("the temporal evolution of entity " + id + " is not of type " + type);
        }
        if (e == null || !ts.deleteEntity(x.tenant, id)) {
            throw NgsiLdException.notFound("no temporal evolution of entity " + id);
        }
        x.noContent();
    }

    /** {@code DELETE /temporal/entities/{id}/attrs/{attrId}} (§ 5.6.14): one datasetId's instances, or all with deleteAll. */
    void deleteAttribute(Exchange x) {
        TemporalStore ts = store(config);
        String id = EntityOperations.entityId(x);
        String name = parser(x).attributeName(x.route.attribute());
        boolean all = x.params.bool("deleteAll", false);
        String datasetId = x.params.get("datasetId");
        if (datasetId != null && !Syntax.isUri(datasetId)) {
            throw NgsiLdException.badData("datasetId '" + datasetId + "' is not a URI");
        }
        if (ts.entity(x.tenant, id) == null) {
            throw NgsiLdException.notFound("no temporal evolution of entity " + id);
        }
        if (!ts.deleteAttribute(x.tenant, id, name, datasetId, all)) {
            throw NgsiLdException.notFound("the temporal evolution of entity " + id + " has no attribute "
                    + x.route.attribute() + (all ? "" : datasetId != null ? " with datasetId " + datasetId : " without datasetId"));
        }
        x.noContent();
    }

    /**
     * {@code PATCH /temporal/entities/{id}/attrs/{attrId}/{instanceId}} (§ 5.6.15): the instance
     * replaced by the body's, which keeps its id; its modifiedAt is now.
     */
    void modifyInstance(Exchange x) {
        TemporalStore ts = store(config);
        String id = EntityOperations.entityId(x);
        String instanceId = instanceId(x);
        EntityParser parser = parser(x);
        String name = parser.attributeName(x.route.attribute());
        JsonNode body = objectBody(x);
        if (body.has("@context")) {
            ObjectNode copy = body.deepCopy();
            copy.remove("@context");
            body = copy;
        }
        List<AttributeInput> in = parser.temporalInstances(x.route.attribute(), body);
        long now = now();
        Attribute a = EntityEditor.attribute(name, in.get(0), now);
        if (!ts.modifyInstance(x.tenant, id, name, instanceId, a)) {
            throw NgsiLdException.notFound("entity " + id + " has no instance " + instanceId + " of " + x.route.attribute());
        }
        x.noContent();
    }

    /** {@code DELETE /temporal/entities/{id}/attrs/{attrId}/{instanceId}} (§ 5.6.16). */
    void deleteInstance(Exchange x) {
        TemporalStore ts = store(config);
        String id = EntityOperations.entityId(x);
        String instanceId = instanceId(x);
        String name = parser(x).attributeName(x.route.attribute());
        if (!ts.deleteInstance(x.tenant, id, name, instanceId)) {
            throw NgsiLdException.notFound("entity " + id + " has no instance " + instanceId + " of " + x.route.attribute());
        }
        x.noContent();
    }

    private static String instanceId(Exchange x) {
        String i = x.route.instanceId();
        if (!Syntax.isUri(i)) {
            throw NgsiLdException.badData("the instanceId '" + i + "' is not a URI");
        }
        return i;
    }

    /**
     * A provided instance is an observation: one of the same attribute, datasetId and observedAt
     * as an instance the evolution holds replaces that one (which keeps its id), rather than
     * being a second (the suite's 008_01; Stellio does the same). Applies those replacements and
     * answers the instances left to record.
     */
    private static List<TemporalInstance> replacing(TemporalStore ts, String tenant, String id, List<TemporalInstance> in) {
        if (ts.entity(tenant, id) == null) {
            return in;
        }
        List<TemporalInstance> rest = new ArrayList<>(in.size());
        for (TemporalInstance i : in) {
            if (i.observedAt() != TemporalInstance.NO_TIME) {
                String d = i.value().datasetId();
                List<TemporalInstance> same = ts.instances(tenant, id, i.attribute(), new InstanceQuery(TimeProperty.OBSERVED_AT,
                        i.observedAt(), i.observedAt() + 1, d == null ? InstanceQuery.DEFAULT_DATASET : d, 0), 1);
                if (!same.isEmpty() && ts.modifyInstance(tenant, id, i.attribute(), same.get(0).instanceId(), i.value())) {
                    continue;
                }
            }
            rest.add(i);
        }
        return rest;
    }

    /** The entity's own members of a temporal body - id, type, scope - checked as an entity's are. */
    private static EntityInput head(EntityParser parser, JsonNode body, boolean requireIdAndType) {
        ObjectNode head = dev.cor.rest.CorRestJson.mapper().createObjectNode();
        body.properties().forEach(m -> {
            if (EntityParser.isEntityMember(m.getKey()) && !m.getKey().equals("@context")) {
                head.set(m.getKey(), m.getValue());
            }
        });
        return parser.entity(head, requireIdAndType, Mode.WHOLE);
    }

    /** The attribute instances of a temporal body, in the body's order, each made at {@code now}. */
    private static List<TemporalInstance> instances(EntityParser parser, JsonNode body, long now) {
        Map<String, List<TemporalInstance>> byName = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> m : body.properties()) {
            String key = m.getKey();
            if (EntityParser.isEntityMember(key)) {
                continue;
            }
            String name = parser.attributeName(key);
            if (byName.containsKey(name)) {
                throw NgsiLdException.badData("attribute '" + key + "' is given twice (two names expand to " + name + ")");
            }
            List<TemporalInstance> l = new ArrayList<>();
            for (AttributeInput i : parser.temporalInstances(key, m.getValue())) {
                l.add(EntityEditor.temporalInstance(name, i, now));
            }
            byName.put(name, l);
        }
        List<TemporalInstance> out = new ArrayList<>();
        byName.values().forEach(out::addAll);
        return out;
    }

    /** The attributes of {@code head} that a read shows, in name order. */
    static Set<String> shown(TemporalEntity head, java.util.function.Predicate<String> shows) {
        Set<String> out = new TreeSet<>();
        for (String a : head.attributes()) {
            if (shows.test(a)) {
                out.add(a);
            }
        }
        return out;
    }

    /** The pieces of a query that {@link TemporalReads} runs, parsed once. */
    record Filter(List<EntityQuery.Selector> selectors, List<String> attrs, QueryExpression q, GeoQuery geo, ScopeQuery scope) {
        Filter {
            if (q != null && q.readsLinkedEntities()) {
                // 5.7.4.4: a temporal read retrieves no linked entities, as for pick and omit (TP 5741_01_03)
                throw NgsiLdException.badData("q=" + q + " reads a linked entity, which a temporal query does not retrieve");
            }
        }
    }
}
