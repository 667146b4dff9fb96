package dev.cor.ngsild.ld;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import com.apicatalog.jsonld.JsonLdError;
import com.apicatalog.jsonld.context.ActiveContext;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.rest.CorRestJson;
import dev.cor.rest.client.CorRestClient;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The term expander and compactor against the oracle (issue 12, "Expansion and compaction"):
 * Titanium JSON-LD 1.6 processes the same effective context as the broker (the request's
 * context, then the NGSI-LD core: ETSI GS CIM 009 § 4.4, § 5.5.7) and, case by case, both must
 * give the same IRI for every entity type, attribute name, sub-attribute name and vocab value,
 * the same compacted form for every IRI (as an attribute name: a node object value; as a type or
 * a vocab value: no value), and fail on the same invalid contexts.
 * <p>
 * Two levels: the JSON-LD algorithms directly (IRI Expansion § 5.2, IRI Compaction § 6.2 on
 * Titanium's active context) for every term and IRI a case can produce, and whole entities
 * expanded and compacted as documents (Titanium's expansion/compaction algorithms end to end).
 * Remote contexts are served by a real HTTP server to the broker and by a local loader to
 * Titanium.
 * <p>
 * Titanium 1.6 breaks ties between terms in plain {@code String} order where the Recommendation
 * says "shortest first, then lexicographically least" (§ 4.3.2 step 3, § 6.2.2 step 7.3): these
 * comparisons run the broker's compactor with Titanium's order
 * ({@link CompiledContext.TermOrder#LEXICOGRAPHIC}); {@code LdContextTieBreakTest} pins the
 * Recommendation's order, which the broker uses.
 */
class LdContextOracleTest {
    private static final String CORE = CoreContext.URL;
    private static ContextServer server;
    private static CorRestClient client;
    private static final AtomicInteger CASES = new AtomicInteger();
    /** What the checks compared: valid contexts, invalid ones, terms expanded, IRIs compacted, entities. */
    private static final int[] STATS = new int[5];

    @BeforeAll
    static void start() throws Exception {
        server = new ContextServer();
        client = CorRestClient.builder().build();
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    // ---------------------------------------------------------------- the hand-picked corpus

    @Test
    void core_context_alone_expands_and_compacts_as_the_oracle() throws Exception {
        check(new Case("core alone").context("\"" + CORE + "\""));
        check(new Case("core, older URL, as Link").context("\"https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.6.jsonld\"").link());
        check(new Case("core, array").context("[\"" + CORE + "\"]"));
    }

    @Test
    void simple_terms_expand_and_compact_as_the_oracle() throws Exception {
        check(new Case("simple terms").context("""
                {"Vehicle": "https://example.org/Vehicle", "speed": "https://example.org/speed",
                 "brandName": "https://schema.org/brand", "location": "https://example.org/myLocation"}"""));
    }

    @Test
    void curies_and_prefixes_expand_and_compact_as_the_oracle() throws Exception {
        check(new Case("CURIEs and prefixes").context("""
                {"ex": "https://example.org/", "sch": "https://schema.org/", "h": "https://example.org/ns#",
                 "Vehicle": "ex:Vehicle", "speed": "ex:speed", "ex:power": "https://example.org/power",
                 "name": "sch:name", "sch:color": {"@id": "sch:color"}, "q": "h:q"}""")
                .terms("ex:anything", "sch:name", "h:fragment", "ex:", "unknownPrefix:x", "ex:a:b"));
    }

    @Test
    void a_prefix_that_is_not_usable_as_one_expands_and_compacts_as_the_oracle() throws Exception {
        // JSON-LD 1.1: a term is a prefix when it is simple and its IRI ends with a gen-delim, or @prefix is true
        check(new Case("prefix rules").context("""
                {"np": "https://example.org/ns", "nq": {"@id": "https://example.org/q/"},
                 "nr": {"@id": "https://example.org/r/", "@prefix": true}, "ns2": {"@id": "https://example.org/ns2#", "@prefix": false},
                 "nc": "https://example.org/c:", "nat": "https://example.org/at@", "nque": "https://example.org/que?"}""")
                .terms("np:x", "nq:x", "nr:x", "ns2:x", "nc:x", "nat:x", "nque:x")
                .iris("https://example.org/nsx", "https://example.org/q/x", "https://example.org/r/x", "https://example.org/ns2#x",
                        "https://example.org/c:x", "https://example.org/at@x", "https://example.org/que?x"));
    }

    @Test
    void the_core_vocab_wins_over_the_users_for_undefined_terms_as_the_oracle_says() throws Exception {
        // The user's @vocab names the terms it defines without an @id; the core, processed last, sets its own
        check(new Case("user @vocab").context("""
                {"@vocab": "https://example.org/vocab/", "Vehicle": {"@type": "@id"}, "speed": "speedy",
                 "brand": {"@id": "brandName"}}""")
                .terms("undefinedTerm", "Vehicle", "speed", "brand")
                .iris("https://example.org/vocab/undefinedTerm", "https://uri.etsi.org/ngsi-ld/default-context/undefinedTerm"));
        check(new Case("user @vocab after the core").context("""
                ["%s", {"@vocab": "https://example.org/v/", "a": {}}]""".formatted(CORE))
                .terms("a", "b").iris("https://example.org/v/b"));
        check(new Case("@vocab null and relative").context("""
                [{"@vocab": "https://example.org/"}, {"@vocab": "sub/", "x": {"@type": "@id"}}, {"@vocab": null, "y": "https://example.org/y"}]""")
                .terms("x", "y", "z"));
    }

    @Test
    void coerced_terms_are_selected_by_their_type_mapping_as_the_oracle_says() throws Exception {
        // a datatype, @vocab or @json coercion does not fit an attribute instance: compaction picks another term
        check(new Case("coerced terms").context("""
                {"xsd": "http://www.w3.org/2001/XMLSchema#",
                 "rel": {"@id": "https://example.org/rel", "@type": "@id"}, "relPlain": "https://example.org/rel",
                 "voc": {"@id": "https://example.org/voc", "@type": "@vocab"}, "vocPlain": "https://example.org/voc",
                 "dt": {"@id": "https://example.org/dt", "@type": "xsd:dateTime"}, "dtPlain": "https://example.org/dt",
                 "js": {"@id": "https://example.org/js", "@type": "@json"},
                 "nn": {"@id": "https://example.org/nn", "@type": "@none"},
                 "onlyDt": {"@id": "https://example.org/onlyDt", "@type": "http://www.w3.org/2001/XMLSchema#integer"},
                 "onlyVoc": {"@id": "https://example.org/onlyVoc", "@type": "@vocab"},
                 "lang": {"@id": "https://example.org/lang", "@language": "en"},
                 "dir": {"@id": "https://example.org/dir", "@direction": "rtl"},
                 "langDir": {"@id": "https://example.org/langDir", "@language": "en", "@direction": "ltr"}}"""));
    }

    @Test
    void container_terms_are_selected_as_the_oracle_says() throws Exception {
        check(new Case("containers").context("""
                {"lst": {"@id": "https://example.org/l", "@container": "@list"}, "l2": "https://example.org/l",
                 "st": {"@id": "https://example.org/s", "@container": "@set"}, "s2": "https://example.org/s",
                 "lng": {"@id": "https://example.org/lang", "@container": "@language"},
                 "idx": {"@id": "https://example.org/i", "@container": "@index"}, "i2": "https://example.org/i",
                 "ids": {"@id": "https://example.org/ids", "@container": "@id"},
                 "typ": {"@id": "https://example.org/t", "@container": "@type"},
                 "setidx": {"@id": "https://example.org/si", "@container": ["@set", "@index"]},
                 "idxProp": {"@id": "https://example.org/ip", "@container": "@index", "@index": "https://example.org/k"},
                 "gr": {"@id": "https://example.org/g", "@container": ["@graph", "@id"]}}"""));
    }

    @Test
    void protected_terms_and_redefinitions_fail_or_pass_as_the_oracle_says() throws Exception {
        check(new Case("protected, identical redefinition").context("""
                [{"@protected": true, "P": "https://example.org/P"}, {"P": "https://example.org/P"}]"""));
        check(new Case("protected, other redefinition").context("""
                [{"@protected": true, "P": "https://example.org/P"}, {"P": "https://example.org/Q"}]"""));
        check(new Case("protected term, other definition of the core").context("""
                {"@protected": true, "location": "https://example.org/loc"}"""));
        check(new Case("protected, nullified").context("""
                [{"@protected": true, "P": "https://example.org/P"}, null]"""));
        check(new Case("redefinition of a core term").context("""
                {"type": "https://example.org/type", "value": "https://example.org/value", "Property": "https://example.org/Property"}"""));
    }

    @Test
    void remote_contexts_that_name_remote_contexts_as_the_oracle_says() throws Exception {
        check(new Case("remote chain, relative reference").doc("/a.jsonld", """
                {"@context": ["b.jsonld", {"a": "https://example.org/a", "bb": "ex:bb"}]}""")
                .doc("/b.jsonld", """
                {"@context": {"b": "https://example.org/b", "ex": "https://example.org/"}}""")
                .context("\"{S}/a.jsonld\"").link());
        check(new Case("array of URLs and objects").doc("/b.jsonld", """
                {"@context": {"b": "https://example.org/b", "ex": "https://example.org/"}}""")
                .context("""
                ["{S}/b.jsonld", {"c": "ex:c"}, "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.6.jsonld", {"d": "ex:d"}]"""));
        check(new Case("remote context naming the core in the middle").doc("/m.jsonld", """
                {"@context": ["%s", {"m": "https://example.org/m", "@vocab": "https://example.org/mv/"}]}""".formatted(CORE))
                .context("\"{S}/m.jsonld\"").link());
        check(new Case("@import").doc("/b.jsonld", """
                {"@context": {"b": "https://example.org/b", "ex": "https://example.org/"}}""")
                .context("""
                {"@import": "{S}/b.jsonld", "b": "https://example.org/b2", "e": "ex:e"}"""));
        check(new Case("@import of the core").context("""
                {"@import": "%s", "a": "https://example.org/a", "type": "https://example.org/t"}""".formatted(CORE)));
        check(new Case("the same remote context twice").doc("/b.jsonld", """
                {"@context": {"b": "https://example.org/b"}}""")
                .doc("/c.jsonld", """
                {"@context": ["b.jsonld", {"c": "https://example.org/c"}]}""")
                .context("""
                ["{S}/b.jsonld", "{S}/c.jsonld"]"""));
    }

    @Test
    void invalid_contexts_fail_as_in_the_oracle() throws Exception {
        check(new Case("cycle").doc("/x.jsonld", "{\"@context\": [\"y.jsonld\", {\"x\": \"https://example.org/x\"}]}")
                .doc("/y.jsonld", "{\"@context\": [\"x.jsonld\"]}").context("\"{S}/x.jsonld\"").link());
        check(new Case("missing remote").context("\"{S}/missing.jsonld\"").link());
        check(new Case("no @context member").doc("/n.jsonld", "{\"a\": 1}").context("\"{S}/n.jsonld\""));
        check(new Case("number definition").context("{\"foo\": 5}"));
        check(new Case("number @vocab").context("{\"@vocab\": 5}"));
        check(new Case("bad container").context("{\"foo\": {\"@id\": \"http://x.org/foo\", \"@container\": \"@foo\"}}"));
        check(new Case("bad container combination").context("{\"foo\": {\"@id\": \"http://x.org/foo\", \"@container\": [\"@list\", \"@set\"]}}"));
        check(new Case("bad type mapping").context("{\"foo\": {\"@id\": \"http://x.org/foo\", \"@type\": \"notAnIri\"}}"));
        check(new Case("unknown definition key").context("{\"foo\": {\"@id\": \"http://x.org/foo\", \"@foo\": 1}}"));
        check(new Case("keyword redefinition").context("{\"@id\": \"http://x.org/id\"}"));
        check(new Case("CURIE term with another IRI").context("{\"ex\": \"https://example.org/\", \"ex:foo\": \"https://example.org/bar\"}"));
        check(new Case("alias of @context").context("{\"ctx\": \"@context\"}"));
        check(new Case("cyclic IRI mapping").context("{\"a\": \"b:x\", \"b\": \"a:y\"}"));
        check(new Case("@version 1.0").context("{\"@version\": 1.0, \"a\": \"https://example.org/a\"}"));
        check(new Case("no IRI and no vocab").context("{\"a\": {\"@type\": \"@id\"}}"));
        check(new Case("bad @prefix").context("{\"a\": {\"@id\": \"https://example.org/a/\", \"@prefix\": \"yes\"}}"));
        check(new Case("bad @protected").context("{\"a\": {\"@id\": \"https://example.org/a/\", \"@protected\": 1}}"));
        check(new Case("non-object entry").context("[{\"a\": \"https://example.org/a\"}, 7]"));
        check(new Case("@reverse with @id").context("{\"r\": {\"@reverse\": \"https://example.org/r\", \"@id\": \"https://example.org/x\"}}"));
    }

    @Test
    void other_context_features_as_the_oracle_says() throws Exception {
        check(new Case("null term").context("{\"speed\": null, \"Vehicle\": \"https://example.org/Vehicle\"}")
                .iris("https://uri.etsi.org/ngsi-ld/default-context/speed"));
        check(new Case("context reset by null").context("[{\"a\": \"https://example.org/a\"}, null, {\"b\": \"https://example.org/b\"}]"));
        check(new Case("default language and direction").context("""
                {"@language": "en", "@direction": "ltr", "title": "https://example.org/title",
                 "titleFr": {"@id": "https://example.org/title", "@language": "fr"}}"""));
        check(new Case("keyword aliases").context("{\"myId\": \"@id\", \"myType\": \"@type\", \"t\": {\"@id\": \"@type\"}}")
                .terms("myId", "myType", "t"));
        check(new Case("@base").context("{\"@base\": \"http://base.org/dir/\", \"a\": \"https://example.org/a\"}"));
        check(new Case("forward reference to a string term").context("{\"T\": \"U\", \"U\": \"https://example.org/u\"}"));
        check(new Case("prefix in a type mapping").context("""
                {"xsd": "http://www.w3.org/2001/XMLSchema#", "n": {"@id": "https://example.org/n", "@type": "xsd:integer"}}"""));
        check(new Case("@type set container").context("{\"@type\": {\"@container\": \"@set\"}, \"a\": \"https://example.org/a\"}"));
        check(new Case("reverse property").context("{\"r\": {\"@reverse\": \"https://example.org/r\"}, \"r2\": \"https://example.org/r\"}"));
        check(new Case("blank node mappings").context("{\"bn\": \"_:b0\", \"bp\": \"_:\"}").terms("_:x", "bp:y"));
        check(new Case("@nest and @protected per term").context("""
                {"nst": {"@id": "https://example.org/nst", "@nest": "@nest"}, "pt": {"@id": "https://example.org/pt", "@protected": true}}"""));
        check(new Case("terms with a slash").context("{\"ex\": \"https://example.org/\", \"ex/a\": \"https://example.org/ex/a\"}"));
        check(new Case("IRIs without compaction").context("{\"ex\": \"https://example.org/\"}")
                .iris("http://other.org/x", "https://example.org/", "https://example.org/deep/path#frag", "urn:ngsi-ld:Vehicle:A1",
                        "https://uri.etsi.org/ngsi-ld/default-context/", "https://uri.etsi.org/ngsi-ld/location",
                        "https://uri.etsi.org/ngsi-ld/default-context/location", "https://purl.org/geojson/vocab#Point"));
    }

    @Test
    void seeded_random_contexts_expand_and_compact_as_the_oracle() throws Exception {
        long seed = Long.getLong("cor.oracle.seed", System.nanoTime());
        int n = Integer.getInteger("cor.oracle.cases", 150);
        Random random = new Random(seed);
        java.util.Arrays.fill(STATS, 0);
        for (int i = 0; i < n; i++) {
            Case c = RandomContexts.next(random, i);
            try {
                check(c);
            } catch (AssertionError e) {
                throw new AssertionError("random case " + i + " of seed " + seed + " (-Dcor.oracle.seed=" + seed + "): "
                        + e.getMessage() + "\n" + c, e);
            }
        }
        System.out.printf("oracle, seed %d: %d valid contexts, %d invalid, %d expansions, %d compactions, %d entities%n",
                seed, STATS[0], STATS[1], STATS[2], STATS[3], STATS[4]);
        // a corpus of only invalid contexts, or of nothing to compare, would prove nothing
        assertTrue(STATS[0] >= n / 3 && STATS[1] >= 1, "the random corpus is lopsided: " + java.util.Arrays.toString(STATS));
    }

    // ---------------------------------------------------------------- the check

    /** One case: remote documents, the request's context, the terms and IRIs to check beyond those it defines. */
    static final class Case {
        final String name;
        final Map<String, String> docs = new LinkedHashMap<>();
        String context;
        boolean link;
        final List<String> terms = new ArrayList<>();
        final List<String> iris = new ArrayList<>();

        Case(String name) {
            this.name = name;
        }

        Case doc(String path, String json) {
            docs.put(path, json);
            return this;
        }

        Case context(String json) {
            this.context = json;
            return this;
        }

        /** The context is one URL given in a Link header (else it is a body's @context). */
        Case link() {
            this.link = true;
            return this;
        }

        Case terms(String... t) {
            terms.addAll(List.of(t));
            return this;
        }

        Case iris(String... i) {
            iris.addAll(List.of(i));
            return this;
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder("case \"").append(name).append("\": context ").append(context);
            docs.forEach((p, d) -> b.append("\n  ").append(p).append(": ").append(d));
            return b.toString();
        }
    }

    /** The terms every case checks, whatever it defines. */
    private static final List<String> COMMON_TERMS = List.of("Vehicle", "speed", "unknownTerm", "location", "observedAt",
            "Property", "GeoProperty", "ngsi-ld:foo", "geojson:Point", "https://example.org/full", "urn:ngsi-ld:x",
            "_:b0", "@id", "@foo", "id", "type", "value", "vocab", "12:30", "a:b:c", ":x", "ex", "ex:Vehicle");

    /** Checks one case, with the broker's compactor in Titanium's tie-breaking order. */
    static void check(Case c) throws Exception {
        String root = server.url("/c" + CASES.incrementAndGet());
        Map<String, String> docs = new LinkedHashMap<>();
        for (Map.Entry<String, String> d : c.docs.entrySet()) {
            String body = d.getValue().replace("{S}", root);
            server.put(root.substring(root.indexOf("/c")) + d.getKey(), body);
            docs.put(root + d.getKey(), body);
        }
        JsonNode user = CorRestJson.mapper().readTree(c.context.replace("{S}", root));
        ContextRef ref = c.link ? ContextRef.link(user.asText()) : ContextRef.body(user);
        TitaniumOracle oracle = new TitaniumOracle(docs);

        LdContexts contexts = LdContexts.builder().client(client).termOrder(CompiledContext.TermOrder.LEXICOGRAPHIC).build();
        LdContext ours = null;
        NgsiLdException ourError = null;
        try {
            ours = contexts.resolve(ref, 5_000);
        } catch (NgsiLdException e) {
            ourError = e;
        }
        ActiveContext theirs = null;
        Exception theirError = null;
        try {
            theirs = oracle.activeContext(user);
        } catch (JsonLdError e) {
            theirError = e;
        } catch (NullPointerException e) {
            // Titanium 1.6 crashes where an @id expands to a term defined as null (§ 4.2.2 step 14.2.3
            // calls that an invalid IRI mapping): the context is invalid for both, the broker says so
            theirError = e;
        }
        if (theirError != null || ourError != null) {
            assertTrue(theirError != null && ourError != null, c.name + ": the oracle says " + (theirError != null ? theirError : "valid")
                    + ", the broker " + (ourError != null ? ourError.type() + " " + ourError.detail() : "valid"));
            assertTrue(ourError.type() == ErrorType.BAD_REQUEST_DATA || ourError.type() == ErrorType.LD_CONTEXT_NOT_AVAILABLE,
                    c.name + ": " + ourError.type());
            STATS[1]++;
            return;
        }
        STATS[0]++;

        // the algorithms: every term the case can produce, every IRI
        Set<String> terms = new LinkedHashSet<>(COMMON_TERMS);
        terms.addAll(c.terms);
        collectTerms(user, terms);
        docs.values().forEach(d -> collectTerms(parse(d), terms));
        for (String t : List.copyOf(terms)) {
            if (!t.startsWith("@") && t.indexOf(':') < 0 && !t.isEmpty()) {
                terms.add(t + ":x1");
            }
        }
        Set<String> iris = new LinkedHashSet<>(c.iris);
        for (String t : terms) {
            String e = ours.expand(t);
            assertEquals(TitaniumOracle.expand(theirs, t), e, c.name + ": expansion of \"" + t + "\"");
            STATS[2]++;
            if (e != null && !Iris.isKeyword(e)) {
                iris.add(e);
                iris.add(e + "Extra");
            }
        }
        for (String iri : ours.compiled.mappedIris()) {
            if (!Iris.isKeyword(iri)) {
                iris.add(iri);
            }
        }
        for (String iri : iris) {
            assertEquals(oracleCompaction(theirs, iri, true), ours.compactName(iri), c.name + ": compaction of the attribute name " + iri);
            assertEquals(oracleCompaction(theirs, iri, false), ours.compactIri(iri), c.name + ": compaction of the type/vocab IRI " + iri);
            STATS[3] += 2;
        }

        // the documents: an entity expanded, then compacted, end to end
        checkEntity(c, oracle, user, ours, theirs, terms);
    }

    /**
     * Titanium's compaction of {@code iri}. Where it raises "IRI confused with prefix" (§ 6.2.2
     * step 9: an IRI like {@code ex:foo} while {@code ex} is a prefix) the broker renders the IRI
     * as it is - an answer must render, § 5.5.7 asks for the full IRI when nothing matches - and
     * that is what is expected of it.
     */
    private static String oracleCompaction(ActiveContext theirs, String iri, boolean attributeName) throws JsonLdError {
        try {
            return attributeName ? TitaniumOracle.compactName(theirs, iri) : TitaniumOracle.compactIri(theirs, iri);
        } catch (JsonLdError e) {
            if (e.getCode() == com.apicatalog.jsonld.JsonLdErrorCode.IRI_CONFUSED_WITH_PREFIX) {
                return iri;
            }
            throw e;
        }
    }

    /** Whether compacting {@code iri} with {@code theirs} raises "IRI confused with prefix". */
    private static boolean confusable(ActiveContext theirs, String iri) throws JsonLdError {
        try {
            TitaniumOracle.compactName(theirs, iri);
            TitaniumOracle.compactIri(theirs, iri);
            return false;
        } catch (JsonLdError e) {
            if (e.getCode() == com.apicatalog.jsonld.JsonLdErrorCode.IRI_CONFUSED_WITH_PREFIX) {
                return true;
            }
            throw e;
        }
    }

    private static final String SUB_HOLDER = "http://oracle.invalid/sub";
    private static final String VOCAB_HOLDER = "http://oracle.invalid/vocab";

    private static void checkEntity(Case c, TitaniumOracle oracle, JsonNode user, LdContext ours, ActiveContext theirs, Set<String> terms)
            throws Exception {
        List<String> names = new ArrayList<>();
        List<String> types = new ArrayList<>();
        List<String> vocabs = new ArrayList<>();
        Set<String> seenIris = new LinkedHashSet<>();
        for (String t : terms) {
            String e = ours.expand(t);
            if (e == null || Iris.isKeyword(e) || !Iris.isAbsoluteIri(e) || t.isEmpty() || confusable(theirs, e)) {
                continue; // no IRI to compare; or an IRI Titanium refuses to compact (see oracleCompaction)
            }
            vocabs.add(t);
            if (types.size() < 4 && !e.startsWith("_:")) {
                types.add(t);
            }
            // A container other than @set, @json, @nest or a reverse property makes a JSON-LD processor read
            // the value as something else than an attribute instance of the entity (a list, a language
            // map, a literal, a property of the value): the algorithm-level comparison covers those
            // names with the value the broker has.
            TermDefinition d = ours.compiled.terms.get(t);
            boolean valueShapeSafe = d == null || ((d.container == null || d.container.equals("@set")) && !"@json".equals(d.typeMapping)
                    && !d.reverse && d.nest == null);
            if (valueShapeSafe && !e.startsWith("_:") && seenIris.add(e) && !e.equals(SUB_HOLDER) && !e.equals(VOCAB_HOLDER)) {
                names.add(t);
            }
        }
        JsonObjectBuilder entity = Json.createObjectBuilder()
                .add("@context", TitaniumOracle.effective(user))
                .add("id", "urn:ngsi-ld:Oracle:1");
        if (!types.isEmpty()) {
            entity.add("type", Json.createArrayBuilder(types));
        }
        for (int i = 0; i < names.size(); i++) {
            entity.add(names.get(i), Json.createObjectBuilder().add("type", "Property").add("value", "m-" + i));
        }
        JsonObjectBuilder sub = Json.createObjectBuilder().add("type", "Property").add("value", "m-sub");
        for (int j = 0; j < names.size(); j++) {
            sub.add(names.get(j), Json.createObjectBuilder().add("type", "Property").add("value", "m-sub-" + j));
        }
        entity.add(SUB_HOLDER, sub);
        entity.add(VOCAB_HOLDER, Json.createObjectBuilder().add("type", "VocabProperty").add("vocab", Json.createArrayBuilder(vocabs)));

        JsonArray expanded = oracle.expandDocument(entity.build());
        STATS[4]++;
        assertEquals(1, expanded.size(), c.name + ": one entity expanded");
        JsonObject node = expanded.getJsonObject(0);
        // types, in order
        if (!types.isEmpty()) {
            JsonArray et = node.getJsonArray("@type");
            assertEquals(types.size(), et.size(), c.name + ": expanded types " + et);
            for (int i = 0; i < types.size(); i++) {
                assertEquals(et.getString(i), ours.expand(types.get(i)), c.name + ": expansion of the entity type " + types.get(i));
            }
        }
        // attribute names and sub-attribute names
        for (int i = 0; i < names.size(); i++) {
            assertEquals(propertyHolding(node, "m-" + i), ours.expand(names.get(i)), c.name + ": expansion of the attribute " + names.get(i));
        }
        JsonObject subNode = node.getJsonArray(SUB_HOLDER).getJsonObject(0);
        for (int j = 0; j < names.size(); j++) {
            assertEquals(propertyHolding(subNode, "m-sub-" + j), ours.expand(names.get(j)), c.name + ": expansion of the sub-attribute " + names.get(j));
        }
        // vocab values, in order
        JsonArray ev = node.getJsonArray(VOCAB_HOLDER).getJsonObject(0).getJsonArray("https://uri.etsi.org/ngsi-ld/hasVocab");
        assertEquals(vocabs.size(), ev.size(), c.name + ": expanded vocab values " + ev);
        for (int i = 0; i < vocabs.size(); i++) {
            assertEquals(ev.getJsonObject(i).getString("@id"), ours.expand(vocabs.get(i)), c.name + ": expansion of the vocab value " + vocabs.get(i));
        }

        JsonObject compacted = oracle.compactDocument(expanded, user);
        if (!types.isEmpty()) {
            // the key of the types is whichever alias of @type the context has ("type" in the core)
            String typeKey = compacted.keySet().stream().filter(k -> "@type".equals(ours.expand(k))).findFirst().orElseThrow();
            List<String> ct = strings(compacted.get(typeKey));
            for (int i = 0; i < types.size(); i++) {
                assertEquals(ct.get(i), ours.compactIri(et(node, i)), c.name + ": compaction of the entity type " + et(node, i));
            }
        }
        for (int i = 0; i < names.size(); i++) {
            String iri = propertyHolding(node, "m-" + i);
            assertEquals(keyHolding(compacted, "m-" + i), ours.compactName(iri), c.name + ": compaction of the attribute name " + iri);
        }
        JsonObject subCompacted = only(compacted.get(ours.compactName(SUB_HOLDER)));
        for (int j = 0; j < names.size(); j++) {
            String iri = propertyHolding(subNode, "m-sub-" + j);
            assertEquals(keyHolding(subCompacted, "m-sub-" + j), ours.compactName(iri), c.name + ": compaction of the sub-attribute name " + iri);
        }
        List<String> cv = strings(only(compacted.get(ours.compactName(VOCAB_HOLDER))).get("vocab"));
        for (int i = 0; i < vocabs.size(); i++) {
            String iri = ev.getJsonObject(i).getString("@id");
            assertEquals(cv.get(i), ours.compactIri(iri), c.name + ": compaction of the vocab value " + iri);
        }
    }

    private static String et(JsonObject node, int i) {
        return node.getJsonArray("@type").getString(i);
    }

    /** The property of {@code node} whose values hold the string {@code marker}, anywhere below. */
    private static String propertyHolding(JsonObject node, String marker) {
        String found = null;
        for (Map.Entry<String, JsonValue> e : node.entrySet()) {
            if (!e.getKey().startsWith("@") && holds(e.getValue(), marker)) {
                if (found != null) {
                    fail("the marker " + marker + " is under " + found + " and " + e.getKey());
                }
                found = e.getKey();
            }
        }
        return found;
    }

    /** The key of {@code object} whose value holds {@code marker}; {@code null} if none. */
    private static String keyHolding(JsonObject object, String marker) {
        return propertyHolding(object, marker);
    }

    private static boolean holds(JsonValue v, String marker) {
        return switch (v.getValueType()) {
            case STRING -> ((JsonString) v).getString().equals(marker);
            case ARRAY -> v.asJsonArray().stream().anyMatch(x -> holds(x, marker));
            case OBJECT -> v.asJsonObject().values().stream().anyMatch(x -> holds(x, marker));
            default -> false;
        };
    }

    private static JsonObject only(JsonValue v) {
        return v.getValueType() == JsonValue.ValueType.ARRAY ? v.asJsonArray().getJsonObject(0) : v.asJsonObject();
    }

    private static List<String> strings(JsonValue v) {
        List<String> r = new ArrayList<>();
        if (v == null) {
            return r;
        }
        if (v.getValueType() == JsonValue.ValueType.ARRAY) {
            v.asJsonArray().forEach(x -> r.add(((JsonString) x).getString()));
        } else {
            r.add(((JsonString) v).getString());
        }
        return r;
    }

    /** Every key of every context definition in {@code node} (a context value or a whole document), keywords aside. */
    static void collectTerms(JsonNode node, Set<String> terms) {
        if (node == null) {
            return;
        }
        if (node.isArray()) {
            node.forEach(n -> collectTerms(n, terms));
        } else if (node.isObject()) {
            if (node.has("@context")) {
                collectTerms(node.get("@context"), terms);
                return;
            }
            Iterator<String> it = node.fieldNames();
            while (it.hasNext()) {
                String k = it.next();
                if (!k.startsWith("@")) {
                    terms.add(k);
                }
            }
        }
    }

    private static JsonNode parse(String json) {
        try {
            return CorRestJson.mapper().readTree(json);
        } catch (Exception e) {
            return JsonNodeFactory.instance.nullNode();
        }
    }

    // ---------------------------------------------------------------- the random corpus

    /**
     * Random contexts from small pools, so that names, prefixes and IRIs collide often: terms as
     * strings, CURIEs, null and objects (@type of every kind, containers, @prefix, @protected,
     * @language), @vocab, remote documents that name others. Two things Titanium 1.6 does
     * otherwise than the Recommendation are left out here and pinned by hand in
     * {@code LdContextTieBreakTest}: a bare-word @id with no @vocab (Titanium keeps a relative IRI,
     * the Recommendation says "invalid IRI mapping") and a bare word naming a term defined later
     * by an object (Titanium does not define it first).
     */
    static final class RandomContexts {
        private static final String[] NAMES = {"ex", "sch", "a", "b", "ab", "ba", "Vehicle", "speed", "name", "location",
            "brand", "x", "xy", "ngsi", "p"};
        private static final String[] NAMESPACES = {"http://ex.org/ns/", "http://ex.org/ns#", "http://ex.org/", "https://schema.org/",
            "https://uri.etsi.org/ngsi-ld/", "https://uri.etsi.org/ngsi-ld/default-context/", "http://ex.org/ns/sub/",
            "http://ex.org/ns", "urn:ex:"};
        private static final String[] LOCALS = {"Vehicle", "speed", "name", "a", "b", "ab", "sub/x", "ns/a", "location"};
        private static final String[] WORDS = {"w1", "w2", "wordy"};
        private static final String[] TYPES = {"@id", "@vocab", "@json", "@none", "http://www.w3.org/2001/XMLSchema#integer",
            "https://schema.org/Date"};
        private static final String[] CONTAINERS = {"@set", "@list", "@index", "@language", "@id", "@type"};

        static Case next(Random r, int i) {
            Case c = new Case("random " + i);
            int docs = r.nextInt(3);
            for (int d = 0; d < docs; d++) {
                ArrayNode items = JsonNodeFactory.instance.arrayNode();
                if (d > 0 && r.nextBoolean()) {
                    items.add("d" + (d - 1) + ".jsonld"); // an earlier document, by relative reference: no cycle
                }
                items.add(object(r));
                c.doc("/d" + d + ".jsonld", "{\"@context\": " + (items.size() == 1 ? items.get(0) : items) + "}");
            }
            ArrayNode ctx = JsonNodeFactory.instance.arrayNode();
            int items = 1 + r.nextInt(3);
            for (int k = 0; k < items; k++) {
                int pick = r.nextInt(10);
                if (pick < 3 && docs > 0) {
                    ctx.add("{S}/d" + r.nextInt(docs) + ".jsonld");
                } else if (pick == 3) {
                    ctx.add(CORE);
                } else {
                    ctx.add(object(r));
                }
            }
            c.context(ctx.size() == 1 && r.nextBoolean() ? ctx.get(0).toString() : ctx.toString());
            for (int k = 0; k < 4; k++) {
                c.terms(pick(r, NAMES) + ":" + pick(r, LOCALS));
                c.iris(pick(r, NAMESPACES) + pick(r, LOCALS) + pick(r, LOCALS), pick(r, NAMESPACES));
            }
            return c;
        }

        private static ObjectNode object(Random r) {
            ObjectNode o = JsonNodeFactory.instance.objectNode();
            boolean vocab = r.nextInt(3) == 0;
            if (vocab) {
                o.put("@vocab", pick(r, NAMESPACES));
            }
            if (r.nextInt(8) == 0) {
                o.put("@protected", true);
            }
            if (r.nextInt(10) == 0) {
                o.put("@language", r.nextBoolean() ? "en" : "FR");
            }
            int terms = 1 + r.nextInt(6);
            for (int t = 0; t < terms; t++) {
                if (r.nextInt(6) == 0) {
                    // a compact IRI as a term: its own expansion is its IRI (§ 4.2.2 step 15), so it is
                    // mostly given no @id of its own (another one is an "invalid IRI mapping", now and then)
                    String name = pick(r, NAMES) + ":" + pick(r, LOCALS);
                    JsonNode d = definition(r, vocab);
                    if (r.nextInt(5) != 0 && d.isObject()) {
                        ((ObjectNode) d).remove("@id");
                    } else if (r.nextInt(5) != 0) {
                        d = JsonNodeFactory.instance.textNode(name);
                    }
                    o.set(name, d);
                } else {
                    o.set(pick(r, NAMES), definition(r, vocab));
                }
            }
            // Titanium defines a term on demand (§ 5.2.2 step 3) only when the local context gives it a
            // string: a reference to a term of the same object defined by an object or null is one of
            // the two deviations left out here (see the class comment); such a term gets an IRI instead.
            Set<String> references = new java.util.HashSet<>();
            o.properties().forEach(e -> {
                JsonNode d = e.getValue();
                if (d.isTextual()) {
                    references.add(d.asText());
                } else if (d.isObject()) {
                    d.properties().forEach(x -> {
                        if (x.getValue().isTextual()) {
                            references.add(x.getValue().asText());
                        }
                    });
                }
            });
            for (String k : List.copyOf(iterable(o.fieldNames()))) {
                JsonNode d = o.get(k);
                if (!d.isTextual() && references.contains(k)) {
                    o.put(k, pick(r, NAMESPACES) + pick(r, LOCALS));
                }
            }
            return o;
        }

        private static List<String> iterable(Iterator<String> it) {
            List<String> l = new ArrayList<>();
            it.forEachRemaining(l::add);
            return l;
        }

        private static JsonNode definition(Random r, boolean vocab) {
            JsonNodeFactory f = JsonNodeFactory.instance;
            switch (r.nextInt(8)) {
                case 0:
                    return f.nullNode();
                case 1:
                case 2:
                    return f.textNode(pick(r, NAMESPACES) + pick(r, LOCALS));
                case 3:
                    return f.textNode(pick(r, NAMES) + ":" + pick(r, LOCALS));
                default:
                    ObjectNode d = f.objectNode();
                    int id = r.nextInt(5);
                    if (id <= 1) {
                        d.put("@id", pick(r, NAMESPACES) + pick(r, LOCALS));
                    } else if (id == 2) {
                        d.put("@id", pick(r, NAMES) + ":" + pick(r, LOCALS));
                    } else if (id == 3 && vocab) {
                        d.put("@id", pick(r, WORDS));
                    } else if (!vocab) {
                        d.put("@id", pick(r, NAMESPACES) + pick(r, LOCALS));
                    }
                    if (r.nextInt(3) == 0) {
                        d.put("@type", pick(r, TYPES));
                    }
                    if (r.nextInt(3) == 0) {
                        d.put("@container", pick(r, CONTAINERS));
                    }
                    if (r.nextInt(6) == 0) {
                        d.put("@prefix", r.nextBoolean());
                    }
                    if (r.nextInt(8) == 0) {
                        d.put("@protected", r.nextBoolean());
                    }
                    if (r.nextInt(8) == 0 && !d.has("@type")) {
                        d.put("@language", "en");
                    }
                    return d;
            }
        }

        private static String pick(Random r, String[] pool) {
            return pool[r.nextInt(pool.length)];
        }
    }
}
