package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Coverage;
import dev.cor.ngsild.federation.OperationNames;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.federation.RegistrationConflicts;
import dev.cor.ngsild.federation.RegistrationLookup;
import dev.cor.ngsild.federation.Registrations;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.query.MatchBudget;
import dev.cor.ngsild.store.RegistrationKeeper;
import dev.cor.ngsild.subscription.LiveSubscription;
import dev.cor.ngsild.subscription.Subscription;
import dev.cor.ngsild.subscription.Subscriptions;

/**
 * The context source registration resource (ETSI GS CIM 009 § 5.9, § 5.10, § 6.8-6.9): register,
 * retrieve, query, update (a merge of the fragment's members, the whole checked again) and delete,
 * per tenant. {@link RegistrationReader} reads a CSourceRegistration (§ 5.2.9) into its expanded
 * form - entity types, property and relationship names and the registrant's own members as IRIs,
 * operation groups resolved (§ 4.20) - and checks every member; {@link RegistrationConflicts}
 * checks the mode's rules against what the broker holds (§ 5.9.2.4), and
 * {@link RegistrationRenderer} answers a retrieval compacted with the request's context. Runs
 * inline on the loop, or in a coroutine when the request's context must be downloaded.
 */
final class RegistrationOperations {
    private final Config config;
    private final Registrations regs;
    private final RegistrationReader reader;

    RegistrationOperations(Config config) {
        this.config = config;
        this.reader = new RegistrationReader(config);
        // the registry when the broker has one wired in; without it the resource is not served (501)
        this.regs = config.registrations() instanceof Registrations r ? r : null;
    }

    /** Whether the broker keeps registrations (it does unless built without a registry). */
    boolean served() {
        return regs != null;
    }

    // ---------------------------------------------------------------- the operations

    void create(Exchange x) {
        ObjectNode body = object(x.body);
        DefinedMembers.registration(body);
        JsonNode id = body.get("id");
        String regId;
        if (id == null) {
            regId = "urn:ngsi-ld:ContextSourceRegistration:" + UUID.randomUUID();
        } else if (!id.isTextual() || !Syntax.isUri(id.asText())) {
            throw NgsiLdException.badData("the registration's id is a URI, not " + id);
        } else {
            regId = id.asText();
        }
        checkType(body.get("type"), true);
        ObjectNode doc = reader.expand(body, x.context, true);
        Registration r = reader.build(regId, x.tenant, doc, x.context, false);
        RegistrationConflicts.conflictsWithEntities(r, config.store());
        if (regs.add(r, existing -> RegistrationConflicts.conflictsWithRegistrations(r, existing)) == null) {
            throw new NgsiLdException(ErrorType.ALREADY_EXISTS, "registration " + regId + " exists already");
        }
        x.created("csourceRegistrations", regId);
        notifySubscribers(x, null, r);
    }

    void retrieve(Exchange x) {
        Registrations.Live l = existing(x);
        x.answer(200, x.accept, RegistrationRenderer.write(RegistrationRenderer.render(l, x.context,
                x.accept == MediaType.LD_JSON, sysAttrs(x))), x.context);
    }

    void list(Exchange x) {
        Page page = Page.of(x.params, config.limits());
        RegistrationQuery query = RegistrationQuery.of(x.params, x.context, config.limits());
        boolean ld = x.accept == MediaType.LD_JSON;
        boolean sysAttrs = sysAttrs(x);
        List<Registrations.Live> hits = new ArrayList<>();
        long now = config.clock().millis();
        for (Registrations.Live l : regs.list(x.tenant)) {
            if (query.test(l.definition(), now)) {
                hits.add(l);
            }
        }
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (int i = page.offset(); i < hits.size() && out.size() < page.limit(); i++) {
            out.add(RegistrationRenderer.render(hits.get(i), x.context, ld, sysAttrs));
        }
        if (page.count()) {
            x.request.responseHeaders().set("NGSILD-Results-Count", Integer.toString(hits.size()));
        }
        x.answer(200, x.accept, RegistrationRenderer.write(out), x.context);
        if (page.limit() > 0) {
            // 4.12, 6.3.10: the previous and the next page, as a query of entities links them
            if (page.offset() > 0) {
                x.request.responseHeaders().add("Link", EntityOperations.pageLink(x, "csourceRegistrations", page.limit(),
                        Math.max(0, page.offset() - page.limit()), "prev"));
            }
            if (page.offset() + page.limit() < hits.size()) {
                x.request.responseHeaders().add("Link", EntityOperations.pageLink(x, "csourceRegistrations", page.limit(),
                        page.offset() + page.limit(), "next"));
            }
        }
    }

    void update(Exchange x) {
        Registrations.Live l = existing(x);
        ObjectNode fragment = object(x.body);
        if (fragment.isEmpty() || (fragment.size() == 1 && fragment.has("@context"))) {
            throw NgsiLdException.badData("the fragment is empty: nothing to update");
        }
        DefinedMembers.registration(fragment);
        Registration old = l.definition();
        JsonNode id = fragment.get("id");
        if (id != null && !id.asText().equals(old.id())) {
            throw NgsiLdException.badData("a registration's id cannot change (" + id + ")");
        }
        checkType(fragment.get("type"), false);
        ObjectNode merged = old.document().deepCopy();
        for (Map.Entry<String, JsonNode> m : reader.expand(fragment, x.context, false).properties()) {
            if (m.getValue().isNull()) {
                merged.remove(m.getKey()); // a merge: null removes the member (§ 5.5.8)
            } else {
                merged.set(m.getKey(), m.getValue());
            }
        }
        // the registration keeps the context it was made with: forwards are compacted with it
        Registration r = reader.build(old.id(), x.tenant, merged, old.context(), false);
        RegistrationConflicts.conflictsWithEntities(r, config.store());
        if (!regs.update(l, r, existing -> RegistrationConflicts.conflictsWithRegistrations(r, existing))) {
            throw NgsiLdException.notFound("no registration " + old.id());
        }
        x.noContent();
        notifySubscribers(x, old, r);
    }

    void delete(Exchange x) {
        String id = registrationId(x);
        Registrations.Live l = regs.get(x.tenant, id);
        if (l == null || !regs.remove(x.tenant, id)) {
            throw NgsiLdException.notFound("no registration " + id);
        }
        x.noContent();
        notifySubscribers(x, l.definition(), null);
    }

    // ---------------------------------------------------------------- csourceSubscriptions (§ 5.11)

    private Subscriptions csourceSubscriptions;

    /** Where the subscriptions to registrations are: each change of a registration notifies those it concerns. */
    void notifyTo(Subscriptions subscriptions) {
        this.csourceSubscriptions = subscriptions;
    }

    /**
     * A registration changed ({@code before} null: created; {@code after} null: deleted): each
     * csourceSubscription of the tenant it matched or matches is notified (§ 5.11.7) -
     * newlyMatching, updated or noLongerMatching - with the registration compacted with the
     * subscriber's context, sent after this request's answer through the subscriptions' sender.
     */
    private void notifySubscribers(Exchange x, Registration before, Registration after) {
        Subscriptions subs = csourceSubscriptions;
        if (subs == null || subs.count(x.tenant) == 0) {
            return;
        }
        for (LiveSubscription s : subs.list(x.tenant)) {
            Subscription d = s.definition();
            // each subscription's patterns with a budget of their own: the registrant pays for none beyond it
            boolean was = before != null && concerns(d, before) && filtered(d, before, MatchBudget.oneMatch());
            boolean is = after != null && concerns(d, after) && filtered(d, after, MatchBudget.oneMatch());
            if (!was && !is) {
                continue;
            }
            String reason = !was ? "newlyMatching" : is ? "updated" : "noLongerMatching";
            // its q and geoQ against the registration's own members and location (TP 047_14, 047_15)
            Registration shown = is ? after : before;
            subs.notifyRendered(s, text(notified(shown, d)), reason, x.request);
        }
    }

    /**
     * A csourceSubscription created or updated: a notification of the registrations it matches
     * now (TP 047_02, 047_03, 047_16).
     */
    void initialNotification(Exchange x, LiveSubscription s) {
        String data = matchingNow(s);
        if (!data.isEmpty()) {
            csourceSubscriptions.notifyRendered(s, data, "newlyMatching", x.request);
        }
    }

    /** The registrations in force that {@code s} matches, as notification data (objects joined by commas). */
    String matchingNow(LiveSubscription s) {
        Subscription d = s.definition();
        StringBuilder data = new StringBuilder();
        long now = config.clock().millis();
        MatchBudget budget = MatchBudget.request();
        for (Registrations.Live l : regs.list(d.tenant())) {
            if (l.live(now) && concerns(d, l.definition()) && filtered(d, l.definition(), budget)) {
                data.append(data.isEmpty() ? "" : ",").append(text(notified(l.definition(), d)));
            }
        }
        return data.toString();
    }

    /** Whether the subscription's q passes {@code r}; not when its patterns run out of {@code budget}. */
    private boolean filtered(Subscription d, Registration r, MatchBudget budget) {
        try {
            return d.filter() == dev.cor.ngsild.subscription.SubscriptionFilter.ALL
                    || d.filter().matches(RegistrationQuery.asEntity(r, config.limits()), budget);
        } catch (NgsiLdException tooCostly) {
            return false;
        }
    }

    /**
     * A registration as a csourceSubscription's notification carries it: compacted with the
     * subscriber's context, its information narrowed to the RegistrationInfo the subscription
     * matches (5.11.7: "only matching Registration information", TP 047_03) - all of it when none
     * does (a registration that no longer matches) - and each EntityInfo's type as an array, as the
     * suite reads it (Table 5.2.8-1 allows both).
     */
    private static ObjectNode notified(Registration r, Subscription d) {
        ObjectNode out = RegistrationRenderer.render(r, null, d.context(), false, false);
        if (!(out.get("information") instanceof ArrayNode all)) {
            return out;
        }
        ArrayNode kept = JsonNodeFactory.instance.arrayNode();
        for (int i = 0; i < r.information().size() && i < all.size(); i++) {
            Registration one = new Registration(r.tenant(), r.id(), List.of(r.information().get(i)), r.mode(), r.operations(),
                    r.endpoint(), r.contextSourceInfo(), r.sourceTenant(), 0, 0, -1, r.context(), r.document());
            if (concerns(d, one)) {
                kept.add(all.get(i));
            }
        }
        ArrayNode shown = kept.isEmpty() ? all : kept;
        for (JsonNode info : shown) {
            if (info.get("entities") instanceof ArrayNode es) {
                for (JsonNode e : es) {
                    if (e.get("type") instanceof JsonNode t && t.isTextual()) {
                        ((ObjectNode) e).putArray("type").add(t.asText());
                    }
                }
            }
        }
        out.set("information", shown);
        return out;
    }

    private static String text(ObjectNode n) {
        return new String(RegistrationRenderer.write(n), java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * Whether a csourceSubscription concerns a registration: one of its entity selectors matches
     * one of the registration's EntityInfo - by type, and by id or pattern where both name one
     * (two patterns: yes) - and its watchedAttributes meet the registered attributes (none named on
     * either side: all). A subscription without entities watches attributes alone.
     */
    static boolean concerns(Subscription d, Registration r) {
        if (!d.document().has("temporalQ")) {
            if (Registrations.temporal(r)) {
                return false; // without a temporalQ, the sources of latest information (TP 047_08)
            }
        } else {
            // § 5.11.7: with one, matched against the observationInterval (observedAt) or the managementInterval
            // (createdAt, modifiedAt) - TPs 047_10, 047_11; a malformed one matches nothing
            RegistrationQuery.TimeQuery time = RegistrationQuery.TimeQuery.of(d.document().get("temporalQ"));
            if (time == null || !time.test(r)) {
                return false;
            }
        }
        Set<String> watched = d.watchedAttributes() == null ? Set.of() : d.watchedAttributes();
        for (Registration.Info info : r.information()) {
            if (!Coverage.matches(new Registration(null, null, List.of(info), null, Set.of(), null, Map.of(), null,
                    0, 0, -1, null, null), new RegistrationLookup.Want(null, null, null, Set.of(), watched))) {
                continue;
            }
            if (d.entities().isEmpty() || info.entities().isEmpty()) {
                return true;
            }
            for (Subscription.Selector sel : d.entities()) {
                for (Registration.EntityInfo e : info.entities()) {
                    if (!sel.typeMatch().test(List.of(e.type()))) {
                        continue;
                    }
                    if (sel.id() != null && !e.selectsId(sel.id())) {
                        continue;
                    }
                    if (sel.idPattern() != null && e.id() != null && !subscriptionFinds(sel, e.id())) {
                        continue;
                    }
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Whether a csourceSubscription's idPattern is found in a registered id. The registrant who
     * asks is not to blame for the subscription's pattern: one that runs out of budget does not
     * concern the registration (and fails nothing).
     */
    private static boolean subscriptionFinds(Subscription.Selector sel, String id) {
        try {
            return sel.idPattern().find(id);
        } catch (NgsiLdException tooCostly) {
            return false;
        }
    }

    /**
     * Puts a registration kept from before a restart in force again, its context processed from
     * what was kept (no download); an {@code expiresAt} passed meanwhile leaves it expired, not invalid.
     */
    void restore(RegistrationKeeper.Kept k) {
        LdContext ctx = config.contexts().restore(k.context(), k.documents());
        regs.restore(reader.build(k.id(), k.tenant(), k.document(), ctx, true), k.createdAt(), k.modifiedAt());
    }

    /** Has {@code keeper} keep every registration from now on; returns what it kept from before. */
    List<RegistrationKeeper.Kept> keepWith(RegistrationKeeper keeper) {
        return regs.keepWith(keeper, this::kept);
    }

    /** What the durable store keeps of {@code r}: its document, its context and the documents behind it. */
    RegistrationKeeper.Kept kept(Registration r, long createdAt, long modifiedAt) {
        return new RegistrationKeeper.Kept(r.tenant(), r.id(), r.document(), r.context().echo(),
                config.contexts().remoteDocuments(r.context()), createdAt, modifiedAt);
    }

    private static void checkType(JsonNode type, boolean required) {
        if ((type == null && required) || (type != null && !RegistrationReader.TYPE.equals(type.asText()))) {
            throw NgsiLdException.badData("a registration's type is \"" + RegistrationReader.TYPE + "\"");
        }
    }

    /** {@code options=sysAttrs}: createdAt and modifiedAt too (§ 5.10.1.4); no other option applies here. */
    private static boolean sysAttrs(Exchange x) {
        boolean sysAttrs = false;
        for (String o : x.params.list("options")) {
            switch (o) {
                case "sysAttrs" -> sysAttrs = true;
                case "keyValues", "concise", "normalized", "count" -> { }
                default -> throw NgsiLdException.badData("options: '" + o + "' is not an option here (sysAttrs)");
            }
        }
        return sysAttrs;
    }

    private Registrations.Live existing(Exchange x) {
        String id = registrationId(x);
        Registrations.Live l = regs.get(x.tenant, id);
        if (l == null) {
            throw NgsiLdException.notFound("no registration " + id);
        }
        return l;
    }

    /** The path's registration id, a URI (BadRequestData otherwise, § 5.9.3.4, § 5.10.1.4). */
    private static String registrationId(Exchange x) {
        String id = x.route.entityId();
        if (id == null || !Syntax.isUri(id)) {
            throw NgsiLdException.badData("the registration id '" + id + "' is not a URI");
        }
        return id;
    }

    private static ObjectNode object(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw NgsiLdException.badData("a registration is a JSON object");
        }
        return (ObjectNode) body;
    }
}
