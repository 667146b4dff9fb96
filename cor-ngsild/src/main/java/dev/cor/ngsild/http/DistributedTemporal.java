package dev.cor.ngsild.http;

import static dev.cor.ngsild.http.Forwards.compactNames;
import static dev.cor.ngsild.http.Forwards.compactTypes;
import static dev.cor.ngsild.http.Forwards.param;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Coverage;
import dev.cor.ngsild.federation.Forwarder;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeInput;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityInput;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.model.TemporalInstance;

/**
 * The temporal reads of a request that context source registrations match (§ 5.7.3.4, § 5.7.4.4
 * with § 4.3.6): every registration that names {@code retrieveTemporal} (a retrieval) or
 * {@code queryTemporal} (a query) - the operation groups of Table 4.20-2 hold neither - is asked
 * at once, as the forwards of the current state are ({@link Forwards#fanOut}: coroutines of the
 * loop, each with its deadline), for the normalized instances of the request's window and lastN;
 * what they answer is merged with this broker's own by entity and attribute, and the
 * representation (simplified, aggregated) is made here over the merge. A source that fails or
 * answers what is not a temporal evolution leaves an {@code NGSILD-Warning}, and the others are
 * answered. Shared by every loop and worker.
 */
final class DistributedTemporal {
    /** What the temporal parameters forward as they are: the window, the time compared, lastN, datasetId. */
    private static final List<String> WINDOW = List.of("timerel", "timeAt", "endTimeAt", "timeproperty", "lastN", "datasetId");

    private final Config config;
    private final Forwards forwards;
    private final DistributedPlan plan;

    DistributedTemporal(Config config, Forwards forwards, DistributedPlan plan) {
        this.config = config;
        this.forwards = forwards;
        this.plan = plan;
    }

    /**
     * One entity's evolution as a source answered it.
     *
     * @param types      its expanded types
     * @param attributes by expanded name, its instances
     */
    record Remote(Set<String> types, Map<String, List<TemporalInstance>> attributes) {
    }

    /**
     * Asks the sources registered for the request: for entity {@code id} (a retrieval), or for what
     * {@code p} selects ({@code id == null}: a query of {@code types}, at most {@code entities}
     * entities from each). By entity id, what they answered, merged across sources.
     */
    Map<String, Remote> fetch(Exchange x, QueryParams p, String id, Set<String> types, Set<String> attrs, int entities) {
        Set<String> want = attrs == null ? Set.of() : attrs; // empty: every attribute
        List<Registration> regs = plan.reach(x, id, id == null ? p.get("idPattern") : null, types, want);
        List<Forwarder.Outgoing> outs = new ArrayList<>(regs.size());
        for (Registration r : regs) {
            Set<String> ask = id == null ? (want.isEmpty() ? null : want) : Coverage.narrow(Coverage.provided(r, id, types), want);
            if (ask != null && ask.isEmpty()) {
                continue;
            }
            StringBuilder q = new StringBuilder();
            for (String w : WINDOW) {
                if (p.has(w)) {
                    param(q, w, p.get(w));
                }
            }
            param(q, "attrs", compactNames(r, ask));
            if (id != null) {
                if (!types.isEmpty()) {
                    param(q, "type", compactTypes(r, types));
                }
                outs.add(new Forwarder.Outgoing(r, forwards.request(x, r, "GET", "temporal/entities/" + PercentEncoding.encode(id),
                        q, null)));
            } else {
                if (!types.isEmpty()) {
                    param(q, "type", compactTypes(r, types));
                }
                for (String m : List.of("id", "idPattern", "q", "scopeQ", "georel", "geometry", "coordinates", "geoproperty")) {
                    if (p.has(m)) {
                        param(q, m, p.get(m));
                    }
                }
                param(q, "limit", Integer.toString(Math.max(1, Math.min(entities, config.limits().maxLimit()))));
                outs.add(new Forwarder.Outgoing(r, forwards.request(x, r, "GET", "temporal/entities", q, null)));
            }
        }
        Map<String, Remote> out = new LinkedHashMap<>();
        for (Forwarder.Answer a : forwards.fanOut(x, outs)) {
            if (!a.ok() || a.body() == null) {
                continue; // the fan-out has warned
            }
            JsonNode body = a.body();
            List<JsonNode> each = new ArrayList<>();
            if (body.isArray()) {
                body.forEach(each::add);
            } else {
                each.add(body);
            }
            for (JsonNode e : each) {
                try {
                    String eid = add(out, a.registration(), e);
                    if (id != null && !id.equals(eid)) {
                        Forwards.warn(x, forwards.forwarder().invalid(a, "answered another entity than " + id));
                        out.remove(eid);
                    }
                } catch (NgsiLdException | IllegalArgumentException e2) {
                    Forwards.warn(x, forwards.forwarder().invalid(a, "answered what is not a temporal evolution"));
                }
            }
        }
        return out;
    }

    /** Reads one temporal entity of a source's answer into {@code out}; its id. */
    private String add(Map<String, Remote> out, Registration r, JsonNode e) {
        if (!e.isObject()) {
            throw NgsiLdException.badData("not an object");
        }
        EntityParser parser = new EntityParser(r.context(), config.limits());
        com.fasterxml.jackson.databind.node.ObjectNode head = dev.cor.rest.CorRestJson.mapper().createObjectNode();
        for (String m : List.of("id", "type")) {
            if (e.has(m)) {
                head.set(m, e.get(m));
            }
        }
        EntityInput in = parser.entity(head, true, EntityParser.Mode.WHOLE);
        Remote remote = out.computeIfAbsent(in.id(), k -> new Remote(new LinkedHashSet<>(), new LinkedHashMap<>()));
        remote.types().addAll(in.types());
        long now = config.clock().millis();
        for (Map.Entry<String, JsonNode> m : e.properties()) {
            if (EntityParser.isEntityMember(m.getKey())) {
                continue;
            }
            String name = parser.attributeName(m.getKey());
            JsonNode value = m.getValue();
            List<JsonNode> items = new ArrayList<>();
            if (value.isArray()) {
                value.forEach(items::add);
            } else {
                items.add(value);
            }
            List<TemporalInstance> list = remote.attributes().computeIfAbsent(name, k -> new ArrayList<>());
            for (JsonNode item : items) {
                AttributeInput i = parser.temporalInstances(m.getKey(), item).get(0);
                Attribute a = EntityEditor.attribute(name, i, now);
                long created = time(item, "createdAt", now);
                long modified = time(item, "modifiedAt", created);
                a = new Attribute(a.kind(), a.value(), a.datasetId(), a.observedAt(), a.unitCode(), a.valueType(), a.objectType(),
                        a.sub(), created, modified);
                long deleted = time(item, "deletedAt", TemporalInstance.NO_TIME);
                String instanceId = item.path("instanceId").isTextual() ? item.get("instanceId").asText() : null;
                list.add(new TemporalInstance(name, a, instanceId, TemporalInstance.observedMillis(a), deleted));
            }
        }
        return in.id();
    }

    private static long time(JsonNode item, String member, long dflt) {
        JsonNode t = item.get(member);
        if (t == null || !t.isTextual()) {
            return dflt;
        }
        long ms = Syntax.epochMillis(t.asText());
        return ms == Syntax.NOT_A_DATE_TIME ? dflt : ms;
    }
}
