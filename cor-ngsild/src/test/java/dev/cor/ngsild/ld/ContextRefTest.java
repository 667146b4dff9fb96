package dev.cor.ngsild.ld;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.rest.CorRestJson;
import org.junit.jupiter.api.Test;

/**
 * What a request names as its {@code @context} through the {@code Link} header (ETSI GS CIM 009
 * § 6.3.5; JSON-LD 1.1 § 6.1, § 9.4.1; RFC 8288 for the field's syntax).
 */
class ContextRefTest {
    private static final String REL = "rel=\"http://www.w3.org/ns/json-ld#context\"";

    @Test
    void the_link_whose_rel_is_the_jsonld_context_names_the_context() {
        ContextRef r = ContextRef.fromLinkHeaders(List.of("<https://example.org/ctx.jsonld>; " + REL + "; type=\"application/ld+json\""));
        assertEquals("https://example.org/ctx.jsonld", r.linkUrl());
    }

    @Test
    void no_link_or_links_of_other_relations_name_no_context() {
        assertSame(ContextRef.none(), ContextRef.fromLinkHeaders(List.of()));
        assertSame(ContextRef.none(), ContextRef.fromLinkHeaders(List.of("<https://example.org/next>; rel=\"next\"")));
        // a malformed link of another relation is none of the broker's business
        assertSame(ContextRef.none(), ContextRef.fromLinkHeaders(List.of("garbage; rel=next")));
    }

    @Test
    void relation_types_compare_case_insensitively_and_a_rel_may_list_several() {
        // RFC 8288 § 2.1.1: relation types compare case-insensitively; § 3.3: rel is a space-separated list
        assertEquals("https://example.org/a", ContextRef.fromLinkHeaders(
                List.of("<https://example.org/a>; rel=\"alternate HTTP://WWW.W3.ORG/ns/json-ld#context\"")).linkUrl());
        // unquoted, as RFC 8288 allows for a single token-shaped value
        assertEquals("https://example.org/b", ContextRef.fromLinkHeaders(
                List.of("<https://example.org/b>;rel=http://www.w3.org/ns/json-ld#context")).linkUrl());
    }

    @Test
    void commas_and_semicolons_inside_quoted_parameters_do_not_split_links() {
        ContextRef r = ContextRef.fromLinkHeaders(List.of(
                "<https://example.org/n>; rel=\"next\"; title=\"a, b; c\", <https://example.org/c>; title=\"x;y\"; " + REL));
        assertEquals("https://example.org/c", r.linkUrl());
    }

    @Test
    void only_the_first_rel_of_a_link_counts() {
        // RFC 8288 § 3.3: occurrences of rel after the first MUST be ignored
        assertSame(ContextRef.none(), ContextRef.fromLinkHeaders(List.of("<https://example.org/c>; rel=\"next\"; " + REL)));
    }

    @Test
    void two_context_links_are_BadRequestData() {
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> ContextRef.fromLinkHeaders(List.of(
                "<https://example.org/a>; " + REL, "<https://example.org/b>; " + REL)));
        assertEquals(ErrorType.BAD_REQUEST_DATA, e.type());
        assertThrows(NgsiLdException.class, () -> ContextRef.fromLinkHeaders(List.of(
                "<https://example.org/a>; " + REL + ", <https://example.org/b>; " + REL)));
    }

    @Test
    void a_malformed_context_link_is_BadRequestData() {
        assertEquals(ErrorType.BAD_REQUEST_DATA, assertThrows(NgsiLdException.class,
                () -> ContextRef.fromLinkHeaders(List.of("https://example.org/a; " + REL))).type());
        assertEquals(ErrorType.BAD_REQUEST_DATA, assertThrows(NgsiLdException.class,
                () -> ContextRef.fromLinkHeaders(List.of("<>; " + REL))).type());
    }

    @Test
    void refs_are_equal_by_what_they_name() throws Exception {
        assertEquals(ContextRef.link("https://example.org/a"), ContextRef.link("https://example.org/a"));
        assertEquals(ContextRef.link("https://example.org/a").hashCode(), ContextRef.link("https://example.org/a").hashCode());
        assertEquals(ContextRef.body(CorRestJson.mapper().readTree("[\"u\", {\"a\": \"b\"}]")),
                ContextRef.body(CorRestJson.mapper().readTree("[\"u\",{\"a\":\"b\"}]")));
        assertNotEquals(ContextRef.link("u"), ContextRef.body(CorRestJson.mapper().readTree("\"u\"")));
    }
}
