package dev.cor.ngsild.model;

import java.util.List;
import java.util.Map;

/**
 * An entity or an entity fragment as a request gave it, checked and expanded.
 *
 * @param id         the entity id, or {@code null} when the body gave none (a fragment)
 * @param types      the expanded types, or {@code null} when the body gave none
 * @param scopes     the scopes, or {@code null} when the body gave none
 * @param attributes the attributes by expanded name, in the order given; a {@code null} list is an
 *                   attribute given as NGSI-LD Null (remove it)
 */
public record EntityInput(String id, List<String> types, List<String> scopes,
        Map<String, List<AttributeInput>> attributes) {

    /** Whether it names nothing to write: no attribute, no type, no scope (an id, an @context and system members aside). */
    public boolean writesNothing() {
        return types == null && scopes == null && attributes.isEmpty();
    }
}
