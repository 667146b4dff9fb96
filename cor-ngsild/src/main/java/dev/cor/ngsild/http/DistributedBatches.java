package dev.cor.ngsild.http;

import static dev.cor.ngsild.http.Forwards.param;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Coverage;
import dev.cor.ngsild.federation.Forwarder;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.rest.client.CorRestClientRequest;

/**
 * The context sources' part of a batch (ETSI GS CIM 009 § 5.6.7-5.6.10, 5.6.20, each one's
 * distributed clause): every registration that takes the batch operation (auxiliary ones take no
 * writes) gets one batch of the same operation with the entities it registers - only the
 * attributes it provides - written in the request's context (or, in ld+json, each entity's own);
 * what exclusive and redirect registrations take is taken out of what this broker does. The
 * outcome, a {@link BatchPlan}, says per entity what is left to do here and which source did or
 * did not take its part; {@link BatchOperations}, its caller, does the rest and answers.
 * Stateless; one per application, shared by every loop and worker.
 */
final class DistributedBatches {
    private final Config config;
    private final Forwards forwards;
    private final Forwarder forwarder;
    private final DistributedPlan plan;

    DistributedBatches(Config config, Forwards forwards, DistributedPlan plan) {
        this.config = config;
        this.forwards = forwards;
        this.forwarder = forwards.forwarder();
        this.plan = plan;
    }

    /**
     * What the sources did with a batch, and what is left for this broker.
     *
     * @param local  per item of the batch: what this broker does with it (the attributes of
     *               proxied registrations taken out), or {@code null}: nothing, the sources have it
     * @param done    the ids of entities some source took its part of
     * @param created of those, the ids some source said it created (its 201, § 6.15.3.1): an upsert
     *                that only sources took is "created" only by their word
     * @param failed  the ids of entities some source did not take its part of, and why
     */
    record BatchPlan(List<JsonNode> local, Set<String> done, Set<String> created,
            java.util.Map<String, SourceFailure> failed) {
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
        Set<String> created = new HashSet<>();
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
                if (a.status() == 201) {
                    // its body lists the ids it created; without one (or an unreadable one), all it was sent
                    boolean listed = a.body() != null && a.body().isArray();
                    for (String id : sent.get(k)) {
                        if (!listed || containsText(a.body(), id)) {
                            created.add(id);
                        }
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
        return new BatchPlan(local, done, created, failed);
    }

    private static boolean containsText(JsonNode array, String text) {
        for (JsonNode e : array) {
            if (text.equals(e.asText(null))) {
                return true;
            }
        }
        return false;
    }
}
