package dev.cor.ngsild.subscription;

import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import javax.net.ssl.SSLContext;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import dev.cor.ngsild.ld.ContextRef;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.metrics.NgsildMetrics;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityRenderer;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.query.LinkedEntities;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.rest.CorRestJson;
import dev.cor.rest.OutboundPolicy;
import dev.cor.rest.client.CorRestClient;
import dev.cor.rest.client.CorRestClientException;
import dev.cor.rest.client.CorRestClientRequest;
import dev.cor.rest.client.CorRestClientResponse;

/**
 * Renders a {@link Notice} as a Notification (ETSI GS CIM 009 § 5.3.1) compacted with the
 * subscriber's context and sends it to the subscription's endpoint - HTTP(S) through the
 * {@link CorRestClient} (it yields inside a coroutine, blocks on a worker; its pool keeps a
 * connection per receiver alive), MQTT through {@link MqttNotifier} - and counts the outcome in the
 * subscription's status and in the broker's metrics. Called by the one sender of a subscription
 * at a time, in a post-response phase; shared, stateless apart from its clients.
 */
public final class Notifier implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Notifier.class.getName());
    static final String LINK_REL = ContextRef.LINK_REL;

    private final CorRestClient client;
    private final MqttNotifier mqtt;
    private final LdContexts contexts;
    private final InstantSource clock;
    private final NgsildMetrics metrics;
    private final long timeoutMs;
    /** Where a notification that joins (Table 5.2.14-1 {@code join}) reads the entities relationships point to. */
    private final EntityStore store;

    /**
     * @param client        the HTTP(S) notifications' client
     * @param store         the entities a joining notification reads its linked entities from
     * @param mqttTls       the TLS of {@code mqtts://} notifications (hostname always verified)
     * @param mqttPolicy    the addresses MQTT notifications may connect to (HTTP's is the client's)
     */
    public Notifier(CorRestClient client, EntityStore store, LdContexts contexts, InstantSource clock, NgsildMetrics metrics,
            long timeoutMs, SSLContext mqttTls, OutboundPolicy mqttPolicy) {
        this.client = client;
        this.store = store;
        this.timeoutMs = timeoutMs;
        this.contexts = contexts;
        this.clock = clock;
        this.metrics = metrics;
        this.mqtt = new MqttNotifier(timeoutMs, mqttTls, mqttPolicy);
    }

    /**
     * Renders the entities of a notice, unless that is done (or the sender has it already): what
     * the post-response phase of the write that queued it does first, as a coroutine of its loop
     * or on a worker.
     */
    void prepare(Subscription d, Notice n) {
        if (n.rendered == null && !n.taken) {
            try {
                n.rendered = renderData(d, n);
            } catch (Exception e) {
                LOG.log(System.Logger.Level.DEBUG, () -> "cor-ngsild: rendering a notification of " + d.id()
                        + " failed: " + e); // the sender renders it again, and counts the failure
            }
        }
    }

    /** Sends the notices as one notification and counts what came of it. Never throws. */
    void send(LiveSubscription s, List<Notice> batch) {
        Subscription d = s.def;
        long now = clock.millis();
        s.lastNotification = now;
        s.timesSent.incrementAndGet();
        String failure;
        byte[] body = null;
        try {
            body = render(d, batch, now);
            failure = d.endpoint().isMqtt() ? mqtt.publish(d, body, headers(d)) : http(d, body);
        } catch (Exception e) {
            // what the connection or the receiver said is the operator's (the log), never the subscription's
            LOG.log(System.Logger.Level.DEBUG, () -> "cor-ngsild: a notification of " + d.id() + " to "
                    + d.endpoint().uri() + " failed: " + e);
            failure = body == null ? "the notification could not be rendered" : "no answer from the receiver";
        }
        if (failure == null) {
            s.lastSuccess = now;
            s.failing = false;
            metrics.notificationSent(true);
        } else {
            s.timesFailed.incrementAndGet();
            s.lastFailure = now;
            s.lastFailureReason = failure;
            if (!s.failing) {
                // once per run of failures: an operator sees an endpoint stop working (a certificate
                // expired, a policy refusal) without a line per notification
                String why = failure;
                LOG.log(System.Logger.Level.WARNING, () -> "cor-ngsild: notifications of subscription " + d.id()
                        + " fail: " + why + " (further failures at debug until one succeeds)");
            }
            s.failing = true;
            metrics.notificationSent(false);
            LOG.log(System.Logger.Level.DEBUG, () -> "cor-ngsild: a notification of " + d.id() + " to "
                    + d.endpoint().uri() + " failed: " + s.lastFailureReason);
        }
    }

    /**
     * The HTTP(S) POST; {@code null} when the receiver took it (2xx), else why not. The client
     * closes the connection of every exchange that failed; the reason is ours, never the
     * client's message, which may quote what the receiver sent.
     */
    private String http(Subscription d, byte[] body) {
        CorRestClientRequest.Builder b = CorRestClientRequest.builder("POST", d.endpoint().uri());
        for (String[] h : headers(d)) {
            b.header(h[0], h[1]);
        }
        CorRestClientResponse r;
        try {
            r = client.send(b.body(body).build());
        } catch (CorRestClientException e) {
            return e.reason("the receiver " + origin(d.endpoint().uri()), timeoutMs);
        }
        return r.status() / 100 == 2 ? null : "the receiver answered " + r.status();
    }

    /** {@code scheme://host:port} of an endpoint: how a reason names it, without its path or user information. */
    private static String origin(String uri) {
        java.net.URI u = java.net.URI.create(uri);
        return u.getScheme() + "://" + u.getHost() + (u.getPort() > 0 ? ":" + u.getPort() : "");
    }

    /** The header fields of a notification: its media type, the Link of a JSON one, the tenant, receiverInfo. */
    private List<String[]> headers(Subscription d) {
        List<String[]> h = new java.util.ArrayList<>(4 + d.endpoint().receiverInfo().size());
        if (d.endpoint().ldJson()) {
            h.add(new String[] {"Content-Type", "application/ld+json"});
        } else {
            h.add(new String[] {"Content-Type", "application/json"});
            h.add(new String[] {"Link", "<" + contexts.linkUrlFor(d.context(), d.brokerUrl(), d.contextTenant()) + ">; rel=\""
                    + LINK_REL + "\"; type=\"application/ld+json\""});
        }
        if (!d.tenant().equals(EntityStore.DEFAULT_TENANT)) {
            h.add(new String[] {"NGSILD-Tenant", d.tenant()});
        }
        h.addAll(d.endpoint().receiverInfo());
        return h;
    }

    /** The Notification's bytes (§ 5.3.1): its data the notices' entities, in order. */
    byte[] render(Subscription d, List<Notice> batch, long now) throws java.io.IOException {
        ObjectNode out = CorRestJson.mapper().createObjectNode();
        // unique, not secret: UUID.randomUUID's SecureRandom would cost more than the rest of the id
        ThreadLocalRandom r = ThreadLocalRandom.current();
        out.put("id", "urn:ngsi-ld:Notification:" + new UUID(r.nextLong(), r.nextLong()));
        String reason = batch.get(0).triggerReason;
        out.put("type", reason == null ? "Notification" : "ContextSourceNotification");
        out.put("subscriptionId", d.id());
        out.put("notifiedAt", EntityRenderer.time(now));
        if (reason != null) {
            out.put("triggerReason", reason); // § 5.3.2: one reason per notification, so never batched
        }
        ArrayNode data = out.putArray("data");
        for (Notice n : batch) {
            String entities = n.rendered;
            if (entities == null) {
                entities = renderData(d, n);
            }
            data.addRawValue(new RawValue(entities));
        }
        if (d.endpoint().ldJson()) {
            out.set("@context", contexts.bodyContextFor(d.context(), d.brokerUrl(), d.contextTenant()));
        }
        return CorRestJson.mapper().writeValueAsBytes(out);
    }

    /** A notice's entities as notification data: JSON objects joined by commas, compacted with the subscriber's context. */
    String renderData(Subscription d, Notice n) throws java.io.IOException {
        LdContext ctx = d.context();
        StringBuilder out = new StringBuilder(512 * n.data().size());
        LinkedEntities.Join join = d.join();
        // § 4.5.23 through Table 5.2.14-1: the entities the notified ones point to, as they are now
        LinkedEntities links = join == null ? null : new LinkedEntities(id -> store.get(d.tenant(), id), ctx,
                new LinkedEntities.Shape(d.options(), Map.of()), join, null);
        List<Entity> roots = links == null || join.inline() ? List.of() : new ArrayList<>(n.data().size());
        for (Notice.Change c : n.data()) {
            if (!out.isEmpty()) {
                out.append(',');
            }
            Entity e = c.entity();
            if (c.deleted()) {
                ObjectNode gone = CorRestJson.mapper().createObjectNode();
                gone.put("id", e.id());
                if (e.types().size() == 1) {
                    gone.put("type", ctx.compactIri(e.types().get(0)));
                } else {
                    ArrayNode types = gone.putArray("type");
                    e.types().forEach(t -> types.add(ctx.compactIri(t)));
                }
                if (d.options().sysAttrs()) {
                    // the last record's times, and when it was deleted (5.8.6: sysAttrs in force)
                    gone.put("createdAt", EntityRenderer.time(e.createdAt()));
                    gone.put("modifiedAt", EntityRenderer.time(e.modifiedAt()));
                }
                gone.put("deletedAt", EntityRenderer.time(c.deletedAt()));
                deletedMarkers(gone, c, d);
                out.append(CorRestJson.mapper().writeValueAsString(gone));
                continue;
            }
            if (d.datasetIds() != null) {
                e = onlyDatasets(e, d.datasetIds());
            }
            if (links != null && join.inline()) {
                ObjectNode entity = links.inline(e);
                if (d.showChanges() && c.before() != null) {
                    previousValues(entity, EntityRenderer.render(c.before(), ctx, d.options(), null));
                }
                deletedMarkers(entity, c, d);
                out.append(CorRestJson.mapper().writeValueAsString(entity));
                continue;
            }
            if (links != null) {
                roots.add(e);
            }
            byte[] bytes = EntityRenderer.render(e, ctx, d.options(), null);
            if ((d.showChanges() && c.before() != null) || !c.deletedAttributes().isEmpty()) {
                ObjectNode entity = (ObjectNode) CorRestJson.mapper().readTree(bytes);
                if (d.showChanges() && c.before() != null) {
                    previousValues(entity, EntityRenderer.render(c.before(), ctx, d.options(), null));
                }
                deletedMarkers(entity, c, d);
                out.append(CorRestJson.mapper().writeValueAsString(entity));
            } else {
                out.append(new String(bytes, StandardCharsets.UTF_8));
            }
        }
        if (!roots.isEmpty()) {
            for (ObjectNode linked : links.linkedOf(roots)) { // join=flat: after the notified entities, each once
                out.append(',').append(CorRestJson.mapper().writeValueAsString(linked));
            }
        }
        return out.toString();
    }

    /** The entity with only the attribute instances of those datasetIds ({@code "@none"}: the default ones). */
    static Entity onlyDatasets(Entity e, Set<String> datasetIds) {
        Map<String, AttributeList> kept = new LinkedHashMap<>();
        for (Map.Entry<String, AttributeList> a : e.attributes().entrySet()) {
            List<Attribute> instances = inDatasets(a.getValue().instances(), datasetIds);
            if (!instances.isEmpty()) {
                kept.put(a.getKey(), AttributeList.of(instances));
            }
        }
        return new Entity(e.id(), e.types(), e.scopes(), Collections.unmodifiableMap(kept), e.createdAt(), e.modifiedAt());
    }

    /**
     * attributeDeleted: what the write deleted appears in the kind it had with the NGSI-LD Null as
     * its value ({@code "urn:ngsi-ld:null"}, § 5.2.1), as the ETSI suite's 046_22 expects. An
     * attribute deleted whole - its last instances - is one such attribute (046_22_08 reads a
     * deleteAll so); an instance deleted by its datasetId while others are left is one among them,
     * with its datasetId (§ 4.5.5: in the attribute's array, or in keyValues in its {@code dataset}
     * map; 046_22_06, _07). With {@code sysAttrs} each carries its createdAt and modifiedAt and when
     * it was deleted, {@code deletedAt} (046_22_05). {@code datasetId} narrows them as it narrows the
     * instances left.
     */
    private static void deletedMarkers(ObjectNode entity, Notice.Change c, Subscription d) {
        EntityRenderer.Options o = d.options();
        for (Map.Entry<String, AttributeList> a : c.deletedAttributes().entrySet()) {
            if (!o.shows(a.getKey())) {
                continue;
            }
            List<Attribute> gone = inDatasets(a.getValue().instances(), d.datasetIds());
            if (gone.isEmpty()) {
                continue;
            }
            String name = d.context().compactName(a.getKey());
            AttributeList still = c.deleted() ? null : c.entity().attributes().get(a.getKey());
            List<Attribute> left = still == null ? List.of() : inDatasets(still.instances(), d.datasetIds());
            JsonNode shown = entity.get(name); // the instances left, as rendered
            if (left.isEmpty() || shown == null) {
                if (o.format() == EntityRenderer.Format.SIMPLIFIED) {
                    entity.put(name, Syntax.NGSI_LD_NULL);
                } else {
                    entity.set(name, marker(gone, c.deletedAt(), d));
                }
            } else if (o.format() == EntityRenderer.Format.SIMPLIFIED) {
                // the instances: {"dataset": {"@none": v, "<datasetId>": v}}, as the renderer writes several
                ObjectNode dataset = CorRestJson.mapper().createObjectNode();
                if (left.size() == 1) {
                    dataset.set(datasetKey(left.get(0)), shown);
                } else if (shown.get("dataset") instanceof ObjectNode map) {
                    dataset.setAll(map);
                }
                gone.forEach(i -> dataset.put(datasetKey(i), Syntax.NGSI_LD_NULL));
                entity.putObject(name).set("dataset", dataset);
            } else {
                ArrayNode all = CorRestJson.mapper().createArrayNode();
                if (left.size() == 1) {
                    all.add(shown);
                } else if (shown instanceof ArrayNode instances) {
                    all.addAll(instances);
                }
                for (Attribute i : gone) {
                    all.add(marker(List.of(i), c.deletedAt(), d));
                }
                entity.set(name, all);
            }
        }
    }

    /**
     * The NGSI-LD Null in place of deleted instances, in the kind they had: one instance with its
     * datasetId, or an attribute deleted with several, whose times span theirs.
     */
    private static ObjectNode marker(List<Attribute> instances, long deletedAt, Subscription d) {
        Attribute was = instances.get(0);
        for (Attribute i : instances) {
            if (i.datasetId() == null) {
                was = i; // the default instance speaks for the attribute (its previous value)
            }
        }
        AttributeKind kind = was.kind();
        ObjectNode marker = CorRestJson.mapper().createObjectNode();
        marker.put("type", kind.typeName());
        if (d.showChanges()) {
            // showChanges: what it was before the deletion (046_34, 046_37)
            String member = kind.valueMember();
            marker.set("previous" + Character.toUpperCase(member.charAt(0)) + member.substring(1), was.value());
        }
        switch (kind) {
            case RELATIONSHIP -> marker.put("object", Syntax.NGSI_LD_NULL);
            case LANGUAGE_PROPERTY -> marker.putObject("languageMap").put("@none", Syntax.NGSI_LD_NULL);
            case VOCAB_PROPERTY -> marker.put("vocab", Syntax.NGSI_LD_NULL);
            case JSON_PROPERTY -> marker.put("json", Syntax.NGSI_LD_NULL);
            case LIST_PROPERTY -> marker.putArray("valueList").add(Syntax.NGSI_LD_NULL);
            case LIST_RELATIONSHIP -> marker.putArray("objectList").addObject().put("object", Syntax.NGSI_LD_NULL);
            default -> marker.put("value", Syntax.NGSI_LD_NULL);
        }
        if (instances.size() == 1 && was.datasetId() != null) {
            marker.put("datasetId", was.datasetId());
        }
        if (d.options().sysAttrs()) {
            long created = Long.MAX_VALUE;
            long modified = Long.MIN_VALUE;
            for (Attribute i : instances) {
                created = Math.min(created, i.createdAt());
                modified = Math.max(modified, i.modifiedAt());
            }
            marker.put("createdAt", EntityRenderer.time(created));
            marker.put("modifiedAt", EntityRenderer.time(modified));
            marker.put("deletedAt", EntityRenderer.time(deletedAt));
        }
        return marker;
    }

    /** The instances of those datasetIds ({@code "@none"}: the default one); all of them for {@code null}. */
    private static List<Attribute> inDatasets(List<Attribute> instances, Set<String> datasetIds) {
        if (datasetIds == null) {
            return instances;
        }
        List<Attribute> in = new ArrayList<>(instances.size());
        for (Attribute i : instances) {
            if (datasetIds.contains(datasetKey(i))) {
                in.add(i);
            }
        }
        return in;
    }

    /** An instance's key in a {@code dataset} map and in a subscription's {@code datasetId}: {@code "@none"} for the default one. */
    private static String datasetKey(Attribute i) {
        return i.datasetId() == null ? "@none" : i.datasetId();
    }

    /** {@code showChanges}: each attribute whose value changed carries the one before as {@code previousValue} (and kin). */
    private static void previousValues(ObjectNode entity, byte[] beforeBytes) {
        JsonNode before;
        try {
            before = CorRestJson.mapper().readTree(beforeBytes);
        } catch (java.io.IOException e) {
            return;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = entity.properties().iterator(); it.hasNext();) {
            Map.Entry<String, JsonNode> a = it.next();
            JsonNode old = before.get(a.getKey());
            if (!(a.getValue() instanceof ObjectNode now) || !(old instanceof ObjectNode was)) {
                continue;
            }
            for (String[] m : new String[][] {{"value", "previousValue"}, {"object", "previousObject"},
                    {"languageMap", "previousLanguageMap"}, {"vocab", "previousVocab"}, {"json", "previousJson"}}) {
                JsonNode v = was.get(m[0]);
                if (v != null && !v.equals(now.get(m[0]))) {
                    now.set(m[1], v);
                }
            }
        }
    }

    @Override
    public void close() {
        mqtt.close();
    }
}
