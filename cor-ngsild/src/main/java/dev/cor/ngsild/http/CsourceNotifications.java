package dev.cor.ngsild.http;

import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Coverage;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.federation.RegistrationLookup;
import dev.cor.ngsild.federation.Registrations;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.query.MatchBudget;
import dev.cor.ngsild.subscription.LiveSubscription;
import dev.cor.ngsild.subscription.Subscription;
import dev.cor.ngsild.subscription.Subscriptions;

/**
 * The notifications of the subscriptions to context source registrations (ETSI GS CIM 009
 * § 5.11.7; the ContextSourceNotification of § 5.3.2): a registration created, updated or
 * deleted notifies each csourceSubscription of its tenant it concerns - newlyMatching, updated or
 * noLongerMatching - and a csourceSubscription is told of the registrations it matches when it
 * is made or updated, and on every period when it is periodic. Whether a subscription concerns a
 * registration: its entity selectors and watchedAttributes against the registration's
 * information, its temporalQ against the registration's intervals, its q and geoQ against the
 * registrant's own members and location.
 * <p>
 * Holds no state of its own - the subscriptions, their queues and counters are the
 * {@link Subscriptions}', the registrations the registry's: one per application, shared by every
 * loop. The notifications of a change are queued on the loop of the request that made it and
 * leave after its answer; a periodic subscription's are gathered on the loop it ticks on.
 */
final class CsourceNotifications {
    private final Config config;
    private final Registrations regs;
    private final Subscriptions csourceSubscriptions;

    /**
     * {@code csourceSubscriptions}: where the subscriptions to registrations are - each change of
     * a registration notifies those it concerns.
     */
    CsourceNotifications(Config config, Subscriptions csourceSubscriptions) {
        this.config = config;
        // the registry, as RegistrationOperations has it: without one no csourceSubscription is made (501)
        this.regs = config.registrations() instanceof Registrations r ? r : null;
        this.csourceSubscriptions = csourceSubscriptions;
    }

    /**
     * A registration changed ({@code before} null: created; {@code after} null: deleted): each
     * csourceSubscription of the tenant it matched or matches is notified (§ 5.11.7) -
     * newlyMatching, updated or noLongerMatching - with the registration compacted with the
     * subscriber's context, sent after this request's answer through the subscriptions' sender.
     */
    void notifySubscribers(Exchange x, Registration before, Registration after) {
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
        return new String(Exchange.json(n), java.nio.charset.StandardCharsets.UTF_8);
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
}
