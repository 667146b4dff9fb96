package dev.cor.ngsild.ld;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.net.URI;
import java.util.Map;

import com.apicatalog.jsonld.JsonLd;
import com.apicatalog.jsonld.JsonLdError;
import com.apicatalog.jsonld.JsonLdErrorCode;
import com.apicatalog.jsonld.JsonLdOptions;
import com.apicatalog.jsonld.context.ActiveContext;
import com.apicatalog.jsonld.document.Document;
import com.apicatalog.jsonld.document.JsonDocument;
import com.apicatalog.jsonld.loader.DocumentLoader;
import com.apicatalog.jsonld.processor.ProcessingRuntime;
import com.fasterxml.jackson.databind.JsonNode;

import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonStructure;
import jakarta.json.JsonValue;

/**
 * The JSON-LD 1.1 reference processor our term expander and compactor must agree with: Titanium
 * JSON-LD, given the same input the broker processes - the request's context with the NGSI-LD
 * core context after it - and a document loader that serves the core and the test documents
 * locally (no network).
 * <p>
 * The broker skips a core URL wherever a context names it and processes the core once, last
 * (ETSI GS CIM 009 § 5.5.7): so here every published core URL is an empty context and the core
 * itself is appended under a URL of the oracle's own. Each instance has its own Titanium options,
 * so nothing is cached across test cases.
 */
final class TitaniumOracle {
    /** Where the oracle's loader serves the core context that closes every effective context. */
    static final String FINAL_CORE = "https://oracle.test/ngsi-ld-core-context.jsonld";
    /** An attribute instance, expanded: the value IRI compaction is given for an attribute name. */
    static final JsonObject ATTRIBUTE_INSTANCE = Json.createObjectBuilder()
            .add("@type", Json.createArrayBuilder().add("https://uri.etsi.org/ngsi-ld/Property"))
            .add("https://uri.etsi.org/ngsi-ld/hasValue", Json.createArrayBuilder().add(Json.createObjectBuilder().add("@value", "x")))
            .build();

    /** Titanium warns (java.util.logging) about every keyword-form term a case tries: kept quiet, held here. */
    private static final java.util.logging.Logger QUIET = java.util.logging.Logger.getLogger("com.apicatalog");

    static {
        QUIET.setLevel(java.util.logging.Level.SEVERE);
    }

    private final Map<String, String> documents;
    private final JsonLdOptions options = new JsonLdOptions();

    /** @param documents the test's remote context documents, by absolute URL */
    TitaniumOracle(Map<String, String> documents) {
        this.documents = documents;
        options.setDocumentLoader(loader());
    }

    /** The effective context of {@code user} (a Link URL as a string, or a body's @context): its entries without the core URLs, then the core. */
    static JsonArray effective(JsonNode user) {
        JsonArrayBuilder b = Json.createArrayBuilder();
        for (JsonNode item : user.isArray() ? user : java.util.List.of(user)) {
            if (item.isTextual() && CoreContext.isCoreUrl(item.asText())) {
                continue;
            }
            b.add(toJakarta(item));
        }
        return b.add(FINAL_CORE).build();
    }

    /** Titanium's active context for the effective context of {@code user}. */
    ActiveContext activeContext(JsonNode user) throws JsonLdError {
        return new ActiveContext(ProcessingRuntime.of(options)).newContext().create(effective(user), null);
    }

    static String expand(ActiveContext ac, String term) throws JsonLdError {
        return ac.uriExpansion().vocab(true).expand(term);
    }

    static String compactName(ActiveContext ac, String iri) throws JsonLdError {
        return ac.uriCompaction().vocab(true).value(ATTRIBUTE_INSTANCE).compact(iri);
    }

    static String compactIri(ActiveContext ac, String iri) throws JsonLdError {
        return ac.uriCompaction().vocab(true).compact(iri);
    }

    /** JSON-LD expansion of a whole document (its @context included). */
    JsonArray expandDocument(JsonObject document) throws JsonLdError {
        return JsonLd.expand(JsonDocument.of(document)).options(options).get();
    }

    /** JSON-LD compaction of an expanded document with the effective context of {@code user}. */
    JsonObject compactDocument(JsonArray expanded, JsonNode user) throws JsonLdError {
        JsonObject context = Json.createObjectBuilder().add("@context", effective(user)).build();
        return JsonLd.compact(JsonDocument.of(expanded), JsonDocument.of(context)).options(options).get();
    }

    static JsonValue toJakarta(JsonNode node) {
        try (JsonReader r = Json.createReader(new StringReader("[" + node.toString() + "]"))) {
            return r.readArray().get(0);
        }
    }

    private DocumentLoader loader() {
        return (URI url, com.apicatalog.jsonld.loader.DocumentLoaderOptions o) -> {
            String u = url.toString();
            String text;
            if (u.equals(FINAL_CORE)) {
                text = coreText();
            } else if (CoreContext.isCoreUrl(u)) {
                text = "{\"@context\": {}}";
            } else {
                text = documents.get(u);
            }
            if (text == null) {
                throw new JsonLdError(JsonLdErrorCode.LOADING_DOCUMENT_FAILED, "no test document at " + u);
            }
            Document d = JsonDocument.of(new StringReader(text));
            d.setDocumentUrl(url);
            return d;
        };
    }

    private static String coreText() {
        try (InputStream in = CoreContext.class.getResourceAsStream("ngsi-ld-core-context-v1.8.jsonld")) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Parses JSON text as a Jakarta structure. */
    static JsonStructure parse(String json) {
        try (JsonReader r = Json.createReader(new StringReader(json))) {
            return r.read();
        }
    }
}
