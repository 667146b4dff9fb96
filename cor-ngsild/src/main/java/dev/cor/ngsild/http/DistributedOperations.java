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
import dev.cor.ngsild.error.ErrorType;
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
import dev.cor.rest.client.CorRestClientRequest;

/**
 * Retrieve Entity and Query Entities across this broker and the context sources registered for
 * them (ETSI GS CIM 009 § 4.3.6, § 5.7.1.4, § 5.7.2.4): which registrations a request reaches,
 * the forwards (started together, awaited together: {@link Forwarder}), and the answers merged
 * with what this broker holds ({@link EntityMerge}) before the usual representation is applied.
 * Inclusive sources are merged with the local data; exclusive and redirect ones replace the local
 * copy of what they register; auxiliary ones only fill in attributes nobody else gave. A source
 * that fails leaves its NGSILD-Warning on the answer (§ 6.3.17), never a 500. Stateless; one per
 * application.
 */
final class DistributedOperations {
    /** How many entities a query asks each source for: its page is cut here, after the merge. */
    private static final int SOURCE_LIMIT = 1000;

    private final Config config;
    private final Forwards forwards;
    private final Forwarder forwarder;
    private final DistributedPlan plan;

    DistributedOperations(Config config, Forwards forwards, DistributedPlan plan) {
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

    // ---------------------------------------------------------------- writes of one entity (§ 5.6.x)

    /**
     * The outcome of a forwarded write: what this broker must still do itself, and who failed.
     *
     * @param localBody the body the local operation runs with (the registered attributes of
     *                  proxied registrations taken out), or {@code null}: nothing is left to do here
     * @param forwarded how many sources took their part
     * @param failures  the attributes a source did not take: name (as the request wrote it) and why
     * @param answers   every forward's answer
     */
    record WriteOutcome(JsonNode localBody, boolean localToo, int forwarded, List<String[]> failures,
            List<Forwarder.Answer> answers) {
        /** Whether the body has attributes left for this broker (a write of the path's entity or attribute always has). */
        boolean hasLocalAttributes() {
            if (localBody == null || !localBody.isObject()) {
                return true;
            }
            for (var m : localBody.properties()) {
                if (!dev.cor.ngsild.model.EntityParser.isEntityMember(m.getKey())) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Forwards a write of one entity to the registrations that serve it (§ 5.6.x.4: "if the
     * entity is registered exclusively or redirect, forward ... ; inclusive: forward and do it
     * here too"; auxiliary registrations take no writes, § 4.3.6.2): each source gets the same
     * request with only the attributes it registers, in the request's own terms and context
     * (its body is written in them); the attributes of exclusive and redirect registrations are
     * taken out of what this broker does itself.
     */
    WriteOutcome write(Exchange x) {
        String id = x.route.entityId() != null ? EntityOperations.entityId(x)
                : x.body != null && x.body.path("id").isTextual() ? x.body.path("id").asText() : null;
        dev.cor.ngsild.model.EntityParser parser = new dev.cor.ngsild.model.EntityParser(x.context, config.limits());
        validate(x, parser); // a malformed write goes nowhere (the suite's D001_02_inc)
        Entity local = id == null ? null : config.store().get(x.tenant, id);
        Set<String> types = new LinkedHashSet<>();
        if (local != null) {
            types.addAll(local.types());
        }
        JsonNode bodyType = x.body != null && x.body.isObject() ? x.body.get("type") : null;
        if (bodyType != null) {
            for (JsonNode t : bodyType.isArray() ? bodyType : List.of(bodyType)) {
                if (t.isTextual()) {
                    types.add(parser.typeName(t.asText()));
                }
            }
        }
        String pathAttr = x.route.attribute() == null ? null : parser.attributeName(x.route.attribute());
        // the body's attribute members by their expanded names
        java.util.Map<String, String> bodyAttrs = new java.util.LinkedHashMap<>();
        if (x.body != null && x.body.isObject() && pathAttr == null) {
            for (var m : x.body.properties()) {
                if (!dev.cor.ngsild.model.EntityParser.isEntityMember(m.getKey())) {
                    bodyAttrs.put(parser.attributeName(m.getKey()), m.getKey());
                }
            }
        }
        List<Registration> regs = plan.reach(x, id, null, types,
                pathAttr != null ? Set.of(pathAttr) : new LinkedHashSet<>(bodyAttrs.keySet()));
        if (x.operation() == Operation.CREATE_ENTITY) {
            conflicts(x, id, types, bodyAttrs.keySet(), regs);
        }
        boolean wholeEntity = x.operation() == Operation.DELETE_ENTITY || x.operation() == Operation.CREATE_ENTITY
                || x.operation() == Operation.REPLACE_ENTITY;
        Set<String> keptOut = new HashSet<>();
        boolean nothingLocal = false;
        List<Forwarder.Outgoing> outs = new ArrayList<>();
        List<Set<String>> parts = new ArrayList<>();
        for (Registration r : regs) {
            if (r.mode() == Registration.Mode.AUXILIARY) {
                continue;
            }
            Set<String> provided = Coverage.provided(r, id, types);
            Set<String> part;
            if (pathAttr != null) {
                if (provided != null && !provided.contains(pathAttr)) {
                    continue;
                }
                part = Set.of(pathAttr);
            } else if (provided == null) {
                part = bodyAttrs.keySet();
            } else {
                part = new LinkedHashSet<>(bodyAttrs.keySet());
                part.retainAll(provided);
                if (part.isEmpty() && !wholeEntity) {
                    continue; // none of the attributes written is its
                }
            }
            boolean proxied = r.mode() == Registration.Mode.EXCLUSIVE || r.mode() == Registration.Mode.REDIRECT;
            if (proxied) {
                // the whole entity, or the one attribute of the path, is the source's: nothing is done here
                nothingLocal |= provided == null || pathAttr != null;
                keptOut.addAll(part);
            }
            outs.add(new Forwarder.Outgoing(r, writeRequest(x, r, bodyAttrs, part, pathAttr != null)));
            parts.add(part);
        }
        List<Forwarder.Answer> answers = forwards.fanOut(x, outs);
        List<String[]> failures = new ArrayList<>();
        Set<String> taken = new HashSet<>();
        List<String[]> refused = new ArrayList<>();
        int forwarded = 0;
        for (int i = 0; i < answers.size(); i++) {
            Forwarder.Answer a = answers.get(i);
            if (a.warning() == null && a.status() >= 200 && a.status() < 300) {
                forwarded++;
                if (a.status() == 207 && a.body() != null && a.body().path("updated").isArray()) {
                    // only names of the part it was sent count, and its reasons are not quoted: a source's
                    // text never reaches the client (the registration is named instead)
                    Set<String> part = parts.get(i);
                    for (JsonNode u : a.body().path("updated")) { // an UpdateResult: what it took of its part
                        String iri = partNamed(parser, u, part);
                        if (iri != null) {
                            taken.add(iri);
                        }
                    }
                    for (JsonNode n : a.body().path("notUpdated")) { // and what it did not take, and why (§ 5.2.19)
                        String iri = partNamed(parser, n.path("attributeName"), part);
                        if (iri != null) {
                            refused.add(new String[] {iri, "not updated by the context source", a.registration().id()});
                        }
                    }
                } else {
                    taken.addAll(parts.get(i));
                }
                continue;
            }
            if (a.warning() == null && a.status() == 404) {
                continue; // the source does not have it: no failure, and nothing done there
            }
            String why = a.warning() != null ? a.warning() : "the source answered " + a.status();
            Set<String> part = parts.get(i);
            if (part.isEmpty()) {
                failures.add(new String[] {null, why, a.registration().id()});
            }
            for (String p : part) {
                failures.add(new String[] {p, why, a.registration().id()});
            }
        }
        for (String[] f : refused) {
            // an update of attributes (§ 5.6.2) that another part took - here or at another source - is done
            if (x.operation() != Operation.UPDATE_ATTRIBUTES || !(taken.contains(f[0])
                    || (!nothingLocal && local != null && local.attributes().containsKey(f[0])))) {
                failures.add(f);
            }
        }
        if (nothingLocal) {
            return new WriteOutcome(null, false, forwarded, failures, answers);
        }
        JsonNode localBody = x.body;
        if (x.operation() == Operation.UPDATE_ATTRIBUTES && local != null) {
            // § 5.6.2: an attribute a source updated that this broker does not hold is no "does not exist" here
            for (String iri : taken) {
                if (!local.attributes().containsKey(iri)) {
                    keptOut.add(iri);
                }
            }
        }
        if (!keptOut.isEmpty() && x.body != null && x.body.isObject() && pathAttr == null) {
            com.fasterxml.jackson.databind.node.ObjectNode o = ((com.fasterxml.jackson.databind.node.ObjectNode) x.body).deepCopy();
            for (String iri : keptOut) {
                o.remove(bodyAttrs.get(iri));
            }
            localBody = o;
        }
        return new WriteOutcome(localBody, true, forwarded, failures, answers);
    }

    /**
     * The attribute of {@code part} (expanded names) that a source's UpdateResult names with
     * {@code name}, or {@code null}: a source answers for the part it was sent, and whatever else it
     * names - an entity's member, a keyword, garbage - is not the client's write.
     */
    private static String partNamed(dev.cor.ngsild.model.EntityParser parser, JsonNode name, Set<String> part) {
        if (!name.isTextual()) {
            return null;
        }
        try {
            String iri = parser.attributeName(name.asText());
            return part.contains(iri) ? iri : null;
        } catch (NgsiLdException notAnAttribute) {
            return null;
        }
    }

    /** Reads the write's body as the local operation will, so that one it refuses is forwarded nowhere. */
    private void validate(Exchange x, dev.cor.ngsild.model.EntityParser parser) {
        if (x.body == null) {
            return;
        }
        dev.cor.ngsild.model.EntityParser.Mode whole = dev.cor.ngsild.model.EntityParser.Mode.WHOLE;
        switch (x.operation()) {
            case CREATE_ENTITY -> parser.entity(objectOf(x.body), true, whole);
            case REPLACE_ENTITY, APPEND_ATTRIBUTES -> EntityOperations.somethingToWrite(parser.entity(objectOf(x.body), false, whole));
            case MERGE_ENTITY -> EntityOperations.somethingToWrite(
                    parser.entity(objectOf(x.body), false, dev.cor.ngsild.model.EntityParser.Mode.MERGE));
            case UPDATE_ATTRIBUTES -> EntityOperations.somethingToWrite(
                    parser.entity(objectOf(x.body), false, dev.cor.ngsild.model.EntityParser.Mode.PATCH));
            default -> {
                // an attribute's body: its operation checks it (nothing of it was forwarded wrongly: one attribute, one source)
            }
        }
    }

    private static JsonNode objectOf(JsonNode body) {
        if (!body.isObject()) {
            throw NgsiLdException.invalid("the body is a JSON object (an entity or a fragment)");
        }
        return body;
    }

    /**
     * § 5.6.1.4 (the suite's D001_02_exc, 5614_01): an entity whose registered attributes an
     * exclusive or redirect registration holds, which does not take createEntity, cannot be
     * created here either - Conflict, and nothing is forwarded.
     */
    private void conflicts(Exchange x, String id, Set<String> types, Set<String> attrs, List<Registration> creating) {
        Set<String> ok = new HashSet<>();
        for (Registration r : creating) {
            ok.add(r.id());
        }
        for (String op : List.of("retrieveEntity", "queryEntity", "updateEntity", "updateAttrs", "replaceEntity",
                "deleteEntity", "mergeEntity")) {
            for (Registration r : config.registrations().matching(x.tenant,
                    new RegistrationLookup.Want(op, id, null, types, Set.of()), config.clock().millis())) {
                if (ok.contains(r.id()) || (r.mode() != Registration.Mode.EXCLUSIVE && r.mode() != Registration.Mode.REDIRECT)) {
                    continue;
                }
                Set<String> provided = Coverage.provided(r, id, types);
                if (provided == null || provided.stream().anyMatch(attrs::contains)) {
                    throw new NgsiLdException(ErrorType.CONFLICT, "entity " + id + " is registered " + r.mode().name()
                            .toLowerCase(java.util.Locale.ROOT) + " by " + r.id() + ", whose source does not take createEntity:"
                            + " it cannot be created here (§ 5.6.1.4)");
                }
            }
        }
    }

    /** The forward of a write: the request's method, path and parameters, its context, only {@code part} of its body. */
    private CorRestClientRequest writeRequest(Exchange x, Registration r, java.util.Map<String, String> bodyAttrs,
            Set<String> part, boolean attributePath) {
        String path = x.request.path().substring(NgsildApplication.BASE_PATH.length());
        StringBuilder q = new StringBuilder(x.request.query() == null ? "" : x.request.query());
        if (Forwards.localOnly(r)) {
            param(q, "local", "true");
        }
        String url = r.endpoint() + NgsildApplication.BASE_PATH + path + (q.isEmpty() ? "" : "?" + q);
        CorRestClientRequest.Builder b = CorRestClientRequest.builder(x.request.method(), url).timeoutMs(forwarder.timeoutMs(r));
        forwards.headers(x, r, b);
        JsonNode body = x.body;
        if (body != null && !attributePath && body.isObject()) {
            com.fasterxml.jackson.databind.node.ObjectNode o = ((com.fasterxml.jackson.databind.node.ObjectNode) body).deepCopy();
            for (var e : bodyAttrs.entrySet()) {
                if (!part.contains(e.getKey())) {
                    o.remove(e.getValue());
                }
            }
            body = o;
        }
        forwards.writeBody(x, r, b, body, attributePath, item -> x.context);
        return b.build();
    }


    // ---------------------------------------------------------------- batches (§ 5.6.7-5.6.10, 5.6.20)

    /**
     * What the sources did with a batch, and what is left for this broker.
     *
     * @param local  per item of the batch: what this broker does with it (the attributes of
     *               proxied registrations taken out), or {@code null}: nothing, the sources have it
     * @param done   the ids of entities some source took its part of
     * @param failed the ids of entities some source did not take its part of, and why
     */
    record BatchPlan(List<JsonNode> local, Set<String> done, java.util.Map<String, SourceFailure> failed) {
    }

    /** An entity's part a source did not take: its registration, and the error (the source's type and status, our words). */
    record SourceFailure(String registrationId, NgsiLdException error) {
    }

    /**
     * Forwards a batch: each matching registration (auxiliary ones take no writes) gets one batch
     * request of the same operation with the entities it registers - only the attributes it
     * provides - and the request's context; exclusive and redirect registrations' parts are
     * taken out of what this broker does (an entity they register whole, entirely).
     *
     * @param contextOf the context an item of the batch is read with (the request's, or in ld+json its own)
     */
    BatchPlan batch(Exchange x, JsonNode body, java.util.function.Function<JsonNode, LdContext> contextOf) {
        boolean delete = x.operation() == Operation.BATCH_DELETE;
        int n = body.size();
        String[] ids = new String[n];
        List<Set<String>> types = new ArrayList<>(n);
        List<java.util.Map<String, String>> attrs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            JsonNode item = body.get(i);
            Set<String> t = new LinkedHashSet<>();
            java.util.Map<String, String> a = new java.util.LinkedHashMap<>();
            try {
                if (delete) {
                    ids[i] = item.isTextual() ? item.asText() : null;
                    Entity e = ids[i] == null ? null : config.store().get(x.tenant, ids[i]);
                    if (e != null) {
                        t.addAll(e.types());
                    }
                } else if (item.isObject() && item.path("id").isTextual()) {
                    ids[i] = item.get("id").asText();
                    var parser = new dev.cor.ngsild.model.EntityParser(contextOf.apply(item), config.limits());
                    JsonNode type = item.get("type");
                    for (JsonNode tn : type == null ? List.<JsonNode>of() : type.isArray() ? type : List.of(type)) {
                        t.add(parser.typeName(tn.asText()));
                    }
                    Entity e = config.store().get(x.tenant, ids[i]);
                    if (e != null) {
                        t.addAll(e.types());
                    }
                    for (var m : item.properties()) {
                        if (!dev.cor.ngsild.model.EntityParser.isEntityMember(m.getKey())) {
                            a.put(parser.attributeName(m.getKey()), m.getKey());
                        }
                    }
                }
            } catch (NgsiLdException e) {
                ids[i] = null; // the local operation reports what is wrong with it
            }
            types.add(t);
            attrs.add(a);
        }
        List<JsonNode> local = new ArrayList<>(n);
        for (JsonNode item : body) {
            local.add(item);
        }
        List<Forwarder.Outgoing> outs = new ArrayList<>();
        List<List<String>> sent = new ArrayList<>();
        for (Registration r : plan.reach(x, null, null, Set.of(), Set.of())) {
            if (r.mode() == Registration.Mode.AUXILIARY) {
                continue;
            }
            boolean proxied = r.mode() == Registration.Mode.EXCLUSIVE || r.mode() == Registration.Mode.REDIRECT;
            com.fasterxml.jackson.databind.node.ArrayNode part = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode();
            List<String> partIds = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (ids[i] == null || !Coverage.covers(r, ids[i], types.get(i))) {
                    continue;
                }
                Set<String> provided = Coverage.provided(r, ids[i], types.get(i));
                if (delete) {
                    part.add(ids[i]);
                    if (proxied && provided == null) {
                        local.set(i, null);
                    }
                } else {
                    com.fasterxml.jackson.databind.node.ObjectNode o = ((com.fasterxml.jackson.databind.node.ObjectNode) body.get(i)).deepCopy();
                    boolean any = provided == null;
                    for (var e : attrs.get(i).entrySet()) {
                        if (provided != null && !provided.contains(e.getKey())) {
                            o.remove(e.getValue());
                        } else {
                            any = true;
                        }
                    }
                    if (!any && x.operation() != Operation.BATCH_CREATE && x.operation() != Operation.BATCH_UPSERT) {
                        continue; // none of the attributes written is its
                    }
                    part.add(o);
                    if (proxied) {
                        if (provided == null) {
                            local.set(i, null);
                        } else if (local.get(i) != null) {
                            com.fasterxml.jackson.databind.node.ObjectNode rest = ((com.fasterxml.jackson.databind.node.ObjectNode) local.get(i)).deepCopy();
                            for (var e : attrs.get(i).entrySet()) {
                                if (provided.contains(e.getKey())) {
                                    rest.remove(e.getValue());
                                }
                            }
                            local.set(i, rest);
                        }
                    }
                }
                partIds.add(ids[i]);
            }
            if (part.isEmpty()) {
                continue;
            }
            String kind = x.request.path().substring(x.request.path().lastIndexOf('/') + 1);
            StringBuilder q = new StringBuilder(x.request.query() == null ? "" : x.request.query());
            if (Forwards.localOnly(r)) {
                param(q, "local", "true");
            }
            CorRestClientRequest.Builder b = CorRestClientRequest.builder("POST", r.endpoint() + NgsildApplication.BASE_PATH
                    + "entityOperations/" + kind + (q.isEmpty() ? "" : "?" + q)).timeoutMs(forwarder.timeoutMs(r));
            forwards.headers(x, r, b);
            forwards.writeBody(x, r, b, part, false, contextOf);
            outs.add(new Forwarder.Outgoing(r, b.build()));
            sent.add(partIds);
        }
        List<Forwarder.Answer> answers = forwards.fanOut(x, outs);
        Set<String> done = new HashSet<>();
        java.util.Map<String, SourceFailure> failed = new java.util.HashMap<>();
        for (int k = 0; k < answers.size(); k++) {
            Forwarder.Answer a = answers.get(k);
            String regId = a.registration().id();
            if (a.warning() == null && a.status() >= 200 && a.status() < 300) {
                Set<String> bad = new HashSet<>();
                if (a.status() == 207 && a.body() != null) {
                    for (JsonNode e : a.body().path("errors")) {
                        String eid = e.path("entityId").asText(null);
                        if (eid != null) {
                            bad.add(eid);
                            // the source's error type and status; its text is not ours to pass on
                            ErrorType type = ErrorType.ofSource(e.path("error"), e.path("error").path("status").asInt(503));
                            failed.put(eid, new SourceFailure(regId, new NgsiLdException(type, "the context source (registration "
                                    + regId + ") did not take entity " + eid)));
                        }
                    }
                }
                for (String id : sent.get(k)) {
                    if (!bad.contains(id)) {
                        done.add(id);
                    }
                }
            } else {
                String why = a.warning() != null ? a.warning() : "the source answered " + a.status();
                // the error it answered (a 400 of the whole batch, ...); no answer or an unusable one: unavailable
                ErrorType type = a.status() >= 400 && a.status() <= 599 ? ErrorType.ofSource(a.body(), a.status())
                        : ErrorType.SERVICE_UNAVAILABLE;
                for (String id : sent.get(k)) {
                    failed.put(id, new SourceFailure(regId, new NgsiLdException(type, "registration " + regId + ": " + why)));
                }
            }
        }
        return new BatchPlan(local, done, failed);
    }

    // ---------------------------------------------------------------- forwarding

    // ---------------------------------------------------------------- names in a registration's terms (what it provides: Coverage)

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
