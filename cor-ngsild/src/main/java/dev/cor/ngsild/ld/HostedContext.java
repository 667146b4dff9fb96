package dev.cor.ngsild.ld;

import java.util.Objects;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A Hosted {@code @context} as a {@link ContextKeeper} keeps it: its local id, the tenant it was
 * added under ({@code null} for the default one), its {@code @context} value and when it was
 * added. Immutable; the value is never changed after the context is hosted.
 */
public record HostedContext(String id, String tenant, JsonNode context, long createdAt) {
    public HostedContext {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(context, "context");
    }
}
