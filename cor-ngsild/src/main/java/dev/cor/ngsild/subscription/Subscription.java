package dev.cor.ngsild.subscription;

import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityRenderer;
import dev.cor.ngsild.query.BoundedPattern;
import dev.cor.ngsild.query.LinkedEntities;
import dev.cor.ngsild.query.MatchBudget;

/**
 * One subscription as the broker understood it (ETSI GS CIM 009 § 5.2.12): what it selects,
 * what triggers it, how its notifications look and where they go. Immutable: an update builds a
 * new one and {@link LiveSubscription} swaps it in, keeping the status it counts. Names and types
 * are expanded IRIs; {@link #document} is the subscription as the subscriber gave it, with those
 * names expanded, for answering a retrieval in any context.
 *
 * @param id                the subscription's id (a URI)
 * @param tenant            its tenant
 * @param entities          what it selects (empty: any entity, then {@code watchedAttributes} is given)
 * @param watchedAttributes expanded names whose change triggers it ({@code null}: any attribute)
 * @param triggers          the {@link Trigger}s it notifies on
 * @param filter            its q/geoQ/scopeQ
 * @param timeIntervalMs    a periodic subscription's period (0: notifies on change)
 * @param throttlingMs      the least time between two notifications (0: none)
 * @param expiresAt         when it expires, epoch ms ({@link Long#MAX_VALUE}: never)
 * @param active            {@code isActive}
 * @param endpoint          where notifications go
 * @param options           how the entities of a notification are rendered (format, sysAttrs, attributes, lang)
 * @param showChanges       whether an updated attribute carries its {@code previousValue}
 * @param datasetIds        the attribute instances notified, by datasetId ({@code "@none"}: the default one; {@code null}: all)
 * @param context           the subscriber's context: notifications are compacted with it
 * @param brokerUrl         {@code http://host:port} of the broker as the subscriber reached it (for a hosted context's Link)
 * @param document          the subscription as given, names expanded, without the members the broker keeps
 */
public record Subscription(String id, String tenant, List<Selector> entities, Set<String> watchedAttributes,
        Set<Trigger> triggers, SubscriptionFilter filter, long timeIntervalMs, long throttlingMs, long expiresAt,
        boolean active, Endpoint endpoint, EntityRenderer.Options options, boolean showChanges, Set<String> datasetIds,
        LdContext context,
        String brokerUrl, ObjectNode document) {

    /** The notification triggers (Table 5.2.12-1). */
    public enum Trigger {
        ENTITY_CREATED("entityCreated"), ENTITY_UPDATED("entityUpdated"), ENTITY_DELETED("entityDeleted"),
        ATTRIBUTE_CREATED("attributeCreated"), ATTRIBUTE_UPDATED("attributeUpdated"),
        ATTRIBUTE_DELETED("attributeDeleted");

        private final String name;

        Trigger(String name) {
            this.name = name;
        }

        /** The name the specification gives it. */
        public String specName() {
            return name;
        }

        /** The trigger of that name, or {@code null}. */
        public static Trigger of(String name) {
            for (Trigger t : values()) {
                if (t.name.equals(name)) {
                    return t;
                }
            }
            return null;
        }
    }

    /**
     * One EntitySelector (§ 5.2.33): an id, or an id pattern, and a type selection (§ 4.17).
     *
     * @param types     every type the selection names: the index keys (an entity it selects has one of them)
     * @param typeMatch the whole type selection, on an entity's expanded types
     */
    public record Selector(String id, BoundedPattern idPattern, Set<String> types, Predicate<List<String>> typeMatch) {
        /** Whether it selects {@code e}: its id, its idPattern found in the id, its types - each that it names. */
        boolean matches(Entity e, MatchBudget budget) {
            return (id == null || id.equals(e.id()))
                    && (idPattern == null || idPattern.find(e.id(), budget))
                    && typeMatch.test(e.types());
        }
    }

    /**
     * Where notifications go (§ 5.2.15).
     *
     * @param uri          {@code http(s)://...} or {@code mqtt(s)://host[:port]/topic}
     * @param ldJson       whether the receiver takes {@code application/ld+json} (the {@code @context} in the body)
     * @param receiverInfo headers (HTTP) or user properties to send with each notification, {@code [key, value]}
     * @param mqttQos      the MQTT QoS (0 or 1) from {@code notifierInfo}
     */
    public record Endpoint(String uri, boolean ldJson, List<String[]> receiverInfo, int mqttQos) {
        public boolean isMqtt() {
            return uri.startsWith("mqtt://") || uri.startsWith("mqtts://");
        }
    }

    /** The tenant its hosted contexts belong to, as {@link dev.cor.ngsild.ld.LdContexts} takes it: {@code null} for the default one. */
    public String contextTenant() {
        return tenant.equals(dev.cor.ngsild.store.EntityStore.DEFAULT_TENANT) ? null : tenant;
    }

    /**
     * The join its notifications make ({@code notification.join} and {@code joinLevel}, Table
     * 5.2.14-1; § 4.5.23), or {@code null} when they make none. Read from the document, which
     * the broker checked when it took the subscription.
     */
    public LinkedEntities.Join join() {
        JsonNode notification = document.path("notification");
        JsonNode join = notification.get("join");
        if (join == null || !join.isTextual()) {
            return null;
        }
        return LinkedEntities.Join.of(join.asText(), notification.path("joinLevel").asInt(1), List.of());
    }

    /**
     * Whether it selects {@code e} (its entities, or any entity when it names none, and its
     * filter), its patterns reading at most what {@code budget} has left.
     *
     * @throws dev.cor.ngsild.error.NgsiLdException TooComplexQuery when they run out of it
     */
    boolean selects(Entity e, MatchBudget budget) {
        if (!entities.isEmpty()) {
            boolean any = false;
            for (Selector s : entities) {
                if (s.matches(e, budget)) {
                    any = true;
                    break;
                }
            }
            if (!any) {
                return false;
            }
        }
        return filter.matches(e, budget);
    }
}
