package dev.cor.ngsild.http;

import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;

/**
 * The members ETSI GS CIM 009 V1.8 defines for the data types a subscriber or a registrant writes:
 * a Subscription (§ 5.2.12, also of {@code /csourceSubscriptions}) with its nested types, and the
 * fixed parts of a CSourceRegistration (§ 5.2.9). A member outside them is 400 BadRequestData
 * naming it - a typo, or a name of an earlier version (V1.3's {@code expires}), is never stored,
 * echoed and silently ignored. A registration's own top-level members are Context Source
 * Properties (§ 5.2.9, the suite's 037_10): any name but those the spec renamed.
 * <p>
 * Only the names are checked here, on the body as the client sent it (a create, or a PATCH
 * fragment, whose {@code null} members name what they remove); the shapes and values are the
 * operations' own checks. Stateless; called on the loop by {@link SubscriptionOperations} and
 * {@link RegistrationOperations} before they read the body - never on what the broker writes for
 * itself (its copies, its restored records).
 */
final class DefinedMembers {
    /** Table 5.2.12-1, the read-only members of Table 5.2.12-2 and § 5.2.2 (ignored when given), {@code @context} of ld+json. */
    private static final Set<String> SUBSCRIPTION = Set.of("@context", "id", "type", "subscriptionName", "description",
            "entities", "notificationTrigger", "watchedAttributes", "timeInterval", "q", "geoQ", "csf", "isActive",
            "notification", "expiresAt", "throttling", "temporalQ", "scopeQ", "lang", "jsonldContext", "datasetId",
            // distributed subscriptions (§ 5.8.6; V1.9.1's member, the suite's 5814_01_02)
            "splitEntities",
            "status", "createdAt", "modifiedAt", "deletedAt");
    /** NotificationParams, Table 5.2.14-1, with its read-only members. */
    private static final Set<String> NOTIFICATION = Set.of("attributes", "sysAttrs", "format", "endpoint", "showChanges",
            "pick", "omit", "join", "joinLevel",
            "status", "timesSent", "timesFailed", "lastNotification", "lastSuccess", "lastFailure");
    /** Endpoint, Table 5.2.15-1. */
    private static final Set<String> ENDPOINT = Set.of("uri", "accept", "timeout", "cooldown", "receiverInfo", "notifierInfo");
    /** KeyValuePair, § 5.2.22. */
    private static final Set<String> KEY_VALUE_PAIR = Set.of("key", "value");
    /** EntitySelector, § 5.2.33. */
    private static final Set<String> ENTITY_SELECTOR = Set.of("id", "idPattern", "type");
    /** GeoQuery, Table 5.2.13-1. */
    private static final Set<String> GEO_QUERY = Set.of("geometry", "coordinates", "georel", "geoproperty");
    /** TemporalQuery, Table 5.2.21-1. */
    private static final Set<String> TEMPORAL_QUERY = Set.of("timerel", "timeAt", "endTimeAt", "timeproperty");
    /** TimeInterval, § 5.2.11. */
    private static final Set<String> TIME_INTERVAL = Set.of("startAt", "endAt");
    /** Names earlier versions gave members V1.8 renamed: the client is told the name of today. */
    private static final Map<String, String> RENAMED = Map.of("expires", "expiresAt", "name", "subscriptionName");

    private DefinedMembers() {
    }

    /** Checks a Subscription or a fragment of one (§ 5.8.1, § 5.8.2, § 5.11.2, § 5.11.3). */
    static void subscription(ObjectNode body) {
        only(body, SUBSCRIPTION, "a Subscription (§ 5.2.12)", RENAMED);
        each(body, "entities", ENTITY_SELECTOR, "an EntitySelector (§ 5.2.33)");
        object(body, "geoQ", GEO_QUERY, "geoQ, a GeoQuery (§ 5.2.13)");
        object(body, "temporalQ", TEMPORAL_QUERY, "temporalQ, a TemporalQuery (§ 5.2.21)");
        if (body.get("notification") instanceof ObjectNode notification) {
            only(notification, NOTIFICATION, "notification, a NotificationParams (§ 5.2.14)", Map.of());
            if (notification.get("endpoint") instanceof ObjectNode endpoint) {
                only(endpoint, ENDPOINT, "notification.endpoint, an Endpoint (§ 5.2.15)", Map.of());
                each(endpoint, "receiverInfo", KEY_VALUE_PAIR, "a receiverInfo KeyValuePair (§ 5.2.22)");
                each(endpoint, "notifierInfo", KEY_VALUE_PAIR, "a notifierInfo KeyValuePair (§ 5.2.22)");
            }
        }
    }

    /**
     * Checks a CSourceRegistration or a fragment of one (§ 5.9.2, § 5.9.3): its fixed parts. Its
     * other top-level members are Context Source Properties, but for {@code expires} - V1.3's name of
     * {@code expiresAt}, which Orion-LD still reads so: kept as a property, it would leave a
     * registration the registrant believes expires in force for ever.
     */
    static void registration(ObjectNode body) {
        if (body.has("expires")) {
            throw NgsiLdException.badData("'expires' is no member of a CSourceRegistration (§ 5.2.9): V1.8 calls it expiresAt");
        }
        each(body, "contextSourceInfo", KEY_VALUE_PAIR, "a contextSourceInfo KeyValuePair (§ 5.2.22)");
        object(body, "observationInterval", TIME_INTERVAL, "observationInterval, a TimeInterval (§ 5.2.11)");
        object(body, "managementInterval", TIME_INTERVAL, "managementInterval, a TimeInterval (§ 5.2.11)");
    }

    private static void object(ObjectNode holder, String member, Set<String> defined, String what) {
        if (holder.get(member) instanceof ObjectNode o) {
            only(o, defined, what, Map.of());
        }
    }

    private static void each(ObjectNode holder, String member, Set<String> defined, String what) {
        JsonNode list = holder.get(member);
        if (list != null && list.isArray()) {
            for (JsonNode item : list) {
                if (item instanceof ObjectNode o) {
                    only(o, defined, what, Map.of());
                }
            }
        }
    }

    private static void only(ObjectNode o, Set<String> defined, String what, Map<String, String> renamed) {
        for (Map.Entry<String, JsonNode> m : o.properties()) {
            String name = m.getKey();
            if (defined.contains(name)) {
                continue;
            }
            String now = renamed.get(name);
            throw NgsiLdException.badData("'" + shown(name) + "' is no member of " + what
                    + (now != null ? ": V1.8 calls it " + now : defined.size() <= 16 ? " (" + String.join(", ",
                            new java.util.TreeSet<>(defined)) + ")" : ""));
        }
    }

    /** A member name as an error shows it: a client's, bounded. */
    private static String shown(String name) {
        return name.length() <= 100 ? name : name.substring(0, 100) + "...";
    }
}
