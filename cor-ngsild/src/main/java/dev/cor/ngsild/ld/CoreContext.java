package dev.cor.ngsild.ld;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.rest.CorRestJson;

/**
 * The NGSI-LD core {@code @context} (V1.8), built in as a resource: never downloaded, so the
 * broker works air-gapped. Every URL under which ETSI published a core context names it, older
 * and newer versions included (a client that names the V1.9 core gets the V1.8 terms: the broker
 * implements V1.8, and the terms V1.9 added are for features it does not have). Stateless.
 */
final class CoreContext {
    /** The URL the broker gives for the core context in its answers. */
    static final String URL = "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld";

    /** Every URL under which ETSI published a core context: each one resolves to the built-in one. */
    static final Set<String> URLS = Set.of(
            URL,
            "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context.jsonld",
            "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.3.jsonld",
            "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.4.jsonld",
            "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.5.jsonld",
            "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.6.jsonld",
            "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.7.jsonld",
            "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld");

    private static final String RESOURCE = "ngsi-ld-core-context-v1.8.jsonld";

    private CoreContext() {
    }

    /** The core context document ({@code {"@context": {...}}}), parsed anew (the caller owns it). */
    static JsonNode document() {
        try (InputStream in = CoreContext.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the core context resource " + RESOURCE + " is missing from the jar");
            }
            return CorRestJson.mapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException("the core context resource " + RESOURCE + " does not parse", e);
        }
    }

    static boolean isCoreUrl(String url) {
        return URLS.contains(url);
    }
}
