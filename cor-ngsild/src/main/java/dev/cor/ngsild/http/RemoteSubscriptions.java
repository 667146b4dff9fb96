package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.EntityMerge;
import dev.cor.ngsild.federation.Forwarder;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.MatchBudget;
import dev.cor.ngsild.subscription.LiveSubscription;
import dev.cor.ngsild.subscription.Subscription;
import dev.cor.ngsild.subscription.Subscriptions;
import dev.cor.rest.CorRestJson;

/**
 * Distributed subscriptions (ETSI GS CIM 009 § 5.8.1.4, 5.8.5.4, 5.8.6): an entity subscription
 * created here is also made, reduced to each source's slice, at every context source whose
 * registration takes {@code createSubscription} - its notifications addressed to this broker
 * ({@value Route#REMOTE_NOTIFY_PATH}), which passes them on to the subscriber under the local
 * subscription's id. A subscription with such copies also has a subscription to context source
 * registrations (§ 5.11.2, id {@code <id>}{@value #SOURCES_SUFFIX}, notified here too), so that a
 * source registered later gets its copy; deleting the subscription deletes the copies and it.
 *
 * <p>The copies - registration and remote id - are kept in the subscription's own document
 * ({@value #COPIES}), so a durable store keeps them with it and a restart finds them. Thread-safe:
 * the remote-id map is concurrent, and the copies of one subscription change under its
 * {@link LiveSubscription}'s monitor, never across a wait (the forwards are sent outside it).
 */
final class RemoteSubscriptions {
    private static final System.Logger LOG = System.getLogger(RemoteSubscriptions.class.getName());
    /** The document member that lists a subscription's copies: {@code [{registrationId, remoteId}]}. */
    static final String COPIES = "cor:remoteCopies";
    /** The id of a subscription's subscription to registrations: its own id and this. */
    static final String SOURCES_SUFFIX = ":sources";
    private static final Set<String> STATUS_MEMBERS = Set.of("status", "createdAt", "modifiedAt", "@context", "isActive");
    private static final Set<String> NOTIFICATION_STATUS = Set.of("status", "timesSent", "timesFailed", "lastNotification",
            "lastSuccess", "lastFailure", "receiverInfo", "notifierInfo", "endpoint");

    /** What this class needs of the subscription resource. */
    interface Resource {
        /** The subscription compacted with {@code ctx}, as a retrieval answers it. */
        ObjectNode render(LiveSubscription s, LdContext ctx);

        /** The subscription with {@code document} in place of its own (kept as an update is). */
        void rebuild(LiveSubscription s, ObjectNode document);

        /** Creates the subscription to registrations {@code body} (§ 5.11.2) in the request's tenant. */
        void createSourcesSubscription(Exchange x, ObjectNode body);

        /** Deletes that subscription to registrations, if it is there. */
        void deleteSourcesSubscription(String tenant, String id);
    }

    private final Config config;
    private final DistributedPlan plan;
    private final Forwards forwards;
    private final Subscriptions subs;
    private final Resource resource;
    /** A copy's id at its source -> {tenant, the local subscription's id}. */
    private final ConcurrentHashMap<String, String[]> byRemoteId = new ConcurrentHashMap<>();
    /**
     * The copies being made: {@code tenant, subscription id, registration id}. Claimed before the
     * copies made are read and freed after the new one is recorded, so that two requests - the
     * registration's own, and the notification of the subscription to registrations it causes -
     * never make the same copy twice.
     */
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
    /** Unique over restarts: it starts from the clock. */
    private final AtomicLong sequence = new AtomicLong(System.currentTimeMillis());

    RemoteSubscriptions(Config config, DistributedPlan plan, Forwards forwards, Subscriptions subs, Resource resource) {
        this.config = config;
        this.plan = plan;
        this.forwards = forwards;
        this.subs = subs;
        this.resource = resource;
    }

    /** A subscription restored at start: its copies' ids are known again. */
    void restored(Subscription d) {
        for (JsonNode c : d.document().path(COPIES)) {
            byRemoteId.put(c.path("remoteId").asText(), new String[] {d.tenant(), d.id()});
        }
    }

    /** Whether the subscription has copies at sources (its delete forwards, and may wait). */
    boolean hasCopies(String tenant, String id) {
        LiveSubscription s = subs.get(tenant, id);
        return s != null && s.definition().document().path(COPIES).size() > 0;
    }

    /**
     * After {@code live} was created here (its 201 set): its copies at the sources that take
     * {@code createSubscription} for its types, then its subscription to registrations. Nothing
     * when none does (the request was planned local) or it says {@code localOnly}.
     */
    void created(Exchange x, LiveSubscription live) {
        Subscription d = live.definition();
        if (plan == null || x.forwards == null || d.document().path("localOnly").asBoolean(false)) {
            return;
        }
        Set<String> types = new LinkedHashSet<>();
        for (Subscription.Selector sel : d.entities()) {
            types.addAll(sel.types());
        }
        copyTo(x, live, plan.subscriptionSources(x, types));
        resource.createSourcesSubscription(x, sourcesSubscription(x, d));
    }

    /**
     * After registration {@code id} was created or updated in the request's tenant: every
     * subscription of the tenant that it serves gets its copy there, if it has none - whether or
     * not a source was registered when the subscription was made.
     */
    void registered(Exchange x, String id) {
        Registration r = plan == null ? null : plan.registration(x.tenant, id);
        if (r == null) {
            return; // gone, expired, or it takes no createSubscription
        }
        for (LiveSubscription live : subs.list(x.tenant)) {
            if (!live.definition().document().path("localOnly").asBoolean(false)) {
                copyTo(x, live, List.of(r));
            }
        }
    }

    /**
     * Makes {@code live}'s copy at each of {@code regs} that has none yet and shares a slice of
     * its entities; the sources that accepted one (2xx) are recorded in its document. A source
     * that refuses is logged; the subscription here stands.
     */
    private void copyTo(Exchange x, LiveSubscription live, List<Registration> regs) {
        Subscription d = live.definition();
        List<String> claimed = new ArrayList<>();
        try {
            List<Registration> todo = new ArrayList<>();
            for (Registration r : regs) {
                String key = d.tenant() + "\n" + d.id() + "\n" + r.id();
                if (r.mode() != Registration.Mode.AUXILIARY && inFlight.add(key)) {
                    claimed.add(key);
                    todo.add(r);
                }
            }
            copyClaimed(x, live, todo);
        } finally {
            inFlight.removeAll(claimed);
        }
    }

    /** {@link #copyTo} for the registrations this request claimed: those without a copy yet get one. */
    private void copyClaimed(Exchange x, LiveSubscription live, List<Registration> regs) {
        Subscription d = live.definition();
        Set<String> copied = new java.util.HashSet<>();
        for (JsonNode c : live.definition().document().path(COPIES)) {
            copied.add(c.path("registrationId").asText());
        }
        String callback = x.baseUrl() + Route.REMOTE_NOTIFY_PATH;
        List<Forwarder.Outgoing> outs = new ArrayList<>();
        List<String> remoteIds = new ArrayList<>();
        for (Registration r : regs) {
            ArrayNode slice = slice(d, r);
            if (copied.contains(r.id()) || slice.isEmpty()) {
                continue;
            }
            String remoteId = d.id() + ":" + sequence.incrementAndGet();
            outs.add(forwards.subscriptionForward(x, r, "POST", "subscriptions", copy(live, slice, remoteId, callback),
                    d.context()));
            remoteIds.add(remoteId);
        }
        if (outs.isEmpty()) {
            return;
        }
        List<Forwarder.Answer> answers = forwards.send(x, outs);
        List<String[]> made = new ArrayList<>();
        for (int i = 0; i < answers.size(); i++) {
            Forwarder.Answer a = answers.get(i);
            if (a.ok()) {
                made.add(new String[] {a.registration().id(), remoteIds.get(i)});
                byRemoteId.put(remoteIds.get(i), new String[] {d.tenant(), d.id()});
            } else {
                LOG.log(System.Logger.Level.WARNING, () -> "cor-ngsild: subscription " + d.id() + " was not made at the"
                        + " source of registration " + a.registration().id() + ": " + (a.warning() != null ? a.warning()
                                : "it answered " + a.status()));
            }
        }
        if (made.isEmpty()) {
            return;
        }
        synchronized (live) {
            ObjectNode doc = live.definition().document().deepCopy();
            ArrayNode list = doc.get(COPIES) instanceof ArrayNode l ? l : doc.putArray(COPIES);
            for (String[] m : made) {
                list.addObject().put("registrationId", m[0]).put("remoteId", m[1]);
            }
            resource.rebuild(live, doc);
        }
    }

    /**
     * The subscription's entities narrowed to what {@code r} registers (§ 5.8.1.4): for each pair
     * of a selector and an EntityInfo of the same type, both ids - only when equal; one id - that
     * one; none - the type alone (and the selector's idPattern). Types in the subscriber's terms.
     */
    private static ArrayNode slice(Subscription d, Registration r) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (Subscription.Selector sel : d.entities()) {
            for (Registration.Info info : r.information()) {
                for (Registration.EntityInfo ei : info.entities()) {
                    if (ei.type() == null || !sel.types().contains(ei.type())) {
                        continue;
                    }
                    if (sel.id() != null && ei.id() != null && !sel.id().equals(ei.id())) {
                        continue;
                    }
                    ObjectNode one = out.addObject();
                    String id = sel.id() != null ? sel.id() : ei.id();
                    if (id != null) {
                        one.put("id", id);
                    } else if (sel.idPattern() != null) {
                        one.put("idPattern", sel.idPattern().pattern());
                    }
                    one.put("type", d.context().compactIri(ei.type()));
                }
            }
        }
        return out;
    }

    /**
     * The reduced copy (§ 5.8.1.4): the subscription as a retrieval would give it, without what
     * this broker keeps, under {@code remoteId}, with {@code entities} the source's slice and
     * notifications addressed here. With {@code splitEntities} it carries no {@code q}: a
     * fragment cannot be judged alone (§ 5.8.6) - this broker judges it merged.
     */
    private byte[] copy(LiveSubscription live, ArrayNode slice, String remoteId, String callback) {
        ObjectNode c = resource.render(live, live.definition().context());
        STATUS_MEMBERS.forEach(c::remove);
        c.remove(COPIES);
        c.put("id", remoteId);
        c.set("entities", slice);
        if (c.path("splitEntities").asBoolean(false)) {
            c.remove("q");
        }
        ObjectNode n = c.get("notification") instanceof ObjectNode o ? o : c.putObject("notification");
        NOTIFICATION_STATUS.forEach(n::remove);
        n.putObject("endpoint").put("uri", callback).put("accept", "application/json");
        try {
            return CorRestJson.mapper().writeValueAsBytes(c);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The subscription to registrations that tells this broker of sources registered later (§ 5.11.2). */
    private static ObjectNode sourcesSubscription(Exchange x, Subscription d) {
        ObjectNode b = JsonNodeFactory.instance.objectNode();
        b.put("id", d.id() + SOURCES_SUFFIX);
        b.put("type", "Subscription");
        ArrayNode entities = b.putArray("entities");
        for (Subscription.Selector sel : d.entities()) {
            for (String t : sel.types()) {
                entities.addObject().put("type", d.context().compactIri(t));
            }
        }
        if (d.expiresAt() != Long.MAX_VALUE) {
            b.put("expiresAt", java.time.Instant.ofEpochMilli(d.expiresAt()).toString());
        }
        b.putObject("notification").putObject("endpoint").put("uri", x.baseUrl() + Route.REMOTE_NOTIFY_PATH)
                .put("accept", "application/json");
        return b;
    }

    /** After the subscription was deleted here: its copies deleted at their sources (§ 5.8.5.4), and its subscription to registrations. */
    void deleted(Exchange x, Subscription d) {
        resource.deleteSourcesSubscription(d.tenant(), d.id() + SOURCES_SUFFIX);
        List<Forwarder.Outgoing> outs = new ArrayList<>();
        for (JsonNode c : d.document().path(COPIES)) {
            String remoteId = c.path("remoteId").asText();
            byRemoteId.remove(remoteId);
            Registration r = plan == null ? null : plan.registration(d.tenant(), c.path("registrationId").asText());
            if (r == null) {
                LOG.log(System.Logger.Level.WARNING, () -> "cor-ngsild: the copy " + remoteId + " of subscription " + d.id()
                        + " stays at its source: registration " + c.path("registrationId").asText() + " is gone");
                continue;
            }
            outs.add(forwards.subscriptionForward(x, r, "DELETE", "subscriptions/" + PercentEncoding.encode(remoteId),
                    null, r.context()));
        }
        if (outs.isEmpty()) {
            return;
        }
        for (Forwarder.Answer a : forwards.send(x, outs)) {
            if (!a.ok() && a.status() != 404) {
                LOG.log(System.Logger.Level.WARNING, () -> "cor-ngsild: a copy of subscription " + d.id()
                        + " was not deleted at the source of registration " + a.registration().id() + ": "
                        + (a.warning() != null ? a.warning() : "it answered " + a.status()));
            }
        }
    }

    /**
     * After the subscription was updated here (§ 5.8.2): the same fragment sent to each copy, but
     * what makes the copy this broker's - its entities (the source's slice), its notification's
     * endpoint (a notification in the fragment carries the copy's own) and receiver information -
     * and, with {@code splitEntities}, its q. A source that refuses is logged.
     */
    void updated(Exchange x, LiveSubscription live, JsonNode fragment) {
        Subscription d = live.definition();
        if (plan == null || !fragment.isObject() || d.document().path(COPIES).isEmpty()) {
            return;
        }
        ObjectNode f = ((ObjectNode) fragment).deepCopy();
        for (String m : List.of("@context", "id", "type", "entities")) {
            f.remove(m);
        }
        if (d.document().path("splitEntities").asBoolean(false)) {
            f.remove("q");
        }
        if (f.get("notification") instanceof ObjectNode n) {
            NOTIFICATION_STATUS.forEach(n::remove);
            // the fragment's notification replaces the copy's whole (§ 5.5.8): it carries the copy's endpoint
            n.putObject("endpoint").put("uri", x.baseUrl() + Route.REMOTE_NOTIFY_PATH).put("accept", "application/json");
        }
        if (f.isEmpty()) {
            return;
        }
        byte[] body;
        try {
            body = CorRestJson.mapper().writeValueAsBytes(f);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        List<Forwarder.Outgoing> outs = new ArrayList<>();
        for (JsonNode c : d.document().path(COPIES)) {
            Registration r = plan.registration(d.tenant(), c.path("registrationId").asText());
            if (r != null) {
                outs.add(forwards.subscriptionForward(x, r, "PATCH",
                        "subscriptions/" + PercentEncoding.encode(c.path("remoteId").asText()), body, x.context));
            }
        }
        if (outs.isEmpty()) {
            return;
        }
        for (Forwarder.Answer a : forwards.send(x, outs)) {
            if (!a.ok()) {
                LOG.log(System.Logger.Level.WARNING, () -> "cor-ngsild: a copy of subscription " + d.id()
                        + " was not updated at the source of registration " + a.registration().id() + ": "
                        + (a.warning() != null ? a.warning() : "it answered " + a.status()));
            }
        }
    }

    /**
     * {@code POST} {@value Route#REMOTE_NOTIFY_PATH}: a source's notification of a copy, passed
     * on to the local subscriber under the local id - with {@code splitEntities}, each entity
     * merged with this broker's own and judged by the subscription's q first (§ 5.8.6) - or a
     * notification of the subscription to registrations: a source registered since gets its copy.
     * 200; 404 for a subscription id this broker did not give out.
     */
    void notified(Exchange x) {
        JsonNode body = x.body;
        if (body == null || !body.isObject() || !body.path("subscriptionId").isTextual() || !body.path("data").isArray()) {
            throw NgsiLdException.badData("a notification is a JSON object with a subscriptionId and a data array");
        }
        String sid = body.get("subscriptionId").asText();
        if (sid.endsWith(SOURCES_SUFFIX)) {
            sourcesNotified(x, sid.substring(0, sid.length() - SOURCES_SUFFIX.length()), body.get("data"));
            return;
        }
        String[] local = byRemoteId.get(sid);
        LiveSubscription s = local == null ? null : subs.get(local[0], local[1]);
        if (s == null) {
            throw NgsiLdException.notFound("no subscription of this broker has a copy " + sid);
        }
        Subscription d = s.definition();
        boolean split = d.document().path("splitEntities").asBoolean(false);
        List<Entity> entities = new ArrayList<>();
        MatchBudget budget = MatchBudget.request();
        for (JsonNode e : body.get("data")) {
            Entity remote;
            try {
                remote = EntityMerge.fromSource(e, x.context, config.limits());
            } catch (NgsiLdException | IllegalArgumentException | NullPointerException ex) {
                throw NgsiLdException.badData("a notified entity is not an NGSI-LD entity: " + ex.getMessage());
            }
            if (split) {
                Entity merged = EntityMerge.merge(config.store().get(d.tenant(), remote.id()), remote, false);
                if (passes(d, merged, budget)) {
                    entities.add(merged);
                }
            } else {
                entities.add(remote);
            }
        }
        subs.notifyEntities(s, entities, x.request);
        x.request.respond(200, null, null);
    }

    /** A notification of the subscription to registrations of {@code localId}: the registrations it names get their copies. */
    private void sourcesNotified(Exchange x, String localId, JsonNode data) {
        List<Registration> regs = new ArrayList<>();
        String tenant = x.tenant;
        for (JsonNode reg : data) {
            Registration r = plan == null ? null : plan.registration(tenant, reg.path("id").asText());
            if (r != null) {
                regs.add(r);
            }
        }
        LiveSubscription live = subs.get(tenant, localId);
        if (live == null) {
            throw NgsiLdException.notFound("no subscription " + localId);
        }
        copyTo(x, live, regs);
        x.request.respond(200, null, null);
    }

    /**
     * Whether a merged entity a source notified passes the subscription's filter; not when its
     * patterns run out of {@code budget} (the notifying source is not answered with an error for
     * the subscriber's pattern).
     */
    private static boolean passes(Subscription d, Entity merged, MatchBudget budget) {
        try {
            return d.filter().matches(merged, budget);
        } catch (NgsiLdException tooCostly) {
            return false;
        }
    }
}
