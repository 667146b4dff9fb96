package dev.cor.ngsild.model;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One attribute instance as a request gave it, checked and with its names expanded, before it is
 * applied to an entity. In a patch (partial update, merge) members may be missing ({@code null})
 * and a member given as NGSI-LD Null asks for its removal ({@link #isNull} for the instance
 * itself; a {@link Syntax#NGSI_LD_NULL} text node for a metadata member; a {@code null} list for
 * a sub-attribute).
 *
 * @param kind       the kind, given or inferred; {@code null} in a patch that gives neither
 * @param value      the value member's content, normalized for the kind; {@code null} when absent
 * @param isNull     the whole instance is NGSI-LD Null: remove it
 * @param datasetId  the instance targeted ({@code null}: the default one)
 * @param observedAt {@code observedAt}, or {@code null}
 * @param unitCode   {@code unitCode}, or {@code null}
 * @param valueType  {@code valueType} (expanded), or {@code null}
 * @param objectType {@code objectType} (expanded), or {@code null}
 * @param sub        sub-attributes by expanded name; a {@code null} list removes that sub-attribute
 */
public record AttributeInput(AttributeKind kind, JsonNode value, boolean isNull, String datasetId, JsonNode observedAt,
        JsonNode unitCode, JsonNode valueType, JsonNode objectType, Map<String, List<AttributeInput>> sub) {
}
