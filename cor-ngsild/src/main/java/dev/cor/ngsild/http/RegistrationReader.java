package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.OperationNames;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.query.BoundedPattern;
import dev.cor.ngsild.query.StandingPattern;

/**
 * Reads a CSourceRegistration (ETSI GS CIM 009 § 5.2.9) - a registrant's whole document, or the
 * stored one with a PATCH fragment merged in - into the {@link Registration} the lookup reads:
 * entity types, property and relationship names and the registrant's own members (Context Source
 * Properties) expanded with the request's context, operation groups resolved (§ 4.20), and every
 * member checked (§ 5.2.8, § 5.2.10, § 5.2.34, the exclusive mode's rules of § 4.3.6.3, the
 * auxiliary mode's operations of § 5.9.2.4): each violation is 400 BadRequestData naming it. It
 * is also the one place that says which members § 5.2.9 defines ({@link #MEMBERS}) - what the
 * renderer leaves uncompacted, and csf and q tell from Context Source Properties.
 * <p>
 * Stateless (it reads the application's Config: limits, clock): one per application, shared by
 * every loop; runs on the loop of the request (or its coroutine), and once for each kept
 * registration as the broker starts.
 */
final class RegistrationReader {
    /** The type of every CSourceRegistration (§ 5.2.9). */
    static final String TYPE = "ContextSourceRegistration";
    /** The members the broker keeps (Table 5.2.9-2, and the system members): a registrant's values are ignored. */
    private static final Set<String> KEPT = Set.of("status", "timesSent", "timesFailed", "lastSuccess", "lastFailure",
            "createdAt", "modifiedAt", "deletedAt");
    /** The members § 5.2.9 defines; any other is a Context Source Property, its name expanded like an attribute's. */
    static final Set<String> MEMBERS = Set.of("registrationName", "description", "endpoint", "contextSourceInfo",
            "information", "contextSourceAlias", "datasetId", "expiresAt", "location", "management",
            "managementInterval", "mode", "observationInterval", "observationSpace", "operations", "operationSpace",
            "refreshRate", "scope", "tenant");
    private static final Set<String> AUXILIARY_OPS = Set.of("retrieveOps", "retrieveEntity", "queryEntity");
    private static final Set<String> SCHEMES = Set.of("http", "https", "cor", "cors");

    private final Config config;

    RegistrationReader(Config config) {
        this.config = config;
    }

    /**
     * The registration (or fragment) as given, without {@code @context}, id, type and the members
     * the broker keeps, its names expanded with {@code ctx}; checks the shapes it expands.
     */
    ObjectNode expand(ObjectNode body, LdContext ctx, boolean whole) {
        EntityParser names = new EntityParser(ctx, config.limits());
        ObjectNode doc = JsonNodeFactory.instance.objectNode();
        for (Map.Entry<String, JsonNode> m : body.properties()) {
            String k = m.getKey();
            JsonNode v = m.getValue();
            if (k.equals("@context") || k.equals("id") || k.equals("type") || KEPT.contains(k)) {
                continue;
            }
            if (v.isNull() && whole) {
                continue; // a null member in a creation is no member (as for subscriptions)
            }
            if (k.equals("information") && !v.isNull()) {
                doc.set(k, information(v, names));
            } else if (MEMBERS.contains(k)) {
                doc.set(k, v.deepCopy());
            } else {
                if (k.startsWith("@")) {
                    throw NgsiLdException.badData("'" + k + "' cannot be a member of a registration");
                }
                doc.set(names.attributeName(k), v.deepCopy()); // a Context Source Property (§ 5.10.2: csf)
            }
        }
        return doc;
    }

    /** information: a non-empty array of RegistrationInfo (§ 5.2.10), names expanded. */
    private static ArrayNode information(JsonNode v, EntityParser names) {
        if (!v.isArray() || v.isEmpty()) {
            throw NgsiLdException.badData("information is a non-empty array of RegistrationInfo");
        }
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (JsonNode item : v) {
            if (!item.isObject() || item.isEmpty()) {
                throw NgsiLdException.badData("a RegistrationInfo is a non-empty JSON object");
            }
            ObjectNode info = JsonNodeFactory.instance.objectNode();
            for (Map.Entry<String, JsonNode> m : item.properties()) {
                switch (m.getKey()) {
                    case "entities" -> info.set("entities", entities(m.getValue(), names));
                    case "propertyNames", "relationshipNames" -> info.set(m.getKey(), attributeNames(m.getKey(), m.getValue(), names));
                    default -> throw NgsiLdException.badData("'" + m.getKey() + "' is no member of a RegistrationInfo"
                            + " (entities, propertyNames, relationshipNames)");
                }
            }
            out.add(info);
        }
        return out;
    }

    private static ArrayNode entities(JsonNode v, EntityParser names) {
        if (!v.isArray() || v.isEmpty()) {
            throw NgsiLdException.badData("information.entities is a non-empty array of EntityInfo");
        }
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (JsonNode e : v) {
            if (!e.isObject()) {
                throw NgsiLdException.badData("an EntityInfo is a JSON object");
            }
            ObjectNode ei = JsonNodeFactory.instance.objectNode();
            for (Map.Entry<String, JsonNode> m : e.properties()) {
                JsonNode val = m.getValue();
                switch (m.getKey()) {
                    case "id" -> {
                        if (!val.isTextual() || !Syntax.isUri(val.asText())) {
                            throw NgsiLdException.badData("an EntityInfo's id is a URI, not " + val);
                        }
                        ei.set("id", val);
                    }
                    case "idPattern" -> {
                        if (!val.isTextual() || val.asText().isEmpty()) {
                            throw NgsiLdException.badData("an EntityInfo's idPattern is a regular expression, not " + val);
                        }
                        BoundedPattern.compile(val.asText(), "an EntityInfo's idPattern");
                        ei.set("idPattern", val);
                    }
                    case "type" -> {
                        if (val.isTextual() && !val.asText().isEmpty()) {
                            ei.put("type", names.typeName(val.asText()));
                        } else if (val.isArray() && !val.isEmpty()) {
                            ArrayNode types = JsonNodeFactory.instance.arrayNode();
                            for (JsonNode t : val) {
                                if (!t.isTextual()) {
                                    throw NgsiLdException.badData("an EntityInfo's type is a name or an array of names");
                                }
                                types.add(names.typeName(t.asText()));
                            }
                            ei.set("type", types);
                        } else {
                            throw NgsiLdException.badData("an EntityInfo's type is a name or an array of names, not " + val);
                        }
                    }
                    default -> throw NgsiLdException.badData("'" + m.getKey() + "' is no member of an EntityInfo (id,"
                            + " idPattern, type)");
                }
            }
            if (!ei.has("type")) {
                throw NgsiLdException.badData("an EntityInfo has a type (§ 5.2.8)");
            }
            out.add(ei);
        }
        return out;
    }

    private static ArrayNode attributeNames(String member, JsonNode v, EntityParser names) {
        if (!v.isArray()) {
            throw NgsiLdException.badData(member + " is an array of attribute names");
        }
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (JsonNode a : v) {
            if (!a.isTextual()) {
                throw NgsiLdException.badData(member + " is an array of attribute names, not " + a);
            }
            out.add(names.attributeName(a.asText()));
        }
        return out;
    }

    /**
     * Checks every member of an expanded registration and builds the record the lookup reads.
     * {@code restored}: it was built before; an {@code expiresAt} passed since is no error.
     */
    Registration build(String id, String tenant, ObjectNode doc, LdContext ctx, boolean restored) {
        JsonNode info = doc.get("information");
        if (info == null) {
            throw NgsiLdException.badData("a registration has information (§ 5.2.9)");
        }
        List<Registration.Info> infos = new ArrayList<>();
        for (JsonNode item : info) {
            infos.add(info(item, "registration " + id));
        }
        String endpoint = SubscriptionOperations.optionalText(doc, "endpoint");
        if (endpoint == null) {
            throw NgsiLdException.badData("a registration has an endpoint (§ 5.2.9)");
        }
        if (!Syntax.isAbsoluteIri(endpoint) || !SCHEMES.contains(endpoint.substring(0, endpoint.indexOf(':')).toLowerCase(Locale.ROOT))
                || !endpoint.contains("://") || endpoint.indexOf("://") + 3 >= endpoint.length()) {
            throw NgsiLdException.badData("endpoint is an http, https, cor or cors URI, not '" + endpoint + "'");
        }
        while (endpoint.endsWith("/")) {
            endpoint = endpoint.substring(0, endpoint.length() - 1);
        }
        String modeText = SubscriptionOperations.optionalText(doc, "mode");
        Registration.Mode mode = modeText == null ? Registration.Mode.INCLUSIVE : switch (modeText) {
            case "inclusive" -> Registration.Mode.INCLUSIVE;
            case "exclusive" -> Registration.Mode.EXCLUSIVE;
            case "redirect" -> Registration.Mode.REDIRECT;
            case "auxiliary" -> Registration.Mode.AUXILIARY;
            default -> throw NgsiLdException.badData("mode is inclusive, exclusive, redirect or auxiliary, not '" + modeText + "'");
        };
        Set<String> operations = operations(doc, mode);
        if (mode == Registration.Mode.EXCLUSIVE) {
            for (Registration.Info i : infos) {
                if (i.propertyNames().isEmpty() && i.relationshipNames().isEmpty()) {
                    throw NgsiLdException.badData("an exclusive registration names its attributes (§ 4.3.6.3)");
                }
                if (i.entities().isEmpty()) {
                    throw NgsiLdException.badData("an exclusive registration names its entities by id (§ 4.3.6.3)");
                }
                for (Registration.EntityInfo e : i.entities()) {
                    if (e.id() == null) {
                        throw NgsiLdException.badData("an exclusive registration names its entities by id, not by idPattern"
                                + " or type alone (§ 4.3.6.3)");
                    }
                }
            }
        }
        long expires = ExpiresAt.of(doc, restored, config.clock().millis());
        long expiresAt = expires == ExpiresAt.NEVER ? -1 : expires; // a registration's "never" is -1
        Map<String, String> csi = new LinkedHashMap<>();
        for (String[] kv : SubscriptionOperations.keyValues(doc, "contextSourceInfo")) {
            csi.put(kv[0], kv[1]);
        }
        String sourceTenant = SubscriptionOperations.optionalText(doc, "tenant");
        if (sourceTenant != null && (sourceTenant.isEmpty() || sourceTenant.length() > 256
                || !sourceTenant.chars().allMatch(c -> c > 0x20 && c < 0x7F))) {
            throw NgsiLdException.badData("tenant names a tenant: up to 256 visible ASCII characters");
        }
        long[] management = management(doc);
        for (String m : List.of("registrationName", "description", "contextSourceAlias")) {
            String s = SubscriptionOperations.optionalText(doc, m);
            if (s != null && s.isEmpty()) {
                throw NgsiLdException.badData(m + " is a non-empty string");
            }
        }
        datasetIds(doc);
        scopes(doc);
        for (String t : List.of("observationInterval", "managementInterval")) {
            JsonNode n = doc.get(t);
            if (n != null && (!n.isObject() || !n.path("startAt").isTextual() || !Syntax.isDateTime(n.path("startAt").asText())
                    || (n.has("endAt") && (!n.get("endAt").isTextual() || !Syntax.isDateTime(n.get("endAt").asText()))))) {
                throw NgsiLdException.badData(t + " is a TimeInterval (§ 5.2.11): startAt, and endAt if it ends, as DateTimes");
            }
        }
        for (String g : List.of("location", "observationSpace", "operationSpace")) {
            JsonNode n = doc.get(g);
            if (n != null && dev.cor.ngsild.query.GeoQuery.target(n) == null) {
                throw NgsiLdException.badData(g + " is a GeoJSON geometry (§ 4.7), not " + n);
            }
        }
        return new Registration(tenant, id, List.copyOf(infos), mode, operations, endpoint, Map.copyOf(csi), sourceTenant,
                management[0], management[1], expiresAt, ctx, doc);
    }

    /** One RegistrationInfo as the lookup reads it, each EntityInfo's idPattern compiled once (shared by its types). */
    private static Registration.Info info(JsonNode item, String owner) {
        List<Registration.EntityInfo> entities = new ArrayList<>();
        if (item.get("entities") instanceof ArrayNode es) {
            for (JsonNode e : es) {
                String id = e.hasNonNull("id") ? e.get("id").asText() : null;
                // § 5.2.8: id takes precedence over idPattern (Orion-LD drops the pattern too)
                StandingPattern idPattern = id == null && e.hasNonNull("idPattern")
                        ? StandingPattern.compile(e.get("idPattern").asText(), "idPattern", owner) : null;
                JsonNode t = e.get("type");
                if (t.isArray()) {
                    for (JsonNode one : t) {
                        entities.add(new Registration.EntityInfo(id, idPattern, one.asText()));
                    }
                } else {
                    entities.add(new Registration.EntityInfo(id, idPattern, t.asText()));
                }
            }
        }
        return new Registration.Info(List.copyOf(entities), texts(item.get("propertyNames")),
                texts(item.get("relationshipNames")));
    }

    private static Set<String> texts(JsonNode list) {
        if (list == null) {
            return Set.of();
        }
        Set<String> out = new LinkedHashSet<>();
        list.forEach(n -> out.add(n.asText()));
        return Set.copyOf(out);
    }

    /** operations (§ 4.20): names and groups, resolved; federationOps when absent. Auxiliary: reads only (§ 5.9.2.4). */
    private static Set<String> operations(ObjectNode doc, Registration.Mode mode) {
        JsonNode ops = doc.get("operations");
        if (ops == null) {
            return OperationNames.DEFAULT;
        }
        if (!ops.isArray() || ops.isEmpty()) {
            throw NgsiLdException.badData("operations is a non-empty array of operation names (§ 4.20)");
        }
        List<String> listed = new ArrayList<>();
        for (JsonNode o : ops) {
            if (!o.isTextual() || !OperationNames.known(o.asText())) {
                throw NgsiLdException.badData("'" + o.asText() + "' is no operation name nor group (§ 4.20)");
            }
            if (mode == Registration.Mode.AUXILIARY && !AUXILIARY_OPS.contains(o.asText())) {
                throw NgsiLdException.badData("an auxiliary registration serves retrieveOps, retrieveEntity or queryEntity,"
                        + " not " + o.asText() + " (§ 5.9.2.4)");
            }
            listed.add(o.asText());
        }
        return OperationNames.resolve(listed);
    }

    /** management (§ 5.2.34): {timeout ms, cooldown ms}; localOnly a boolean, cacheDuration a duration. */
    private static long[] management(ObjectNode doc) {
        JsonNode m = doc.get("management");
        if (m == null) {
            return new long[] {0, 0};
        }
        if (!m.isObject()) {
            throw NgsiLdException.badData("management is a RegistrationManagementInfo: a JSON object");
        }
        long[] out = {0, 0};
        for (Map.Entry<String, JsonNode> e : m.properties()) {
            JsonNode v = e.getValue();
            switch (e.getKey()) {
                case "timeout", "cooldown" -> {
                    if (!v.isNumber() || v.asDouble() <= 0) {
                        throw NgsiLdException.badData("management." + e.getKey() + " is a number of milliseconds greater"
                                + " than 0, not " + v);
                    }
                    out[e.getKey().equals("timeout") ? 0 : 1] = Math.max(1, Math.round(v.asDouble()));
                }
                case "localOnly" -> {
                    if (!v.isBoolean()) {
                        throw NgsiLdException.badData("management.localOnly is true or false, not " + v);
                    }
                }
                case "cacheDuration" -> {
                    if (!v.isTextual() || !v.asText().matches("P(?!$)(\\d+Y)?(\\d+M)?(\\d+W)?(\\d+D)?(T(?=\\d)(\\d+H)?(\\d+M)?(\\d+(\\.\\d+)?S)?)?")) {
                        throw NgsiLdException.badData("management.cacheDuration is an ISO 8601 duration, not " + v);
                    }
                }
                default -> throw NgsiLdException.badData("'" + e.getKey() + "' is no member of management (localOnly,"
                        + " cacheDuration, timeout, cooldown)");
            }
        }
        return out;
    }

    private static void datasetIds(ObjectNode doc) {
        JsonNode n = doc.get("datasetId");
        if (n == null) {
            return;
        }
        if (!n.isArray() || n.isEmpty()) {
            throw NgsiLdException.badData("datasetId is a non-empty array of URIs (or \"@none\")");
        }
        for (JsonNode d : n) {
            if (!d.isTextual() || (!d.asText().equals("@none") && !Syntax.isUri(d.asText()))) {
                throw NgsiLdException.badData("datasetId is an array of URIs (or \"@none\"), not " + d);
            }
        }
    }

    private static void scopes(ObjectNode doc) {
        JsonNode n = doc.get("scope");
        if (n == null) {
            return;
        }
        List<JsonNode> all = new ArrayList<>();
        if (n.isArray()) {
            n.forEach(all::add);
        } else {
            all.add(n);
        }
        for (JsonNode s : all) {
            if (!s.isTextual() || !Syntax.isScope(s.asText())) {
                throw NgsiLdException.badData("scope is a scope or an array of scopes (§ 4.18), not " + s);
            }
        }
    }
}
