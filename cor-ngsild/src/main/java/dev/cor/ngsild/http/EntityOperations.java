package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Forwarder;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityInput;
import dev.cor.ngsild.model.EntityParser.Mode;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.EntityRenderer;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.query.BoundedPattern;
import dev.cor.ngsild.query.EntityOrder;
import dev.cor.ngsild.query.GeoQuery;
import dev.cor.ngsild.query.LinkedEntities;
import dev.cor.ngsild.query.QueryExpression;
import dev.cor.ngsild.query.ScopeQuery;
import dev.cor.rest.CorRestJson;

/**
 * The operations on one entity and its attributes (ETSI GS CIM 009 § 5.6.1-5.6.6, 5.6.17-5.6.19,
 * 5.7.1) and Query Entities (§ 5.7.2, 5.7.6) with the whole query language, run by {@link EntityQuery}. Each write is one atomic change of
 * one record in the store; a read renders the record it found, reusing the bytes rendered for
 * the same record, context and representation.
 */
final class EntityOperations {
    private final Config config;
    private final DistributedReads distributed;

    EntityOperations(Config config, DistributedReads distributed) {
        this.config = config;
        this.distributed = distributed;
    }

    /** The body of a single-entity operation: an object, or the request is invalid (not merely its data). */
    private static JsonNode objectBody(Exchange x) {
        if (!x.body.isObject()) {
            throw NgsiLdException.invalid("the body is a JSON object (an entity or a fragment), not "
                    + (x.body.isArray() ? "an array" : x.body.getNodeType().toString().toLowerCase(java.util.Locale.ROOT)));
        }
        return x.body;
    }

    private EntityParser parser(Exchange x) {
        return new EntityParser(x.context, config.limits());
    }

    private long now() {
        return config.clock().millis();
    }

    // ---------------------------------------------------------------- entities

    void create(Exchange x) {
        EntityInput in = parser(x).entity(objectBody(x), true, Mode.WHOLE);
        Entity entity = EntityEditor.create(in, now());
        x.write(in.id(), current -> {
            if (current != null) {
                throw new NgsiLdException(ErrorType.ALREADY_EXISTS, "entity " + in.id() + " exists already");
            }
            return entity;
        });
        x.created("entities", in.id());
    }

    void retrieve(Exchange x) {
        // the parameters first: a wrong format, option or attrs is a 400 whether the entity exists
        // or not (§ 6.3.7; ETSI 018_16 retrieves an id nobody created), and is never forwarded
        Representation rep = representation(x);
        LinkedEntities.Join join = join(x.params, rep, x.accept == MediaType.GEO_JSON);
        if (x.forwards != null) {
            Entity merged = distributed.retrieve(x);
            if (merged != null) { // null: answered already, with a source's entity relayed
                answerEntity(x, merged, rep, join);
            }
            return;
        }
        // an id the store holds was checked when it was created: only a miss needs the id checked (400 before 404)
        Entity e = config.store().get(x.tenant, x.route.entityId());
        if (e == null) {
            throw NgsiLdException.notFound("no entity " + entityId(x));
        }
        TypeSelection type = typeSelector(x);
        if (type != null && !type.matches(e.types())) {
            throw NgsiLdException.notFound("entity " + e.id() + " is not of type " + x.params.get("type"));
        }
        answerEntity(x, e, rep, join);
    }

    /** The representation the request's parameters ask for (its geometryProperty checked too); 400 when one is wrong. */
    private Representation representation(Exchange x) {
        checkGeometryProperty(x, x.params);
        return Representation.of(x.params, parser(x));
    }

    /**
     * Answers with {@code e} in the representation the request asks for: the record's render
     * cache serves the bytes of an unchanged entity (a merged one has a cache of its own).
     */
    private void answerEntity(Exchange x, Entity e, Representation rep, LinkedEntities.Join join) {
        if (!rep.showsAnything(e)) {
            throw NgsiLdException.notFound("nothing of entity " + e.id() + " is left after pick and omit");
        }
        boolean geo = x.accept == MediaType.GEO_JSON;
        boolean bodyContext = x.accept == MediaType.LD_JSON || (geo && !x.preferBodyJson());
        if (join != null) {
            Entity shown = rep.selectsInstances() ? rep.instances(e) : e;
            x.answer(200, x.accept, Exchange.json(linked(x, rep, join, bodyContext).render(List.of(shown), true)), x.context);
            return;
        }
        RenderKey key = new RenderKey(x.context.identity(), rep.options, x.accept, bodyContext);
        if (rep.selectsInstances()) {
            e = rep.instances(e); // a copy narrowed to some instances: its bytes are its own, not the record's
        }
        byte[] bytes = e.renderCache().get(key);
        if (bytes == null) {
            JsonNode context = bodyContext ? x.context.echo() : null;
            bytes = geo ? EntityRenderer.renderFeature(e, x.context, rep.options, context)
                    : EntityRenderer.render(e, x.context, rep.options, context);
            e.renderCache().put(key, bytes);
        }
        x.answer(200, x.accept, bytes, x.context);
    }

    /**
     * What rendered bytes depend on besides the record. The context is its {@link LdContext#identity()}:
     * the key outlives the request in the entity's render cache, and must not keep a context that
     * the context service has let go (an inline one of a read, a few MiB with its terms).
     */
    private record RenderKey(Object context, EntityRenderer.Options options, MediaType type, boolean bodyContext) {
    }

    void replace(Exchange x) {
        EntityInput in = fragment(x, Mode.WHOLE);
        writeExisting(x, (current, now) -> EntityEditor.replace(current, in, now));
        x.noContent();
    }

    void merge(Exchange x) {
        EntityInput in = fragment(x, Mode.MERGE);
        writeExisting(x, (current, now) -> EntityEditor.merge(current, in, now));
        x.noContent();
    }

    void delete(Exchange x) {
        writeExisting(x, (current, now) -> null);
        x.noContent();
    }

    // ---------------------------------------------------------------- attributes

    void append(Exchange x) {
        EntityInput in = fragment(x, Mode.WHOLE);
        boolean noOverwrite = options(x).contains("noOverwrite");
        EntityEditor.Result[] result = new EntityEditor.Result[1];
        writeExisting(x, (current, now) -> (result[0] = EntityEditor.append(current, in, noOverwrite, now)).entity());
        updateResult(x, result[0]);
    }

    void update(Exchange x) {
        EntityInput in = fragment(x, Mode.PATCH);
        EntityEditor.Result[] result = new EntityEditor.Result[1];
        writeExisting(x, (current, now) -> (result[0] = EntityEditor.update(current, in, now)).entity());
        updateResult(x, result[0]);
    }

    void partialAttributeUpdate(Exchange x) {
        EntityParser parser = parser(x);
        String name = parser.attributeName(x.route.attribute());
        JsonNode body = attributeBody(x);
        if (body.isEmpty()) {
            throw NgsiLdException.badData("the fragment of attribute " + x.route.attribute() + " is empty: nothing to update");
        }
        var in = parser.attributeValue(x.route.attribute(), body, Mode.PATCH);
        writeExisting(x, (current, now) -> EntityEditor.partialUpdate(current, name, in, now));
        x.noContent();
    }

    void replaceAttribute(Exchange x) {
        EntityParser parser = parser(x);
        String name = parser.attributeName(x.route.attribute());
        var in = parser.attributeValue(x.route.attribute(), attributeBody(x), Mode.WHOLE);
        writeExisting(x, (current, now) -> EntityEditor.replaceAttribute(current, name, in, now));
        x.noContent();
    }

    void deleteAttribute(Exchange x) {
        // DELETE .../attrs/scope removes the entity's scopes (4.18)
        String name = x.route.attribute().equals("scope") ? EntityEditor.SCOPE : parser(x).attributeName(x.route.attribute());
        String datasetId = x.params.get("datasetId");
        if (datasetId != null && !Syntax.isUri(datasetId)) {
            throw NgsiLdException.badData("datasetId '" + datasetId + "' is not a URI");
        }
        boolean deleteAll = x.params.bool("deleteAll", false);
        writeExisting(x, (current, now) -> EntityEditor.deleteAttribute(current, name, datasetId, deleteAll, now));
        x.noContent();
    }

    /** The next record of an existing entity, built inside the store's critical section: it must not wait. */
    @FunctionalInterface
    private interface Change {
        Entity apply(Entity current, long now);
    }

    /**
     * One atomic write to the path's entity, which must exist and - with {@code ?type} - be of
     * that type (ResourceNotFound otherwise, and nothing changes); {@code change} gives the next
     * record ({@code null}: delete it).
     */
    private void writeExisting(Exchange x, Change change) {
        String id = entityId(x);
        TypeSelection types = typeSelector(x);
        // the time read as the change is applied, inside the entity's critical section: a store whose
        // write waits (a database's lock) may apply writes in another order than they arrived, and
        // the entity's times - its history's order - must follow the order they were applied
        x.write(id, current -> change.apply(existing(current, id, types), now()));
    }

    /** The body of an operation on the path's entity, read in {@code mode}; an id it gives must be the path's. */
    private EntityInput fragment(Exchange x, Mode mode) {
        EntityInput in = somethingToWrite(parser(x).entity(objectBody(x), false, mode));
        checkBodyId(entityId(x), in);
        return in;
    }

    /**
     * {@code in}, unless it names nothing to write - no attribute, type or scope: BadRequestData then
     * (Append 5.6.3, Update 5.6.2, Merge 5.6.17, Replace 5.6.18, and their batches), as Partial
     * Attribute Update refuses an empty fragment (TP 012_02_04) and Orion-LD every empty body. A write
     * that changes nothing must not answer as if it had done something.
     */
    static EntityInput somethingToWrite(EntityInput in) {
        if (in.writesNothing()) {
            throw NgsiLdException.badData("the fragment names nothing to write: no attribute, no type, no scope");
        }
        return in;
    }

    /** The body of an attribute operation: the attribute itself (an object), its @context aside. */
    private static JsonNode attributeBody(Exchange x) {
        JsonNode b = x.body;
        if (b.isObject() && b.has("@context")) {
            b = ((ObjectNode) b).deepCopy();
            ((ObjectNode) b).remove("@context");
        }
        if (!b.isObject() && !b.isArray()) {
            throw NgsiLdException.badData("the body is an attribute: a JSON object");
        }
        return b;
    }

    /**
     * 204, or 207 with an UpdateResult when some attributes were not updated (§ 5.2.18) - with
     * what the sources did not take, when the write went to some too.
     */
    private void updateResult(Exchange x, EntityEditor.Result r) {
        UpdateResult result = x.updateResult != null ? x.updateResult : new UpdateResult();
        r.updated().forEach(result::updated);
        for (EntityEditor.NotUpdated n : r.notUpdated()) {
            result.notUpdated(n.attributeIri(), n.reason(), null);
        }
        result.answer(x);
    }

    // ---------------------------------------------------------------- listing

    /** GET /entities (§ 5.7.2, 6.4.3.2): ids, idPattern, type, attrs, q, scopeQ and a geo-query, all of which must hold. */
    void query(Exchange x) {
        QueryParams p = x.params;
        if (p.has("csf")) {
            Csf.parse(p.get("csf"), x.context); // BadRequestData when malformed; it picks sources
        }
        p.bool("splitEntities", false); // BadRequestData when not a boolean; it shapes the forwards (§ 5.7.2.4)
        EntityParser parser = parser(x);
        String type = p.get("type");
        // type=* selects every type and makes the query local (6.4.3.2), which local=false contradicts
        if ("*".equals(type) && !p.bool("local", true)) {
            throw NgsiLdException.badData("type=* makes a query local: local=false contradicts it");
        }
        boolean local = p.bool("local", false) || "*".equals(type);
        if ("*".equals(type)) {
            type = null;
        }
        if (x.forwards != null && p.has("orderBy")) {
            // an order across sources would need every source's every match first (4.23; the suite's D011_05)
            throw NgsiLdException.badData("orderBy is not served for a distributed query: add local=true to order this"
                    + " broker's entities");
        }
        boolean geo = p.has("georel") || p.has("geometry") || p.has("coordinates") || p.has("geoQ");
        if (!local && type == null && !p.has("attrs") && !p.has("idPattern") && !p.has("q") && !geo) {
            // 6.4.3.2: a query is bounded by a type, attributes, a pattern, q or a geo-query (or is local); ids alone are not enough
            throw NgsiLdException.badData("a query names at least one of type, attrs, idPattern, q or geoQ"
                    + (p.has("id") ? " (id alone is not enough)" : "") + ", or is local=true");
        }
        List<EntityQuery.Selector> selectors = new ArrayList<>(1);
        List<String> ids = p.list("id");
        if (!ids.isEmpty() || p.has("idPattern") || type != null) {
            selectors.add(selector(parser, ids, p.get("idPattern"), type));
        }
        GeoQuery geoQuery = geoQuery(x, p);
        list(x, x.params, new EntityQuery(selectors, attributes(parser, p.list("attrs")),
                p.has("q") ? QueryExpression.parse(p.get("q"), x.context, Set.copyOf(p.list("expandValues"))) : null, geoQuery,
                p.has("scopeQ") ? ScopeQuery.parse(p.get("scopeQ")) : null,
                p.has("orderBy") ? EntityOrder.parse(p.get("orderBy"), x.context, p.get("orderFrom"), p.get("orderGeometry"))
                        : null));
    }

    /** The geo-query of a GET query's parameters ({@code geoQ}, or georel and its companions), or {@code null}. */
    static GeoQuery geoQuery(Exchange x, QueryParams p) {
        if (p.has("geoQ")) {
            return GeoQuery.parse(parseJson(p.get("geoQ"), "geoQ"), x.context);
        }
        if (p.has("georel") || p.has("geometry") || p.has("coordinates")) {
            return GeoQuery.parse(p.get("georel"), p.get("geometry"), p.get("coordinates"), p.get("geoproperty"), x.context);
        }
        return null;
    }

    // ---------------------------------------------------------------- Purge Entities (§ 5.6.21, 6.4.3.3)

    /** The entity's own members that a purge's {@code attrs} may name but that select nothing (§ 5.6.21.4 b). */
    static final Set<String> SYSTEM_ATTRIBUTES = Set.of("createdAt", "modifiedAt", "deletedAt");

    /**
     * {@code DELETE /entities}: the entities a query selects, deleted here - or, with
     * {@code drop}, those of their attributes; with {@code keep}, all of their attributes but
     * those - and, unless {@code local=true}, the same purge at every source registered for it.
     * A purge is bounded (§ 5.6.21.4): by a type, a non-system attribute in {@code attrs} or
     * {@code q}, a geo-query, or {@code local=true}; else it is "too wide", and nothing is done.
     */
    void purge(Exchange x) {
        QueryParams p = x.params;
        EntityParser parser = parser(x);
        boolean local = p.bool("local", false);
        if (p.has("keep") && p.has("drop")) {
            throw NgsiLdException.badData("keep and drop exclude each other: keep names the attributes to keep, drop"
                    + " those to delete");
        }
        if (p.has("csf")) {
            Csf.parse(p.get("csf"), x.context); // BadRequestData when malformed
        }
        List<String> attrTerms = new ArrayList<>();
        for (String a : p.list("attrs")) {
            if (a.indexOf('{') >= 0) {
                throw NgsiLdException.badData("attrs=" + a + " asks for a linked entity, which a purge cannot (§ 5.6.21.4)");
            }
            if (!SYSTEM_ATTRIBUTES.contains(a)) {
                attrTerms.add(a);
            }
        }
        List<String> attrs = attributes(parser, attrTerms);
        QueryExpression q = p.has("q") ? QueryExpression.parse(p.get("q"), x.context) : null;
        if (q != null && q.readsLinkedEntities()) {
            throw NgsiLdException.badData("q=" + q + " reads a linked entity, which a purge cannot (§ 5.6.21.4)");
        }
        GeoQuery geo = geoQuery(x, p);
        String type = p.get("type");
        if (type == null && attrs.isEmpty() && (q == null || !q.readsAnAttribute()) && geo == null && !local) {
            throw NgsiLdException.badData("a purge this wide is refused (§ 5.6.21.4): name a type, an attribute in attrs"
                    + " or q, or a geo-query, or make it local=true" + (p.has("id") || p.has("idPattern")
                            ? " (ids and idPattern alone do not bound it)" : ""));
        }
        List<EntityQuery.Selector> selectors = new ArrayList<>(1);
        if (p.has("id") || p.has("idPattern") || type != null) {
            selectors.add(selector(parser, p.list("id"), p.get("idPattern"), type));
        }
        Set<String> keep = Set.copyOf(attributes(parser, p.list("keep")));
        Set<String> drop = Set.copyOf(attributes(parser, p.list("drop")));
        List<Entity> matches = new EntityQuery(selectors, attrs, q, geo,
                p.has("scopeQ") ? ScopeQuery.parse(p.get("scopeQ")) : null, null)
                .run(config.store(), x.tenant, 0, Integer.MAX_VALUE, false).entities();
        long now = now();
        List<String> purged = new ArrayList<>(matches.size());
        for (Entity e : matches) {
            x.write(e.id(), current -> current == null ? null
                    : p.has("drop") ? EntityEditor.withoutAttributes(current, drop::contains, now)
                    : p.has("keep") ? EntityEditor.withoutAttributes(current, a -> !keep.contains(a), now)
                    : null);
            purged.add(e.id());
        }
        if (x.forwards != null) {
            Set<String> types = type == null ? Set.of() : TypeSelection.parse(type, parser::typeName).types();
            List<Forwarder.Answer> failed = new ArrayList<>(distributed.purgeRefusals(x, types, Set.copyOf(attrs)));
            int taken = 0;
            for (Forwarder.Answer a : distributed.purge(x, types, Set.copyOf(attrs))) {
                if (!a.ok() && a.status() != 404) {
                    failed.add(a); // a source with nothing to purge may say 404: not a failure
                } else {
                    taken++;
                }
            }
            if (!failed.isEmpty() && purged.isEmpty() && taken == 0 && failed.stream().allMatch(a -> a.status() == 409)) {
                // § 5.6.21.4: "the complete purge failed" - only sources that cannot take it, nothing done here
                throw new NgsiLdException(ErrorType.CONFLICT, failed.get(0).warning());
            }
            if (!failed.isEmpty()) {
                BatchResult.partialSuccess(x, purged, failed);
                return;
            }
        }
        x.noContent();
    }

    /** POST /entityOperations/query with a Query body (§ 5.7.6, 5.2.23). */
    void queryPost(Exchange x) {
        JsonNode body = x.body;
        if (!body.isObject() || !"Query".equals(body.path("type").asText())) {
            throw NgsiLdException.badData("the body is a Query: a JSON object whose type is \"Query\"");
        }
        if (body.has("csf") && (!body.get("csf").isTextual() || Csf.parse(body.get("csf").asText(),
                x.context) == null)) {
            throw NgsiLdException.badData("the Query member csf is a context source filter (a string)");
        }
        if (body.has("temporalQ")) {
            throw NgsiLdException.badData("temporalQ belongs to Query Temporal Evolution of Entities (5.7.4), not to"
                    + " Query Entities (Table 5.2.23-1)");
        }
        if (body.has("joinLevel") && !(body.get("joinLevel").canConvertToInt() && body.get("joinLevel").isIntegralNumber()
                && body.get("joinLevel").intValue() > 0)) {
            throw NgsiLdException.badData("joinLevel is a positive integer, not " + body.get("joinLevel"));
        }
        if (body.has("attrs") && body.get("attrs").isArray() && body.get("attrs").isEmpty()) {
            throw NgsiLdException.badData("the Query's attrs is a non-empty array (Table 5.2.23-1)");
        }
        EntityParser parser = parser(x);
        List<String> attrTerms = strings(body.get("attrs"), "attrs");
        JsonNode entities = body.get("entities");
        String q = optionalText(body, "q");
        String scopeQ = optionalText(body, "scopeQ");
        JsonNode geoQ = body.get("geoQ");
        if (entities == null && attrTerms.isEmpty() && q == null && geoQ == null) {
            throw NgsiLdException.badData("a Query names entities, attrs, q or geoQ");
        }
        List<EntityQuery.Selector> selectors = selectors(parser, entities);
        // the representation members of the body act as the GET parameters of the same name
        QueryParams params = x.params;
        if (!attrTerms.isEmpty()) {
            params = params.with("attrs", String.join(",", attrTerms));
        }
        for (String member : List.of("pick", "omit", "lang", "csf", "join", "containedBy")) {
            JsonNode v = body.get(member);
            if (v != null) {
                params = params.with(member, v.isArray() ? String.join(",", strings(v, member)) : textOf(v, member));
            }
        }
        if (body.has("joinLevel")) {
            params = params.with("joinLevel", Integer.toString(body.get("joinLevel").intValue()));
        }
        list(x, params, new EntityQuery(selectors, attributes(parser, attrTerms),
                q == null ? null : QueryExpression.parse(PercentEncoding.bodyQ(q), x.context, Set.copyOf(expandValues(body))),
                geoQ == null ? null : GeoQuery.parse(geoQ, x.context),
                scopeQ == null ? null : ScopeQuery.parse(scopeQ)));
    }

    /**
     * A Query's {@code entities} (§ 5.2.23): each EntitySelector an alternative - the union of
     * what they select -; none when {@code entities} is absent. BadRequestData when it is not a
     * non-empty array of objects with a type. Query Entities and Query Temporal Evolution read it here.
     */
    static List<EntityQuery.Selector> selectors(EntityParser parser, JsonNode entities) {
        List<EntityQuery.Selector> selectors = new ArrayList<>();
        if (entities == null) {
            return selectors;
        }
        if (!entities.isArray() || entities.isEmpty()) {
            throw NgsiLdException.badData("the Query's entities is a non-empty array of EntitySelectors");
        }
        for (JsonNode s : entities) {
            if (!s.isObject() || !s.path("type").isTextual()) {
                throw NgsiLdException.badData("an EntitySelector is an object with a type (a string)");
            }
            String id = optionalText(s, "id");
            selectors.add(selector(parser, id == null ? List.of() : List.of(id), optionalText(s, "idPattern"),
                    s.get("type").asText()));
        }
        return selectors;
    }

    /** A Query body's expandValues: a comma-separated string or an array of terms. */
    private static List<String> expandValues(JsonNode body) {
        JsonNode v = body.get("expandValues");
        if (v == null) {
            return List.of();
        }
        return v.isArray() ? strings(v, "expandValues") : List.of(textOf(v, "expandValues").split(","));
    }

    static EntityQuery.Selector selector(EntityParser parser, List<String> ids, String idPattern, String types) {
        for (String id : ids) {
            if (!Syntax.isUri(id)) {
                throw NgsiLdException.badData("the id " + id + " is not a URI");
            }
        }
        return new EntityQuery.Selector(ids.isEmpty() ? null : Set.copyOf(ids),
                idPattern == null ? null : BoundedPattern.compile(idPattern, "idPattern"),
                types == null ? null : TypeSelection.parse(types, parser::typeName));
    }

    static List<String> attributes(EntityParser parser, List<String> terms) {
        List<String> attrs = new ArrayList<>(terms.size());
        for (String a : terms) {
            attrs.add(parser.attributeName(a));
        }
        return attrs;
    }

    private void list(Exchange x, QueryParams params, EntityQuery query) {
        EntityParser parser = parser(x);
        checkGeometryProperty(x, params);
        Representation rep = Representation.of(params, parser);
        LinkedEntities.Join join = join(params, rep, x.accept == MediaType.GEO_JSON); // a 400 before anything is read
        Page asked = Page.of(params, config.limits());
        EntityQuery.Page page = x.forwards != null ? distributed.query(x, params, query, asked)
                : query.run(config.store(), x.tenant, asked.offset(), asked.limit(), asked.count());
        if (config.metrics().queryRan(query.indexed() != null, query.rejected())) {
            x.request.note("scan:" + query.read());
        } else if (query.indexed() != null) {
            x.request.note("index:" + query.read());
        }
        answerPage(x, rep, asked, page, join);
    }

    /** Answers with one page of a query's entities, its count and its prev/next links (§ 5.7.2, 4.12). */
    private void answerPage(Exchange x, Representation rep, Page asked, EntityQuery.Page page, LinkedEntities.Join join) {
        List<Entity> entities = page.entities();
        if (rep.selectsInstances()) {
            entities = new ArrayList<>(entities.size());
            for (Entity e : page.entities()) {
                entities.add(rep.instances(e));
            }
        }
        boolean geo = x.accept == MediaType.GEO_JSON;
        boolean bodyContext = x.accept == MediaType.LD_JSON || (geo && !x.preferBodyJson());
        byte[] bytes = join != null
                ? Exchange.json(linked(x, rep, join, bodyContext).render(entities, false))
                : geo || rep.selectsInstances()
                ? EntityRenderer.renderAll(entities, x.context, rep.options, bodyContext ? x.context.echo() : null, geo)
                : joined(entities, x.context, new RenderKey(x.context.identity(), rep.options, x.accept, bodyContext));
        if (asked.count()) {
            x.request.responseHeaders().set("NGSILD-Results-Count", Integer.toString(page.count()));
        }
        x.answer(200, x.accept, bytes, x.context);
        if (x.operation() == Operation.QUERY_ENTITIES) {
            asked.links(x, "entities", page.more()); // 4.12, 6.3.10: beside the context's Link
        }
    }

    /**
     * A JSON array of the entities' bytes, each taken from its record's render cache (the bytes a
     * retrieval with the same context and representation renders and reuses) or rendered into it:
     * a dashboard's repeated query re-renders only what changed.
     */
    private static byte[] joined(List<Entity> entities, LdContext context, RenderKey key) {
        byte[][] parts = new byte[entities.size()][];
        int size = 2 + Math.max(0, entities.size() - 1);
        for (int i = 0; i < parts.length; i++) {
            Entity e = entities.get(i);
            byte[] b = e.renderCache().get(key);
            if (b == null) {
                b = EntityRenderer.render(e, context, key.options(), key.bodyContext() ? context.echo() : null);
                e.renderCache().put(key, b);
            }
            parts[i] = b;
            size += b.length;
        }
        byte[] out = new byte[size];
        int at = 0;
        out[at++] = '[';
        for (int i = 0; i < parts.length; i++) {
            if (i > 0) {
                out[at++] = ',';
            }
            System.arraycopy(parts[i], 0, out, at, parts[i].length);
            at += parts[i].length;
        }
        out[at] = ']';
        return out;
    }

    /** The joins of one answer: linked entities read from the request's tenant, shown as its representation says. */
    private LinkedEntities linked(Exchange x, Representation rep, LinkedEntities.Join join, boolean bodyContext) {
        return new LinkedEntities(id -> config.store().get(x.tenant, id), x.context,
                new LinkedEntities.Shape(rep.options, rep.linked), join, bodyContext ? x.context.echo() : null);
    }

    /** The linked entity retrieval the request asks for (§ 4.5.23), or {@code null}; not with a GeoJSON answer. */
    private static LinkedEntities.Join join(QueryParams params, Representation rep, boolean geo) {
        LinkedEntities.Join join = LinkedEntities.Join.of(params.get("join"), params.integer("joinLevel", 1),
                params.list("containedBy"));
        if (join != null && geo) {
            throw NgsiLdException.badData("join applies to NGSI-LD entities, not to a GeoJSON answer");
        }
        if (join == null && !rep.linked.isEmpty()) {
            // TP 5711_01_03: braces shape the entities a join brings, and there is none
            throw NgsiLdException.badData("a braced pick or omit projects linked entities, which needs join=inline or flat");
        }
        return join;
    }

    /** geometryProperty names the geometry of a GeoJSON answer: with another one it is an error (5.7.1.4, 5.7.2.4). */
    private static void checkGeometryProperty(Exchange x, QueryParams params) {
        if (params.has("geometryProperty") && x.accept != MediaType.GEO_JSON) {
            throw NgsiLdException.badData("geometryProperty applies to a GeoJSON answer (Accept: application/geo+json)");
        }
    }

    static String optionalText(JsonNode o, String member) {
        JsonNode v = o.get(member);
        return v == null ? null : textOf(v, member);
    }

    static String textOf(JsonNode v, String member) {
        if (!v.isTextual()) {
            throw NgsiLdException.badData(member + " is a string, not " + v.getNodeType().toString().toLowerCase(java.util.Locale.ROOT));
        }
        return v.asText();
    }

    static JsonNode parseJson(String text, String what) {
        try {
            return CorRestJson.mapper().readTree(text);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw NgsiLdException.badData(what + " is not JSON: " + e.getOriginalMessage());
        }
    }

    // ---------------------------------------------------------------- helpers

    static List<String> strings(JsonNode n, String what) {
        List<String> out = new ArrayList<>();
        if (n == null) {
            return out;
        }
        if (!n.isArray()) {
            throw NgsiLdException.badData(what + " is an array of strings");
        }
        for (JsonNode s : n) {
            if (!s.isTextual()) {
                throw NgsiLdException.badData(what + " is an array of strings");
            }
            out.add(s.asText());
        }
        return out;
    }

    /** The entity id of the path, checked to be a URI (§ 5.7.1.4: BadRequestData otherwise). */
    static String entityId(Exchange x) {
        String id = x.route.entityId();
        if (!Syntax.isUri(id)) {
            throw NgsiLdException.badData("the entity id '" + id + "' is not a URI");
        }
        return id;
    }

    /** The {@code type} parameter of a single-entity operation (§ 4.17), or {@code null}. */
    private TypeSelection typeSelector(Exchange x) {
        String t = x.params.get("type");
        return t == null ? null : TypeSelection.parse(t, parser(x)::typeName);
    }

    /**
     * Checks, inside a write, that the entity exists and - when the request names types - is of
     * them (§ 5.6.x.4: ResourceNotFound otherwise, and nothing changes).
     */
    private static Entity existing(Entity current, String id, TypeSelection types) {
        if (current == null) {
            throw NgsiLdException.notFound("no entity " + id);
        }
        if (types != null && !types.matches(current.types())) {
            throw NgsiLdException.notFound("entity " + id + " is not of the type asked for");
        }
        return current;
    }

    private static void checkBodyId(String id, EntityInput in) {
        if (in.id() != null && !in.id().equals(id)) {
            throw NgsiLdException.badData("the body's id " + in.id() + " is not the entity's id " + id);
        }
    }

    static Set<String> options(Exchange x) {
        return Set.copyOf(x.params.list("options"));
    }
}
