package dev.cor.ngsild.model;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.ld.LdContext;

/**
 * The temporal representations of an entity (ETSI GS CIM 009 § 4.5.7-4.5.9): the normalized one
 * (each attribute an array of its instances, each with its {@code instanceId}), its concise form,
 * and the simplified one ({@code temporalValues}: per attribute and datasetId, the pairs
 * {@code [value, time]}). The aggregated one is built by the caller into {@link Evolution#aggregated}.
 * Stateless; any thread.
 */
public final class TemporalRenderer {
    private TemporalRenderer() {
    }

    /** Which temporal representation. */
    public enum Form { NORMALIZED, CONCISE, TEMPORAL_VALUES, AGGREGATED }

    /**
     * One entity's evolution as it is to be shown.
     *
     * @param id         the entity id
     * @param types      its expanded types
     * @param scopes     its scopes
     * @param createdAt  when its history began (epoch ms)
     * @param modifiedAt when it last changed (epoch ms)
     * @param deletedAt  when it was deleted, or {@link TemporalInstance#NO_TIME}
     * @param attributes by expanded name, the instances to show, in the order to show them
     * @param aggregated by expanded name, the aggregated attribute (Form AGGREGATED), else empty
     * @param kinds      by expanded name, the kind of an attribute shown without instances (the answer's
     *                   bound cut them off), which the simplified form names; Property when missing
     */
    public record Evolution(String id, List<String> types, List<String> scopes, long createdAt, long modifiedAt,
            long deletedAt, Map<String, List<TemporalInstance>> attributes, Map<String, JsonNode> aggregated,
            Map<String, AttributeKind> kinds) {
    }

    /**
     * What to show: the form, whether system times are shown, which time the simplified form
     * pairs each value with, and which of id, type and scope (pick and omit may drop them).
     */
    public record Options(Form form, boolean sysAttrs, TimeProperty time, boolean showId, boolean showType,
            boolean showScope, List<String> lang) {
        public Options {
            Objects.requireNonNull(form, "form");
            Objects.requireNonNull(time, "time");
        }
    }

    /** The members that hold the pairs of an attribute of each kind in the simplified form (§ 4.5.9). */
    public static String valuesMember(AttributeKind kind) {
        return switch (kind) {
            case PROPERTY, GEO_PROPERTY -> "values";
            case RELATIONSHIP -> "objects";
            case LANGUAGE_PROPERTY -> "languageMaps";
            case LIST_PROPERTY -> "valueLists";
            case LIST_RELATIONSHIP -> "objectLists";
            case VOCAB_PROPERTY -> "vocabs";
            case JSON_PROPERTY -> "jsons";
        };
    }

    /** One evolution as a JSON document ({@code context}: the body's {@code @context}, or {@code null}). */
    public static byte[] render(Evolution e, LdContext ctx, Options o, JsonNode context) {
        return EntityRenderer.write(g -> entity(g, e, ctx, o, context));
    }

    /** Evolutions as a JSON array. */
    public static byte[] renderAll(List<Evolution> es, LdContext ctx, Options o, JsonNode context) {
        return EntityRenderer.write(g -> {
            g.writeStartArray();
            for (Evolution e : es) {
                entity(g, e, ctx, o, context);
            }
            g.writeEndArray();
        });
    }

    private static void entity(JsonGenerator g, Evolution e, LdContext ctx, Options o, JsonNode context) throws IOException {
        g.writeStartObject();
        if (o.showId()) {
            g.writeStringField("id", e.id());
        }
        if (o.showType() && !e.types().isEmpty()) {
            EntityRenderer.types(g, "type", e.types(), ctx);
        }
        if (o.showScope() && !e.scopes().isEmpty()) {
            EntityRenderer.strings(g, "scope", e.scopes());
        }
        if (o.form() == Form.AGGREGATED) {
            for (Map.Entry<String, JsonNode> a : e.aggregated().entrySet()) {
                g.writeFieldName(ctx.compactName(a.getKey()));
                g.writeTree(a.getValue());
            }
        } else {
            for (Map.Entry<String, List<TemporalInstance>> a : e.attributes().entrySet()) {
                g.writeFieldName(ctx.compactName(a.getKey()));
                if (o.form() == Form.TEMPORAL_VALUES) {
                    temporalValues(g, a.getValue(), e.kinds().getOrDefault(a.getKey(), AttributeKind.PROPERTY), ctx, o);
                } else {
                    instances(g, a.getValue(), ctx, o);
                }
            }
        }
        if (o.sysAttrs()) {
            g.writeStringField("createdAt", EntityRenderer.time(e.createdAt()));
            g.writeStringField("modifiedAt", EntityRenderer.time(e.modifiedAt()));
            if (e.deletedAt() != TemporalInstance.NO_TIME) {
                g.writeStringField("deletedAt", EntityRenderer.time(e.deletedAt()));
            }
        }
        if (context != null) {
            g.writeFieldName("@context");
            g.writeTree(context);
        }
        g.writeEndObject();
    }

    private static void instances(JsonGenerator g, List<TemporalInstance> instances, LdContext ctx, Options o)
            throws IOException {
        EntityRenderer.Options eo = new EntityRenderer.Options(o.form() == Form.CONCISE ? EntityRenderer.Format.CONCISE
                : EntityRenderer.Format.NORMALIZED, o.sysAttrs(), null, null, true, true, true, o.lang(), null);
        g.writeStartArray();
        for (TemporalInstance i : instances) {
            EntityRenderer.instance(g, i.value(), ctx, eo, out -> {
                if (i.instanceId() != null) {
                    out.writeStringField("instanceId", i.instanceId());
                }
                if (i.deleted()) {
                    out.writeStringField("deletedAt", EntityRenderer.time(i.deletedAt()));
                }
            });
        }
        g.writeEndArray();
    }

    /**
     * The value of a pair (§ 4.5.9): a Property's or GeoProperty's value, a Relationship's object,
     * a ListProperty's or ListRelationship's array as it is; a LanguageProperty's, JsonProperty's
     * and VocabProperty's wrapped in their member ({@code {"languageMap": ...}}), as the ETSI
     * suite's 020_12, 020_15 and 020_16 read them.
     */
    private static void pairValue(JsonGenerator g, Attribute a, LdContext ctx) throws IOException {
        switch (a.kind()) {
            case LIST_RELATIONSHIP -> g.writeTree(a.value());
            case LANGUAGE_PROPERTY, JSON_PROPERTY, VOCAB_PROPERTY -> {
                g.writeStartObject();
                g.writeFieldName(a.kind().valueMember());
                EntityRenderer.value(g, a, ctx);
                g.writeEndObject();
            }
            default -> EntityRenderer.value(g, a, ctx);
        }
    }

    /**
     * Per datasetId (in the order they first appear), {@code {type, <values member>: [[v, t], ...], datasetId}};
     * without instances (all past the cut), {@code {type, <values member>: []}} of {@code emptyKind}.
     */
    private static void temporalValues(JsonGenerator g, List<TemporalInstance> instances, AttributeKind emptyKind,
            LdContext ctx, Options o) throws IOException {
        if (instances.isEmpty()) {
            g.writeStartObject();
            g.writeStringField("type", emptyKind.typeName());
            g.writeArrayFieldStart(valuesMember(emptyKind));
            g.writeEndArray();
            g.writeEndObject();
            return;
        }
        Map<String, List<TemporalInstance>> byDataset = new LinkedHashMap<>();
        for (TemporalInstance i : instances) {
            byDataset.computeIfAbsent(i.value().datasetId() == null ? "" : i.value().datasetId(), k -> new ArrayList<>()).add(i);
        }
        if (byDataset.size() > 1) {
            g.writeStartArray();
        }
        for (Map.Entry<String, List<TemporalInstance>> d : byDataset.entrySet()) {
            List<TemporalInstance> l = d.getValue();
            AttributeKind kind = l.get(l.size() - 1).value().kind();
            g.writeStartObject();
            g.writeStringField("type", kind.typeName());
            g.writeArrayFieldStart(valuesMember(kind));
            for (TemporalInstance i : l) {
                g.writeStartArray();
                pairValue(g, i.value(), ctx);
                long t = i.time(o.time());
                if (o.time() == TimeProperty.OBSERVED_AT && i.value().observedAt() != null) {
                    g.writeString(i.value().observedAt());
                } else if (t != TemporalInstance.NO_TIME) {
                    g.writeString(EntityRenderer.time(t));
                } else {
                    g.writeNull();
                }
                g.writeEndArray();
            }
            g.writeEndArray();
            if (!d.getKey().isEmpty()) {
                g.writeStringField("datasetId", d.getKey());
            }
            g.writeEndObject();
        }
        if (byDataset.size() > 1) {
            g.writeEndArray();
        }
    }
}
