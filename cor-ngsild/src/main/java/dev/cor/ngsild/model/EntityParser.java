package dev.cor.ngsild.model;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.policy.NgsildLimits;

/**
 * Reads entities, fragments and attributes from a request body - normalized or concise
 * (ETSI GS CIM 009 § 4.5) - into {@link EntityInput} / {@link AttributeInput}: names and types
 * expanded with the request's context, every value checked against its kind. Every violation is
 * a BadRequestData naming the member and what is wrong with it. One parser per request; not
 * thread-safe.
 */
public final class EntityParser {
    /** What a body is read for, which decides where NGSI-LD Null may stand (§ 5.5.4, 5.5.8, 5.5.12). */
    public enum Mode {
        /** A whole entity or attribute (create, replace, append): no NGSI-LD Null anywhere. */
        WHOLE,
        /** A partial update patch (update attributes, partial attribute update): Null removes an attribute or a member. */
        PATCH,
        /** A merge patch (merge entity, batch merge): Null may also stand inside a value, to remove a key of it. */
        MERGE;

        boolean isPatch() {
            return this != WHOLE;
        }
    }

    /** Members of an attribute that are not sub-attributes (§ 4.5.2-4.5.24, 5.2). */
    private static final Set<String> ATTRIBUTE_MEMBERS = Set.of("type", "value", "object", "languageMap", "valueList",
            "objectList", "vocab", "json", "datasetId", "observedAt", "unitCode", "valueType", "objectType",
            "expiresAt", "createdAt", "modifiedAt", "deletedAt", "instanceId", "previousValue", "previousObject",
            "previousLanguageMap", "previousValueList", "previousObjectList", "previousVocab", "previousJson",
            "entity", "entityList", "lang", "@type", "@value", "@id", "@context");
    /** Members only answers and notifications carry (§ 4.5.x "Output Only", "Prohibited"): a request with one is refused. */
    private static final List<String> OUTPUT_ONLY = List.of("previousValue", "previousObject", "previousLanguageMap",
            "previousValueList", "previousObjectList", "previousVocab", "previousJson", "entity", "entityList");
    /** The core GeoProperties (§ 4.7): whatever else an attribute of these names is, it is refused. */
    private static final Set<String> GEO_NAMES = Set.of("https://uri.etsi.org/ngsi-ld/location",
            "https://uri.etsi.org/ngsi-ld/observationSpace", "https://uri.etsi.org/ngsi-ld/operationSpace");
    /** Members of an entity that are not attributes (§ 5.2.4): the one list, {@link #isEntityMember}. */
    private static final Set<String> ENTITY_MEMBERS = Set.of("id", "@id", "type", "@type", "scope", "@context",
            "createdAt", "modifiedAt", "deletedAt", "expiresAt");
    private static final Set<String> GEOMETRY_TYPES = Set.of("Point", "MultiPoint", "LineString", "MultiLineString",
            "Polygon", "MultiPolygon");

    private final LdContext context;
    private final NgsildLimits limits;

    /** A parser that expands names with {@code context} and refuses what exceeds {@code limits}. */
    public EntityParser(LdContext context, NgsildLimits limits) {
        this.context = context;
        this.limits = limits;
    }

    // ---------------------------------------------------------------- entities

    /**
     * A whole entity (create, replace, batch, upsert) or an entity fragment (append, update,
     * merge: {@code patch} admits partial attributes and NGSI-LD Null).
     *
     * @param requireIdAndType whether {@code id} and {@code type} must be present (create)
     */
    public EntityInput entity(JsonNode body, boolean requireIdAndType, Mode mode) {
        boolean patch = mode.isPatch();
        if (body == null || !body.isObject()) {
            throw NgsiLdException.badData("an entity is a JSON object, not " + describe(body));
        }
        String id = null;
        JsonNode idNode = first(body, "id", "@id");
        if (idNode != null) {
            if (!idNode.isTextual() || !Syntax.isUri(idNode.asText())) {
                throw NgsiLdException.badData("the entity id " + idNode + " is not a URI");
            }
            if (idNode.asText().equals(Syntax.NGSI_LD_NULL)) {
                throw NgsiLdException.badData("the entity id " + idNode + " is the NGSI-LD Null, which identifies nothing");
            }
            id = idNode.asText();
            checkLength("the entity id", id);
        } else if (requireIdAndType) {
            throw NgsiLdException.badData("the entity has no id");
        }
        List<String> types = null;
        JsonNode typeNode = first(body, "type", "@type");
        if (typeNode != null) {
            types = types(typeNode);
        } else if (requireIdAndType) {
            throw NgsiLdException.badData("the entity has no type");
        }
        List<String> scopes = null;
        JsonNode scopeNode = body.get("scope");
        if (scopeNode != null) {
            scopes = scopes(scopeNode, patch);
        }
        Map<String, List<AttributeInput>> attributes = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> member : body.properties()) {
            String key = member.getKey();
            if (ENTITY_MEMBERS.contains(key)) {
                if (!patch && isNgsiLdNull(member.getValue())) {
                    // 5.5.4: a first-level NGSI-LD Null only in a fragment of a partial update or merge
                    throw NgsiLdException.badData("'" + key + "' is NGSI-LD Null, which only a patch may use");
                }
                continue;
            }
            if (attributes.size() >= limits.maxAttributes()) {
                throw NgsiLdException.badData("more than " + limits.maxAttributes() + " attributes in one entity");
            }
            String name = attributeName(key);
            if (attributes.containsKey(name)) {
                throw NgsiLdException.badData("attribute '" + key + "' is given twice (two names expand to " + name + ")");
            }
            List<AttributeInput> instances = attribute(key, member.getValue(), mode, 1);
            if (instances != null && GEO_NAMES.contains(name)) {
                for (AttributeInput i : instances) {
                    if (i.kind() != null && i.kind() != AttributeKind.GEO_PROPERTY) {
                        throw NgsiLdException.badData("attribute '" + key + "' is a GeoProperty by the core context, not a "
                                + i.kind().typeName());
                    }
                }
            }
            attributes.put(name, instances);
        }
        return new EntityInput(id, types, scopes, attributes);
    }

    /**
     * Whether {@code member} of an entity's JSON is the entity's own - its id, type, scope,
     * {@code @context} or a system member ({@code createdAt}, {@code modifiedAt}, {@code deletedAt},
     * {@code expiresAt}) - and so never one of its attributes, wherever the entity comes from (a
     * request, a source's answer or notification). Any thread.
     */
    public static boolean isEntityMember(String member) {
        return ENTITY_MEMBERS.contains(member);
    }

    /** The value of an attribute of {@code PATCH/PUT /entities/{id}/attrs/{attrId}}: its instances. */
    public List<AttributeInput> attributeValue(String name, JsonNode value, Mode mode) {
        return attribute(name, value, mode, 1);
    }

    /**
     * The instances of one attribute in a temporal representation (§ 4.5.7: Create or Update
     * Temporal Evolution, Add Attributes): one instance, or an array of them in which several may
     * share a datasetId - they are the attribute at different times. Each is a whole instance.
     */
    public List<AttributeInput> temporalInstances(String key, JsonNode value) {
        if (value == null || !(value.isObject() || (value.isArray() && !value.isEmpty() && allObjects(value)))) {
            throw NgsiLdException.badData("attribute '" + key + "' of a temporal evolution is an instance or an array of"
                    + " instances (JSON objects)");
        }
        if (value.isObject()) {
            return List.of(temporalInstance(key, value));
        }
        List<AttributeInput> out = new ArrayList<>(value.size());
        for (JsonNode i : value) {
            out.add(temporalInstance(key, i));
        }
        return out;
    }

    /**
     * One instance of a temporal representation: a whole one, or one whose value member is the
     * NGSI-LD Null - the deleted instance the temporal evolution shows (§ 4.5.7, § 5.2.1) - read as
     * {@link AttributeInput#isNull} with its kind, datasetId and observedAt.
     */
    private AttributeInput temporalInstance(String key, JsonNode node) {
        for (AttributeKind k : AttributeKind.values()) {
            if (node.isObject() && isNullValue(node.get(k.valueMember()))) {
                AttributeInput in = instance(key, node, Mode.PATCH, 1);
                if (isNgsiLdNull(in.observedAt())) {
                    throw NgsiLdException.badData("attribute '" + key + "' has an NGSI-LD Null observedAt");
                }
                return new AttributeInput(in.kind() != null ? in.kind() : k, null, true, in.datasetId(), in.observedAt(),
                        null, null, null, Map.of());
            }
        }
        return instance(key, node, Mode.WHOLE, 1);
    }

    /** The expanded IRI of an attribute name as written in a request (a body key, a path segment, a parameter). */
    public String attributeName(String key) {
        if (key.startsWith("@")) {
            throw NgsiLdException.badData("'" + key + "' cannot be an attribute: JSON-LD keywords are not attributes"
                    + (key.equals("@context") ? " (an attribute carries no embedded @context)" : ""));
        }
        if (ATTRIBUTE_MEMBERS.contains(key) || ENTITY_MEMBERS.contains(key)) {
            throw NgsiLdException.badData("'" + key + "' is a term of the NGSI-LD core context and cannot be an attribute name");
        }
        if (!Syntax.isName(key)) {
            throw NgsiLdException.badData("the attribute name '" + key + "' is not a name: a letter, then letters,"
                    + " digits or underscores (or an IRI)");
        }
        checkLength("the attribute name", key);
        String iri = context.expand(key);
        if (iri == null || !Syntax.isAbsoluteIri(iri)) {
            throw NgsiLdException.badData("the attribute name '" + key + "' does not expand to an IRI");
        }
        return iri;
    }

    /** The expanded IRI of an entity type as written in a request. */
    public String typeName(String term) {
        if (!Syntax.isName(term)) {
            throw NgsiLdException.badData("the entity type '" + term + "' is not a type name: a letter, then letters,"
                    + " digits or underscores (or an IRI)");
        }
        checkLength("the entity type", term);
        String iri = context.expand(term);
        if (iri == null || !Syntax.isAbsoluteIri(iri)) {
            throw NgsiLdException.badData("the entity type '" + term + "' does not expand to an IRI");
        }
        return iri;
    }

    private List<String> types(JsonNode node) {
        List<String> types = new ArrayList<>(1);
        if (node.isTextual()) {
            types.add(typeName(node.asText()));
        } else if (node.isArray() && !node.isEmpty()) {
            for (JsonNode t : node) {
                if (!t.isTextual()) {
                    throw NgsiLdException.badData("an entity type is a string, not " + describe(t));
                }
                String iri = typeName(t.asText());
                if (!types.contains(iri)) {
                    types.add(iri);
                }
            }
        } else {
            throw NgsiLdException.badData("the entity type is a string or a non-empty array of strings, not " + describe(node));
        }
        return types;
    }

    private static List<String> scopes(JsonNode node, boolean patch) {
        List<String> scopes = new ArrayList<>(1);
        if (patch && node.isTextual() && node.asText().equals(Syntax.NGSI_LD_NULL)) {
            return scopes; // a patch removes the scopes
        }
        for (JsonNode s : node.isArray() ? node : List.of(node)) {
            if (!s.isTextual() || !Syntax.isScope(s.asText())) {
                throw NgsiLdException.badData("the scope " + s + " is not a scope (/level/level..., each level a letter"
                        + " then letters, digits or _)");
            }
            if (!scopes.contains(s.asText())) {
                scopes.add(s.asText());
            }
        }
        if (scopes.isEmpty()) {
            throw NgsiLdException.badData("the scope is a scope or a non-empty array of scopes");
        }
        return scopes;
    }

    // ---------------------------------------------------------------- attributes

    /** The instances of one attribute member ({@code null}: the attribute is NGSI-LD Null in a patch). */
    private List<AttributeInput> attribute(String key, JsonNode value, Mode mode, int depth) {
        boolean patch = mode.isPatch();
        if (depth > limits.maxDepth()) {
            throw NgsiLdException.badData("attributes nest deeper than " + limits.maxDepth() + " levels");
        }
        if (value == null || value.isNull()) {
            if (patch) {
                return null;
            }
            throw NgsiLdException.badData("attribute '" + key + "' is null: an attribute has a value");
        }
        if (value.isTextual() && value.asText().equals(Syntax.NGSI_LD_NULL)) {
            if (patch) {
                return null;
            }
            throw NgsiLdException.badData("attribute '" + key + "' is NGSI-LD Null, which only a patch may use");
        }
        if (value.isArray() && !value.isEmpty() && allObjects(value) && !looksLikeValues(value)) {
            if (value.size() > limits.maxInstances()) {
                throw NgsiLdException.badData("attribute '" + key + "' has more than " + limits.maxInstances() + " instances");
            }
            List<AttributeInput> instances = new ArrayList<>(value.size());
            Set<String> datasetIds = new HashSet<>();
            for (JsonNode i : value) {
                AttributeInput in = instance(key, i, mode, depth);
                String ds = in.datasetId() == null ? "" : in.datasetId();
                if (!datasetIds.add(ds)) {
                    throw NgsiLdException.badData("attribute '" + key + "' has two instances with "
                            + (in.datasetId() == null ? "no datasetId (two default instances)" : "datasetId " + in.datasetId()));
                }
                instances.add(in);
            }
            return instances;
        }
        return List.of(instance(key, value, mode, depth));
    }

    /** One instance: normalized, concise, or a bare concise value. */
    private AttributeInput instance(String key, JsonNode node, Mode mode, int depth) {
        boolean patch = mode.isPatch();
        if (!node.isObject()) {
            // concise: a bare value is a Property (§ 4.5.2.3)
            if (node.isNull()) {
                throw NgsiLdException.badData("attribute '" + key + "' has a null instance");
            }
            return new AttributeInput(AttributeKind.PROPERTY, checkedPropertyValue(key, node, mode), false, null,
                    null, null, null, null, Map.of());
        }
        JsonNode typeNode = node.get("type");
        AttributeKind kind = null;
        if (typeNode != null) {
            if (!typeNode.isTextual()) {
                throw NgsiLdException.badData("attribute '" + key + "' has a type that is not a string: " + typeNode);
            }
            kind = AttributeKind.ofType(typeNode.asText());
            if (kind == null) {
                if (GEOMETRY_TYPES.contains(typeNode.asText()) && node.has("coordinates")) {
                    // concise GeoProperty: the value itself is a geometry (§ 4.7.3)
                    return new AttributeInput(AttributeKind.GEO_PROPERTY, geometry(key, node), false, null, null,
                            null, null, null, Map.of());
                }
                throw NgsiLdException.badData("attribute '" + key + "' has an unknown type '" + typeNode.asText()
                        + "' (Property, Relationship, GeoProperty, LanguageProperty, ListProperty, ListRelationship,"
                        + " VocabProperty or JsonProperty)");
            }
        }
        // which value member it carries
        String valueMember = null;
        for (AttributeKind k : AttributeKind.values()) {
            if (node.has(k.valueMember()) && !k.valueMember().equals(valueMember)) {
                if (valueMember != null) {
                    throw NgsiLdException.badData("attribute '" + key + "' has both '" + valueMember + "' and '"
                            + k.valueMember() + "'");
                }
                valueMember = k.valueMember();
            }
        }
        if (kind == null && valueMember != null) {
            kind = AttributeKind.ofValueMember(valueMember);
        }
        if (kind != null && valueMember != null && !kind.valueMember().equals(valueMember)) {
            throw NgsiLdException.badData("attribute '" + key + "' is a " + kind.typeName() + ", which carries '"
                    + kind.valueMember() + "', not '" + valueMember + "'");
        }
        for (String outputOnly : OUTPUT_ONLY) {
            if (node.has(outputOnly)) {
                throw NgsiLdException.badData("attribute '" + key + "' carries '" + outputOnly + "', which only answers may");
            }
        }
        if (node.has("@context")) {
            throw NgsiLdException.badData("attribute '" + key + "' carries an embedded @context, which NGSI-LD forbids");
        }
        boolean isNull = false;
        JsonNode value = null;
        if (valueMember != null) {
            JsonNode raw = node.get(valueMember);
            if (isNullValue(raw)) {
                if (!patch) {
                    throw NgsiLdException.badData("attribute '" + key + "' has an NGSI-LD Null " + valueMember
                            + ", which only a patch may use");
                }
                isNull = true;
            } else {
                if (kind == AttributeKind.PROPERTY && typeNode == null && isGeometry(raw)) {
                    kind = AttributeKind.GEO_PROPERTY; // a type-less value that is a geometry (§ 4.7.3)
                }
                value = value(key, kind, raw, mode);
            }
        } else if (!patch) {
            if (kind != null) {
                throw NgsiLdException.badData("attribute '" + key + "' is a " + kind.typeName() + " without its '"
                        + kind.valueMember() + "' member");
            }
            throw NgsiLdException.badData("attribute '" + key + "' has neither a type nor a value member (value,"
                    + " object, languageMap, valueList, objectList, vocab or json)");
        }
        if (kind != null) {
            prohibit(key, kind, node);
        }
        String datasetId = null;
        JsonNode ds = node.get("datasetId");
        if (ds != null && ds.isTextual() && ds.asText().equals("@none")) {
            ds = null; // @none names the default instance (§ 4.5.5)
        }
        if (ds != null) {
            if (isNgsiLdNull(ds)) {
                throw NgsiLdException.badData("attribute '" + key + "': a datasetId cannot be removed with NGSI-LD Null"
                        + " (delete the instance instead)");
            }
            if (!ds.isTextual() || !Syntax.isUri(ds.asText())) {
                throw NgsiLdException.badData("attribute '" + key + "' has a datasetId that is not a URI: " + ds);
            }
            datasetId = ds.asText();
        }
        JsonNode observedAt = node.get("observedAt");
        if (observedAt != null && !(patch && isNgsiLdNull(observedAt))
                && !(observedAt.isTextual() && Syntax.isDateTime(observedAt.asText()))) {
            throw NgsiLdException.badData("attribute '" + key + "' has an observedAt that is not a UTC date-time"
                    + " (YYYY-MM-DDThh:mm:ss[.sss]Z): " + observedAt);
        }
        JsonNode unitCode = node.get("unitCode");
        if (unitCode != null && !unitCode.isTextual()) {
            throw NgsiLdException.badData("attribute '" + key + "' has a unitCode that is not a string: " + unitCode);
        }
        JsonNode valueType = node.get("valueType");
        if (valueType != null && !(patch && isNgsiLdNull(valueType))) {
            valueType = expandedTerms(key, "valueType", valueType);
        }
        JsonNode objectType = node.get("objectType");
        if (objectType != null && !(patch && isNgsiLdNull(objectType))) {
            objectType = expandedTerms(key, "objectType", objectType);
        }
        Map<String, List<AttributeInput>> sub = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> member : node.properties()) {
            String m = member.getKey();
            if (ATTRIBUTE_MEMBERS.contains(m)) {
                continue;
            }
            if (sub.size() >= limits.maxAttributes()) {
                throw NgsiLdException.badData("more than " + limits.maxAttributes() + " sub-attributes in attribute '" + key + "'");
            }
            String name = attributeName(m);
            if (sub.containsKey(name)) {
                throw NgsiLdException.badData("sub-attribute '" + m + "' of '" + key + "' is given twice");
            }
            sub.put(name, attribute(key + "." + m, member.getValue(), mode, depth + 1)); // errors name the path
        }
        return new AttributeInput(kind, value, isNull, datasetId, observedAt, unitCode, valueType, objectType, sub);
    }

    /** Members a kind may never carry (§ 4.5.x "Prohibited"). */
    private static void prohibit(String key, AttributeKind kind, JsonNode node) {
        switch (kind) {
            case RELATIONSHIP, LIST_RELATIONSHIP, VOCAB_PROPERTY, JSON_PROPERTY, LANGUAGE_PROPERTY -> {
                if (node.has("unitCode")) {
                    throw NgsiLdException.badData("attribute '" + key + "' is a " + kind.typeName()
                            + ", which has no unitCode");
                }
            }
            default -> {
            }
        }
        if (node.has("objectType") && kind != AttributeKind.RELATIONSHIP && kind != AttributeKind.LIST_RELATIONSHIP) {
            throw NgsiLdException.badData("attribute '" + key + "' is a " + kind.typeName() + ", which has no objectType");
        }
    }

    /** The value member's content, checked and normalized for its kind. */
    private JsonNode value(String key, AttributeKind kind, JsonNode raw, Mode mode) {
        return switch (kind) {
            case PROPERTY -> checkedPropertyValue(key, raw, mode);
            case GEO_PROPERTY -> geometry(key, raw);
            case RELATIONSHIP -> relationshipObject(key, raw);
            case LANGUAGE_PROPERTY -> languageMap(key, raw, mode == Mode.MERGE);
            case LIST_PROPERTY -> {
                if (!raw.isArray()) {
                    throw NgsiLdException.badData("attribute '" + key + "': valueList is an array, not " + describe(raw));
                }
                yield raw;
            }
            case LIST_RELATIONSHIP -> objectList(key, raw);
            case VOCAB_PROPERTY -> expandedTerms(key, "vocab", raw);
            case JSON_PROPERTY -> {
                if (!(raw.isObject() || (raw.isArray() && allObjects(raw)))) {
                    throw NgsiLdException.badData("attribute '" + key + "': json is a JSON object or an array of"
                            + " objects, not " + describe(raw));
                }
                yield raw;
            }
        };
    }

    private JsonNode checkedPropertyValue(String key, JsonNode v, Mode mode) {
        if (v.isNull()) {
            throw NgsiLdException.badData("attribute '" + key + "' has a null value");
        }
        if (mode == Mode.WHOLE && isNgsiLdNull(v)) {
            throw NgsiLdException.badData("attribute '" + key + "' has an NGSI-LD Null value, which only a patch may use");
        }
        checkDepth(key, v, 1, mode != Mode.MERGE);
        return single(v);
    }

    /**
     * A one-element array as JSON-LD compaction gives it back (compactArrays, JSON-LD 1.1 § 4.1.5):
     * the element. Expanded, {@code ["x"]} and {@code "x"} are the same value of a member whose term
     * is no list ({@code value}, {@code object}, {@code vocab}, a language of a languageMap), so the
     * broker keeps - and answers, and matches - the element, as Orion-LD does ("array reduction").
     * One level: a structured value below it is JSON kept as written.
     */
    private static JsonNode single(JsonNode v) {
        return v.isArray() && v.size() == 1 ? v.get(0) : v;
    }

    /**
     * Checks a value's nesting and, outside a merge, that no NGSI-LD Null stands inside it: only a
     * merge patch removes keys of a value (§ 5.5.12).
     */
    private void checkDepth(String key, JsonNode v, int depth, boolean noNullInside) {
        if (depth > limits.maxDepth()) {
            throw NgsiLdException.badData("the value of attribute '" + key + "' nests deeper than " + limits.maxDepth() + " levels");
        }
        if (v.isContainerNode()) {
            for (JsonNode c : v) {
                if (noNullInside && isNgsiLdNull(c)) {
                    throw NgsiLdException.badData("the value of attribute '" + key + "' holds an NGSI-LD Null, which only"
                            + " a merge may use inside a value");
                }
                checkDepth(key, c, depth + 1, noNullInside);
            }
        }
    }

    private static JsonNode relationshipObject(String key, JsonNode raw) {
        if (raw.isTextual()) {
            if (!Syntax.isUri(raw.asText())) {
                throw NgsiLdException.badData("attribute '" + key + "': the object " + raw + " is not a URI");
            }
            return raw;
        }
        if (raw.isArray() && !raw.isEmpty()) {
            for (JsonNode o : raw) {
                if (!o.isTextual() || !Syntax.isUri(o.asText())) {
                    throw NgsiLdException.badData("attribute '" + key + "': the object " + o + " is not a URI");
                }
            }
            return single(raw);
        }
        throw NgsiLdException.badData("attribute '" + key + "': object is a URI or an array of URIs, not " + describe(raw));
    }

    /** The objects of a ListRelationship as an array of URIs (input admits {"object": URI} entries too). */
    private static JsonNode objectList(String key, JsonNode raw) {
        if (!raw.isArray()) {
            throw NgsiLdException.badData("attribute '" + key + "': objectList is an array, not " + describe(raw));
        }
        ArrayNode uris = JsonNodeFactory.instance.arrayNode(raw.size());
        for (JsonNode o : raw) {
            JsonNode uri = o.isObject() && o.size() == 1 && o.has("object") ? o.get("object") : o;
            if (!uri.isTextual() || !Syntax.isUri(uri.asText())) {
                throw NgsiLdException.badData("attribute '" + key + "': the objectList entry " + o + " is not a URI");
            }
            uris.add(uri);
        }
        return uris;
    }

    private static JsonNode languageMap(String key, JsonNode raw, boolean nullEntries) {
        if (!raw.isObject() || raw.isEmpty()) {
            throw NgsiLdException.badData("attribute '" + key + "': languageMap is a non-empty object of language tag"
                    + " to string, not " + describe(raw));
        }
        for (Map.Entry<String, JsonNode> e : raw.properties()) {
            String tag = e.getKey();
            if (!tag.equals("@none") && !isLanguageTag(tag)) {
                throw NgsiLdException.badData("attribute '" + key + "': '" + tag + "' is not a language tag");
            }
            JsonNode s = e.getValue();
            if (isNgsiLdNull(s) && !nullEntries) {
                throw NgsiLdException.badData("attribute '" + key + "': the languageMap entry '" + tag
                        + "' is NGSI-LD Null, which only a merge may use inside a value");
            }
            boolean ok = s.isTextual() || (nullEntries && s.isNull());
            if (s.isArray() && !s.isEmpty()) {
                ok = true;
                for (JsonNode x : s) {
                    ok &= x.isTextual();
                }
            }
            if (!ok) {
                throw NgsiLdException.badData("attribute '" + key + "': the languageMap entry '" + tag
                        + "' is a string or an array of strings, not " + describe(s));
            }
        }
        ObjectNode out = null;
        for (Map.Entry<String, JsonNode> e : raw.properties()) {
            if (e.getValue().isArray() && e.getValue().size() == 1) {
                out = out == null ? ((ObjectNode) raw).deepCopy() : out;
                out.set(e.getKey(), single(e.getValue())); // a language's one string (@container @language compacts so)
            }
        }
        return out == null ? raw : out;
    }

    /** BCP 47, loosely: alphanumeric subtags of 1-8 characters separated by dashes, the first one letters. */
    static boolean isLanguageTag(String tag) {
        String[] parts = tag.split("-", -1);
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            if (p.isEmpty() || p.length() > 8) {
                return false;
            }
            for (int j = 0; j < p.length(); j++) {
                char c = p.charAt(j);
                boolean letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
                boolean digit = c >= '0' && c <= '9';
                if (!(letter || (digit && i > 0))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** A string or an array of strings, each a term or an IRI, expanded (vocab, objectType, valueType). */
    private JsonNode expandedTerms(String key, String member, JsonNode raw) {
        if (raw.isTextual()) {
            return TextNode.valueOf(expandTerm(key, member, raw.asText()));
        }
        if (raw.isArray() && !raw.isEmpty()) {
            ArrayNode out = JsonNodeFactory.instance.arrayNode(raw.size());
            for (JsonNode t : raw) {
                if (!t.isTextual()) {
                    throw NgsiLdException.badData("attribute '" + key + "': " + member + " holds strings, not " + describe(t));
                }
                out.add(expandTerm(key, member, t.asText()));
            }
            return single(out);
        }
        throw NgsiLdException.badData("attribute '" + key + "': " + member + " is a string or an array of strings, not "
                + describe(raw));
    }

    private String expandTerm(String key, String member, String term) {
        if (!Syntax.isName(term)) {
            throw NgsiLdException.badData("attribute '" + key + "': " + member + " '" + term + "' is not a term or an IRI");
        }
        String iri = context.expand(term);
        if (iri == null || !Syntax.isAbsoluteIri(iri)) {
            throw NgsiLdException.badData("attribute '" + key + "': " + member + " '" + term + "' does not expand to an IRI");
        }
        return iri;
    }

    // ---------------------------------------------------------------- GeoJSON

    private static boolean isGeometry(JsonNode v) {
        return v.isObject() && v.path("type").isTextual() && GEOMETRY_TYPES.contains(v.get("type").asText())
                && v.has("coordinates");
    }

    /** A GeoJSON geometry (RFC 7946 § 3.1) of a supported type, its coordinates checked. */
    static JsonNode geometry(String key, JsonNode g) {
        if (!isGeometry(g)) {
            throw NgsiLdException.badData("attribute '" + key + "': a GeoProperty's value is a GeoJSON geometry (Point,"
                    + " MultiPoint, LineString, MultiLineString, Polygon or MultiPolygon with coordinates), not " + describe(g));
        }
        String type = g.get("type").asText();
        JsonNode c = g.get("coordinates");
        boolean ok = switch (type) {
            case "Point" -> isPosition(c);
            case "MultiPoint" -> isArrayOf(c, 0, EntityParser::isPosition);
            case "LineString" -> isLine(c);
            case "MultiLineString" -> isArrayOf(c, 0, EntityParser::isLine);
            case "Polygon" -> isPolygon(c);
            case "MultiPolygon" -> isArrayOf(c, 0, EntityParser::isPolygon);
            default -> false;
        };
        if (!ok) {
            throw NgsiLdException.badData("attribute '" + key + "': the coordinates of the " + type
                    + " are not valid GeoJSON (positions are [longitude, latitude(, altitude)] within range; a"
                    + " LineString has 2+ positions; a Polygon's rings have 4+ positions and close)");
        }
        return g;
    }

    private static boolean isPosition(JsonNode p) {
        if (!p.isArray() || p.size() < 2 || p.size() > 3) {
            return false;
        }
        for (JsonNode n : p) {
            if (!n.isNumber()) {
                return false;
            }
        }
        double lon = p.get(0).asDouble();
        double lat = p.get(1).asDouble();
        return lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90;
    }

    private static boolean isLine(JsonNode l) {
        return isArrayOf(l, 2, EntityParser::isPosition);
    }

    private static boolean isPolygon(JsonNode rings) {
        return isArrayOf(rings, 1, r -> isArrayOf(r, 4, EntityParser::isPosition) && r.get(0).equals(r.get(r.size() - 1)));
    }

    private static boolean isArrayOf(JsonNode a, int min, java.util.function.Predicate<JsonNode> each) {
        if (!a.isArray() || a.size() < min) {
            return false;
        }
        for (JsonNode x : a) {
            if (!each.test(x)) {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- helpers

    private void checkLength(String what, String s) {
        if (s.length() > limits.maxIdLength()) {
            throw NgsiLdException.badData(what + " is longer than " + limits.maxIdLength() + " characters");
        }
    }

    /**
     * Whether a value member is NGSI-LD Null in any of its kinds' forms (§ 4.5.x): the Null itself,
     * an array holding only it (valueList, objectList), a languageMap {@code {"@none": Null}}.
     */
    private static boolean isNullValue(JsonNode n) {
        if (isNgsiLdNull(n)) {
            return true;
        }
        if (n != null && n.isArray() && n.size() == 1 && isNgsiLdNull(n.get(0))) {
            return true;
        }
        return n != null && n.isObject() && n.size() == 1 && isNgsiLdNull(n.get("@none"));
    }

    static boolean isNgsiLdNull(JsonNode n) {
        return n != null && n.isTextual() && n.asText().equals(Syntax.NGSI_LD_NULL);
    }

    private static boolean allObjects(JsonNode array) {
        for (JsonNode e : array) {
            if (!e.isObject()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether an array of objects is a value (a concise Property whose value is an array of
     * plain objects) rather than instances: instances carry a type or a value member.
     */
    private static boolean looksLikeValues(JsonNode array) {
        for (JsonNode e : array) {
            if (e.has("type") || e.has("datasetId")) {
                return false;
            }
            for (AttributeKind k : AttributeKind.values()) {
                if (e.has(k.valueMember())) {
                    return false;
                }
            }
        }
        return true;
    }

    private static JsonNode first(JsonNode body, String a, String b) {
        JsonNode n = body.get(a);
        JsonNode m = body.get(b);
        if (n != null && m != null) {
            throw NgsiLdException.badData("the entity has both '" + a + "' and '" + b + "'");
        }
        return n != null ? n : m;
    }

    static String describe(JsonNode n) {
        if (n == null || n.isNull()) {
            return "null";
        }
        if (n.isObject()) {
            return "an object";
        }
        if (n.isArray()) {
            return "an array";
        }
        if (n.isTextual()) {
            return "the string " + n;
        }
        return n.getNodeType().name().toLowerCase(java.util.Locale.ROOT) + " " + n;
    }
}
