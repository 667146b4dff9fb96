package dev.cor.ngsild.http;

import java.util.Map;

import dev.cor.ngsild.ld.JsonldContextsApi;

/**
 * The context-source operations (ETSI GS CIM 009 § 5.13; resources 6.27-6.30): list, add, serve
 * and delete the {@code @context}s the broker holds, answered by the {@code @context} service's
 * {@link JsonldContextsApi}. Their answers carry no {@code Link}: a context needs none.
 */
final class ContextOperations {
    private final JsonldContextsApi api;

    ContextOperations(JsonldContextsApi api) {
        this.api = api;
    }

    /** Whether the request may have to wait: a reload downloads. */
    boolean canWait(Exchange x) {
        return api.canWait(x.method(), x.params.asMap());
    }

    void run(Exchange x) {
        JsonldContextsApi.Response r = api.handle(x.method(), x.route.contextId(), x.params.asMap(),
                x.operation() == Operation.ADD_CONTEXT ? x.body : null, x.tenantGiven ? x.tenant : null, x.baseUrl());
        x.request.respond(r.status(), r.contentType(), r.body());
        for (Map.Entry<String, String> h : r.headers().entrySet()) {
            x.request.responseHeaders().set(h.getKey(), h.getValue());
        }
        x.echoTenant();
    }
}
