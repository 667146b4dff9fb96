package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.UnaryOperator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.ContextRef;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.EntityRenderer;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.query.BoundedPattern;
import dev.cor.ngsild.query.GeoQuery;
import dev.cor.ngsild.query.LinkedEntities;
import dev.cor.ngsild.query.QueryExpression;
import dev.cor.ngsild.query.ScopeQuery;
import dev.cor.ngsild.store.SubscriptionKeeper;
import dev.cor.ngsild.subscription.LiveSubscription;
import dev.cor.ngsild.subscription.Subscription;
import dev.cor.ngsild.subscription.SubscriptionFilter;
import dev.cor.ngsild.subscription.Subscriptions;

/**
 * The subscription resource (ETSI GS CIM 009 § 5.8, § 6.10-6.11): create, retrieve, list,
 * update (the fragment's members replace the subscription's, § 5.5.8) and delete, per tenant. It reads a Subscription
 * (§ 5.2.12) into its expanded form - entity types, watched attributes and notified attributes
 * as IRIs, with the subscriber's context kept for the notifications - checks every member, and
 * answers a retrieval compacted with the context of the request, with the status the broker
 * keeps. Runs inline on the loop, or in a coroutine when a {@code jsonldContext} must be downloaded.
 */
final class SubscriptionOperations {
    /** The members the broker keeps: a subscriber's values for them are ignored (Table 5.2.12-2). */
    private static final Set<String> KEPT = Set.of("status", "createdAt", "modifiedAt", "deletedAt", RemoteSubscriptions.COPIES);
    private static final Set<String> KEPT_NOTIFICATION = Set.of("status", "timesSent", "timesFailed",
            "lastNotification", "lastSuccess", "lastFailure");
    private static final Set<String> FORMATS = Set.of("normalized", "concise", "keyValues", "simplified");

    private final Config config;
    private final Subscriptions subs;
    /** {@code subscriptions}, or {@code csourceSubscriptions} (§ 5.11: the same data type, of registrations). */
    private final String resource;
    /** What a created or updated subscription does next (a csourceSubscription: a notification of what it matches). */
    private final java.util.function.BiConsumer<Exchange, LiveSubscription> onCreated;
    /** The copies of entity subscriptions at context sources (§ 5.8.1.4), or {@code null}: none are made. */
    private RemoteSubscriptions remote;

    SubscriptionOperations(Config config) {
        this(config, config.subscriptions(), "subscriptions", (x, s) -> { });
    }

    SubscriptionOperations(Config config, Subscriptions subs, String resource,
            java.util.function.BiConsumer<Exchange, LiveSubscription> onCreated) {
        this.config = config;
        this.subs = subs;
        this.resource = resource;
        this.onCreated = onCreated;
    }

    /**
     * Makes this resource's subscriptions distributed (§ 5.8.1.4): copies at the sources that
     * take {@code createSubscription}, each with a subscription to registrations in
     * {@code sources}. Called once, by the application as it is built.
     */
    void distribute(DistributedPlan plan, Forwards forwards, SubscriptionOperations sources) {
        this.remote = new RemoteSubscriptions(config, plan, forwards, subs, new RemoteSubscriptions.Resource() {
            @Override
            public ObjectNode render(LiveSubscription s, LdContext ctx) {
                return SubscriptionOperations.this.render(s, ctx, false, true, false); // a copy's body, as it always was
            }

            @Override
            public void rebuild(LiveSubscription s, ObjectNode document) {
                Subscription old = s.definition();
                subs.update(s, build(old.id(), old.tenant(), document, old.context(), old.brokerUrl(), true));
            }

            @Override
            public void createSourcesSubscription(Exchange x, ObjectNode body) {
                sources.createInternal(x, body);
            }

            @Override
            public void deleteSourcesSubscription(String tenant, String id) {
                sources.subs.remove(tenant, id);
            }
        });
    }

    /** Whether the path's subscription has copies at sources: its delete forwards (and may wait). */
    boolean hasRemoteCopies(Exchange x) {
        return remote != null && x.route.entityId() != null && remote.hasCopies(x.tenant, x.route.entityId());
    }

    /** After a registration was created or updated: the subscriptions it serves get their copies there (§ 5.8.1.4). */
    void registered(Exchange x, String registrationId) {
        if (remote != null) {
            remote.registered(x, registrationId);
        }
    }

    /** {@code POST /ngsi-ld/ex/remote-notify}: a source's notification of a copy (§ 5.8.1.4). */
    void remoteNotify(Exchange x) {
        if (remote == null) {
            throw NgsiLdException.notFound("this broker makes no subscriptions at context sources");
        }
        remote.notified(x);
    }

    /** A subscription this broker makes for itself (§ 5.11.2): created as a subscriber's is, answered to nobody. */
    private void createInternal(Exchange x, ObjectNode body) {
        String id = body.get("id").asText();
        Subscription def = build(id, x.tenant, expand(body, x.context, true), x.context, x.baseUrl(), false);
        LiveSubscription live = subs.add(def);
        if (live != null) {
            onCreated.accept(x, live);
        }
    }

    // ---------------------------------------------------------------- the operations

    void create(Exchange x) {
        ObjectNode body = object(x.body);
        DefinedMembers.subscription(body);
        JsonNode id = body.get("id");
        String subId;
        if (id == null) {
            subId = "urn:ngsi-ld:Subscription:" + UUID.randomUUID();
        } else if (!id.isTextual() || !Syntax.isUri(id.asText())) {
            throw NgsiLdException.badData("the subscription's id is a URI, not " + id);
        } else {
            subId = id.asText();
        }
        JsonNode type = body.get("type");
        if (type == null || !"Subscription".equals(type.asText())) {
            throw NgsiLdException.badData("a subscription's type is \"Subscription\"");
        }
        ObjectNode doc = expand(body, x.context, true);
        Subscription def = build(subId, x.tenant, doc, x.context, x.baseUrl(), false);
        LiveSubscription live = subs.add(def);
        if (live == null) {
            throw new NgsiLdException(ErrorType.ALREADY_EXISTS, "subscription " + subId + " exists already");
        }
        notificationContextUrl(def);
        x.created(resource, subId);
        onCreated.accept(x, live);
        if (remote != null) {
            remote.created(x, live);
        }
    }

    void retrieve(Exchange x) {
        LiveSubscription s = existing(x);
        byte[] bytes = Exchange.json(render(s, x.context, x.accept == MediaType.LD_JSON, x.params.sysAttrsOption(), true));
        x.answer(200, x.accept, bytes, x.context);
    }

    void list(Exchange x) {
        Page page = Page.of(x.params, config.limits());
        int limit = page.limit();
        int offset = page.offset();
        boolean count = page.count();
        List<LiveSubscription> all = subs.list(x.tenant);
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        boolean ld = x.accept == MediaType.LD_JSON;
        boolean sysAttrs = x.params.sysAttrsOption();
        for (int i = offset; i < all.size() && out.size() < limit; i++) {
            out.add(render(all.get(i), x.context, ld, sysAttrs, true));
        }
        if (count) {
            x.request.responseHeaders().set("NGSILD-Results-Count", Integer.toString(all.size()));
        }
        x.answer(200, x.accept, Exchange.json(out), x.context);
        page.links(x, resource, offset + limit < all.size()); // 5.8.4, 5.11.4: paged as every listing
    }

    void update(Exchange x) {
        LiveSubscription s = existing(x);
        ObjectNode fragment = object(x.body);
        if (fragment.isEmpty() || (fragment.size() == 1 && fragment.has("@context"))) {
            throw NgsiLdException.badData("the fragment is empty: nothing to update");
        }
        DefinedMembers.subscription(fragment);
        JsonNode id = fragment.get("id");
        if (id != null && !id.asText().equals(s.definition().id())) {
            throw NgsiLdException.badData("a subscription's id cannot change (" + id + ")");
        }
        JsonNode type = fragment.get("type");
        if (type != null && !"Subscription".equals(type.asText())) {
            throw NgsiLdException.badData("a subscription's type is \"Subscription\"");
        }
        Subscription old = s.definition();
        ObjectNode merged = old.document().deepCopy();
        ObjectNode expandedFragment = expand(fragment, x.context, false);
        // § 5.8.2.4 modifies the subscription as § 5.5.8 mandates: each member the fragment names
        // is replaced by the fragment's value - notification included, whole, so a notification
        // without its endpoint is refused below - and null removes it
        for (Iterator<Map.Entry<String, JsonNode>> it = expandedFragment.properties().iterator(); it.hasNext();) {
            Map.Entry<String, JsonNode> m = it.next();
            if (m.getValue().isNull()) {
                merged.remove(m.getKey());
            } else {
                if (m.getValue() instanceof ObjectNode value) {
                    value.properties().removeIf(inner -> inner.getValue().isNull()); // no member inside a new value
                }
                merged.set(m.getKey(), m.getValue());
            }
        }
        Subscription def = build(old.id(), x.tenant, merged, old.context(), old.brokerUrl(), false);
        if (!subs.update(s, def)) {
            throw NgsiLdException.notFound("no subscription " + old.id());
        }
        notificationContextUrl(def);
        x.noContent();
        onCreated.accept(x, s);
        if (remote != null) {
            remote.updated(x, s, fragment);
        }
    }

    void delete(Exchange x) {
        String id = subscriptionId(x);
        LiveSubscription s = subs.find(x.tenant, id);
        if (s == null || !subs.remove(x.tenant, id)) {
            throw NgsiLdException.notFound("no subscription " + id);
        }
        x.noContent();
        if (remote != null) {
            remote.deleted(x, s.definition());
        }
    }

    private LiveSubscription existing(Exchange x) {
        String id = subscriptionId(x);
        LiveSubscription s = subs.find(x.tenant, id);
        if (s == null) {
            throw NgsiLdException.notFound("no subscription " + id);
        }
        return s;
    }

    /** The path's subscription id, a URI (BadRequestData otherwise, § 5.8.2.4 - 5.8.5.4). */
    private static String subscriptionId(Exchange x) {
        String id = x.route.entityId();
        if (id == null || !Syntax.isUri(id)) {
            throw NgsiLdException.badData("the subscription id '" + id + "' is not a URI");
        }
        return id;
    }

    private static ObjectNode object(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw NgsiLdException.badData("a subscription is a JSON object");
        }
        return (ObjectNode) body;
    }

    // ---------------------------------------------------------------- reading a Subscription

    /**
     * The subscription (or fragment) as given, without {@code @context} and the members the
     * broker keeps, its names expanded with {@code ctx}. Checks the shapes it expands.
     */
    private ObjectNode expand(ObjectNode body, LdContext ctx, boolean whole) {
        EntityParser names = new EntityParser(ctx, config.limits());
        ObjectNode doc = body.deepCopy();
        doc.remove("@context");
        doc.remove("id");
        doc.remove("type");
        KEPT.forEach(doc::remove);
        for (Iterator<Map.Entry<String, JsonNode>> it = doc.properties().iterator(); it.hasNext();) {
            if (it.next().getValue().isNull() && whole) {
                it.remove(); // a null member in a creation is no member (Orion-LD does the same)
            }
        }
        JsonNode entities = doc.get("entities");
        if (entities != null && !entities.isNull()) {
            if (!entities.isArray() || entities.isEmpty()) {
                throw NgsiLdException.badData("entities is a non-empty array of EntitySelectors");
            }
            for (JsonNode sel : entities) {
                if (!sel.isObject()) {
                    throw NgsiLdException.badData("an EntitySelector is a JSON object");
                }
                JsonNode t = sel.get("type");
                if (t == null || !t.isTextual() || t.asText().isEmpty()) {
                    throw NgsiLdException.badData("an EntitySelector has a type");
                }
                ((ObjectNode) sel).put("type", mapTypeExpression(t.asText(), names::typeName));
            }
        }
        expandNames(doc, "watchedAttributes", names, true);
        JsonNode n = doc.get("notification");
        if (n instanceof ObjectNode notification) {
            KEPT_NOTIFICATION.forEach(notification::remove);
            expandNames(notification, "attributes", names, false);
            expandNames(notification, "pick", names, false);
            expandNames(notification, "omit", names, false);
        }
        return doc;
    }

    /** Expands an array of attribute names in place; {@code id}, {@code type} and {@code scope} stay (pick/omit). */
    private static void expandNames(ObjectNode holder, String member, EntityParser names, boolean nonEmpty) {
        JsonNode list = holder.get(member);
        if (list == null || list.isNull()) {
            return;
        }
        if (!list.isArray() || (nonEmpty && list.isEmpty())) {
            throw NgsiLdException.badData(member + " is a" + (nonEmpty ? " non-empty" : "n") + " array of attribute names");
        }
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (JsonNode a : list) {
            if (!a.isTextual()) {
                throw NgsiLdException.badData(member + " is an array of attribute names, not " + a);
            }
            String name = a.asText();
            out.add(switch (name) {
                case "id", "type", "scope" -> member.equals("pick") || member.equals("omit") ? name : names.attributeName(name);
                default -> names.attributeName(name);
            });
        }
        holder.set(member, out);
    }

    /** Maps each type name of a type selection (§ 4.17) through {@code f}, keeping its operators. */
    static String mapTypeExpression(String text, UnaryOperator<String> f) {
        StringBuilder out = new StringBuilder(text.length() + 32);
        int start = 0;
        for (int i = 0; i <= text.length(); i++) {
            char c = i < text.length() ? text.charAt(i) : ',';
            if (c == ',' || c == ';' || c == '|' || c == '(' || c == ')') {
                String name = text.substring(start, i).trim();
                if (!name.isEmpty()) {
                    out.append(f.apply(name));
                }
                if (i < text.length()) {
                    out.append(c);
                }
                start = i + 1;
            }
        }
        return out.toString();
    }

    /**
     * Puts a subscription kept from before a restart in force again: its context processed from
     * what was kept (no download), then built as at its creation - except that an {@code expiresAt}
     * that has passed meanwhile makes it expired, not invalid.
     *
     * @throws NgsiLdException when what was kept no longer builds one
     */
    /** Puts in force here a subscription another broker made or changed, as kept ({@link #restore}'s build). */
    void follow(SubscriptionKeeper.Kept k) {
        LdContext ctx = config.contexts().restore(k.context(), k.documents());
        subs.applyKept(build(k.id(), k.tenant(), k.document(), ctx, k.brokerUrl(), true), k.status());
    }

    void restore(SubscriptionKeeper.Kept k) {
        LdContext ctx = config.contexts().restore(k.context(), k.documents());
        Subscription def = build(k.id(), k.tenant(), k.document(), ctx, k.brokerUrl(), true);
        subs.restore(def, k.status());
        if (remote != null) {
            remote.restored(def);
        }
    }

    /**
     * Checks every member of an expanded subscription and builds what the broker runs.
     * {@code restored}: it was built before, and {@code subscriberContext} is the one it was built
     * with (its {@code jsonldContext} included).
     */
    private Subscription build(String id, String tenant, ObjectNode doc, LdContext subscriberContext, String brokerUrl,
            boolean restored) {
        List<Subscription.Selector> selectors = new ArrayList<>();
        JsonNode entities = doc.get("entities");
        if (entities != null) {
            for (JsonNode sel : entities) {
                selectors.add(selector((ObjectNode) sel, restored));
            }
        }
        Set<String> watched = null;
        if (doc.get("watchedAttributes") instanceof ArrayNode w) {
            watched = new LinkedHashSet<>();
            for (JsonNode a : w) {
                watched.add(a.asText());
            }
        }
        long timeInterval = seconds(doc, "timeInterval");
        long throttling = seconds(doc, "throttling");
        if (timeInterval > 0 && watched != null) {
            throw NgsiLdException.badData("a subscription has timeInterval or watchedAttributes, not both");
        }
        if (timeInterval > 0 && throttling > 0) {
            throw NgsiLdException.badData("a subscription has timeInterval or throttling, not both");
        }
        if (selectors.isEmpty() && watched == null) {
            throw NgsiLdException.badData("a subscription names entities or watchedAttributes (or both)");
        }
        if (timeInterval > 0 && selectors.isEmpty()) {
            throw NgsiLdException.badData("a periodic subscription (timeInterval) names its entities");
        }
        Set<Subscription.Trigger> triggers = triggers(doc.get("notificationTrigger"));
        String q = optionalText(doc, "q");
        String scopeQ = optionalText(doc, "scopeQ");
        JsonNode geoQ = doc.get("geoQ");
        if (geoQ != null && !geoQ.isObject()) {
            throw NgsiLdException.badData("geoQ is a GeoQuery: a JSON object");
        }
        long expiresAt = ExpiresAt.of(doc, restored, config.clock().millis());
        boolean active = bool(doc, "isActive", true);
        String lang = optionalText(doc, "lang");
        optionalText(doc, "description");
        optionalText(doc, "subscriptionName");
        LdContext ctx = subscriberContext;
        String jsonldContext = optionalText(doc, "jsonldContext");
        if (jsonldContext != null && !restored) {
            if (!Syntax.isAbsoluteIri(jsonldContext)) {
                throw NgsiLdException.badData("jsonldContext is a dereferenceable URI, not '" + jsonldContext + "'");
            }
            ctx = config.contexts().resolve(ContextRef.link(jsonldContext), config.contextTimeoutMs());
        }
        SubscriptionFilter filter = filter(q, geoQ, scopeQ, ctx, restored);
        JsonNode n = doc.get("notification");
        if (!(n instanceof ObjectNode notification)) {
            throw NgsiLdException.badData("a subscription has notification parameters (an object)");
        }
        return new Subscription(id, tenant, List.copyOf(selectors), watched == null ? null : Set.copyOf(watched),
                triggers, filter, timeInterval, throttling, expiresAt, active, endpoint(notification),
                options(notification, lang), bool(notification, "showChanges", false), datasetIds(doc), ctx, brokerUrl, doc);
    }

    /** {@code datasetId} (§ 5.2.12, 4.5.5): URIs, or {@code "@none"} for the default instances. */
    private static Set<String> datasetIds(ObjectNode doc) {
        JsonNode n = doc.get("datasetId");
        if (n == null) {
            return null;
        }
        if (!n.isArray() || n.isEmpty()) {
            throw NgsiLdException.badData("datasetId is a non-empty array of URIs (or \"@none\")");
        }
        Set<String> out = new LinkedHashSet<>();
        for (JsonNode d : n) {
            if (!d.isTextual() || (!d.asText().equals("@none") && !Syntax.isUri(d.asText()))) {
                throw NgsiLdException.badData("datasetId is an array of URIs (or \"@none\"), not " + d);
            }
            out.add(d.asText());
        }
        return Set.copyOf(out);
    }

    /** An EntitySelector; {@code restored}: its idPattern was accepted before, whatever its length. */
    private static Subscription.Selector selector(ObjectNode sel, boolean restored) {
        String id = optionalText(sel, "id");
        if (id != null && !Syntax.isUri(id)) {
            throw NgsiLdException.badData("an EntitySelector's id is a URI, not '" + id + "'");
        }
        String idPattern = optionalText(sel, "idPattern");
        BoundedPattern pattern = idPattern == null ? null
                : restored ? BoundedPattern.compileKept(idPattern, "idPattern") : BoundedPattern.compile(idPattern, "idPattern");
        TypeSelection types = TypeSelection.parse(sel.get("type").asText(), t -> t);
        return new Subscription.Selector(id, pattern, Set.copyOf(types.types()), types::matches);
    }

    /**
     * q, geoQ and scopeQ parsed once, with the subscriber's context (the one its notifications
     * are compacted with), into the filter every write that reaches the subscription is tested
     * against; an invalid one is a 400 here, at creation or update, naming the offending part.
     * Its patterns match within the budget they are given and throw TooComplexQuery past it: the
     * subscriptions decide what that does to the subscription (it stops matching, failed).
     * {@code restored}: kept from before, its q is read as it was accepted then.
     */
    private static SubscriptionFilter filter(String q, JsonNode geoQ, String scopeQ, LdContext ctx, boolean restored) {
        if (q != null) {
            q = PercentEncoding.bodyQ(q);
        }
        QueryExpression query = q == null ? null
                : restored ? QueryExpression.parseKept(q, ctx) : QueryExpression.parse(q, ctx);
        GeoQuery geo = geoQ == null ? null : GeoQuery.parse(geoQ, ctx);
        ScopeQuery scope = scopeQ == null ? null : ScopeQuery.parse(scopeQ);
        if (query == null && geo == null && scope == null) {
            return SubscriptionFilter.ALL;
        }
        return (e, budget) -> (query == null || query.test(e, budget)) && (geo == null || geo.test(e))
                && (scope == null || scope.test(e));
    }

    private static Set<Subscription.Trigger> triggers(JsonNode n) {
        if (n == null) {
            return Set.of(Subscription.Trigger.ATTRIBUTE_CREATED, Subscription.Trigger.ATTRIBUTE_UPDATED);
        }
        if (!n.isArray() || n.isEmpty()) {
            throw NgsiLdException.badData("notificationTrigger is a non-empty array of triggers");
        }
        Set<Subscription.Trigger> out = new LinkedHashSet<>();
        for (JsonNode t : n) {
            Subscription.Trigger tr = t.isTextual() ? Subscription.Trigger.of(t.asText()) : null;
            if (tr == null) {
                throw NgsiLdException.badData("'" + t.asText() + "' is no notification trigger (entityCreated, entityUpdated,"
                        + " entityDeleted, attributeCreated, attributeUpdated, attributeDeleted)");
            }
            out.add(tr);
        }
        return Set.copyOf(out);
    }

    private static Subscription.Endpoint endpoint(ObjectNode notification) {
        JsonNode e = notification.get("endpoint");
        if (!(e instanceof ObjectNode endpoint)) {
            throw NgsiLdException.badData("notification.endpoint is an object with a uri");
        }
        String uri = optionalText(endpoint, "uri");
        if (uri == null || !Syntax.isAbsoluteIri(uri)) {
            throw NgsiLdException.badData("notification.endpoint.uri is an absolute URI" + (uri == null ? "" : ", not '" + uri + "'"));
        }
        String scheme = uri.substring(0, uri.indexOf(':')).toLowerCase(Locale.ROOT);
        if (!Set.of("http", "https", "mqtt", "mqtts").contains(scheme)) {
            throw NgsiLdException.badData("notification.endpoint.uri: the broker notifies over http, https, mqtt and"
                    + " mqtts, not " + scheme);
        }
        String accept = optionalText(endpoint, "accept");
        if (accept != null && !accept.equals("application/json") && !accept.equals("application/ld+json")) {
            if (accept.equals("application/geo+json")) {
                throw new NgsiLdException(ErrorType.NOT_IMPLEMENTED, "GeoJSON notifications are not served by this"
                        + " broker yet");
            }
            throw NgsiLdException.badData("notification.endpoint.accept is application/json or application/ld+json");
        }
        List<String[]> receiverInfo = keyValues(endpoint, "receiverInfo");
        int qos = 0;
        for (String[] kv : keyValues(endpoint, "notifierInfo")) {
            if (kv[0].equals("MQTT-QoS")) {
                if (!kv[1].equals("0") && !kv[1].equals("1")) {
                    throw NgsiLdException.badData("MQTT-QoS is 0 or 1 (QoS 2 is not served), not " + kv[1]);
                }
                qos = Integer.parseInt(kv[1]);
            } else if (kv[0].equals("MQTT-Version") && !kv[1].equals("mqtt3.1.1")) {
                throw new NgsiLdException(ErrorType.NOT_IMPLEMENTED, "MQTT-Version " + kv[1] + " is not served: mqtt3.1.1 is");
            }
        }
        return new Subscription.Endpoint(uri, "application/ld+json".equals(accept), List.copyOf(receiverInfo), qos);
    }

    /** An array of KeyValuePairs (§ 5.2.22): both members strings that can travel as header fields. */
    static List<String[]> keyValues(ObjectNode holder, String member) {
        JsonNode n = holder.get(member);
        List<String[]> out = new ArrayList<>();
        if (n == null) {
            return out;
        }
        if (!n.isArray()) {
            throw NgsiLdException.badData(member + " is an array of {key, value} pairs");
        }
        for (JsonNode kv : n) {
            JsonNode k = kv.get("key");
            JsonNode v = kv.get("value");
            if (!kv.isObject() || k == null || !k.isTextual() || k.asText().isEmpty() || v == null || !v.isTextual()) {
                throw NgsiLdException.badData(member + " is an array of {key, value} pairs, both strings, not " + kv);
            }
            if (k.asText().chars().anyMatch(c -> c <= 0x20 || c >= 0x7F || "()<>@,;:\\\"/[]?={}".indexOf(c) >= 0)
                    || v.asText().chars().anyMatch(c -> c == '\r' || c == '\n' || c == 0)) {
                throw NgsiLdException.badData(member + ": '" + k.asText() + "' cannot be a header field");
            }
            out.add(new String[] {k.asText(), v.asText()});
        }
        return out;
    }

    /** How a notification renders its entities: format, sysAttrs, attributes or pick/omit, lang. */
    private static EntityRenderer.Options options(ObjectNode notification, String lang) {
        String format = optionalText(notification, "format");
        if (format != null && !FORMATS.contains(format)) {
            throw NgsiLdException.badData("notification.format is normalized, concise or keyValues, not '" + format + "'");
        }
        EntityRenderer.Format f = format == null || format.equals("normalized") ? EntityRenderer.Format.NORMALIZED
                : format.equals("concise") ? EntityRenderer.Format.CONCISE : EntityRenderer.Format.SIMPLIFIED;
        boolean sysAttrs = bool(notification, "sysAttrs", false);
        boolean showChanges = bool(notification, "showChanges", false);
        if (showChanges && f == EntityRenderer.Format.SIMPLIFIED) {
            throw NgsiLdException.badData("showChanges cannot be true with format " + format + " (Table 5.2.14-1)");
        }
        JsonNode joinLevel = notification.get("joinLevel");
        if (joinLevel != null && !joinLevel.canConvertToExactIntegral()) {
            throw NgsiLdException.badData("notification.joinLevel is a positive integer, not " + joinLevel);
        }
        // the join is read from the document when a notification is made; here it is only checked (400 now, not then)
        LinkedEntities.Join.of(optionalText(notification, "join"), joinLevel == null ? 1 : joinLevel.asInt(), List.of());
        Set<String> attrs = names(notification, "attributes");
        Set<String> pick = names(notification, "pick");
        Set<String> omit = names(notification, "omit");
        if (attrs != null && (pick != null || omit != null)) {
            throw NgsiLdException.badData("notification.attributes cannot go with pick or omit (§ 4.21)");
        }
        if (pick != null && omit != null) {
            for (String p : pick) {
                if (omit.contains(p)) {
                    throw NgsiLdException.badData("'" + p + "' is both picked and omitted (§ 4.21)");
                }
            }
        }
        Set<String> shown = attrs != null && !attrs.isEmpty() ? attrs : pick == null ? null : without(pick, "id", "type", "scope");
        Set<String> hidden = omit == null ? null : without(omit, "id", "type", "scope");
        return new EntityRenderer.Options(f, sysAttrs, shown, hidden,
                pick == null ? omit == null || !omit.contains("id") : pick.contains("id"),
                pick == null ? omit == null || !omit.contains("type") : pick.contains("type"),
                pick == null ? omit == null || !omit.contains("scope") : pick.contains("scope"),
                lang == null ? null : Representation.languages(lang), null);
    }

    private static Set<String> without(Set<String> s, String... members) {
        Set<String> out = new LinkedHashSet<>(s);
        for (String m : members) {
            out.remove(m);
        }
        return Set.copyOf(out);
    }

    private static Set<String> names(ObjectNode holder, String member) {
        JsonNode n = holder.get(member);
        if (n == null) {
            return null;
        }
        Set<String> out = new LinkedHashSet<>();
        n.forEach(a -> out.add(a.asText()));
        return out;
    }

    /** A number of seconds greater than 0, in milliseconds (0 when absent). */
    private static long seconds(ObjectNode doc, String member) {
        JsonNode n = doc.get(member);
        if (n == null) {
            return 0;
        }
        if (!n.isNumber() || n.asDouble() <= 0) {
            throw NgsiLdException.badData(member + " is a number of seconds greater than 0, not " + n);
        }
        return Math.max(1, Math.round(n.asDouble() * 1000));
    }

    static String optionalText(ObjectNode holder, String member) {
        JsonNode n = holder.get(member);
        if (n == null) {
            return null;
        }
        if (!n.isTextual()) {
            throw NgsiLdException.badData(member + " is a string, not " + n);
        }
        return n.asText();
    }

    private static boolean bool(ObjectNode holder, String member, boolean absent) {
        JsonNode n = holder.get(member);
        if (n == null) {
            return absent;
        }
        if (!n.isBoolean()) {
            throw NgsiLdException.badData(member + " is true or false, not " + n);
        }
        return n.asBoolean();
    }

    // ---------------------------------------------------------------- answering

    /**
     * The URL of the @context the subscription's notifications are compacted with, as their
     * {@code Link} gives it: the one URL the subscriber named, or - for a context given inline or
     * as an array - an ImplicitlyCreated one (§ 5.13.1: "when a client creates a subscription using
     * an @context that is an array ... the broker has to create a new @context"), made here, at its
     * creation, so that it is listed (§ 5.13.3) before any notification, and kept as long as the
     * subscription is.
     */
    private String notificationContextUrl(Subscription d) {
        return config.contexts().linkUrlFor(d.context(), d.brokerUrl(), d.contextTenant());
    }

    /**
     * A subscription as it is given back (§ 5.8.3, 5.8.4): what the subscriber wrote, names
     * compacted with {@code ctx}, with its status and its notification's counters;
     * {@code createdAt} and {@code modifiedAt} only with {@code sysAttrs} (§ 6.3.11).
     * {@code withJsonldContext}: a subscriber who wrote no {@code jsonldContext} is shown the one
     * in force, the URL its notifications link (§ 5.2.12: "the @context used for the subscription"
     * by default), as Orion-LD and Scorpio show it.
     */
    private ObjectNode render(LiveSubscription s, LdContext ctx, boolean ldJson, boolean sysAttrs, boolean withJsonldContext) {
        Subscription d = s.definition();
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.put("id", d.id());
        out.put("type", "Subscription");
        ObjectNode doc = d.document().deepCopy();
        doc.remove(RemoteSubscriptions.COPIES);
        if (doc.get("entities") instanceof ArrayNode entities) {
            for (JsonNode sel : entities) {
                ((ObjectNode) sel).put("type", mapTypeExpression(sel.get("type").asText(), ctx::compactIri));
            }
        }
        compactNames(doc, "watchedAttributes", ctx);
        long now = config.clock().millis();
        doc.properties().forEach(m -> out.set(m.getKey(), m.getValue()));
        if (!out.has("isActive")) {
            out.put("isActive", d.active());
        }
        out.put("status", s.status(now));
        if (out.get("notification") instanceof ObjectNode notification) {
            compactNames(notification, "attributes", ctx);
            compactNames(notification, "pick", ctx);
            compactNames(notification, "omit", ctx);
            notification.put("status", s.status(now).equals("failed") ? "failed" : "ok");
            notification.put("timesSent", s.timesSent());
            notification.put("timesFailed", s.timesFailed());
            time(notification, "lastNotification", s.lastNotification());
            time(notification, "lastSuccess", s.lastSuccess());
            time(notification, "lastFailure", s.lastFailure());
        }
        if (withJsonldContext && !out.has("jsonldContext")) {
            out.put("jsonldContext", notificationContextUrl(d));
        }
        if (sysAttrs) {
            out.put("createdAt", EntityRenderer.time(s.createdAt()));
            out.put("modifiedAt", EntityRenderer.time(s.modifiedAt()));
        }
        if (ldJson) {
            out.set("@context", ctx.echo());
        }
        return out;
    }

    private static void compactNames(ObjectNode holder, String member, LdContext ctx) {
        if (holder.get(member) instanceof ArrayNode list) {
            ArrayNode out = JsonNodeFactory.instance.arrayNode();
            list.forEach(a -> out.add(a.asText().contains(":") ? ctx.compactName(a.asText()) : a.asText()));
            holder.set(member, out);
        }
    }

    private static void time(ObjectNode holder, String member, long epochMs) {
        if (epochMs >= 0) {
            holder.put(member, EntityRenderer.time(epochMs));
        }
    }

}
