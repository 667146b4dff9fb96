package dev.cor.ngsild.ld;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;

import com.apicatalog.jsonld.JsonLdError;
import com.apicatalog.jsonld.context.ActiveContext;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.rest.CorRestJson;
import org.junit.jupiter.api.Test;

/**
 * The NGSI-LD rules on top of JSON-LD (ETSI GS CIM 009 § 4.4, § 5.5.5, § 5.5.7), what an answer
 * says its context is, and the places where the broker follows the JSON-LD 1.1 Recommendation
 * while Titanium 1.6 - the oracle of {@code LdContextOracleTest} - does otherwise: each is pinned
 * here with the Recommendation's step, Titanium's answer and the broker's.
 */
class LdContextsTest {
    private static final String NGSI = "https://uri.etsi.org/ngsi-ld/";
    private static final String DEFAULT = "https://uri.etsi.org/ngsi-ld/default-context/";
    private final LdContexts contexts = LdContexts.builder().build();

    private static JsonNode json(String s) throws Exception {
        return CorRestJson.mapper().readTree(s);
    }

    private LdContext inline(String context) throws Exception {
        return contexts.resolve(ContextRef.body(json(context)), 1_000);
    }

    // ---------------------------------------------------------------- the core, and what an answer echoes

    @Test
    void a_request_with_no_context_has_the_core_and_echoes_its_url() {
        // § 5.5.5: the core is assigned when a request gives no @context
        LdContext core = contexts.resolve(ContextRef.none(), 1_000);
        assertSame(contexts.core(), core);
        assertTrue(core.isCore());
        assertEquals(NGSI + "Property", core.expand("Property"));
        assertEquals(DEFAULT + "speed", core.expand("speed")); // the core's @vocab
        assertEquals("speed", core.compactName(DEFAULT + "speed"));
        assertEquals("ngsi-ld:foo", core.compactIri(NGSI + "foo"));
        assertEquals("@type", core.expand("type"));
        assertEquals(TextNode.valueOf(CoreContext.URL), core.echo());
        assertEquals(CoreContext.URL, core.linkUrl());
    }

    @Test
    void every_published_core_url_is_the_built_in_core_and_is_echoed_as_given() {
        for (String url : CoreContext.URLS) {
            LdContext c = contexts.cached(ContextRef.link(url));
            assertTrue(c.isCore(), url);
            assertEquals(url, c.linkUrl());
            assertEquals(TextNode.valueOf(url), c.echo());
            assertEquals(NGSI + "GeoProperty", c.expand("GeoProperty"));
        }
        // a URL that only looks like one is not the core (043_01: ...-non-existing.jsonld must be downloaded, and fail)
        assertTrue(contexts.needsDownload(ContextRef.link("https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-non-existing.jsonld")));
    }

    @Test
    void an_answer_echoes_the_context_as_the_request_gave_it() throws Exception {
        JsonNode object = json("{\"Vehicle\": \"https://example.org/Vehicle\"}");
        LdContext c = contexts.resolve(ContextRef.body(object), 1_000);
        assertEquals(object, c.echo());
        assertNull(c.linkUrl(), "an inline context has no URL of its own");
        assertFalse(c.isCore());

        JsonNode onlyCore = json("[\"" + CoreContext.URL + "\"]");
        LdContext core = contexts.resolve(ContextRef.body(onlyCore), 1_000);
        assertTrue(core.isCore());
        assertEquals(onlyCore, core.echo());
        assertEquals(CoreContext.URL, core.linkUrl(), "one URL in a body is a URL for a Link header");
    }

    @Test
    void the_core_has_precedence_over_a_user_definition_of_its_terms() throws Exception {
        // § 4.4 / § 5.5.7: the core is processed as if last, so its terms cannot be overridden
        LdContext c = inline("{\"location\": \"https://example.org/loc\", \"Property\": \"https://example.org/P\", \"type\": \"https://example.org/t\"}");
        assertEquals(NGSI + "location", c.expand("location"));
        assertEquals(NGSI + "Property", c.expand("Property"));
        assertEquals("@type", c.expand("type"));
    }

    @Test
    void the_core_named_before_user_terms_that_redefine_it_is_skipped_not_an_error() throws Exception {
        // JSON-LD alone would say "protected term redefinition" (the core is @protected); § 5.5.7 says the core
        // has absolute precedence "regardless of the position of the Core @context": it is processed last, once
        LdContext c = inline("[\"" + CoreContext.URL + "\", {\"type\": \"https://example.org/t\", \"@vocab\": \"https://example.org/v/\"}]");
        assertEquals("@type", c.expand("type"));
        assertEquals(DEFAULT + "other", c.expand("other"), "the core's @vocab, processed last, wins");
    }

    @Test
    void a_scoped_context_is_BadRequestData() {
        // § 5.5.7: a user @context shall not contain JSON-LD scoped contexts
        NgsiLdException e = assertThrows(NgsiLdException.class,
                () -> inline("{\"Vehicle\": {\"@id\": \"https://example.org/Vehicle\", \"@context\": {\"speed\": \"https://example.org/s\"}}}"));
        assertEquals(ErrorType.BAD_REQUEST_DATA, e.type());
        assertTrue(e.detail().contains("5.5.7"), e.detail());
    }

    @Test
    void a_relative_context_url_in_a_request_is_BadRequestData() {
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> inline("[\"ctx.jsonld\"]"));
        assertEquals(ErrorType.BAD_REQUEST_DATA, e.type());
        assertTrue(e.detail().contains("ctx.jsonld"), e.detail());
    }

    @Test
    void a_context_value_that_is_no_context_is_BadRequestData() {
        for (String bad : List.of("42", "true", "[\"https://example.org/a\", 7]")) {
            assertEquals(ErrorType.BAD_REQUEST_DATA, assertThrows(NgsiLdException.class, () -> inline(bad)).type(), bad);
        }
    }

    @Test
    void a_term_that_stands_for_nothing_expands_to_null() throws Exception {
        LdContext c = inline("{\"speed\": null}");
        assertNull(c.expand("speed"), "a term defined as null is dropped by JSON-LD");
        assertNull(c.expand("@foo"), "the form of a keyword");
        assertEquals("@id", c.expand("@id"));
        // an IRI no term compacts to, with the vocab's suffix taken by the null term: the ngsi-ld: prefix
        assertEquals("ngsi-ld:default-context/speed", c.compactName(DEFAULT + "speed"));
    }

    @Test
    void known_terms_and_their_iris_are_answered_without_allocating() throws Exception {
        LdContext c = inline("{\"Vehicle\": \"https://example.org/Vehicle\", \"speed\": \"https://example.org/speed\"}");
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        String[] terms = {"Vehicle", "speed", "location", "observedAt"};
        String[] iris = {"https://example.org/Vehicle", "https://example.org/speed", NGSI + "location", NGSI + "observedAt"};
        int sink = 0;
        for (int warm = 0; warm < 20_000; warm++) {
            sink += c.expand(terms[warm & 3]).length() + c.compactName(iris[warm & 3]).length() + c.compactIri(iris[warm & 3]).length();
        }
        long before = mx.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100_000; i++) {
            sink += c.expand(terms[i & 3]).length() + c.compactName(iris[i & 3]).length() + c.compactIri(iris[i & 3]).length();
        }
        long allocated = mx.getCurrentThreadAllocatedBytes() - before;
        assertTrue(sink > 0);
        assertTrue(allocated < 4_096, "300 000 look-ups allocated " + allocated + " bytes");
    }

    // ---------------------------------------------------------------- where Titanium 1.6 and the Recommendation differ

    private static ActiveContext titanium(String context) throws Exception {
        return new TitaniumOracle(Map.of()).activeContext(json(context));
    }

    @Test
    void terms_of_one_iri_are_chosen_shortest_first_as_the_recommendation_says() throws Exception {
        // JSON-LD 1.1 API § 4.3.2 step 3: "ordered by shortest term first (breaking ties by choosing the
        // lexicographically least term)". Titanium 1.6 sorts in String order.
        String ctx = "{\"aa\": \"https://example.org/x\", \"b\": \"https://example.org/x\"}";
        assertEquals("b", inline(ctx).compactName("https://example.org/x"));
        assertEquals("aa", TitaniumOracle.compactName(titanium(ctx), "https://example.org/x"), "Titanium's order");
        LdContext lexicographic = LdContexts.builder().termOrder(CompiledContext.TermOrder.LEXICOGRAPHIC).build()
                .resolve(ContextRef.body(json(ctx)), 1_000);
        assertEquals("aa", lexicographic.compactName("https://example.org/x"), "the order is the only difference");
    }

    @Test
    void compact_iris_are_chosen_shortest_first_as_the_recommendation_says() throws Exception {
        // § 6.2.2 step 7.3: the candidate is taken if "shorter or the same length but lexicographically less".
        // Titanium 1.6 compares in String order: with a prefix for all of uri.etsi.org, every core IRI without
        // a term would come out as etsi:ngsi-ld/... instead of ngsi-ld:...
        String ctx = "{\"etsi\": \"https://uri.etsi.org/\"}";
        assertEquals("ngsi-ld:notATerm", inline(ctx).compactIri(NGSI + "notATerm"));
        assertEquals("etsi:ngsi-ld/notATerm", TitaniumOracle.compactIri(titanium(ctx), NGSI + "notATerm"), "Titanium's order");
    }

    @Test
    void a_relative_iri_mapping_is_an_invalid_context_as_the_recommendation_says() throws Exception {
        // § 4.2.2 step 14.2.3: an IRI mapping that is neither a keyword, nor an IRI, nor a blank node identifier is
        // an "invalid IRI mapping". Titanium 1.6 accepts any parseable reference and maps the term to "vehicleType".
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> inline("{\"Vehicle\": \"vehicleType\"}"));
        assertEquals(ErrorType.BAD_REQUEST_DATA, e.type());
        assertTrue(e.detail().contains("invalid IRI mapping"), e.detail());
        assertEquals("vehicleType", TitaniumOracle.expand(titanium("{\"Vehicle\": \"vehicleType\"}"), "Vehicle"), "Titanium's answer");
    }

    @Test
    void a_term_named_by_another_is_defined_first_whatever_its_definition_as_the_recommendation_says() throws Exception {
        // § 5.2.2 step 3: a value that is a key of the local context being processed is defined first, on demand.
        // Titanium 1.6 does so only when the key's definition is a string; here it is an object.
        String ctx = "{\"@vocab\": \"https://v.example.org/\", \"T\": \"U\", \"U\": {\"@id\": \"https://example.org/u\"}}";
        assertEquals("https://example.org/u", inline(ctx).expand("T"));
        assertEquals("https://v.example.org/U", TitaniumOracle.expand(titanium(ctx), "T"), "Titanium's answer");
    }

    @Test
    void a_scheme_with_an_empty_rest_has_the_form_of_an_iri_as_rfc_3987_says() throws Exception {
        // RFC 3987: ihier-part may be an empty path, so "ex:" is an IRI (§ 5.2.2 step 6.5 returns it).
        // Titanium 1.6 asks java.net.URI, which refuses it, and prepends the @vocab.
        assertEquals("ex:", inline("{\"a\": \"https://example.org/a\"}").expand("ex:"));
        assertEquals(DEFAULT + "ex:", TitaniumOracle.expand(titanium("{\"a\": \"https://example.org/a\"}"), "ex:"), "Titanium's answer");
    }

    @Test
    void an_iri_that_looks_like_a_compact_iri_is_rendered_as_it_is() throws Exception {
        // § 6.2.2 step 9 raises "IRI confused with prefix"; an answer must render, and § 5.5.7 asks for the full IRI
        String ctx = "{\"ex\": \"https://example.org/\"}";
        assertEquals("ex:thing", inline(ctx).compactName("ex:thing"));
        assertThrows(JsonLdError.class, () -> TitaniumOracle.compactName(titanium(ctx), "ex:thing"), "Titanium's answer: an error");
    }
}
