package dev.cor.ngsild.http;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.http.TemporalOperations.Filter;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TemporalRenderer;
import dev.cor.ngsild.model.TemporalRenderer.Evolution;
import dev.cor.ngsild.model.TemporalRenderer.Form;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.query.AggregatedPeriod;
import dev.cor.ngsild.query.GeoQuery;
import dev.cor.ngsild.query.QueryExpression;
import dev.cor.ngsild.query.ScopeQuery;
import dev.cor.ngsild.store.AggregationGroups;
import dev.cor.ngsild.store.DatasetAggregate;
import dev.cor.ngsild.store.InstanceQuery;
import dev.cor.ngsild.store.TemporalEntity;
import dev.cor.ngsild.store.TemporalStore;
import dev.cor.rest.CorRestJson;

/**
 * The temporal reads: Retrieve Temporal Evolution of an Entity (§ 5.7.3) and Query Temporal
 * Evolution of Entities (§ 5.7.4, by GET and by POST), in the normalized, concise, simplified
 * ({@code temporalValues}) and aggregated ({@code aggregatedValues}) representations.
 * <p>
 * A query selects entities as Query Entities does - ids, an id pattern, types, attributes, q, a
 * geo-query and a scope query - but q and the geo-query are checked against the attribute
 * instances in the temporal window (§ 5.7.4.4): an entity matches when instances of that window
 * satisfy them. The instances of one attribute an answer carries are bounded
 * ({@link dev.cor.ngsild.policy.NgsildLimits#temporalInstances} in all); when the bound cuts some off the answer is 206 with a
 * {@code Content-Range} in date-times (§ 6.3.10). Shared by every loop and worker.
 */
final class TemporalReads {
    private final Config config;
    /** The forwards to context sources, or {@code null}: this broker forwards nothing. */
    private final DistributedTemporal distributed;

    /** What an attribute holds in the entity a query's test sees when only its presence is read. */
    private static final AttributeList PRESENT = AttributeList.of(List.of(new Attribute(dev.cor.ngsild.model.AttributeKind.PROPERTY,
            com.fasterxml.jackson.databind.node.NullNode.getInstance(), null, null, null, null, null, null, 0, 0)));

    TemporalReads(Config config, DistributedTemporal distributed) {
        this.config = config;
        this.distributed = distributed;
    }

    private EntityParser parser(Exchange x) {
        return new EntityParser(x.context, config.limits());
    }

    /**
     * Lets the loop serve everyone else now and then while one read goes through a long history:
     * inside a coroutine, once {@link #SLICE_NANOS} of work have passed since the last turn, the
     * coroutine sleeps for no time ({@code CorCo.sleep(0)}: the loop runs one round); on a worker
     * it does nothing. Called between entities and between attributes, never inside a store's lock.
     */
    private static final class Pace {
        static final long SLICE_NANOS = 1_000_000;
        private final boolean coroutine = dev.cor.base.CorCo.current() != null;
        private long since = System.nanoTime();

        void maybeYield() {
            if (coroutine && System.nanoTime() - since > SLICE_NANOS) {
                dev.cor.base.CorCo.sleep(0);
                since = System.nanoTime();
            }
        }
    }

    // ---------------------------------------------------------------- retrieve

    /** {@code GET /temporal/entities/{id}} (§ 5.7.3). */
    void retrieve(Exchange x) {
        TemporalStore ts = TemporalOperations.store(config);
        TemporalAsked asked = TemporalAsked.of(x, x.params, parser(x));
        String id = EntityOperations.entityId(x);
        TemporalEntity head = ts.entity(x.tenant, id);
        String type = x.params.get("type");
        TypeSelection types = type == null ? null : TypeSelection.parse(type, parser(x)::typeName);
        if (head != null && types != null && !types.matches(head.types())) {
            head = null;
        }
        DistributedTemporal.Remote remote = null;
        if (x.forwards != null && distributed != null) {
            Set<String> asking = types != null ? types.types() : head != null ? new LinkedHashSet<>(head.types()) : Set.of();
            remote = distributed.fetch(x, x.params, id, asking, attrsAsked(asked), 1).get(id);
        }
        if (head == null && remote == null) {
            throw NgsiLdException.notFound(type == null ? "no temporal evolution of entity " + id
                    : "no temporal evolution of entity " + id + " of type " + type);
        }
        TemporalPage.Reach reach = TemporalPage.Reach.of(asked, config.limits().temporalInstances());
        Evolution e = evolution(ts, x.tenant, id, head, remote, asked, reach);
        if (x.params.has("attrs") && e.attributes().isEmpty() && e.aggregated().isEmpty() && (head == null
                || TemporalOperations.shown(head, asked.projection().options::shows).isEmpty())) {
            throw NgsiLdException.notFound("the temporal evolution of entity " + id + " has none of the attributes "
                    + x.params.get("attrs"));
        }
        if ((x.params.has("pick") || x.params.has("omit")) && !asked.options().showId() && !asked.options().showType()
                && !(asked.options().showScope() && !e.scopes().isEmpty()) && e.attributes().isEmpty() && e.aggregated().isEmpty()) {
            throw NgsiLdException.notFound("nothing of the temporal evolution of entity " + id + " is left after pick and omit");
        }
        List<Evolution> one = new ArrayList<>(List.of(e));
        TemporalPage.Cut cut = TemporalPage.cut(one, asked, reach, config.limits().temporalInstances());
        boolean bodyContext = x.accept == MediaType.LD_JSON;
        byte[] bytes = TemporalRenderer.render(one.get(0), x.context, asked.options(), bodyContext ? x.context.echo() : null);
        TemporalPage.answer(x, asked, cut, bytes);
    }

    /** The expanded attributes a request names (attrs or pick), or {@code null}: all. */
    private static Set<String> attrsAsked(TemporalAsked asked) {
        return asked.projection().options.attrs();
    }

    // ---------------------------------------------------------------- query

    /** {@code GET /temporal/entities} (§ 5.7.4). */
    void query(Exchange x) {
        QueryParams p = x.params;
        EntityParser parser = parser(x);
        String type = p.get("type");
        boolean local = p.bool("local", false);
        boolean geo = p.has("georel") || p.has("geometry") || p.has("coordinates") || p.has("geoQ");
        if (!local && type == null && !p.has("attrs") && !p.has("idPattern") && !p.has("q") && !geo) {
            throw NgsiLdException.badData("a temporal query names at least one of type, attrs, idPattern, q or geoQ"
                    + (p.has("id") ? " (id alone is not enough)" : "") + ", or is local=true");
        }
        List<EntityQuery.Selector> selectors = new ArrayList<>(1);
        List<String> ids = p.list("id");
        if (!ids.isEmpty() || p.has("idPattern") || type != null) {
            selectors.add(EntityOperations.selector(parser, ids, p.get("idPattern"), type));
        }
        Filter f = new Filter(selectors, EntityOperations.attributes(parser, p.list("attrs")),
                p.has("q") ? QueryExpression.parse(p.get("q"), x.context, Set.copyOf(p.list("expandValues"))) : null,
                EntityOperations.geoQuery(x, p), p.has("scopeQ") ? ScopeQuery.parse(p.get("scopeQ")) : null);
        run(x, p, f);
    }

    /**
     * {@code POST /temporal/entityOperations/query} (§ 5.7.4, 6.22): a Query body with its temporalQ,
     * and the aggregation it asks for ({@link BodyAggregation}) - answered as the GET with the same
     * parameters is.
     */
    void queryPost(Exchange x) {
        JsonNode body = x.body;
        if (!body.isObject() || !"Query".equals(body.path("type").asText())) {
            throw NgsiLdException.badData("the body is a Query: a JSON object whose type is \"Query\"");
        }
        EntityParser parser = parser(x);
        List<String> attrTerms = EntityOperations.strings(body.get("attrs"), "attrs");
        JsonNode entities = body.get("entities");
        String q = EntityOperations.optionalText(body, "q");
        String scopeQ = EntityOperations.optionalText(body, "scopeQ");
        JsonNode geoQ = body.get("geoQ");
        if (entities == null && attrTerms.isEmpty() && q == null && geoQ == null && !x.params.bool("local", false)) {
            throw NgsiLdException.badData("a Query names entities, attrs, q or geoQ");
        }
        List<EntityQuery.Selector> selectors = EntityOperations.selectors(parser, entities);
        QueryParams params = x.params;
        if (!attrTerms.isEmpty()) {
            params = params.with("attrs", String.join(",", attrTerms));
        }
        JsonNode temporalQ = body.get("temporalQ");
        if (temporalQ != null) {
            if (!temporalQ.isObject()) {
                throw NgsiLdException.badData("temporalQ is a TemporalQuery (an object, § 5.2.21)");
            }
            for (String m : List.of("timerel", "timeAt", "endTimeAt", "timeproperty")) {
                JsonNode v = temporalQ.get(m);
                if (v != null) {
                    params = params.with(m, EntityOperations.textOf(v, "temporalQ." + m));
                }
            }
            JsonNode lastN = temporalQ.get("lastN");
            if (lastN != null) {
                params = params.with("lastN", lastN.asText());
            }
        }
        for (String member : List.of("pick", "omit", "lang", "datasetId")) {
            JsonNode v = body.get(member);
            if (v != null) {
                params = params.with(member, v.isArray() ? String.join(",", EntityOperations.strings(v, member))
                        : EntityOperations.textOf(v, member));
            }
        }
        params = BodyAggregation.into(body, params);
        Filter f = new Filter(selectors, EntityOperations.attributes(parser, attrTerms),
                q == null ? null : QueryExpression.parse(PercentEncoding.bodyQ(q), x.context, Set.of()),
                geoQ == null ? null : GeoQuery.parse(geoQ, x.context), scopeQ == null ? null : ScopeQuery.parse(scopeQ));
        run(x, params, f);
    }

    private void run(Exchange x, QueryParams p, Filter f) {
        if (p.has("csf")) {
            Csf.parse(p.get("csf"), x.context); // BadRequestData when malformed, as for the entities (TP 5741_01_05)
        }
        TemporalStore ts = TemporalOperations.store(config);
        TemporalAsked asked = TemporalAsked.of(x, p, parser(x));
        Page page = Page.of(p, config.limits());
        boolean descending = descendingById(p.get("orderBy"));
        EntityQuery test = new EntityQuery(f.selectors(), f.attrs(), f.q(), f.geo(), f.scope());
        boolean windowed = !asked.window().unbounded();
        List<TemporalEntity> hits = new ArrayList<>();
        int[] matched = {0};
        Pace pace = new Pace();
        ts.entities(x.tenant, descending, head -> {
            pace.maybeYield();
            if (matches(ts, x.tenant, head, asked, f, test, windowed)) {
                if (matched[0] >= page.offset() && hits.size() < page.limit()) {
                    hits.add(head);
                }
                matched[0]++;
            }
            return page.count() || (long) matched[0] <= (long) page.offset() + page.limit();
        });
        Map<String, DistributedTemporal.Remote> remote = Map.of();
        if (x.forwards != null && distributed != null) {
            remote = distributed.fetch(x, p, null, selectorTypes(f), f.attrs().isEmpty() ? null : Set.copyOf(f.attrs()),
                    page.offset() + page.limit() + 1);
        }
        List<Evolution> out = new ArrayList<>(hits.size());
        TemporalPage.Reach reach = TemporalPage.Reach.of(asked, config.limits().temporalInstances());
        if (remote.isEmpty()) {
            for (TemporalEntity head : hits) {
                pace.maybeYield();
                out.add(evolution(ts, x.tenant, head.id(), head, null, asked, reach));
            }
        } else {
            // the local matches and the sources' answers, merged by id and paged together, in id order
            java.util.TreeMap<String, TemporalEntity> all = new java.util.TreeMap<>();
            ts.entities(x.tenant, head -> {
                pace.maybeYield();
                if (matches(ts, x.tenant, head, asked, f, test, windowed)) {
                    all.put(head.id(), head);
                }
                return true;
            });
            java.util.TreeSet<String> ids = new java.util.TreeSet<>(all.keySet());
            ids.addAll(remote.keySet());
            matched[0] = ids.size();
            int k = 0;
            for (String id : descending ? ids.descendingSet() : ids) {
                if (k >= page.offset() && out.size() < page.limit()) {
                    out.add(evolution(ts, x.tenant, id, all.get(id), remote.get(id), asked, reach));
                }
                k++;
            }
        }
        TemporalPage.Cut cut = TemporalPage.cut(out, asked, reach, config.limits().temporalInstances());
        boolean bodyContext = x.accept == MediaType.LD_JSON;
        byte[] bytes = TemporalRenderer.renderAll(out, x.context, asked.options(), bodyContext ? x.context.echo() : null);
        if (page.count()) {
            x.request.responseHeaders().set("NGSILD-Results-Count", Integer.toString(matched[0]));
        }
        TemporalPage.answer(x, asked, cut, bytes);
        if (x.operation() == Operation.QUERY_TEMPORAL) {
            page.links(x, "temporal/entities", (long) matched[0] > (long) page.offset() + page.limit());
        }
    }

    /**
     * Whether a temporal query's {@code orderBy} asks for descending ids. V1.9.1 § 5.7.4.4 lets a
     * temporal query order by {@code id} alone ({@code ;asc}, the default, or {@code ;desc}, § 4.23):
     * anything else is BadRequestData. Without it the answer is in ascending id order, as the
     * store visits it.
     */
    static boolean descendingById(String orderBy) {
        if (orderBy == null) {
            return false;
        }
        return switch (orderBy) {
            case "id", "id;asc" -> false;
            case "id;desc" -> true;
            default -> throw NgsiLdException.badData("orderBy: a temporal query orders by id alone, optionally ;asc or ;desc"
                    + " (§ 5.7.4.4)");
        };
    }

    /**
     * Whether the entity of {@code head} is selected: its id and types by the selectors, its
     * instances in the window by attrs, q, the geo-query and the scope query (an entity made of
     * every such instance, each attribute holding them all: a term holds when one of them
     * satisfies it). With a window, an entity without any instance in it is not selected.
     */
    private boolean matches(TemporalStore ts, String tenant, TemporalEntity head, TemporalAsked asked, Filter f, EntityQuery test,
            boolean windowed) {
        boolean readsInstances = windowed || !f.attrs().isEmpty() || f.q() != null || f.geo() != null;
        Map<String, AttributeList> attributes = new LinkedHashMap<>();
        if (readsInstances) {
            InstanceQuery window = new InstanceQuery(asked.window().property(), asked.window().from(), asked.window().to(),
                    null, 0);
            // without q and a geo-query, an attribute's presence in the window is all the test reads:
            // its first instance there tells, unless that one is not shown (a deletion, another dataset)
            boolean presence = f.q() == null && f.geo() == null;
            for (String a : head.attributes()) {
                if (presence && asked.datasetIds() == null) {
                    if (ts.shows(tenant, head.id(), a, window)) {
                        attributes.put(a, PRESENT);
                    }
                    continue;
                }
                List<Attribute> in = new ArrayList<>();
                List<TemporalInstance> got = null;
                if (presence) {
                    got = ts.instances(tenant, head.id(), a, window, 1);
                    if (!got.isEmpty() && (got.get(0).deleted() || !admitsDataset(asked, got.get(0)))) {
                        got = null;
                    }
                }
                if (got == null) {
                    got = ts.instances(tenant, head.id(), a, window, Integer.MAX_VALUE);
                }
                for (TemporalInstance i : got) {
                    if (!i.deleted() && admitsDataset(asked, i)) {
                        in.add(i.value());
                    }
                }
                if (!in.isEmpty()) {
                    attributes.put(a, AttributeList.of(in));
                }
            }
            if (windowed && attributes.isEmpty()) {
                return false;
            }
        }
        Entity e = new Entity(head.id(), head.types(), head.scopes(), attributes, head.createdAt(), head.modifiedAt());
        return test.test(e);
    }

    private static boolean admitsDataset(TemporalAsked asked, TemporalInstance i) {
        if (asked.datasetIds() == null) {
            return true;
        }
        String d = i.value().datasetId();
        return asked.datasetIds().contains(d == null ? InstanceQuery.DEFAULT_DATASET : d);
    }

    // ---------------------------------------------------------------- one entity's evolution

    /**
     * One entity's evolution as the request asks to see it: this broker's ({@code head}, or
     * {@code null}) and what its sources answered ({@code remote}, or {@code null}), merged by
     * attribute - each instance once (by instanceId), in time order, lastN taken over the merge.
     */
    private Evolution evolution(TemporalStore ts, String tenant, String id, TemporalEntity head, DistributedTemporal.Remote remote,
            TemporalAsked asked, TemporalPage.Reach reach) {
        Representation rep = asked.projection();
        int bound = config.limits().temporalInstances();
        Set<String> names = new java.util.TreeSet<>();
        if (head != null) {
            names.addAll(TemporalOperations.shown(head, rep.options::shows));
        }
        if (remote != null) {
            remote.attributes().keySet().stream().filter(rep.options::shows).forEach(names::add);
        }
        Map<String, List<TemporalInstance>> attributes = new LinkedHashMap<>();
        Map<String, JsonNode> aggregated = new LinkedHashMap<>();
        Map<String, AttributeKind> kinds = new LinkedHashMap<>();
        for (String a : names) {
            List<TemporalInstance> there = remote == null ? null : remote.attributes().get(a);
            InstanceQuery window = reach == null ? asked.window() : reach.narrowed(asked.window());
            boolean here = head != null && head.attributes().contains(a);
            if (asked.aggregation() != null && there == null) {
                // the store aggregates: it may take the summaries of its chunks instead of reading them
                List<DatasetAggregate> d = here ? ts.aggregate(tenant, id, a, window, asked.datasetIds(), asked.aggregation())
                        : List.of();
                if (!d.isEmpty()) {
                    aggregated.put(a, aggregated(d));
                }
                continue;
            }
            List<TemporalInstance> got = !here ? new ArrayList<>()
                    : ts.instances(tenant, id, a, window,
                            // one more than the answer may carry tells that the bound cuts this attribute
                            asked.aggregation() != null || there != null ? Integer.MAX_VALUE : bound + 1);
            boolean beyond = false; // whether the narrowed read left instances of this attribute out: the answer is cut
            InstanceQuery rest = null;
            if (here && window != asked.window()) {
                rest = reach.beyond(asked.window());
                beyond = rest != null && ts.shows(tenant, id, a, rest);
                reach.excluded |= beyond;
            }
            if (there != null) {
                got = merged(got, there, asked.window());
            }
            if (reach != null) {
                reach.saw(got);
            }
            if (asked.datasetIds() != null) {
                got.removeIf(i -> !admitsDataset(asked, i));
            }
            if (got.isEmpty()) {
                if (beyond) {
                    attributes.put(a, got); // its instances are past the cut: shown empty, as cut() shows them
                    if (asked.options().form() == Form.TEMPORAL_VALUES) {
                        // the form names the kind; a write between the two reads may have deleted them: Property then
                        List<TemporalInstance> past = ts.instances(tenant, id, a, rest, 1);
                        if (!past.isEmpty()) {
                            kinds.put(a, past.get(0).value().kind());
                        }
                    }
                }
                continue;
            }
            if (asked.aggregation() != null) {
                aggregated.put(a, aggregated(asked, got));
            } else {
                attributes.put(a, got);
            }
        }
        List<String> types = new ArrayList<>(head != null ? head.types() : List.of());
        if (remote != null) {
            remote.types().stream().filter(t -> !types.contains(t)).forEach(types::add);
        }
        long now = config.clock().millis();
        return new Evolution(id, types, head != null ? head.scopes() : List.of(), head != null ? head.createdAt() : now,
                head != null ? head.modifiedAt() : now, head != null ? head.deletedAt() : TemporalInstance.NO_TIME,
                attributes, aggregated, kinds);
    }

    /**
     * This broker's instances and a source's, in the window, in time order, lastN of them; an
     * instance both hold (the same id, time and value: a source that records what this broker
     * does) once. Ids alone do not say it: each broker numbers its own instances.
     */
    private static List<TemporalInstance> merged(List<TemporalInstance> here, List<TemporalInstance> there, InstanceQuery window) {
        List<TemporalInstance> all = new ArrayList<>(here);
        Set<String> seen = new java.util.HashSet<>();
        here.forEach(i -> seen.add(sameness(i, window)));
        for (TemporalInstance i : there) {
            if (window.admits(i) && seen.add(sameness(i, window))) {
                all.add(i);
            }
        }
        TimeProperty p = window.property();
        all.sort(java.util.Comparator.comparingLong(i -> i.time(p)));
        return window.lastN() > 0 && all.size() > window.lastN() ? new ArrayList<>(all.subList(all.size() - window.lastN(),
                all.size())) : all;
    }

    private static String sameness(TemporalInstance i, InstanceQuery window) {
        return i.instanceId() + "\u0000" + i.time(window.property()) + "\u0000" + i.value().datasetId() + "\u0000" + i.value().value();
    }

    /** The types of which every match has one, or none when a selector names no type. */
    private static Set<String> selectorTypes(Filter f) {
        Set<String> out = new LinkedHashSet<>();
        for (EntityQuery.Selector s : f.selectors()) {
            if (s.types() == null) {
                return Set.of();
            }
            out.addAll(s.types().types());
        }
        return out;
    }

    /**
     * The aggregated representation of one attribute (§ 4.5.19) from its instances (those of this
     * broker merged with a source's).
     */
    private static JsonNode aggregated(TemporalAsked asked, List<TemporalInstance> instances) {
        AggregationGroups g = new AggregationGroups(asked.window(), null);
        g.instances(instances);
        return aggregated(g.aggregate(asked.aggregation()));
    }

    /**
     * The aggregated representation of one attribute: per datasetId (one object, or an array of
     * them when there are several), its type and, per method asked, the periods
     * {@code [value, startAt, endAt]}.
     */
    private static JsonNode aggregated(List<DatasetAggregate> datasets) {
        ArrayNode all = CorRestJson.mapper().createArrayNode();
        for (DatasetAggregate d : datasets) {
            ObjectNode o = all.addObject();
            o.put("type", d.type());
            d.periods().forEach((m, periods) -> {
                ArrayNode list = o.putArray(m.parameterName());
                for (AggregatedPeriod period : periods) {
                    list.addArray().add(period.value()).add(Instant.ofEpochMilli(period.startAt()).toString())
                            .add(Instant.ofEpochMilli(period.endAt()).toString());
                }
            });
            if (d.datasetId() != null) {
                o.put("datasetId", d.datasetId());
            }
        }
        return all.size() == 1 ? all.get(0) : all;
    }
}
