package dev.cor.ngsild.model;

import java.util.Map;
import java.util.Objects;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One instance of an attribute: its kind, its value, its metadata (datasetId, observedAt,
 * unitCode, objectType) and its sub-attributes, with the times the broker keeps. Immutable: a
 * write builds a new one. Names of sub-attributes are expanded IRIs; a vocab value is kept
 * expanded; every other value is kept as given.
 *
 * @param kind       what kind of attribute this is
 * @param value      the content of its value member ({@link AttributeKind#valueMember()})
 * @param datasetId  the instance's datasetId; {@code null} for the default instance
 * @param observedAt when it was observed (an ISO 8601 UTC date-time), or {@code null}
 * @param unitCode   its UN/CEFACT unit code, or {@code null}
 * @param valueType  the expanded datatype of a property's value ({@code valueType}), or {@code null}
 * @param objectType the expanded type(s) of a relationship's target ({@code objectType}), or {@code null}
 * @param sub        its sub-attributes, by expanded name
 * @param createdAt  when the broker created it (epoch milliseconds)
 * @param modifiedAt when the broker last changed it (epoch milliseconds)
 */
public record Attribute(AttributeKind kind, JsonNode value, String datasetId, String observedAt, String unitCode,
        JsonNode valueType, JsonNode objectType, Map<String, AttributeList> sub, long createdAt, long modifiedAt) {

    /** Kind and value are required; a missing {@code sub} is none. */
    public Attribute {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(value, "value");
        sub = sub == null ? Map.of() : sub;
    }
}
