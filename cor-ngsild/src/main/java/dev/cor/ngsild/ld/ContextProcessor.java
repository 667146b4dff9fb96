package dev.cor.ngsild.ld;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiConsumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;

/**
 * JSON-LD 1.1 context processing (Processing Algorithms § 4.1 Context Processing, § 4.2 Create
 * Term Definition, and § 5.2 IRI Expansion as those two use it), in processing mode
 * {@code json-ld-1.1}, over Jackson trees. One instance is one processing run: it counts the
 * remote contexts it dereferences and follows the chain of remote contexts being processed, so
 * that a real cycle (A → B → A) is an error of this run and of nobody else's.
 * <p>
 * Two NGSI-LD rules (ETSI GS CIM 009 § 4.4, § 5.5.7) sit on top: a reference to any published
 * NGSI-LD core context is skipped wherever it appears, because the core is always processed last
 * (the caller appends it); and a scoped context ({@code @context} inside a term definition) is
 * refused with BadRequestData. Every invalid context is a BadRequestData naming the JSON-LD error
 * (§ 5.5.6: "If the remote JSON-LD @context is invalid ... BadRequestData").
 * <p>
 * Remote documents come from a {@link Loader}; the processor never waits by itself, the loader
 * may (inside a request's coroutine it yields). Not thread-safe: one run, one thread at a time.
 */
final class ContextProcessor {
    /** How many remote contexts one processing run may dereference (JSON-LD's "context overflow"). */
    static final int MAX_REMOTE_CONTEXTS = 64;

    /** Where remote contexts come from. */
    interface Loader {
        /**
         * The remote context document at the absolute {@code url}: its {@code @context} value and
         * the URL it came from (after redirects), which relative references in it resolve against.
         *
         * @throws NgsiLdException LdContextNotAvailable, or BadRequestData for a document that is
         *                         not a JSON-LD context
         */
        Remote load(String url);
    }

    /** A dereferenced context document: its {@code @context} member and its document URL. */
    record Remote(JsonNode context, String documentUrl) {
    }

    private static final Set<String> CONTEXT_KEYWORDS = Set.of("@base", "@direction", "@import", "@language",
            "@propagate", "@protected", "@version", "@vocab");
    private static final Set<String> DEFINITION_KEYS = Set.of("@id", "@reverse", "@container", "@context",
            "@direction", "@index", "@language", "@nest", "@prefix", "@protected", "@type");
    private static final Set<String> CONTAINER_KEYWORDS = Set.of("@graph", "@id", "@index", "@language", "@list",
            "@set", "@type");

    private final Loader loader;
    /** Told why a context named by URL could not be used (its URL, the reason): the operator's log. */
    private final BiConsumer<String, String> report;
    /** The remote contexts being processed, outermost first: a URL already in it is a cycle. */
    private final List<String> chain = new ArrayList<>();
    private int dereferenced;

    ContextProcessor(Loader loader, BiConsumer<String, String> report) {
        this.loader = loader;
        this.report = report;
    }

    /** § 4.1.2 with {@code base URL} for the references of {@code local} and no remote contexts yet. */
    ActiveContext process(ActiveContext active, JsonNode local, String baseUrl) {
        return process(active, local, baseUrl, false);
    }

    private ActiveContext process(ActiveContext active, JsonNode local, String baseUrl, boolean overrideProtected) {
        // 1.
        ActiveContext result = active.copy();
        // 2. (@propagate only matters for scoped contexts, which NGSI-LD forbids: checked, then ignored)
        if (local.isObject() && local.has("@propagate") && !local.get("@propagate").isBoolean()) {
            throw invalid("invalid @propagate value", "@propagate must be true or false");
        }
        // 4., 5.
        Iterable<JsonNode> items = local.isArray() ? local : List.of(local);
        for (JsonNode item : items) {
            if (item.isNull()) {
                // 5.1.
                if (!overrideProtected && result.hasProtectedTerm()) {
                    throw invalid("invalid context nullification", "a null @context would clear protected terms");
                }
                result = new ActiveContext(active.originalBase);
                continue;
            }
            if (item.isTextual()) {
                result = dereference(result, item.asText(), baseUrl);
                continue;
            }
            // 5.3.
            if (!item.isObject()) {
                throw invalid("invalid local context", "a @context entry must be a URL, an object or null, not " + kind(item));
            }
            result = define(result, (ObjectNode) item, baseUrl, overrideProtected);
        }
        return result;
    }

    /** § 4.1.2 step 5.2: a string entry, a remote context. */
    private ActiveContext dereference(ActiveContext result, String ref, String baseUrl) {
        // 5.2.1.
        String url = Iris.resolve(baseUrl, ref);
        if (url == null || !Iris.isAbsoluteIri(url)) {
            throw invalid("loading document failed", "the @context reference \"" + ref + "\" is not an absolute URL"
                    + (baseUrl == null ? "" : " (nor one relative to " + baseUrl + ")"));
        }
        // ETSI GS CIM 009 § 5.5.7: the core has absolute precedence wherever a user context names it,
        // so it is processed once, last; an inner reference to it changes nothing.
        if (CoreContext.isCoreUrl(url)) {
            return result;
        }
        // 5.2.2. is for scoped contexts only; a URL already in the chain is a real cycle
        if (chain.contains(url)) {
            StringBuilder path = new StringBuilder();
            for (String u : chain.subList(chain.indexOf(url), chain.size())) {
                path.append(u).append(" → ");
            }
            throw invalid("recursive context inclusion", "the @context is cyclic: " + path + url);
        }
        // 5.2.3.
        if (++dereferenced > MAX_REMOTE_CONTEXTS) {
            throw invalid("context overflow", "more than " + MAX_REMOTE_CONTEXTS + " remote contexts");
        }
        boolean named = chain.isEmpty();
        try {
            // 5.2.4. - 5.2.5.
            Remote remote = loader.load(url);
            chain.add(url);
            try {
                // 5.2.6.
                return process(result, remote.context(), remote.documentUrl(), false);
            } finally {
                chain.remove(chain.size() - 1);
            }
        } catch (NgsiLdException e) {
            throw named ? unusable(url, e) : e;
        }
    }

    /**
     * What a request is answered when a context it names by URL cannot be had or used, whatever
     * the reason (it is not there, not JSON, not a context, invalid, or names another that is
     * one of those): one answer naming only that URL, for the reason lies in what another server
     * sent, which the broker never echoes. The reason goes to the operator ({@link #report}).
     */
    private NgsiLdException unusable(String url, NgsiLdException why) {
        ContextDocuments.Reason r = ContextDocuments.reasonOf(why);
        if (r != null && r.url.equals(url)) {
            return why; // its own download failed: said so already, and logged where it failed
        }
        String reason = r == null ? why.detail() : "it names " + r.url + ", which is not available: " + r.getMessage();
        report.accept(url, reason);
        return ContextDocuments.unavailable(url, reason);
    }

    /** § 4.1.2 steps 5.4 - 5.13: a context definition. */
    private ActiveContext define(ActiveContext result, ObjectNode context, String baseUrl, boolean overrideProtected) {
        // 5.5.
        JsonNode version = context.get("@version");
        if (version != null && !(version.isNumber() && version.asText().equals("1.1"))) {
            throw invalid("invalid @version value", "@version must be the number 1.1, not " + version);
        }
        // 5.6.
        if (context.has("@import")) {
            String url = importUrl(context, baseUrl);
            if (chain.isEmpty()) {
                // what the import brings is another server's, merged into the request's own definition
                try {
                    return defineAll(result, importInto(context, url), baseUrl, overrideProtected);
                } catch (NgsiLdException e) {
                    throw unusable(url, e);
                }
            }
            context = importInto(context, url);
        }
        return defineAll(result, context, baseUrl, overrideProtected);
    }

    /** § 4.1.2 steps 5.7 - 5.13, once {@code @import} is merged in. */
    private ActiveContext defineAll(ActiveContext result, ObjectNode context, String baseUrl, boolean overrideProtected) {
        // 5.7. (not in a remote context)
        if (context.has("@base") && chain.isEmpty()) {
            JsonNode value = context.get("@base");
            if (value.isNull()) {
                result.base = null;
            } else if (value.isTextual() && Iris.isAbsoluteIri(value.asText())) {
                result.base = value.asText();
            } else if (value.isTextual() && result.base != null && Iris.resolve(result.base, value.asText()) != null) {
                result.base = Iris.resolve(result.base, value.asText());
            } else {
                throw invalid("invalid base IRI", "@base " + value + " is not an IRI");
            }
        }
        // 5.8.
        if (context.has("@vocab")) {
            JsonNode value = context.get("@vocab");
            if (value.isNull()) {
                result.vocab = null;
            } else if (value.isTextual()) {
                String v = expandIri(result, value.asText(), true, true, null, null);
                if (v == null || !(Iris.isAbsoluteIri(v) || Iris.isBlankNode(v))) {
                    throw invalid("invalid vocab mapping", "@vocab " + value + " is not an IRI");
                }
                result.vocab = v;
            } else {
                throw invalid("invalid vocab mapping", "@vocab must be a string or null, not " + kind(value));
            }
        }
        // 5.9.
        if (context.has("@language")) {
            JsonNode value = context.get("@language");
            if (value.isNull()) {
                result.defaultLanguage = null;
            } else if (value.isTextual()) {
                result.defaultLanguage = value.asText();
            } else {
                throw invalid("invalid default language", "@language must be a string or null, not " + kind(value));
            }
        }
        // 5.10.
        if (context.has("@direction")) {
            JsonNode value = context.get("@direction");
            if (value.isNull()) {
                result.defaultDirection = null;
            } else if (value.isTextual() && (value.asText().equals("ltr") || value.asText().equals("rtl"))) {
                result.defaultDirection = value.asText();
            } else {
                throw invalid("invalid base direction", "@direction must be \"ltr\", \"rtl\" or null, not " + value);
            }
        }
        // 5.11.
        if (context.has("@propagate") && !context.get("@propagate").isBoolean()) {
            throw invalid("invalid @propagate value", "@propagate must be true or false");
        }
        // 5.12., 5.13.
        Map<String, Boolean> defined = new HashMap<>();
        boolean protectedFlag = context.path("@protected").asBoolean(false) && context.get("@protected").isBoolean();
        Iterator<String> keys = context.fieldNames();
        while (keys.hasNext()) {
            String key = keys.next();
            if (!CONTEXT_KEYWORDS.contains(key)) {
                createTerm(result, context, key, defined, protectedFlag, overrideProtected);
            }
        }
        return result;
    }

    /** § 4.1.2 steps 5.6.1 - 5.6.3: the URL of {@code @import}. */
    private static String importUrl(ObjectNode context, String baseUrl) {
        JsonNode ref = context.get("@import");
        if (!ref.isTextual()) {
            throw invalid("invalid @import value", "@import must be a string, not " + kind(ref));
        }
        String url = Iris.resolve(baseUrl, ref.asText());
        if (url == null || !Iris.isAbsoluteIri(url)) {
            throw invalid("invalid @import value", "@import \"" + ref.asText() + "\" is not an absolute URL");
        }
        return url;
    }

    /** § 4.1.2 steps 5.6.4 - 5.6.7: the context at {@code url} reverse-merged into the one that names it. */
    private ObjectNode importInto(ObjectNode context, String url) {
        if (++dereferenced > MAX_REMOTE_CONTEXTS) {
            throw invalid("context overflow", "more than " + MAX_REMOTE_CONTEXTS + " remote contexts");
        }
        JsonNode imported = loader.load(url).context();
        if (!imported.isObject()) {
            throw invalid("invalid remote context", "the @import " + url + " is not a context definition (an object)");
        }
        if (imported.has("@import")) {
            throw invalid("invalid context entry", "the @import " + url + " has an @import of its own");
        }
        ObjectNode merged = ((ObjectNode) imported).deepCopy();
        Iterator<Map.Entry<String, JsonNode>> it = context.properties().iterator();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            merged.set(e.getKey(), e.getValue());
        }
        merged.remove("@import");
        return merged;
    }

    // ---------------------------------------------------------------- § 4.2 Create Term Definition

    private void createTerm(ActiveContext active, ObjectNode local, String term, Map<String, Boolean> defined,
            boolean protectedFlag, boolean overrideProtected) {
        // 1.
        Boolean state = defined.get(term);
        if (state != null) {
            if (state) {
                return;
            }
            throw invalid("cyclic IRI mapping", "the term \"" + term + "\" is defined through itself");
        }
        // 2.
        if (term.isEmpty()) {
            throw invalid("invalid term definition", "a term may not be the empty string");
        }
        defined.put(term, Boolean.FALSE);
        // 3.
        JsonNode value = local.get(term);
        // 4., 5.
        if (term.equals("@type")) {
            checkTypeRedefinition(value);
        } else if (Iris.isKeyword(term)) {
            throw invalid("keyword redefinition", "the keyword " + term + " cannot be redefined");
        } else if (Iris.hasKeywordForm(term)) {
            return; // a processor SHOULD warn; the term is ignored
        }
        // 6.
        TermDefinition previous = active.terms.remove(term);
        // 7. - 9.
        ObjectNode map;
        boolean simple = false;
        String idValue;
        boolean hasId;
        if (value == null || value.isNull()) {
            map = null;
            hasId = true;
            idValue = null;
        } else if (value.isTextual()) {
            map = null;
            hasId = true;
            idValue = value.asText();
            simple = true;
        } else if (value.isObject()) {
            map = (ObjectNode) value;
            hasId = map.has("@id");
            JsonNode id = map.get("@id");
            if (hasId && !id.isNull() && !id.isTextual()) {
                throw invalid("invalid IRI mapping", "the @id of \"" + term + "\" must be a string or null");
            }
            idValue = hasId && id.isTextual() ? id.asText() : null;
        } else {
            throw invalid("invalid term definition", "the definition of \"" + term + "\" must be a string, an object or null, not " + kind(value));
        }
        // 10.
        String iri = null;
        boolean prefix = false;
        boolean protect = protectedFlag;
        String typeMapping = null;
        String container = null;
        boolean hasLanguage = false;
        String language = null;
        boolean hasDirection = false;
        String direction = null;
        String index = null;
        String nest = null;
        // 11.
        if (map != null && map.has("@protected")) {
            JsonNode p = map.get("@protected");
            if (!p.isBoolean()) {
                throw invalid("invalid @protected value", "@protected of \"" + term + "\" must be true or false");
            }
            protect = p.asBoolean();
        }
        // 12.
        if (map != null && map.has("@type")) {
            JsonNode t = map.get("@type");
            if (!t.isTextual()) {
                throw invalid("invalid type mapping", "the @type of \"" + term + "\" must be a string");
            }
            typeMapping = expandIri(active, t.asText(), false, true, local, defined);
            if (typeMapping == null || !(typeMapping.equals("@id") || typeMapping.equals("@json") || typeMapping.equals("@none")
                    || typeMapping.equals("@vocab") || (!Iris.isKeyword(typeMapping) && Iris.isAbsoluteIri(typeMapping)))) {
                throw invalid("invalid type mapping", "the @type \"" + t.asText() + "\" of \"" + term + "\" is not an IRI, @id, @vocab, @json or @none");
            }
        }
        // 13.
        if (map != null && map.has("@reverse")) {
            defineReverse(active, local, term, defined, map, protect, typeMapping);
            return;
        }
        // 14.
        if (hasId && !term.equals(idValue)) {
            if (idValue != null) {
                // 14.2.2.
                if (!Iris.isKeyword(idValue) && Iris.hasKeywordForm(idValue)) {
                    return; // a processor SHOULD warn; the term is ignored
                }
                // 14.2.3.
                iri = expandIri(active, idValue, false, true, local, defined);
                if ("@context".equals(iri)) {
                    throw invalid("invalid keyword alias", "\"" + term + "\" may not be an alias of @context");
                }
                if (iri == null || !(Iris.isKeyword(iri) || Iris.isAbsoluteIri(iri) || Iris.isBlankNode(iri))) {
                    throw invalid("invalid IRI mapping", "\"" + term + "\" maps to \"" + idValue + "\", which is not an IRI"
                            + (active.vocab == null ? " (and there is no @vocab to make it one)" : ""));
                }
                // 14.2.4.
                if (term.substring(0, term.length() - 1).indexOf(':', 1) >= 0 || term.indexOf('/') >= 0) {
                    defined.put(term, Boolean.TRUE);
                    String self = expandIri(active, term, false, true, local, defined);
                    if (!iri.equals(self)) {
                        // neither expansion is named: either may come from a prefix another server defined
                        throw invalid("invalid IRI mapping", "the term \"" + term + "\" looks like an IRI and does not"
                                + " expand to its @id \"" + idValue + "\"");
                    }
                }
                // 14.2.5.
                if (term.indexOf(':') < 0 && term.indexOf('/') < 0 && simple
                        && ((Iris.endsWithGenDelim(iri) && !Iris.isKeyword(iri)) || Iris.isBlankNode(iri))) {
                    prefix = true;
                }
            }
        } else if (term.indexOf(':', 1) >= 0) {
            // 15.
            int colon = term.indexOf(':');
            String p = term.substring(0, colon);
            String suffix = term.substring(colon + 1);
            if (local.has(p)) {
                // the algorithm is called with its defaults here: protected false (as § 5.2.2 step 3 does)
                createTerm(active, local, p, defined, false, false);
            }
            TermDefinition pd = active.terms.get(p);
            if (pd != null) {
                iri = pd.iri == null ? null : pd.iri + suffix;
            } else {
                iri = term;
            }
        } else if (term.indexOf('/') >= 0) {
            // 16.
            iri = expandIri(active, term, false, true, local, defined);
            if (iri == null || !Iris.isAbsoluteIri(iri)) {
                throw invalid("invalid IRI mapping", "the term \"" + term + "\" is a relative IRI and cannot be expanded");
            }
        } else if (term.equals("@type")) {
            // 17.
            iri = "@type";
        } else if (active.vocab != null) {
            // 18.
            iri = active.vocab + term;
        } else {
            throw invalid("invalid IRI mapping", "\"" + term + "\" has no @id and there is no @vocab to give it one");
        }
        if (map != null) {
            // 19.
            if (map.has("@container")) {
                container = container(term, map.get("@container"));
                if (container.contains("@type")) {
                    if (typeMapping == null) {
                        typeMapping = "@id";
                    }
                    if (!typeMapping.equals("@id") && !typeMapping.equals("@vocab")) {
                        throw invalid("invalid type mapping", "\"" + term + "\" has a @type container, so its @type must be @id or @vocab");
                    }
                }
            }
            // 20.
            if (map.has("@index")) {
                JsonNode ix = map.get("@index");
                if (container == null || !container.contains("@index") || !ix.isTextual()) {
                    throw invalid("invalid term definition", "the @index of \"" + term + "\" needs an @index container and a string");
                }
                String expanded = expandIri(active, ix.asText(), false, true, local, defined);
                if (expanded == null || !Iris.isAbsoluteIri(expanded)) {
                    throw invalid("invalid term definition", "the @index of \"" + term + "\" is not an IRI");
                }
                index = ix.asText();
            }
            // 21. ETSI GS CIM 009 § 5.5.7: a user @context shall not contain scoped contexts
            if (map.has("@context")) {
                throw NgsiLdException.badData("the @context defines \"" + term + "\" with a scoped @context, which an NGSI-LD user "
                        + "@context shall not contain (ETSI GS CIM 009 § 5.5.7)");
            }
            // 22.
            if (map.has("@language") && !map.has("@type")) {
                JsonNode l = map.get("@language");
                if (!l.isNull() && !l.isTextual()) {
                    throw invalid("invalid language mapping", "the @language of \"" + term + "\" must be a string or null");
                }
                hasLanguage = true;
                language = l.isNull() ? null : l.asText();
            }
            // 23.
            if (map.has("@direction") && !map.has("@type")) {
                JsonNode d = map.get("@direction");
                if (!d.isNull() && !(d.isTextual() && (d.asText().equals("ltr") || d.asText().equals("rtl")))) {
                    throw invalid("invalid base direction", "the @direction of \"" + term + "\" must be \"ltr\", \"rtl\" or null");
                }
                hasDirection = true;
                direction = d.isNull() ? null : d.asText();
            }
            // 24.
            if (map.has("@nest")) {
                JsonNode n = map.get("@nest");
                if (!n.isTextual() || (Iris.isKeyword(n.asText()) && !n.asText().equals("@nest"))) {
                    throw invalid("invalid @nest value", "the @nest of \"" + term + "\" must be a string that is not a keyword");
                }
                nest = n.asText();
            }
            // 25.
            if (map.has("@prefix")) {
                JsonNode pf = map.get("@prefix");
                if (term.indexOf(':') >= 0 || term.indexOf('/') >= 0) {
                    throw invalid("invalid term definition", "\"" + term + "\" contains ':' or '/' and cannot have @prefix");
                }
                if (!pf.isBoolean()) {
                    throw invalid("invalid @prefix value", "the @prefix of \"" + term + "\" must be true or false");
                }
                prefix = pf.asBoolean();
                if (prefix && Iris.isKeyword(iri)) {
                    throw invalid("invalid term definition", "\"" + term + "\" is a keyword alias and cannot be a prefix");
                }
            }
            // 26.
            Iterator<String> keys = map.fieldNames();
            while (keys.hasNext()) {
                String k = keys.next();
                if (!DEFINITION_KEYS.contains(k)) {
                    throw invalid("invalid term definition", "the definition of \"" + term + "\" has the unknown entry " + k);
                }
            }
        }
        TermDefinition definition = new TermDefinition(iri, prefix, protect, false, typeMapping, container, hasLanguage,
                language, hasDirection, direction, index, nest);
        // 27.
        if (!overrideProtected && previous != null && previous.protect) {
            if (!definition.sameExceptProtected(previous)) {
                // the protected definition is not named: it may be another server's
                throw invalid("protected term redefinition", "\"" + term + "\" is a protected term and cannot be"
                        + " defined otherwise");
            }
            definition = previous;
        }
        // 28.
        active.terms.put(term, definition);
        defined.put(term, Boolean.TRUE);
    }

    /** § 4.2.2 step 4: {@code @type} may only be given a {@code @set} container and {@code @protected}. */
    private static void checkTypeRedefinition(JsonNode value) {
        boolean ok = value != null && value.isObject() && value.size() > 0;
        if (ok) {
            Iterator<Map.Entry<String, JsonNode>> it = value.properties().iterator();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                if (e.getKey().equals("@container")) {
                    ok &= e.getValue().isTextual() && e.getValue().asText().equals("@set");
                } else if (!e.getKey().equals("@protected")) {
                    ok = false;
                }
            }
        }
        if (!ok) {
            throw invalid("keyword redefinition", "@type may only be given {\"@container\": \"@set\"} and @protected");
        }
    }

    /** § 4.2.2 step 13: a reverse property. */
    private void defineReverse(ActiveContext active, ObjectNode local, String term, Map<String, Boolean> defined,
            ObjectNode map, boolean protect, String typeMapping) {
        if (map.has("@id") || map.has("@nest")) {
            throw invalid("invalid reverse property", "\"" + term + "\" has @reverse together with @id or @nest");
        }
        JsonNode r = map.get("@reverse");
        if (!r.isTextual()) {
            throw invalid("invalid IRI mapping", "the @reverse of \"" + term + "\" must be a string");
        }
        if (Iris.hasKeywordForm(r.asText())) {
            return; // a processor SHOULD warn; the term is ignored
        }
        String iri = expandIri(active, r.asText(), false, true, local, defined);
        if (iri == null || !(Iris.isAbsoluteIri(iri) || Iris.isBlankNode(iri))) {
            throw invalid("invalid IRI mapping", "the @reverse of \"" + term + "\" is not an IRI");
        }
        String container = null;
        if (map.has("@container")) {
            JsonNode c = map.get("@container");
            if (c.isTextual() && (c.asText().equals("@set") || c.asText().equals("@index"))) {
                container = c.asText();
            } else if (!c.isNull()) {
                throw invalid("invalid reverse property", "a reverse property's @container may only be @set, @index or null");
            }
        }
        active.terms.put(term, new TermDefinition(iri, false, protect, true, typeMapping, container, false, null, false,
                null, null, null));
        defined.put(term, Boolean.TRUE);
    }

    /** § 4.2.2 step 19.1: the container mapping, as its sorted concatenation. */
    private static String container(String term, JsonNode value) {
        List<String> values = new ArrayList<>(3);
        if (value.isTextual()) {
            values.add(value.asText());
        } else if (value.isArray()) {
            for (JsonNode v : value) {
                if (!v.isTextual()) {
                    values.clear();
                    break;
                }
                values.add(v.asText());
            }
        }
        if (!validContainer(values)) {
            throw invalid("invalid container mapping", "the @container " + value + " of \"" + term + "\" is not a valid container");
        }
        TreeSet<String> sorted = new TreeSet<>(values);
        return String.join("", sorted);
    }

    private static boolean validContainer(List<String> values) {
        if (values.isEmpty() || values.size() > 3) {
            return false;
        }
        for (String v : values) {
            if (!CONTAINER_KEYWORDS.contains(v)) {
                return false;
            }
        }
        if (values.size() == 1) {
            return true;
        }
        if (values.contains("@graph") && (values.contains("@id") || values.contains("@index"))) {
            return values.size() == 2 || values.contains("@set");
        }
        return values.size() == 2 && values.contains("@set")
                && (values.contains("@graph") || values.contains("@id") || values.contains("@index")
                        || values.contains("@language") || values.contains("@type"));
    }

    // ---------------------------------------------------------------- § 5.2 IRI Expansion

    /**
     * § 5.2.2 IRI Expansion of {@code value}; {@code local} and {@code defined} are the local
     * context being processed (or {@code null} outside processing), whose terms are defined on
     * demand.
     */
    String expandIri(ActiveContext active, String value, boolean documentRelative, boolean vocab, ObjectNode local,
            Map<String, Boolean> defined) {
        // 1.
        if (value == null || Iris.isKeyword(value)) {
            return value;
        }
        // 2.
        if (Iris.hasKeywordForm(value)) {
            return null;
        }
        // 3.
        if (local != null && local.has(value) && !Boolean.TRUE.equals(defined.get(value))) {
            // with the algorithm's defaults, protected false: the spec passes only the four required inputs
            createTerm(active, local, value, defined, false, false);
        }
        // 4., 5.
        TermDefinition def = active.terms.get(value);
        if (def != null && (vocab || Iris.isKeyword(def.iri))) {
            return def.iri;
        }
        // 6.
        int colon = value.indexOf(':', 1);
        if (colon > 0) {
            String p = value.substring(0, colon);
            String suffix = value.substring(colon + 1);
            // 6.2.
            if (p.equals("_") || suffix.startsWith("//")) {
                return value;
            }
            // 6.3.
            if (local != null && local.has(p) && !Boolean.TRUE.equals(defined.get(p))) {
                createTerm(active, local, p, defined, false, false);
            }
            // 6.4.
            TermDefinition pd = active.terms.get(p);
            if (pd != null && pd.iri != null && pd.prefix) {
                return pd.iri + suffix;
            }
            // 6.5.
            if (Iris.isAbsoluteIri(value)) {
                return value;
            }
        }
        // 7.
        if (vocab && active.vocab != null) {
            return active.vocab + value;
        }
        // 8.
        if (documentRelative && active.base != null) {
            String r = Iris.resolve(active.base, value);
            return r != null ? r : value;
        }
        return value;
    }

    static NgsiLdException invalid(String code, String detail) {
        return NgsiLdException.badData("invalid @context (" + code + "): " + detail);
    }

    private static String kind(JsonNode n) {
        return n.isNumber() ? "a number " + n : n.isBoolean() ? "a boolean" : n.isArray() ? "an array" : n.isObject() ? "an object"
                : n.getNodeType().toString().toLowerCase(java.util.Locale.ROOT);
    }
}
