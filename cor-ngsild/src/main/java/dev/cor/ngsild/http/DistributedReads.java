package dev.cor.ngsild.http;

import static dev.cor.ngsild.http.Forwards.compactNames;
import static dev.cor.ngsild.http.Forwards.compactTypes;
import static dev.cor.ngsild.http.Forwards.param;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Coverage;
import dev.cor.ngsild.federation.EntityBytes;
import dev.cor.ngsild.federation.EntityMerge;
import dev.cor.ngsild.federation.Forwarder;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.federation.RegistrationLookup;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.BoundedPattern;

/**
 * The distributed reads, and the purge (ETSI GS CIM 009 § 4.3.6): Retrieve Entity (§ 5.7.1.4),
 * Query Entities (§ 5.7.2.4), the entity types and attributes of discovery (§ 5.7.5, § 5.7.8) and
 * Purge Entities (§ 5.6.21.4) across this broker and the context sources registered for them:
 * each registration the request reaches ({@link DistributedPlan#reach}) is asked for what it
 * provides, the forwards are started together and awaited together ({@link Forwards#fanOut}), and
 * the answers are merged with what this broker holds ({@link EntityMerge}) before the usual
 * representation is applied. Inclusive sources are merged with the local data; exclusive and
 * redirect ones replace the local copy of what they register; auxiliary ones only fill in
 * attributes nobody else gave. A source that fails leaves its NGSILD-Warning on the answer
 * (§ 6.3.17), never a 500. Called by {@link EntityOperations} (retrieve, query, purge) and
 * {@link DiscoveryOperations} (names). Stateless; one per application, shared by every loop and
 * worker; a request's state lives in its {@link Exchange}.
 */
final class DistributedReads {
    /** How many entities a query asks each source for: its page is cut here, after the merge. */
    private static final int SOURCE_LIMIT = 1000;

    private final Config config;
    private final Forwards forwards;
    private final Forwarder forwarder;
    private final DistributedPlan plan;

    DistributedReads(Config config, Forwards forwards, DistributedPlan plan) {
        this.config = config;
        this.forwards = forwards;
        this.forwarder = forwards.forwarder();
        this.plan = plan;
    }

    // ---------------------------------------------------------------- Retrieve Entity (§ 5.7.1.4)

    /**
     * The entity of {@code GET /entities/{id}} from here and its sources, merged; 404 when nobody
     * has it; {@code null} when one source alone had it and its answer was relayed ({@link #relayable}).
     */
    Entity retrieve(Exchange x) {
        String id = EntityOperations.entityId(x);
        TypeSelection type = x.params.get("type") == null ? null
                : TypeSelection.parse(x.params.get("type"), new dev.cor.ngsild.model.EntityParser(x.context, config.limits())::typeName);
        Entity local = config.store().get(x.tenant, id);
        if (local != null && type != null && !type.matches(local.types())) {
            local = null;
        }
        Set<String> attrs = expandedAttrs(x, x.params);
        Set<String> types = type != null ? type.types() : local != null ? new LinkedHashSet<>(local.types()) : Set.of();
        List<Registration> regs = new ArrayList<>(plan.reach(x, id, null, types, attrs));
        int retrievers = regs.size();
        regs.addAll(plan.queryServers(x, id, null, types, attrs, regs));
        List<Forwarder.Outgoing> outs = new ArrayList<>(regs.size());
        List<Registration> asked = new ArrayList<>(regs.size());
        for (int k = 0; k < regs.size(); k++) {
            Registration r = regs.get(k);
            Set<String> provided = Coverage.provided(r, id, types);
            Set<String> ask = Coverage.narrow(provided, attrs);
            if (ask != null && ask.isEmpty()) {
                continue; // it provides none of the attributes asked for
            }
            if (r.mode() == Registration.Mode.EXCLUSIVE || r.mode() == Registration.Mode.REDIRECT) {
                local = EntityMerge.without(local, provided); // § 4.3.6.3: what it registers is never served from here
            }
            Set<String> sendTypes = type != null ? type.types() : Coverage.typesOf(r, id);
            StringBuilder q = new StringBuilder();
            param(q, "type", compactTypes(r, sendTypes));
            param(q, "attrs", compactNames(r, ask));
            if (k < retrievers) {
                boolean relay = local == null && regs.size() == 1 && relayable(x, r);
                outs.add(new Forwarder.Outgoing(r, forwards.request(x, r, "GET", "entities/" + PercentEncoding.encode(id), q, null, !relay), relay));
            } else if (r.operations().contains("queryEntity")) {
                if (sendTypes.isEmpty() && ask == null) {
                    continue; // a query by id alone is not one (6.4.3.2): nothing to bound it with
                }
                param(q, "id", id);
                outs.add(new Forwarder.Outgoing(r, forwards.request(x, r, "GET", "entities", q, null)));
            } else {
                // queryBatch: POST /entityOperations/query with a Query of this id (5.2.23)
                com.fasterxml.jackson.databind.node.ObjectNode query = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
                query.put("type", "Query");
                var sel = query.putArray("entities").addObject();
                sel.put("id", id);
                if (!sendTypes.isEmpty()) {
                    sel.put("type", compactTypes(r, Set.of(sendTypes.iterator().next())));
                } else {
                    continue; // an EntitySelector names a type
                }
                if (ask != null) {
                    var an = query.putArray("attrs");
                    for (String iri : ask) {
                        an.add(compactNames(r, Set.of(iri)));
                    }
                }
                outs.add(new Forwarder.Outgoing(r, forwards.request(x, r, "POST", "entityOperations/query", new StringBuilder(),
                        query.toString().getBytes(StandardCharsets.UTF_8))));
            }
            asked.add(r);
        }
        Entity merged = local;
        List<Forwarder.Answer> answers = forwards.fanOut(x, outs);
        if (outs.size() == 1 && outs.get(0).raw()) {
            if (relayed(x, id, answers.get(0))) {
                return null;
            }
            Forwarder.Answer parsed = forwarder.parsed(answers.get(0));
            if (parsed != answers.get(0) && parsed.warning() != null) {
                Forwards.warn(x, parsed); // the body was not JSON (a failure to answer was reported by the fan-out)
            }
            answers = List.of(parsed);
        }
        List<Entity> auxiliary = new ArrayList<>();
        for (Forwarder.Answer a : answers) {
            if (!a.ok() || a.body() == null) {
                continue;
            }
            JsonNode one = a.body();
            if (one.isArray()) { // a source asked with a query answers an array
                one = null;
                for (JsonNode n : a.body()) {
                    if (id.equals(n.path("id").asText())) {
                        one = n;
                    }
                }
                if (one == null) {
                    continue; // not there
                }
            }
            Entity e = forwards.entityOf(x, a, one);
            if (e == null || !e.id().equals(id)) {
                if (e != null) {
                    Forwards.warn(x, forwarder.invalid(a, "answered another entity than " + id));
                }
                continue;
            }
            if (a.registration().mode() == Registration.Mode.AUXILIARY) {
                auxiliary.add(e);
            } else {
                merged = EntityMerge.merge(merged, e, false);
            }
        }
        for (Entity e : auxiliary) {
            merged = EntityMerge.merge(merged, e, true);
        }
        if (merged == null) {
            throw NgsiLdException.notFound("no entity " + id + " here nor at the " + asked.size()
                    + " context source(s) registered for it");
        }
        return merged;
    }

    /**
     * Whether a retrieve that one source alone answers (nothing here, one registration) can
     * relay the source's entity as it comes: the answer is {@code application/json} compacted with
     * the context the registration was made with, in the normalized form, and the request asks
     * nothing of the representation but {@code attrs} (which the forward carries, narrowed) - so
     * there is nothing to merge and nothing to render again. The chain of brokers is this case.
     */
    private static boolean relayable(Exchange x, Registration r) {
        if (x.accept != MediaType.JSON || r.mode() == Registration.Mode.AUXILIARY || r.context() == null
                || !(x.context == r.context() || (x.context.isCore() && r.context().isCore()))) {
            return false;
        }
        for (String name : x.params.asMap().keySet()) {
            switch (name) {
                case "attrs", "type", "local" -> { }
                case "options" -> {
                    if (!x.params.get("options").equals("normalized")) {
                        return false;
                    }
                }
                default -> {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Answers with the source's entity as it came - its bytes, neither parsed into a tree nor
     * written again - when they are one: a JSON object of the id asked for, with a type and no
     * {@code @context} of its own, and nothing after it. {@code false} leaves the answer to the
     * merge (which reports what is wrong with it).
     */
    private boolean relayed(Exchange x, String id, Forwarder.Answer a) {
        if (!a.ok() || a.bytes() == null || !EntityBytes.isEntity(a.bytes(), id)) {
            return false;
        }
        x.answer(200, MediaType.JSON, a.bytes(), x.context);
        return true;
    }

    // ---------------------------------------------------------------- discovery (§ 5.7.5, 5.7.8)

    /**
     * The entity types ({@code types}) or attribute names ({@code !types}) that the sources
     * registered for the request's operation list at {@code GET /{path}} - their {@code member}
     * array, read with each registration's context - expanded. A source that fails adds its
     * warning and nothing else.
     */
    Set<String> names(Exchange x, String path, String member, boolean types) {
        List<Registration> regs = config.registrations().matching(x.tenant,
                new RegistrationLookup.Want(DistributedPlan.operationName(x.operation()), null, null, Set.of(), Set.of()), config.clock().millis());
        List<Forwarder.Outgoing> outs = new ArrayList<>(regs.size());
        for (Registration r : regs) {
            outs.add(new Forwarder.Outgoing(r, forwards.request(x, r, "GET", path, new StringBuilder(), null, false)));
        }
        Set<String> out = new java.util.TreeSet<>();
        for (Forwarder.Answer a : forwards.fanOut(x, outs)) {
            if (!a.ok() || a.body() == null) {
                continue;
            }
            JsonNode list = a.body().path(member);
            if (!list.isArray()) {
                Forwards.warn(x, forwarder.invalid(a, "answered no " + member));
                continue;
            }
            LdContext ctx = a.registration().context() != null ? a.registration().context() : x.context;
            for (JsonNode n : list) {
                if (n.isTextual()) {
                    String iri = ctx.expand(n.asText());
                    out.add(iri != null ? iri : n.asText());
                }
            }
        }
        return out;
    }

    // ---------------------------------------------------------------- Purge Entities (§ 5.6.21.4)

    /**
     * The purge at every source whose registration matches its selection and takes
     * {@code purgeEntity} (by any mode but auxiliary: § 5.6.21.4 names inclusive, exclusive and
     * redirect): {@code DELETE /entities} with the request's own parameters, the types and
     * attribute names written in the registration's context. Their answers, in order.
     */
    List<Forwarder.Answer> purge(Exchange x, Set<String> types, Set<String> attrs) {
        List<Forwarder.Outgoing> outs = new ArrayList<>();
        List<Registration> regs = plan.reach(x, null, x.params.get("idPattern"), types, attrs);
        for (Registration r : regs) {
            if (r.mode() == Registration.Mode.AUXILIARY) {
                continue;
            }
            StringBuilder q = new StringBuilder();
            for (var p : x.params.asMap().entrySet()) {
                String value = switch (p.getKey()) {
                    case "local" -> null; // the source's own sources are its business (localOnly adds it back)
                    case "type" -> compactTypes(r, types);
                    case "attrs", "keep", "drop" -> compactNames(r, expandedNames(x, x.params.list(p.getKey())));
                    default -> p.getValue();
                };
                param(q, p.getKey(), value);
            }
            outs.add(new Forwarder.Outgoing(r, forwards.request(x, r, "DELETE", "entities", q, null, false)));
        }
        return forwards.fanOut(x, outs);
    }

    /**
     * The exclusive and redirect registrations that hold what a purge selects - their entities are
     * at their sources only - but do not take {@code purgeEntity}: their part cannot be done
     * (§ 5.6.21.4, a Conflict), each as a failed answer naming the registration.
     */
    List<Forwarder.Answer> purgeRefusals(Exchange x, Set<String> types, Set<String> attrs) {
        Set<String> taking = new HashSet<>();
        plan.reach(x, null, x.params.get("idPattern"), types, attrs).forEach(r -> taking.add(r.id()));
        List<Forwarder.Answer> out = new ArrayList<>();
        BoundedPattern pattern = BoundedPattern.compileOrNull(x.params.get("idPattern"), "idPattern");
        for (String op : List.of("retrieveEntity", "queryEntity")) {
            for (Registration r : config.registrations().matching(x.tenant,
                    new RegistrationLookup.Want(op, null, pattern, types, attrs), config.clock().millis())) {
                if ((r.mode() == Registration.Mode.EXCLUSIVE || r.mode() == Registration.Mode.REDIRECT) && taking.add(r.id())) {
                    out.add(new Forwarder.Answer(r, 409, null, forwarder.warning(299, r,
                            "holds entities the purge selects, and its source does not take purgeEntity")));
                }
            }
        }
        return out;
    }

    /** Attribute names expanded with the request's context, the system ones left out (they name no attribute). */
    private static Set<String> expandedNames(Exchange x, List<String> terms) {
        Set<String> out = new LinkedHashSet<>();
        for (String t : terms) {
            if (!EntityOperations.SYSTEM_ATTRIBUTES.contains(t)) {
                out.add(x.context.expand(t));
            }
        }
        return out;
    }

    // ---------------------------------------------------------------- Query Entities (§ 5.7.2.4)

    /**
     * The page of a distributed query: every source asked for the entities its registration
     * provides, the local matches added, each entity merged by id, the whole query checked again
     * on the merged entity (a q on an attribute of one source, § 4.3.6.7), and the page cut from
     * the union in id order - so {@code limit}, {@code offset} and {@code count} mean the union.
     */
    EntityQuery.Page query(Exchange x, QueryParams params, EntityQuery query, Page asked) {
        List<String> ids = params.list("id");
        String idPattern = params.get("idPattern");
        TypeSelection type = params.get("type") == null ? null
                : TypeSelection.parse(params.get("type"), new dev.cor.ngsild.model.EntityParser(x.context, config.limits())::typeName);
        Set<String> attrs = expandedAttrs(x, params);
        // Query Entities is one operation with two bindings (§ 4.20: queryEntity GET, queryBatch POST): a source
        // serving either is asked, by the binding it registered (the suite's D011_02_red, D011_03_inc, D011_04_inc)
        List<Registration> regs = plan.queryServers(x, ids.size() == 1 ? ids.get(0) : null, idPattern,
                type != null ? type.types() : Set.of(), attrs, List.of());
        if (params.get("csf") != null) {
            // § 5.7.2.4: only the registrations whose Context Source Properties the filter matches are asked
            Csf csf = Csf.parse(params.get("csf"), x.context);
            regs.removeIf(r -> !csf.test(r));
        }
        // the local matches: all of them when counted, else as many as the page can need
        int need = asked.count() ? Integer.MAX_VALUE : (int) Math.min(Integer.MAX_VALUE, (long) asked.offset() + asked.limit() + 1);
        EntityQuery.Page local = query.run(config.store(), x.tenant, 0, need, asked.count());
        TreeMap<String, Entity> byId = new TreeMap<>();
        for (Entity e : local.entities()) {
            byId.put(e.id(), e);
        }
        List<Forwarder.Outgoing> outs = new ArrayList<>(regs.size());
        for (Registration r : regs) {
            Set<String> provided = Coverage.provided(r, null, type != null ? type.types() : Set.of());
            Set<String> ask = Coverage.narrow(provided, attrs);
            if (ask != null && ask.isEmpty()) {
                continue;
            }
            StringBuilder q = new StringBuilder();
            Set<String> regTypes = Coverage.typesOf(r, null);
            Set<String> sendTypes = type != null ? type.types() : regTypes;
            if (type == null && idPattern == null && ids.isEmpty() && ask == null && regTypes.isEmpty()) {
                continue; // nothing bounds what it would be asked for: a query needs a type, attrs or an id pattern
            }
            param(q, "type", compactTypes(r, sendTypes));
            if (!ids.isEmpty()) {
                param(q, "id", String.join(",", ids));
            }
            param(q, "idPattern", idPattern);
            param(q, "attrs", compactNames(r, ask));
            // § 5.7.2.4: with splitEntities the filters "shall be removed before forwarding" (applied to the union here)
            boolean filters = sameContext(x.context, r.context()) && !params.bool("splitEntities", false);
            if (!r.operations().contains("queryEntity")) {
                StringBuilder limit = new StringBuilder();
                param(limit, "limit", Integer.toString(SOURCE_LIMIT));
                outs.add(new Forwarder.Outgoing(r, forwards.request(x, r, "POST", "entityOperations/query", limit,
                        Forwards.queryBody(r, sendTypes, ids, idPattern, ask, filters ? params : null))));
                continue;
            }
            if (filters) {
                // the same terms mean the same IRIs there: the source may filter for us (the merge checks again)
                for (String p : List.of("q", "scopeQ", "georel", "geometry", "coordinates", "geoproperty")) {
                    param(q, p, params.get(p));
                }
            }
            param(q, "limit", Integer.toString(SOURCE_LIMIT));
            outs.add(new Forwarder.Outgoing(r, forwards.request(x, r, "GET", "entities", q, null)));
        }
        List<Forwarder.Answer> answers = forwards.fanOut(x, outs);
        // proxied registrations: the local copy of what they register is not served (§ 4.3.6.3)
        for (Forwarder.Answer a : answers) {
            Registration r = a.registration();
            if (r.mode() != Registration.Mode.EXCLUSIVE && r.mode() != Registration.Mode.REDIRECT) {
                continue;
            }
            for (String id : new ArrayList<>(byId.keySet())) {
                Entity e = byId.get(id);
                if (Coverage.covers(r, e)) {
                    Entity left = EntityMerge.without(e, Coverage.provided(r, id, new LinkedHashSet<>(e.types())));
                    if (left == null) {
                        byId.remove(id);
                    } else {
                        byId.put(id, left);
                    }
                }
            }
        }
        List<Entity> auxiliary = new ArrayList<>();
        for (Forwarder.Answer a : answers) {
            if (!a.ok() || a.body() == null) {
                continue;
            }
            if (!a.body().isArray()) {
                Forwards.warn(x, forwarder.invalid(a, "answered a query with no array of entities"));
                continue;
            }
            for (JsonNode n : a.body()) {
                Entity e = forwards.entityOf(x, a, n);
                if (e == null) {
                    break; // one invalid entity: the whole answer is not used
                }
                if (!Coverage.covers(a.registration(), e)) {
                    continue; // § 4.3.6.1: not what it registers (another id, outside its idPattern), not taken from it
                }
                Set<String> registered = Coverage.provided(a.registration(), e.id(), new LinkedHashSet<>(e.types()));
                if (registered != null) {
                    e = EntityMerge.only(e, registered); // asked for every attribute it registers, it gives this entity its own
                }
                if (a.registration().mode() == Registration.Mode.AUXILIARY) {
                    auxiliary.add(e);
                } else {
                    byId.merge(e.id(), e, (mine, theirs) -> EntityMerge.merge(mine, theirs, false));
                }
            }
        }
        for (Entity e : auxiliary) {
            byId.merge(e.id(), e, (mine, theirs) -> EntityMerge.merge(mine, theirs, true));
        }
        List<Entity> all = new ArrayList<>(byId.size());
        for (Entity e : byId.values()) {
            if (query.test(e)) {
                all.add(e);
            }
        }
        int count = all.size(); // counted, every local match is in the union (the local run was not cut)
        int from = Math.min(asked.offset(), all.size());
        int to = (int) Math.min((long) asked.offset() + asked.limit(), all.size());
        return new EntityQuery.Page(new ArrayList<>(all.subList(from, to)), count,
                (long) asked.offset() + asked.limit() < all.size());
    }

    // ---------------------------------------------------------------- the request's terms

    /** The request's attrs (or pick's attributes) expanded; empty: all. */
    private Set<String> expandedAttrs(Exchange x, QueryParams params) {
        Set<String> out = new LinkedHashSet<>();
        var parser = new dev.cor.ngsild.model.EntityParser(x.context, config.limits());
        for (String a : params.list("attrs")) {
            out.add(parser.attributeName(a));
        }
        return out;
    }

    private static boolean sameContext(LdContext a, LdContext b) {
        return a == b || (a != null && b != null && a.linkUrl() != null && a.linkUrl().equals(b.linkUrl()));
    }
}
