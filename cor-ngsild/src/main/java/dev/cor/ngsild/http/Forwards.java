package dev.cor.ngsild.http;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.EntityMerge;
import dev.cor.ngsild.federation.Forwarder;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.ContextRef;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.rest.CorRestJson;
import dev.cor.rest.CorRestState;
import dev.cor.rest.client.CorRestClientRequest;

/**
 * The forwards of the distributed operations (ETSI GS CIM 009 § 4.3.6): each request to a context
 * source built as § 4.3.6.4-4.3.6.6 want it - the registration's endpoint under
 * {@code /ngsi-ld/v1/}, its contextSourceInfo as headers (§ 4.3.6.5), its tenant, {@code Via}
 * (§ 4.3.6.4), {@code local=true} for a {@code localOnly} registration (§ 5.2.34), names and types
 * written in the registration's {@code @context}, a write's body in the format the registration
 * asks for (§ 4.3.6.6) - and the fan-out that sends them all at once through the {@link Forwarder}
 * (started together, awaited together), with the request's forward-depth guard held and each
 * failing source's NGSILD-Warning put on the answer (§ 6.3.17). A source's entity is read here too
 * ({@link #entityOf}). Used by {@link DistributedReads}, {@link DistributedWrites},
 * {@link DistributedBatches} and, for the copies of subscriptions at their sources (§ 5.8.1.4),
 * {@link RemoteSubscriptions}. Stateless; one per application, shared by every loop and worker:
 * what a request learns (its warnings) goes on its {@link Exchange}.
 */
final class Forwards {
    private static final System.Logger LOG = System.getLogger(Forwards.class.getName());
    /** The NGSILD-Warning header (§ 6.3.17). */
    static final String WARNING_HEADER = "NGSILD-Warning";

    private final Config config;
    private final Forwarder forwarder;

    Forwards(Config config, Forwarder forwarder) {
        this.config = config;
        this.forwarder = forwarder;
    }

    /** The forwarder the forwards go through: its warnings, its via and timeouts. */
    Forwarder forwarder() {
        return forwarder;
    }

    // ---------------------------------------------------------------- sending

    /** Sends the forwards with the request's forward-depth guard held, and puts each failure's warning on the answer. */
    List<Forwarder.Answer> fanOut(Exchange x, List<Forwarder.Outgoing> outs) {
        if (outs.isEmpty()) {
            return List.of();
        }
        CorRestState state = x.request.state();
        if (!state.enterForward(CorRestState.DEFAULT_MAX_FORWARD_DEPTH)) {
            List<Forwarder.Answer> none = new ArrayList<>(outs.size());
            for (Forwarder.Outgoing o : outs) {
                Forwarder.Answer a = new Forwarder.Answer(o.registration(), 0, null,
                        forwarder.warning(199, o.registration(), "not asked: forwards nested too deep (a loop)"));
                warn(x, a);
                none.add(a);
            }
            return none;
        }
        try {
            List<Forwarder.Answer> answers = forwarder.send(outs);
            for (Forwarder.Answer a : answers) {
                if (a.warning() != null) {
                    warn(x, a);
                }
            }
            return answers;
        } finally {
            state.exitForward();
        }
    }

    static void warn(Exchange x, Forwarder.Answer a) {
        x.request.responseHeaders().add(WARNING_HEADER, a.warning());
    }

    /** A source's entity read with its registration's context; {@code null} (and a 111 warning) if it is none. */
    Entity entityOf(Exchange x, Forwarder.Answer a, JsonNode json) {
        try {
            return EntityMerge.fromSource(json, a.registration().context(), config.limits());
        } catch (NgsiLdException | IllegalArgumentException | NullPointerException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "cor-ngsild: the source of registration " + a.registration().id()
                    + " answered what is not an NGSI-LD entity: " + e.getMessage());
            warn(x, forwarder.invalid(a, "answered what is not an NGSI-LD entity"));
            return null;
        }
    }

    // ---------------------------------------------------------------- building: the request, its headers, its query

    /**
     * The forward of a read to {@code r}: {@code GET {endpoint}/ngsi-ld/v1/{path}?{query}} with
     * the system attributes (§ 4.5.5.3 compares them), {@code local=true} when the registration
     * is {@code localOnly} (§ 5.2.34), the registration's {@code contextSourceInfo} as headers
     * (§ 4.3.6.5), its tenant, the {@code @context} it was made with, and {@code Via}.
     */
    CorRestClientRequest request(Exchange x, Registration r, String method, String path, StringBuilder query,
            byte[] body) {
        return request(x, r, method, path, query, body, true);
    }

    /** {@link #request}, asking for the system attributes only when {@code sysAttrs}: a merge compares them, a relay does not. */
    CorRestClientRequest request(Exchange x, Registration r, String method, String path, StringBuilder query,
            byte[] body, boolean sysAttrs) {
        return request(x, r, method, path, query, body, sysAttrs, r.context());
    }

    /** {@link #request} with the {@code @context} {@code ctx} linked instead of the registration's. */
    CorRestClientRequest request(Exchange x, Registration r, String method, String path, StringBuilder query,
            byte[] body, boolean sysAttrs, LdContext ctx) {
        if (sysAttrs) {
            param(query, "options", "sysAttrs");
        }
        if (localOnly(r)) {
            param(query, "local", "true");
        }
        String url = r.endpoint() + NgsildApplication.BASE_PATH + path + (query.isEmpty() ? "" : "?" + query);
        CorRestClientRequest.Builder b = CorRestClientRequest.builder(method, url).timeoutMs(forwarder.timeoutMs(r));
        headers(x, r, b);
        if (body != null) {
            b.header("Content-Type", "application/json").body(body);
        }
        String accept = sourceInfo(r, "accept");
        // § 4.3.6.6: the registered format - when it is one this broker reads back (JSON or JSON-LD)
        b.header("Accept", accept != null && (accept.startsWith("application/json") || accept.startsWith("application/ld+json"))
                ? accept : "application/json");
        if (ctx != null && !ctx.isCore()) {
            b.header("Link", "<" + config.contexts().linkUrlFor(ctx, x.baseUrl(), x.tenantGiven ? x.tenant : null)
                    + ">; rel=\"" + ContextRef.LINK_REL + "\"; type=\"application/ld+json\"");
        }
        return b.build();
    }

    /** What every forward carries: contextSourceInfo (§ 4.3.6.5), the source's tenant, and Via (§ 4.3.6.4). */
    void headers(Exchange x, Registration r, CorRestClientRequest.Builder b) {
        for (var kv : r.contextSourceInfo().entrySet()) {
            String key = kv.getKey();
            String value = kv.getValue();
            if (key.equalsIgnoreCase("jsonldContext") || key.equalsIgnoreCase("contentType")
                    || key.equalsIgnoreCase("accept") || key.equalsIgnoreCase("Content-Length")
                    || key.equalsIgnoreCase("Host") || key.equalsIgnoreCase(Exchange.TENANT_HEADER)
                    || key.equalsIgnoreCase("Via") || key.equalsIgnoreCase("Link")) {
                continue; // § 4.3.6.5: what sets up the connection, or the tenant, is not theirs to set
            }
            if (value.equals("urn:ngsi-ld:request")) {
                value = x.headers().get(key); // § 4.3.6.5: taken from the request that caused the forward
                if (value == null) {
                    continue;
                }
            }
            if (key.equalsIgnoreCase("Content-Type")) {
                continue; // the body's type is the forward's (contentType, § 4.3.6.6)
            }
            b.header(key, value);
        }
        if (r.sourceTenant() != null) {
            b.header(Exchange.TENANT_HEADER, r.sourceTenant());
        }
        b.header("Via", forwarder.via(x.headers().getAll("Via")));
    }

    /** {@code management.localOnly} of the registration as given (§ 5.2.34), under either spelling of its names. */
    static boolean localOnly(Registration r) {
        JsonNode doc = r.document();
        if (doc == null) {
            return false;
        }
        for (String m : List.of("management", "https://uri.etsi.org/ngsi-ld/management")) {
            JsonNode mg = doc.get(m);
            if (mg != null) {
                for (String l : List.of("localOnly", "https://uri.etsi.org/ngsi-ld/localOnly")) {
                    JsonNode v = mg.get(l);
                    if (v != null && (v.asBoolean(false) || v.path("@value").asBoolean(false))) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    static void param(StringBuilder q, String name, String value) {
        if (value == null || value.isEmpty()) {
            return;
        }
        if (!q.isEmpty()) {
            q.append('&');
        }
        q.append(name).append('=').append(PercentEncoding.encode(value));
    }

    /**
     * The Query (5.2.23) of a forward to a source that takes only {@code POST /entityOperations/query}:
     * an EntitySelector per id (or one of the pattern, or of the types alone), the attributes, and -
     * {@code filters} non-null when the registration's context is the request's - q, scopeQ and the geo-query.
     */
    static byte[] queryBody(Registration r, Set<String> types, List<String> ids, String idPattern,
            Set<String> attrs, QueryParams filters) {
        ObjectNode query = JsonNodeFactory.instance.objectNode();
        query.put("type", "Query");
        String type = compactTypes(r, types);
        if (type != null) {
            var entities = query.putArray("entities");
            if (ids.isEmpty()) {
                ObjectNode sel = entities.addObject().put("type", type);
                if (idPattern != null) {
                    sel.put("idPattern", idPattern);
                }
            } else {
                for (String id : ids) {
                    entities.addObject().put("id", id).put("type", type);
                }
            }
        }
        if (attrs != null) {
            var an = query.putArray("attrs");
            for (String iri : attrs) {
                an.add(compactNames(r, Set.of(iri)));
            }
        }
        if (filters != null) {
            for (String p : List.of("q", "scopeQ")) {
                if (filters.get(p) != null) {
                    query.put(p, filters.get(p));
                }
            }
            if (filters.get("georel") != null) {
                ObjectNode geo = query.putObject("geoQ");
                geo.put("georel", filters.get("georel"));
                geo.put("geometry", filters.get("geometry"));
                try {
                    geo.set("coordinates", CorRestJson.mapper().readTree(filters.get("coordinates")));
                } catch (java.io.IOException | RuntimeException e) {
                    geo.put("coordinates", filters.get("coordinates"));
                }
                if (filters.get("geoproperty") != null) {
                    geo.put("geoproperty", filters.get("geoproperty"));
                }
            }
        }
        return query.toString().getBytes(StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- distributed subscriptions (§ 5.8.1.4)

    /**
     * The forward of a subscription request to {@code r} - {@code method {endpoint}/ngsi-ld/v1/{path}}
     * with {@code body} (JSON, compacted with {@code ctx}, which the request links) - as every
     * forward goes (tenant, contextSourceInfo, Via, the registration's timeout).
     */
    Forwarder.Outgoing subscriptionForward(Exchange x, Registration r, String method, String path, byte[] body, LdContext ctx) {
        return new Forwarder.Outgoing(r, request(x, r, method, path, new StringBuilder(), body, false, ctx));
    }

    /** Sends forwards made by {@link #subscriptionForward}, all at once; their answers in order. */
    List<Forwarder.Answer> send(Exchange x, List<Forwarder.Outgoing> outs) {
        return fanOut(x, outs);
    }

    // ---------------------------------------------------------------- a write's body (§ 4.3.6.6)

    /**
     * A write forward's body, its Content-Type and its {@code @context}, as the registration's
     * contextSourceInfo asks (§ 4.3.6.6): {@code jsonldContext} - the body recompacted with that
     * context, linked, as {@code application/json} with no {@code @context} member;
     * {@code contentType} {@code application/ld+json} - the context inline in the body, no Link;
     * {@code application/json} - the context linked, none in the body. Otherwise as the request
     * came: its body in its terms, its Link, its Content-Type. {@code body} may be {@code null}.
     *
     * <p>A batch in {@code application/ld+json} has no request context: each entity carries its own
     * {@code @context} ({@code contextOf} gives the one an item is read with), and a batch delete's
     * ids carry none. Such a batch goes on as it came in ld+json; in {@code application/json} no one
     * Link could name every entity's context, so each entity is written in the core context's terms.
     */
    void writeBody(Exchange x, Registration r, CorRestClientRequest.Builder b, JsonNode body, boolean attributePath,
            java.util.function.Function<JsonNode, LdContext> contextOf) {
        boolean ownContexts = x.context == null;
        String jsonld = sourceInfo(r, "jsonldContext");
        String type = sourceInfo(r, "contentType");
        String link = x.headers().get("Link");
        String linkOf = "<%s>; rel=\"" + ContextRef.LINK_REL + "\"; type=\"application/ld+json\"";
        if (jsonld != null) {
            b.header("Link", linkOf.formatted(jsonld));
            if (body != null) {
                LdContext target = config.contexts().resolve(ContextRef.link(jsonld));
                body = attributePath ? withoutContext(body) : recompact(body, contextOf, target);
                b.header("Content-Type", "application/json").body(body.toString().getBytes(StandardCharsets.UTF_8));
            }
            return;
        }
        boolean ld = type != null ? type.toLowerCase(java.util.Locale.ROOT).startsWith("application/ld+json")
                : x.contentType == MediaType.LD_JSON;
        if (ld && body != null) {
            if (!ownContexts) {
                JsonNode ctx = x.body != null && x.body.isObject() && x.body.has("@context") ? x.body.get("@context") : x.context.echo();
                body = withContext(body, ctx);
            }
            b.header("Content-Type", "application/ld+json").body(body.toString().getBytes(StandardCharsets.UTF_8));
            return;
        }
        if (ownContexts) {
            if (body != null) {
                body = recompact(body, contextOf, config.contexts().core());
                b.header("Content-Type", "application/json").body(body.toString().getBytes(StandardCharsets.UTF_8));
            }
            return;
        }
        if (link != null) {
            b.header("Link", link); // the body is written in the request's terms
        } else if (x.body != null && x.body.isObject() && x.body.get("@context") instanceof JsonNode inline && inline.isTextual()) {
            b.header("Link", linkOf.formatted(inline.asText()));
        }
        if (body != null) {
            b.header("Content-Type", "application/json").body(withoutContext(body).toString().getBytes(StandardCharsets.UTF_8));
        }
    }

    /** A contextSourceInfo value by its key, whatever its case, or {@code null}. */
    private static String sourceInfo(Registration r, String key) {
        for (var kv : r.contextSourceInfo().entrySet()) {
            if (kv.getKey().equalsIgnoreCase(key)) {
                return kv.getValue();
            }
        }
        return null;
    }

    private static JsonNode withoutContext(JsonNode body) {
        if (body.isObject() && body.has("@context")) {
            ObjectNode o = ((ObjectNode) body).deepCopy();
            o.remove("@context");
            return o;
        }
        if (body.isArray()) {
            var out = JsonNodeFactory.instance.arrayNode();
            body.forEach(e -> out.add(withoutContext(e)));
            return out;
        }
        return body;
    }

    private static JsonNode withContext(JsonNode body, JsonNode ctx) {
        if (body.isObject()) {
            ObjectNode o = ((ObjectNode) body).deepCopy();
            o.set("@context", ctx);
            return o;
        }
        if (body.isArray()) {
            var out = JsonNodeFactory.instance.arrayNode();
            body.forEach(e -> out.add(withContext(e, ctx)));
            return out;
        }
        return body;
    }

    /** Entities written in their own context's terms ({@code contextOf}), their attribute names and types written in {@code to}'s, without {@code @context}. */
    private static JsonNode recompact(JsonNode body, java.util.function.Function<JsonNode, LdContext> contextOf, LdContext to) {
        if (body.isArray()) {
            var out = JsonNodeFactory.instance.arrayNode();
            body.forEach(e -> out.add(recompact(e, contextOf, to)));
            return out;
        }
        if (!body.isObject()) {
            return body;
        }
        LdContext from = contextOf.apply(body);
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        for (var m : body.properties()) {
            String key = m.getKey();
            switch (key) {
                case "@context" -> { }
                case "type", "@type" -> out.set(key, m.getValue().isTextual()
                        ? JsonNodeFactory.instance.textNode(to.compactIri(expandType(from, m.getValue().asText())))
                        : m.getValue());
                default -> {
                    if (dev.cor.ngsild.model.EntityParser.isEntityMember(key)) {
                        out.set(key, m.getValue());
                    } else {
                        String iri = from.expand(key);
                        out.set(iri == null ? key : to.compactName(iri), m.getValue());
                    }
                }
            }
        }
        return out;
    }

    private static String expandType(LdContext ctx, String term) {
        String iri = ctx.expand(term);
        return iri == null ? term : iri;
    }

    // ---------------------------------------------------------------- names in a registration's terms

    static String compactTypes(Registration r, Set<String> types) {
        return compact(r, types, true);
    }

    static String compactNames(Registration r, Set<String> iris) {
        return compact(r, iris, false);
    }

    /** Names or types as the registration's context writes them (the forward carries that context). */
    private static String compact(Registration r, Set<String> iris, boolean types) {
        if (iris == null || iris.isEmpty()) {
            return null;
        }
        StringBuilder b = new StringBuilder();
        for (String iri : iris) {
            if (!b.isEmpty()) {
                b.append(',');
            }
            b.append(r.context() == null ? iri : types ? r.context().compactIri(iri) : r.context().compactName(iri));
        }
        return b.toString();
    }
}
