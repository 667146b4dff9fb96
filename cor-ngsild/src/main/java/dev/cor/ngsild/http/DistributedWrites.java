package dev.cor.ngsild.http;

import static dev.cor.ngsild.http.Forwards.param;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Coverage;
import dev.cor.ngsild.federation.Forwarder;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.federation.RegistrationLookup;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.model.Entity;
import dev.cor.rest.client.CorRestClientRequest;

/**
 * Writes of one entity that context source registrations match, and their answers (ETSI GS CIM
 * 009 § 5.6.1-5.6.6, 5.6.17-5.6.19, each one's distributed clause; § 4.3.6.2, 4.3.6.3): every
 * source takes the part of the write it registers ({@link #write}) - the parts of exclusive and
 * redirect registrations are taken out of what this broker does, inclusive ones are done here
 * too, auxiliary registrations take no writes - then this broker does the rest with the
 * application's own operation (the {@code runHere} it is handed) and answers
 * ({@link #distributedWrite}): 201 or 204, the only part's own error, or a 207 - an UpdateResult
 * naming what a source did not take (§ 5.2.18, 5.2.19), or for a whole entity a
 * BatchOperationResult. A malformed write goes nowhere; a create that an exclusive or redirect
 * registration holds at a source that does not take it is a Conflict (§ 5.6.1.4). Called by
 * {@link NgsildApplication} for a write of one entity that {@link DistributedPlan#plan} planned.
 * Stateless; one per application, shared by every loop and worker; a request's state lives in
 * its {@link Exchange}.
 */
final class DistributedWrites {
    private final Config config;
    private final Forwards forwards;
    private final Forwarder forwarder;
    private final DistributedPlan plan;

    DistributedWrites(Config config, Forwards forwards, DistributedPlan plan) {
        this.config = config;
        this.forwards = forwards;
        this.forwarder = forwards.forwarder();
        this.plan = plan;
    }

    // ---------------------------------------------------------------- the forwards (§ 5.6.x.4)

    /**
     * The outcome of a forwarded write: what this broker must still do itself, and who failed.
     *
     * @param localBody the body the local operation runs with (the registered attributes of
     *                  proxied registrations taken out), or {@code null}: nothing is left to do here
     * @param forwarded how many sources took their part
     * @param failures  the attributes a source did not take: name (as the request wrote it) and why
     * @param answers   every forward's answer
     * @param unsupported the exclusive and redirect registrations that hold part of the entity a
     *                  delete cannot reach - their sources do not take deleteEntity (§ 5.6.6.4)
     */
    private record WriteOutcome(JsonNode localBody, boolean localToo, int forwarded, List<String[]> failures,
            List<Forwarder.Answer> answers, List<Registration> unsupported) {
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
    private WriteOutcome write(Exchange x) {
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
        List<Registration> unsupported = x.operation() == Operation.DELETE_ENTITY ? proxiedNotTaking(x, id, types, regs) : List.of();
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
                } else if (a.status() == 207) {
                    // a partial success that does not say what it took: none of its part can be called done
                    for (String p : parts.get(i)) {
                        refused.add(new String[] {p, "the context source answered 207 without an UpdateResult", a.registration().id()});
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
            return new WriteOutcome(null, false, forwarded, failures, answers, unsupported);
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
        return new WriteOutcome(localBody, true, forwarded, failures, answers, unsupported);
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

    /**
     * The exclusive and redirect registrations that hold the entity (or some of its attributes) at
     * a source that does not take the write, {@code taking} being those that do: their part of it
     * cannot be done (§ 5.6.6.4: a Conflict, the whole answer when nothing else was done).
     */
    private List<Registration> proxiedNotTaking(Exchange x, String id, Set<String> types, List<Registration> taking) {
        Set<String> seen = new HashSet<>();
        for (Registration r : taking) {
            seen.add(r.id());
        }
        List<Registration> out = new ArrayList<>();
        for (String op : List.of("retrieveEntity", "queryEntity", "updateEntity", "updateAttrs", "replaceEntity",
                "mergeEntity", "createEntity")) {
            for (Registration r : config.registrations().matching(x.tenant,
                    new RegistrationLookup.Want(op, id, null, types, Set.of()), config.clock().millis())) {
                if ((r.mode() == Registration.Mode.EXCLUSIVE || r.mode() == Registration.Mode.REDIRECT) && seen.add(r.id())) {
                    out.add(r);
                }
            }
        }
        return out;
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

    // ---------------------------------------------------------------- the answer

    /**
     * A write of one entity that registrations match (§ 5.6.x.4): the sources take their parts,
     * this broker does the rest; a part a source did not take makes the answer a 207 whose
     * UpdateResult names it (§ 5.2.18, with the registration, § 5.2.19). When only sources held
     * the entity, its absence here is no error. {@code runHere} runs the local operation on the
     * request (its body by then what is left for this broker), answering it as it would alone.
     */
    void distributedWrite(Exchange x, Consumer<Exchange> runHere) {
        WriteOutcome o = write(x);
        Operation op = x.operation();
        if ((!o.answers().isEmpty() || !o.unsupported().isEmpty()) && (op == Operation.CREATE_ENTITY || op == Operation.DELETE_ENTITY
                || op == Operation.REPLACE_ENTITY || op == Operation.MERGE_ENTITY)) {
            wholeEntityWrite(x, o, runHere);
            return;
        }
        // one UpdateResult for every part: what was asked, less what a source did not take - and what this broker did not
        UpdateResult result = new UpdateResult();
        var parser = new dev.cor.ngsild.model.EntityParser(x.context, config.limits());
        if (x.route.attribute() != null) {
            result.updated(parser.attributeName(x.route.attribute()));
        } else if (x.body != null && x.body.isObject()) {
            for (var m : x.body.properties()) {
                if (!dev.cor.ngsild.model.EntityParser.isEntityMember(m.getKey())) {
                    result.updated(parser.attributeName(m.getKey()));
                }
            }
        }
        for (String[] f : o.failures()) {
            result.notUpdated(f[0], f[1], f[2]);
        }
        x.updateResult = result;
        boolean ranHere = false;
        // here too: what the sources did not take, a whole-entity write, or - nobody having taken any of it - the
        // local operation's own answer (a 404, say)
        if (o.localToo() && (o.hasLocalAttributes() || (o.forwarded() == 0 && o.failures().isEmpty())
                || x.operation() == Operation.DELETE_ENTITY || x.operation() == Operation.CREATE_ENTITY)) {
            x.body = o.localBody();
            try {
                runHere.accept(x); // an update or append of attributes adds its own part to the result and answers it
                ranHere = true;
            } catch (NgsiLdException e) {
                if (o.forwarded() == 0 || e.type() != ErrorType.RESOURCE_NOT_FOUND) {
                    throw e;
                }
                // the entity is only at the sources, which took the write
            }
        }
        if (result.partial()) {
            result.answer(x);
            return;
        }
        if (!ranHere) {
            if (o.forwarded() == 0) {
                throw NgsiLdException.notFound("no entity " + x.route.entityId() + " here nor at the sources registered for it");
            }
            if (x.operation() == Operation.CREATE_ENTITY) {
                x.created("entities", x.body.path("id").asText());
            } else {
                x.noContent();
            }
        }
    }

    /**
     * A write of a whole entity that went to sources (the suite's D001_03, D002_02): each part -
     * here, and each source - succeeds or fails on its own; when one fails and another succeeded,
     * or several failed, the answer is a 207 BatchOperationResult ({@code success}: the entity id,
     * {@code errors}: one per failed part, a source's with its {@code registrationId}); a single
     * failure of the only part is that part's own error.
     */
    private void wholeEntityWrite(Exchange x, WriteOutcome o, Consumer<Exchange> runHere) {
        String id = x.route.entityId() != null ? x.route.entityId() : x.body.path("id").asText();
        int successes = 0;
        BatchResult result = new BatchResult();
        ObjectNode onlyError = null;
        int failures = 0;
        for (Forwarder.Answer a : o.answers()) {
            if (a.warning() == null && a.status() >= 200 && a.status() < 300) {
                successes++;
            } else {
                onlyError = BatchResult.sourceProblem(a);
                result.entityError(id, a.registration().id(), onlyError);
                failures++;
            }
        }
        for (Registration r : o.unsupported()) {
            onlyError = Exchange.problem(new NgsiLdException(ErrorType.CONFLICT, "entity " + id + " is registered "
                    + r.mode().name().toLowerCase(java.util.Locale.ROOT) + " by " + r.id() + ", whose source does not take "
                    + DistributedPlan.operationName(x.operation()) + ": its part cannot be done (§ 5.6.6.4)"));
            result.entityError(id, r.id(), onlyError);
            failures++;
        }
        boolean ranHere = false;
        if (o.localToo() && (o.hasLocalAttributes() || x.operation() == Operation.DELETE_ENTITY
                || x.operation() == Operation.CREATE_ENTITY)) {
            x.body = o.localBody();
            try {
                runHere.accept(x);
                ranHere = true;
                successes++;
            } catch (NgsiLdException e) {
                boolean onlySourcesHadIt = e.type() == ErrorType.RESOURCE_NOT_FOUND && successes > 0 && failures == 0
                        && x.operation() != Operation.DELETE_ENTITY;
                // nothing here and nothing a source could take: the Conflicts alone say why nothing was done
                boolean onlyConflicts = e.type() == ErrorType.RESOURCE_NOT_FOUND && successes == 0
                        && failures == o.unsupported().size() && failures > 0;
                if (!onlySourcesHadIt && !onlyConflicts) {
                    onlyError = Exchange.problem(e);
                    result.entityError(id, null, onlyError);
                    failures++;
                }
            }
        }
        if (failures == 0) {
            if (!ranHere) {
                if (x.operation() == Operation.CREATE_ENTITY) {
                    x.created("entities", id);
                } else {
                    x.noContent();
                }
            }
            return;
        }
        if (successes == 0 && failures == 1) {
            x.request.responseHeaders().remove("Location");
            x.answerPlain(onlyError.path("status").asInt(500), onlyError);
            return;
        }
        if (successes > 0) {
            result.success(id);
        }
        result.answer(x);
    }
}
