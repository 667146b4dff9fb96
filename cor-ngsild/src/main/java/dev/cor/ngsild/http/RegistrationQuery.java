package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Coverage;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.federation.RegistrationLookup;
import dev.cor.ngsild.federation.Registrations;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.query.BoundedPattern;
import dev.cor.ngsild.query.MatchBudget;
import dev.cor.ngsild.query.QueryExpression;

/**
 * What {@code GET /csourceRegistrations} selects (ETSI GS CIM 009 § 5.10.2): entity ids, an
 * idPattern, a type selection (§ 4.17), attribute names - matched against each registration's
 * information as the lookup matches a request - and csf over the registrant's own members. A q
 * is matched against the registrant's own members too (the registration seen as an entity,
 * {@link #asEntity}), never against the registered attributes: a registration says which
 * attributes a source has, not their values. scopeQ, a geo-query and a temporal query
 * ({@link TimeQuery}) select by the registration's scope, its location (or observationSpace,
 * operationSpace) and its intervals (§ 5.10.2.4).
 * <p>
 * Immutable; one per request, used by the thread that runs it: its patterns (the idPattern, the
 * q) share the request's {@link MatchBudget} over every registration. {@link TimeQuery} also
 * serves a csourceSubscription's temporalQ (§ 5.11.7).
 */
record RegistrationQuery(Set<String> ids, BoundedPattern idPattern, TypeSelection types, Set<String> attrs,
        Csf csf, dev.cor.ngsild.query.GeoQuery geo, dev.cor.ngsild.query.ScopeQuery scope, QueryExpression q,
        dev.cor.ngsild.policy.NgsildLimits limits, TimeQuery time, MatchBudget budget) {
    static RegistrationQuery of(QueryParams p, LdContext ctx, dev.cor.ngsild.policy.NgsildLimits limits) {
        EntityParser names = new EntityParser(ctx, limits);
        Set<String> ids = new LinkedHashSet<>();
        for (String id : p.list("id")) {
            if (!Syntax.isUri(id)) {
                throw NgsiLdException.badData("id: '" + id + "' is not a URI");
            }
            ids.add(id);
        }
        BoundedPattern idPattern = BoundedPattern.compileOrNull(p.get("idPattern"), "idPattern");
        String type = p.get("type");
        TypeSelection types = type == null || type.isEmpty() ? null : TypeSelection.parse(type, names::typeName);
        Set<String> attrs = new LinkedHashSet<>();
        for (String a : p.list("attrs")) {
            attrs.add(names.attributeName(a));
        }
        String q = p.get("q");
        QueryExpression query = q == null ? null : QueryExpression.parse(q, ctx);
        String georel = p.get("georel");
        dev.cor.ngsild.query.GeoQuery geo = null;
        if (georel != null || p.get("geometry") != null || p.get("coordinates") != null) {
            geo = dev.cor.ngsild.query.GeoQuery.parse(georel, p.get("geometry"), p.get("coordinates"), p.get("geoproperty"), ctx);
        }
        String scopeQ = p.get("scopeQ");
        dev.cor.ngsild.query.ScopeQuery scope = scopeQ == null ? null : dev.cor.ngsild.query.ScopeQuery.parse(scopeQ);
        TimeQuery time = null;
        if (p.get("timerel") != null || p.get("timeAt") != null) {
            time = TimeQuery.of(p.get("timerel"), p.get("timeAt"), p.get("endTimeAt"), p.get("timeproperty"));
        }
        Csf csf = p.get("csf") == null ? null : Csf.parse(p.get("csf"), ctx);
        if (ids.isEmpty() && idPattern == null && types == null && attrs.isEmpty() && csf == null && q == null
                && geo == null && scope == null && time == null) {
            // § 5.10.2.4 (TP 037_02): neither entity types nor attribute names
            throw NgsiLdException.badData("a query of registrations names entity types or attribute names (or an id,"
                    + " idPattern, csf)");
        }
        // one budget for the request's patterns (its idPattern, its q) over every registration
        return new RegistrationQuery(ids, idPattern, types, attrs, csf, geo, scope, query, limits, time,
                MatchBudget.request());
    }

    boolean test(Registration r, long now) {
        // § 5.10.2.4: without a temporal query, the sources of latest information (TP 037_08); with
        // one, those whose interval it meets (037_09)
        if (time == null ? Registrations.temporal(r) : !time.test(r)) {
            return false;
        }
        if (csf != null && !csf.test(r)) {
            return false;
        }
        if (q != null && !q.test(asEntity(r, limits), budget)) {
            return false;
        }
        if (geo != null) {
            // location, observationSpace or operationSpace (§ 5.10.2.4); a registration without it does not match
            String g = geo.geoproperty();
            String member = g.substring(Math.max(g.lastIndexOf('/'), g.lastIndexOf('#')) + 1);
            JsonNode geometry = Set.of("location", "observationSpace", "operationSpace").contains(member)
                    ? r.document().get(member) : null;
            if (geometry == null || !geo.testGeometry(geometry)) {
                return false;
            }
        }
        if (scope != null) {
            List<String> scopes = new ArrayList<>();
            JsonNode sc = r.document().get("scope");
            if (sc != null) {
                if (sc.isArray()) {
                    sc.forEach(x -> scopes.add(x.asText()));
                } else {
                    scopes.add(sc.asText());
                }
            }
            if (!scope.testScopes(scopes)) {
                return false;
            }
        }
        if (ids.isEmpty() && idPattern == null && types == null && attrs.isEmpty()) {
            return true;
        }
        for (Registration.Info info : r.information()) {
            if (testInfo(info)) {
                return true;
            }
        }
        return false;
    }

    private boolean testInfo(Registration.Info info) {
        if (!attrs.isEmpty() && !Coverage.matches(new Registration(null, null, List.of(info), null, Set.of(), null,
                Map.of(), null, 0, 0, -1, null, null), new RegistrationLookup.Want(null, null, null, Set.of(), attrs))) {
            return false;
        }
        if (info.entities().isEmpty()) {
            // § 5.2.10: without entities it registers its attributes of any entity - the lookup's rule
            // (Coverage), so a query lists what a forward would ask (TP 037_05_02)
            return true;
        }
        for (Registration.EntityInfo e : info.entities()) {
            if (types != null && !types.matches(List.of(e.type()))) {
                continue;
            }
            if (ids.isEmpty() && idPattern == null) {
                return true;
            }
            for (String id : ids) {
                if (Coverage.matches(one(e), new RegistrationLookup.Want(null, id, null, Set.of(), Set.of()))) {
                    return true;
                }
            }
            if (idPattern != null && Coverage.matches(one(e),
                    new RegistrationLookup.Want(null, null, idPattern, Set.of(), Set.of(), budget))) {
                return true;
            }
        }
        return false;
    }

    /**
     * The registration as an entity whose properties are its Context Source Properties (the
     * registrant's own members): what a q is matched against (§ 5.10.2.4, TP 037_10_02).
     */
    static Entity asEntity(Registration r, dev.cor.ngsild.policy.NgsildLimits limits) {
        ObjectNode e = JsonNodeFactory.instance.objectNode();
        e.put("id", r.id());
        e.put("type", RegistrationReader.TYPE);
        for (Map.Entry<String, JsonNode> m : r.document().properties()) {
            if (!RegistrationReader.MEMBERS.contains(m.getKey()) && !m.getKey().equals("information")) {
                ObjectNode p = e.putObject(m.getKey());
                p.put("type", "Property");
                p.set("value", m.getValue());
            } else if (Set.of("location", "observationSpace", "operationSpace").contains(m.getKey())) {
                ObjectNode p = e.putObject(m.getKey()); // a geoQ of a csourceSubscription matches these
                p.put("type", "GeoProperty");
                p.set("value", m.getValue());
            }
        }
        try {
            return dev.cor.ngsild.model.EntityEditor.create(new EntityParser(r.context(), limits)
                    .entity(e, true, EntityParser.Mode.WHOLE), 0);
        } catch (NgsiLdException notAnEntity) {
            return dev.cor.ngsild.model.EntityEditor.create(new EntityParser(r.context(), limits)
                    .entity(JsonNodeFactory.instance.objectNode().put("id", r.id()).put("type", RegistrationReader.TYPE),
                            true, EntityParser.Mode.WHOLE), 0);
        }
    }

    private static Registration one(Registration.EntityInfo e) {
        return new Registration(null, null, List.of(new Registration.Info(List.of(e), Set.of(), Set.of())), null,
                Set.of(), null, Map.of(), null, 0, 0, -1, null, null);
    }

    /** A DateTime already checked ({@link Syntax#isDateTime}) in epoch milliseconds. */
    private static long millis(String dateTime) {
        return Syntax.epochMillis(dateTime);
    }

    /**
     * A temporal query of registrations (§ 5.10.2.4): matched against the registration's
     * {@code observationInterval} (timeproperty observedAt) or {@code managementInterval}
     * (createdAt, modifiedAt) - an interval that ends open reaches forever.
     */
    record TimeQuery(String rel, long at, long endAt, String interval) {
        /** From its four members (§ 5.2.21, as parameters or a subscription's temporalQ); BadRequestData when malformed. */
        static TimeQuery of(String rel, String timeAt, String endTimeAt, String timeproperty) {
            if (rel == null || !Set.of("before", "after", "between").contains(rel) || timeAt == null
                    || !Syntax.isDateTime(timeAt) || (rel.equals("between") && (endTimeAt == null || !Syntax.isDateTime(endTimeAt)))) {
                throw NgsiLdException.badData("a temporal query is timerel (before, after, between) with timeAt"
                        + " (and endTimeAt for between), as DateTimes");
            }
            String property = timeproperty == null ? "observedAt" : timeproperty;
            if (!Set.of("observedAt", "createdAt", "modifiedAt").contains(property)) {
                throw NgsiLdException.badData("timeproperty is observedAt, createdAt or modifiedAt, not " + property);
            }
            return new TimeQuery(rel, millis(timeAt), rel.equals("between") ? millis(endTimeAt) : 0,
                    property.equals("observedAt") ? "observationInterval" : "managementInterval");
        }

        /** A subscription's {@code temporalQ} (§ 5.11.7), or {@code null} when it has none or a malformed one. */
        static TimeQuery of(JsonNode temporalQ) {
            if (temporalQ == null || !temporalQ.isObject()) {
                return null;
            }
            try {
                return of(text(temporalQ, "timerel"), text(temporalQ, "timeAt"), text(temporalQ, "endTimeAt"),
                        text(temporalQ, "timeproperty"));
            } catch (NgsiLdException e) {
                return null;
            }
        }

        private static String text(JsonNode n, String member) {
            return n.path(member).isTextual() ? n.path(member).asText() : null;
        }

        boolean test(Registration r) {
            JsonNode i = r.document().get(interval);
            if (i == null || !i.isObject() || !i.path("startAt").isTextual() || !Syntax.isDateTime(i.path("startAt").asText())) {
                return false;
            }
            long start = millis(i.path("startAt").asText());
            long end = i.path("endAt").isTextual() && Syntax.isDateTime(i.path("endAt").asText())
                    ? millis(i.path("endAt").asText()) : Long.MAX_VALUE;
            return switch (rel) {
                case "before" -> start < at;
                case "after" -> end > at;
                default -> start < endAt && end > at;
            };
        }
    }
}
