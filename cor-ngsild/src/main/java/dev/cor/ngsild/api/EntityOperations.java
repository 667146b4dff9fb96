package dev.cor.ngsild.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.CorNgsild;
import dev.cor.ngsild.api.NgsildApplication.Config;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityInput;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.EntityParser.Mode;
import dev.cor.ngsild.model.EntityRenderer;
import dev.cor.ngsild.model.Syntax;
import dev.cor.rest.CorRestJson;

/**
 * The operations on one entity and its attributes (ETSI GS CIM 009 § 5.6.1-5.6.6, 5.6.17-5.6.19,
 * 5.7.1) and the listing of entities by id and type (§ 5.7.2). Each write is one atomic change of
 * one record in the store; a read renders the record it found, reusing the bytes rendered for
 * the same record, context and representation.
 */
final class EntityOperations {
    private final NgsildApplication app;
    private final Config config;

    EntityOperations(NgsildApplication app, Config config) {
        this.app = app;
        this.config = config;
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
        app.write(x, in.id(), current -> {
            if (current != null) {
                throw new NgsiLdException(ErrorType.ALREADY_EXISTS, "entity " + in.id() + " exists already");
            }
            return entity;
        });
        app.created(x, CorNgsild.BASE_PATH + "entities/" + in.id());
    }

    void retrieve(Exchange x) {
        EntityParser parser = parser(x);
        // an id the store holds was checked when it was created: only a miss needs the id checked (400 before 404)
        Entity e = config.store().get(x.tenant, x.route.entityId());
        if (e == null) {
            throw NgsiLdException.notFound("no entity " + entityId(x));
        }
        TypeSelection type = typeSelector(x);
        if (type != null && !type.matches(e.types())) {
            throw NgsiLdException.notFound("entity " + e.id() + " is not of type " + x.params.get("type"));
        }
        if (x.params.has("geometryProperty") && x.accept != MediaType.GEO_JSON) {
            throw NgsiLdException.badData("geometryProperty applies to a GeoJSON answer (Accept: application/geo+json)");
        }
        Representation rep = Representation.of(x.params, parser);
        if (!rep.showsAnything(e)) {
            throw NgsiLdException.notFound("nothing of entity " + e.id() + " is left after pick and omit");
        }
        boolean geo = x.accept == MediaType.GEO_JSON;
        boolean bodyContext = x.accept == MediaType.LD_JSON || (geo && !NgsildApplication.preferBodyJson(x));
        RenderKey key = new RenderKey(x.context, rep.options, x.accept, bodyContext);
        byte[] bytes = e.renderCache().get(key);
        if (bytes == null) {
            JsonNode context = bodyContext ? x.context.echo() : null;
            bytes = geo ? EntityRenderer.renderFeature(e, x.context, rep.options, context)
                    : EntityRenderer.render(e, x.context, rep.options, context);
            e.renderCache().put(key, bytes);
        }
        app.answer(x, 200, x.accept, bytes, x.context);
    }

    /** What rendered bytes depend on besides the record. */
    private record RenderKey(LdContext context, EntityRenderer.Options options, MediaType type, boolean bodyContext) {
    }

    void replace(Exchange x) {
        EntityInput in = fragment(x, Mode.WHOLE);
        writeExisting(x, (current, now) -> EntityEditor.replace(current, in, now));
        app.noContent(x);
    }

    void merge(Exchange x) {
        EntityInput in = fragment(x, Mode.MERGE);
        writeExisting(x, (current, now) -> EntityEditor.merge(current, in, now));
        app.noContent(x);
    }

    void delete(Exchange x) {
        writeExisting(x, (current, now) -> null);
        app.noContent(x);
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
        app.noContent(x);
    }

    void replaceAttribute(Exchange x) {
        EntityParser parser = parser(x);
        String name = parser.attributeName(x.route.attribute());
        var in = parser.attributeValue(x.route.attribute(), attributeBody(x), Mode.WHOLE);
        writeExisting(x, (current, now) -> EntityEditor.replaceAttribute(current, name, in, now));
        app.noContent(x);
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
        app.noContent(x);
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
        long now = now();
        app.write(x, id, current -> change.apply(existing(current, id, types), now));
    }

    /** The body of an operation on the path's entity, read in {@code mode}; an id it gives must be the path's. */
    private EntityInput fragment(Exchange x, Mode mode) {
        EntityInput in = parser(x).entity(objectBody(x), false, mode);
        checkBodyId(entityId(x), in);
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

    /** 204, or 207 with an UpdateResult when some attributes were not updated (§ 5.2.18). */
    private void updateResult(Exchange x, EntityEditor.Result r) {
        if (r.notUpdated().isEmpty()) {
            app.noContent(x);
            return;
        }
        ObjectNode body = CorRestJson.mapper().createObjectNode();
        ArrayNode updated = body.putArray("updated");
        // a partial success names attributes by their full IRIs: there is no context to compact with (6.3.6)
        for (String u : r.updated()) {
            updated.add(u);
        }
        ArrayNode notUpdated = body.putArray("notUpdated");
        for (EntityEditor.NotUpdated n : r.notUpdated()) {
            ObjectNode d = notUpdated.addObject();
            d.put("attributeName", n.attributeIri());
            d.put("reason", n.reason());
        }
        app.answerPlain(x, 207, body);
    }

    // ---------------------------------------------------------------- listing

    /** GET /entities by id, idPattern and type (the full query language is the query engine's). */
    void query(Exchange x) {
        QueryParams p = x.params;
        for (String unsupported : List.of("q", "geoQ", "georel", "geometry", "coordinates", "scopeQ", "csf")) {
            if (p.has(unsupported)) {
                throw new NgsiLdException(ErrorType.NOT_IMPLEMENTED, "the query parameter '" + unsupported
                        + "' is not served by this broker yet");
            }
        }
        boolean local = p.bool("local", false);
        if (!local && !p.has("type") && !p.has("attrs") && !p.has("idPattern")) {
            // 6.4.3.2: a query is bounded by a type, attributes or a pattern (or is local); ids alone are not enough
            throw NgsiLdException.badData("a query names at least one of type, attrs, idPattern, q or geoQ"
                    + (p.has("id") ? " (id alone is not enough)" : "") + ", or is local=true");
        }
        list(x, p.list("id"), p.get("idPattern"), p.get("type"), p.list("attrs"));
    }

    /** POST /entityOperations/query with a Query body (§ 5.2.23): its entities and attrs. */
    void queryPost(Exchange x) {
        JsonNode q = x.body;
        if (!q.isObject() || !"Query".equals(q.path("type").asText())) {
            throw NgsiLdException.badData("the body is a Query: a JSON object whose type is \"Query\"");
        }
        for (String unsupported : List.of("q", "geoQ", "scopeQ", "csf", "temporalQ")) {
            if (q.has(unsupported)) {
                throw new NgsiLdException(ErrorType.NOT_IMPLEMENTED, "the Query member '" + unsupported
                        + "' is not served by this broker yet");
            }
        }
        List<String> attrs = strings(q.get("attrs"), "attrs");
        JsonNode selectors = q.get("entities");
        if (selectors == null && attrs.isEmpty()) {
            throw NgsiLdException.badData("a Query names entities or attrs");
        }
        if (selectors == null) {
            list(x, List.of(), null, null, attrs);
            return;
        }
        if (!selectors.isArray() || selectors.isEmpty()) {
            throw NgsiLdException.badData("the Query's entities is a non-empty array of EntitySelectors");
        }
        // each selector is an alternative: the union of what they select
        List<String> ids = new ArrayList<>();
        StringBuilder types = new StringBuilder();
        String pattern = null;
        for (JsonNode s : selectors) {
            if (!s.isObject() || !s.has("type")) {
                throw NgsiLdException.badData("an EntitySelector is an object with a type");
            }
            if (s.has("id")) {
                ids.add(s.get("id").asText());
            }
            if (s.has("idPattern")) {
                pattern = s.get("idPattern").asText();
            }
            types.append(types.isEmpty() ? "" : ",").append('(').append(s.get("type").asText()).append(')');
        }
        list(x, ids, pattern, types.toString(), attrs);
    }

    private void list(Exchange x, List<String> ids, String idPattern, String typeSelection, List<String> attrTerms) {
        EntityParser parser = parser(x);
        Pattern pattern = null;
        if (idPattern != null) {
            if (idPattern.length() > 256) {
                throw NgsiLdException.badData("idPattern is longer than 256 characters");
            }
            try {
                pattern = Pattern.compile(idPattern);
            } catch (PatternSyntaxException e) {
                throw NgsiLdException.badData("idPattern is not a regular expression: " + e.getDescription());
            }
        }
        TypeSelection types = typeSelection == null ? null : TypeSelection.parse(typeSelection, parser::typeName);
        List<String> attrs = new ArrayList<>();
        for (String a : attrTerms) {
            attrs.add(parser.attributeName(a));
        }
        for (String id : ids) {
            if (!Syntax.isUri(id)) {
                throw NgsiLdException.badData("the id " + id + " is not a URI");
            }
        }
        Representation rep = Representation.of(x.params, parser);
        Page asked = Page.of(x.params, config.limits());
        int limit = asked.limit();
        int offset = asked.offset();
        boolean count = asked.count();
        TreeMap<String, Entity> matches = new TreeMap<>();
        Pattern idRegex = pattern;
        java.util.function.Consumer<Entity> visit = e -> {
            if ((ids.isEmpty() || ids.contains(e.id()))
                    && (idRegex == null || idRegex.matcher(e.id()).matches())
                    && (attrs.isEmpty() || hasAny(e, attrs))
                    && (types == null || types.matches(e.types()))) {
                matches.put(e.id(), e);
            }
        };
        if (!ids.isEmpty() && types == null) {
            for (String id : ids) {
                Entity e = config.store().get(x.tenant, id);
                if (e != null) {
                    visit.accept(e);
                }
            }
        } else if (types != null) {
            // an entity the selection matches has at least one of the types it names
            for (String t : types.types()) {
                config.store().forEach(x.tenant, t, visit);
            }
        } else {
            config.store().forEach(x.tenant, null, visit);
        }
        List<Entity> page = new ArrayList<>(Math.min(limit, matches.size()));
        int i = 0;
        for (Entity e : matches.values()) {
            if (i++ < offset) {
                continue;
            }
            if (page.size() >= limit) {
                break;
            }
            page.add(e);
        }
        boolean geo = x.accept == MediaType.GEO_JSON;
        boolean bodyContext = x.accept == MediaType.LD_JSON || (geo && !NgsildApplication.preferBodyJson(x));
        byte[] bytes = EntityRenderer.renderAll(page, x.context, rep.options, bodyContext ? x.context.echo() : null, geo);
        if (count) {
            x.request.responseHeaders().set("NGSILD-Results-Count", Integer.toString(matches.size()));
        }
        app.answer(x, 200, x.accept, bytes, x.context);
    }

    // ---------------------------------------------------------------- helpers

    private static boolean hasAny(Entity e, List<String> attrs) {
        for (String a : attrs) {
            if (e.attributes().containsKey(a)) {
                return true;
            }
        }
        return false;
    }

    private static List<String> strings(JsonNode n, String what) {
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
