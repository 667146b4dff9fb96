package dev.cor.ngsild.ld;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.rest.CorRestJson;

/**
 * The context-source API, transport-free (ETSI GS CIM 009 § 5.13, HTTP binding § 6.29 - 6.30 in
 * V1.9.1, § 6.27 - 6.28 in V1.8): {@code GET/POST /jsonldContexts} and
 * {@code GET/DELETE /jsonldContexts/{contextId}}. The API layer routes a request here with its
 * method, the (decoded) path id, its query parameters and its parsed body, and sends back the
 * {@link Response}; an error is thrown as an {@link NgsiLdException}, which it answers as a
 * ProblemDetails like any other. Thread-safe; one per broker.
 * <p>
 * The kinds: the downloaded documents are "Cached" (shared by every tenant: they are copies of
 * public URLs), the core context among them (built in; it can be "reloaded" - a no-op - but not
 * deleted); "Hosted" contexts are the ones {@code POST}ed, and "ImplicitlyCreated" ones are made
 * by {@link LdContexts#linkUrlFor}; both belong to the tenant they were made under (§ 5.5.10),
 * and a hosted context's document is served at its URL by {@code GET /jsonldContexts/{id}}.
 * <p>
 * Only {@code DELETE ...?reload=true} of a Cached context waits (for its new download):
 * {@link #canWait} says so, and such a request must run in a coroutine or on a worker.
 */
public final class JsonldContextsApi {
    /** An answer: status, content type (or {@code null} without a body), extra header fields, body bytes. */
    public record Response(int status, String contentType, Map<String, String> headers, byte[] body) {
    }

    /** The core context's local id. */
    static final String CORE_ID = "ngsi-ld-core-context";

    private static final String JSON = "application/json";
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final Set<String> LIST_PARAMS = Set.of("details", "kind");
    private static final Set<String> SERVE_PARAMS = Set.of("details");
    private static final Set<String> DELETE_PARAMS = Set.of("reload");

    private final LdContexts contexts;
    private final long startedAt;

    public JsonldContextsApi(LdContexts contexts) {
        this.contexts = Objects.requireNonNull(contexts, "contexts");
        this.startedAt = contexts.clock().millis();
    }

    /** Whether the request may wait (a download): only {@code DELETE /jsonldContexts/{id}?reload=true}. */
    public boolean canWait(String method, Map<String, String> params) {
        return "DELETE".equals(method) && "true".equals(params.get("reload"));
    }

    /**
     * Answers one request of the API.
     *
     * @param method    the HTTP method
     * @param contextId the decoded {@code {contextId}} path segment, {@code null} for {@code /jsonldContexts}
     * @param params    the decoded query parameters
     * @param body      the parsed body of a POST ({@code null} if none)
     * @param tenant    the request's tenant ({@code NGSILD-Tenant}), {@code null} when it names none
     * @param origin    the broker's origin as the client reached it, {@code http://host:port} (no path)
     * @throws NgsiLdException the request's error
     */
    public Response handle(String method, String contextId, Map<String, String> params, JsonNode body, String tenant,
            String origin) {
        if (contextId == null) {
            return switch (method) {
                case "GET" -> list(params, tenant, origin);
                case "POST" -> add(params, body, tenant);
                default -> throw new NgsiLdException(ErrorType.METHOD_NOT_ALLOWED,
                        method + " is not allowed on /jsonldContexts (GET, POST are)");
            };
        }
        if (contextId.isEmpty()) {
            throw NgsiLdException.badData("no @context identifier given");
        }
        return switch (method) {
            case "GET" -> serve(contextId, params, tenant, origin);
            case "DELETE" -> delete(contextId, params, tenant);
            default -> throw new NgsiLdException(ErrorType.METHOD_NOT_ALLOWED,
                    method + " is not allowed on /jsonldContexts/{contextId} (GET, DELETE are)");
        };
    }

    // ---------------------------------------------------------------- § 5.13.2 Add

    private Response add(Map<String, String> params, JsonNode body, String tenant) {
        checkParams(params, Set.of());
        if (body == null || !body.isObject() || !body.has("@context")) {
            // 050_02: the payload is not a document with a top-level @context: InvalidRequest
            throw NgsiLdException.invalid("the body must be a JSON object with a top-level @context member");
        }
        JsonNode context = body.get("@context");
        // § 5.13.2.4 -> § 5.5.4: an invalid @context is BadRequestData (5132_01)
        contexts.validate(context);
        // § 5.13.2.3: everything outside the @context subtree is discarded
        StoredContexts.Stored s = contexts.stored().host(tenant, context.deepCopy(), contexts.clock().millis());
        return new Response(201, null, Map.of("Location", StoredContexts.PATH + s.id), new byte[0]);
    }

    // ---------------------------------------------------------------- § 5.13.3 List

    private Response list(Map<String, String> params, String tenant, String origin) {
        checkParams(params, LIST_PARAMS);
        boolean details = flag(params, "details");
        String kind = params.get("kind");
        if (kind != null && !(kind.equals("Cached") || kind.equals("Hosted") || kind.equals("ImplicitlyCreated"))) {
            throw NgsiLdException.badData("kind must be Cached, Hosted or ImplicitlyCreated, not \"" + kind + "\"");
        }
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        if (kind == null || kind.equals("Cached")) {
            out.add(details ? coreInfo(CoreContext.URL) : text(CoreContext.URL));
            for (ContextDocuments.Doc d : contexts.documents().all()) {
                out.add(details ? info(d) : text(d.url));
            }
        }
        for (StoredContexts.Stored s : contexts.stored().of(tenant)) {
            if (kind == null || kind.equals(s.kind.label)) {
                out.add(details ? info(s, origin) : text(LdContexts.urlOf(s, origin)));
            }
        }
        return json(200, out);
    }

    // ---------------------------------------------------------------- § 5.13.4 Serve

    private Response serve(String id, Map<String, String> params, String tenant, String origin) {
        checkParams(params, SERVE_PARAMS);
        boolean details = flag(params, "details");
        if (isCore(id)) {
            if (!details) {
                throw notServed(id);
            }
            return json(200, coreInfo(CoreContext.isCoreUrl(id) ? id : CoreContext.URL));
        }
        StoredContexts.Stored s = storedOf(id, tenant);
        if (s == null && !details && tenant == null) {
            // The Link of an answer or a notification (§ 6.3.6) is followed by a JSON-LD processor that
            // names no tenant: the document of any tenant's stored context is served by its id, a
            // random one that only the Link handed out. Its details and a request naming another
            // tenant stay the owner's (§ 5.5.10).
            s = storedOf(id);
        }
        if (s != null) {
            return json(200, details ? info(s, origin) : StoredContexts.document(s.context));
        }
        ContextDocuments.Doc d = contexts.documents().find(id);
        if (d != null) {
            if (!details) {
                throw notServed(id);
            }
            return json(200, info(d));
        }
        throw NgsiLdException.notFound("no @context " + id + " is stored");
    }

    // ---------------------------------------------------------------- § 5.13.5 Delete and Reload

    private Response delete(String id, Map<String, String> params, String tenant) {
        checkParams(params, DELETE_PARAMS);
        boolean reload = flag(params, "reload");
        if (reload) {
            // § 5.13.5.4 in its order: an id that names nothing stored is ResourceNotFound, reload or
            // not (the suite's 051_04_01 asks BadRequestData there; the clause checks the id first);
            // only a Cached context can be reloaded, any other kind is BadRequestData.
            if (isCore(id)) {
                return new Response(204, null, Map.of(), new byte[0]); // built in: there is nothing to download again
            }
            ContextDocuments.Doc d = contexts.documents().find(id);
            if (d == null) {
                if (storedOf(id, tenant) == null) {
                    throw NgsiLdException.notFound("no @context " + id + " is stored");
                }
                throw NgsiLdException.badData("only a Cached @context can be reloaded, and " + id + " is not one");
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(contexts.timeoutMs());
            // § 5.13.5.4: a failed download or an invalid document is LdContextNotAvailable (the one answer of
            // ContextDocuments.unavailable); the old one stays
            contexts.documents().reload(d.url, deadline);
            contexts.forgetProcessed();
            return new Response(204, null, Map.of(), new byte[0]);
        }
        if (isCore(id)) {
            throw NgsiLdException.badData("the NGSI-LD core @context cannot be deleted (it can be reloaded: ?reload=true)");
        }
        StoredContexts.Stored s = storedOf(id, tenant);
        if (s != null) {
            contexts.stored().remove(s);
            contexts.forgetProcessed();
            return new Response(204, null, Map.of(), new byte[0]);
        }
        if (contexts.documents().remove(id)) {
            contexts.forgetProcessed();
            return new Response(204, null, Map.of(), new byte[0]);
        }
        throw NgsiLdException.notFound("no @context " + id + " is stored");
    }

    // ---------------------------------------------------------------- details (§ 5.13.3.5)

    private ObjectNode coreInfo(String url) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("URL", url);
        o.put("localId", CORE_ID);
        o.put("kind", "Cached");
        o.put("createdAt", TIME.format(Instant.ofEpochMilli(startedAt)));
        o.putObject("extraInfo").put("builtIn", true);
        return o;
    }

    private ObjectNode info(ContextDocuments.Doc d) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("URL", d.url);
        o.put("localId", d.localId);
        o.put("kind", "Cached");
        o.put("createdAt", TIME.format(Instant.ofEpochMilli(d.createdAt)));
        o.put("expiresAt", TIME.format(Instant.ofEpochMilli(Math.min(d.expiresAt, 253402300799999L))));
        o.put("lastUsage", TIME.format(Instant.ofEpochMilli(d.lastUsage)));
        ObjectNode extra = o.putObject("extraInfo");
        extra.put("requests", d.uses.sum());
        extra.put("bytes", d.bytes);
        if (!d.documentUrl.equals(d.url)) {
            extra.put("documentUrl", d.documentUrl);
        }
        return o;
    }

    private ObjectNode info(StoredContexts.Stored s, String origin) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("URL", LdContexts.urlOf(s, origin));
        o.put("localId", s.id);
        o.put("kind", s.kind.label);
        o.put("createdAt", TIME.format(Instant.ofEpochMilli(s.createdAt)));
        o.put("lastUsage", TIME.format(Instant.ofEpochMilli(s.lastUsage)));
        o.putObject("extraInfo").put("requests", s.uses.sum());
        return o;
    }

    // ---------------------------------------------------------------- helpers

    private static boolean isCore(String id) {
        return CoreContext.isCoreUrl(id) || id.equals(CORE_ID);
    }

    /** The tenant's stored context of local id (or URL) {@code id}; another tenant's is as absent as none (5134_01). */
    private StoredContexts.Stored storedOf(String id, String tenant) {
        StoredContexts.Stored s = storedOf(id);
        return s != null && Objects.equals(s.tenant, tenant) ? s : null;
    }

    /** The stored context of local id (or URL) {@code id}, whichever tenant's. */
    private StoredContexts.Stored storedOf(String id) {
        StoredContexts.Stored s = contexts.stored().get(id);
        return s != null ? s : contexts.stored().byUrl(id);
    }

    private static NgsiLdException notServed(String id) {
        return new NgsiLdException(ErrorType.OPERATION_NOT_SUPPORTED,
                "the @context " + id + " is Cached: the broker serves only the Hosted and ImplicitlyCreated ones (§ 5.13.4.4)");
    }

    private static void checkParams(Map<String, String> params, Set<String> allowed) {
        for (String name : params.keySet()) {
            if (!allowed.contains(name)) {
                throw NgsiLdException.invalid("unknown query parameter " + name
                        + (allowed.isEmpty() ? " (this operation takes none)" : " (allowed: " + String.join(", ", allowed) + ")"));
            }
        }
    }

    private static boolean flag(Map<String, String> params, String name) {
        String v = params.get(name);
        if (v == null || v.equals("false")) {
            return false;
        }
        if (v.equals("true")) {
            return true;
        }
        throw NgsiLdException.badData(name + " must be true or false, not \"" + v + "\"");
    }

    private static JsonNode text(String s) {
        return JsonNodeFactory.instance.textNode(s);
    }

    private static Response json(int status, JsonNode body) {
        try {
            return new Response(status, JSON, Collections.emptyMap(), CorRestJson.mapper().writeValueAsBytes(body));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
