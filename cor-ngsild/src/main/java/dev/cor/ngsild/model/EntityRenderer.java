package dev.cor.ngsild.model;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.ld.LdContext;
import dev.cor.rest.CorRestJson;

/**
 * Writes entities for an answer (ETSI GS CIM 009 § 4.5): normalized, concise or simplified, as
 * NGSI-LD JSON or as GeoJSON (§ 4.5.16), every stored IRI compacted with the request's context,
 * broker times only with {@code sysAttrs}, a LanguageProperty reduced to one language with
 * {@code lang} (§ 4.15). Stateless: every method can be called from any thread.
 */
public final class EntityRenderer {
    /** The three representations (§ 6.3.7: {@code format} and {@code options}). */
    public enum Format { NORMALIZED, CONCISE, SIMPLIFIED }

    /**
     * What to render.
     *
     * @param format      the representation
     * @param sysAttrs    whether to show createdAt/modifiedAt
     * @param attrs       the expanded names of the attributes to show ({@code null}: all)
     * @param omit        the expanded names of the attributes to leave out ({@code null}: none)
     * @param showId      whether to show {@code id} (pick/omit may drop it)
     * @param showType    whether to show {@code type}
     * @param showScope   whether to show {@code scope}
     * @param lang        the language tags asked for by {@code lang}, in preference order ({@code null}: none asked)
     * @param geometry    the expanded name of the GeoProperty that is a GeoJSON Feature's geometry
     */
    public record Options(Format format, boolean sysAttrs, Set<String> attrs, Set<String> omit, boolean showId,
            boolean showType, boolean showScope, List<String> lang, String geometry) {

        /** The normalized representation of everything, nothing else asked. */
        public static Options normalized() {
            return new Options(Format.NORMALIZED, false, null, null, true, true, true, null, null);
        }

        /** Whether the attribute of this expanded name is shown. */
        public boolean shows(String attribute) {
            return (attrs == null || attrs.contains(attribute)) && (omit == null || !omit.contains(attribute));
        }
    }

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
            .withZone(ZoneOffset.UTC);
    private static final String NGSI_LD = "https://uri.etsi.org/ngsi-ld/";

    private EntityRenderer() {
    }

    /** The broker's date-time form: UTC, milliseconds, {@code Z}. */
    public static String time(long epochMillis) {
        return TIME.format(Instant.ofEpochMilli(epochMillis));
    }

    /**
     * One entity as a JSON document.
     *
     * @param context {@code null}, or the value of {@code @context} to put in the body (application/ld+json)
     */
    public static byte[] render(Entity e, LdContext ctx, Options o, JsonNode context) {
        return write(g -> entity(g, e, ctx, o, context));
    }

    /** One entity as a GeoJSON Feature (§ 4.5.16). */
    public static byte[] renderFeature(Entity e, LdContext ctx, Options o, JsonNode context) {
        return write(g -> feature(g, e, ctx, o, context));
    }

    /** Entities as a JSON array, or as a GeoJSON FeatureCollection. */
    public static byte[] renderAll(List<Entity> entities, LdContext ctx, Options o, JsonNode context, boolean geoJson) {
        return write(g -> {
            if (geoJson) {
                g.writeStartObject();
                g.writeStringField("type", "FeatureCollection");
                g.writeArrayFieldStart("features");
                for (Entity e : entities) {
                    feature(g, e, ctx, o, null);
                }
                g.writeEndArray();
                if (context != null) {
                    g.writeFieldName("@context");
                    g.writeTree(context);
                }
                g.writeEndObject();
            } else {
                g.writeStartArray();
                for (Entity e : entities) {
                    entity(g, e, ctx, o, context);
                }
                g.writeEndArray();
            }
        });
    }

    /** Writes into a generator: what {@link #write} renders, what {@link #instance} adds to an instance. */
    @FunctionalInterface
    interface Writer {
        void write(JsonGenerator g) throws IOException;
    }

    /** The bytes {@code w} writes, as one JSON document. */
    static byte[] write(Writer w) {
        try (ByteArrayBuilder out = new ByteArrayBuilder(512);
             JsonGenerator g = CorRestJson.mapper().getFactory().createGenerator(out)) {
            w.write(g);
            g.flush();
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException("rendering an entity", e);
        }
    }

    // ---------------------------------------------------------------- entities

    private static void entity(JsonGenerator g, Entity e, LdContext ctx, Options o, JsonNode context) throws IOException {
        g.writeStartObject();
        if (o.showId()) {
            g.writeStringField("id", e.id());
        }
        members(g, e, ctx, o);
        if (context != null) {
            g.writeFieldName("@context");
            g.writeTree(context);
        }
        g.writeEndObject();
    }

    /** What an entity and a Feature's properties share: type, scope, attributes, broker times. */
    private static void members(JsonGenerator g, Entity e, LdContext ctx, Options o) throws IOException {
        if (o.showType()) {
            types(g, "type", e.types(), ctx);
        }
        if (o.showScope() && !e.scopes().isEmpty()) {
            strings(g, "scope", e.scopes());
        }
        attributes(g, e.attributes(), ctx, o, true);
        if (o.sysAttrs()) {
            g.writeStringField("createdAt", time(e.createdAt()));
            g.writeStringField("modifiedAt", time(e.modifiedAt()));
        }
    }

    private static void feature(JsonGenerator g, Entity e, LdContext ctx, Options o, JsonNode context) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", e.id());
        g.writeStringField("type", "Feature");
        g.writeFieldName("geometry");
        AttributeList geo = e.attributes().get(o.geometry() != null ? o.geometry() : NGSI_LD + "location");
        Attribute gi = geo == null ? null : geo.instance(null) != null ? geo.instance(null) : geo.instances().get(0);
        if (gi != null && gi.kind() == AttributeKind.GEO_PROPERTY) {
            g.writeTree(gi.value());
        } else {
            g.writeNull();
        }
        g.writeObjectFieldStart("properties");
        members(g, e, ctx, o);
        g.writeEndObject();
        if (context != null) {
            g.writeFieldName("@context");
            g.writeTree(context);
        }
        g.writeEndObject();
    }

    private static void attributes(JsonGenerator g, Map<String, AttributeList> attrs, LdContext ctx, Options o,
            boolean top) throws IOException {
        for (Map.Entry<String, AttributeList> a : attrs.entrySet()) {
            if (top && !o.shows(a.getKey())) {
                continue;
            }
            g.writeFieldName(ctx.compactName(a.getKey()));
            List<Attribute> instances = a.getValue().instances();
            if (o.format() == Format.SIMPLIFIED) {
                simplified(g, instances, ctx, o);
            } else if (instances.size() == 1) {
                instance(g, instances.get(0), ctx, o);
            } else {
                g.writeStartArray();
                for (Attribute i : instances) {
                    instance(g, i, ctx, o);
                }
                g.writeEndArray();
            }
        }
    }

    // ---------------------------------------------------------------- normalized and concise

    private static void instance(JsonGenerator g, Attribute a, LdContext ctx, Options o) throws IOException {
        instance(g, a, ctx, o, null);
    }

    /**
     * One instance in the normalized or concise form; {@code extra} (or {@code null}) writes members
     * of its own before the object closes (a temporal instance's instanceId and deletedAt).
     */
    static void instance(JsonGenerator g, Attribute a, LdContext ctx, Options o, Writer extra) throws IOException {
        boolean concise = o.format() == Format.CONCISE;
        String lang = a.kind() == AttributeKind.LANGUAGE_PROPERTY && o.lang() != null ? pickLanguage(a.value(), o.lang()) : null;
        if (concise && extra == null && isBare(a, o)) {
            g.writeTree(a.value());
            return;
        }
        g.writeStartObject();
        if (lang != null) {
            // a LanguageProperty asked in one language is answered as a Property in it (§ 4.15)
            if (!concise) {
                g.writeStringField("type", AttributeKind.PROPERTY.typeName());
            }
            g.writeFieldName("value");
            g.writeTree(a.value().get(lang));
            g.writeStringField("lang", lang);
        } else {
            if (!concise) {
                g.writeStringField("type", a.kind().typeName());
            }
            g.writeFieldName(a.kind().valueMember());
            value(g, a, ctx);
        }
        if (a.datasetId() != null) {
            g.writeStringField("datasetId", a.datasetId());
        }
        if (a.observedAt() != null) {
            g.writeStringField("observedAt", a.observedAt());
        }
        if (a.unitCode() != null) {
            g.writeStringField("unitCode", a.unitCode());
        }
        if (a.valueType() != null) {
            g.writeFieldName("valueType");
            compactedTerms(g, a.valueType(), ctx);
        }
        if (a.objectType() != null) {
            g.writeFieldName("objectType");
            compactedTerms(g, a.objectType(), ctx);
        }
        for (Map.Entry<String, AttributeList> s : a.sub().entrySet()) {
            g.writeFieldName(ctx.compactName(s.getKey()));
            List<Attribute> instances = s.getValue().instances();
            if (instances.size() == 1) {
                instance(g, instances.get(0), ctx, o);
            } else {
                g.writeStartArray();
                for (Attribute i : instances) {
                    instance(g, i, ctx, o);
                }
                g.writeEndArray();
            }
        }
        if (o.sysAttrs()) {
            g.writeStringField("createdAt", time(a.createdAt()));
            g.writeStringField("modifiedAt", time(a.modifiedAt()));
        }
        if (extra != null) {
            extra.write(g);
        }
        g.writeEndObject();
    }

    /** Whether the concise form of an instance is its bare value: nothing else to say, and no doubt on reading it back. */
    private static boolean isBare(Attribute a, Options o) {
        if (a.datasetId() != null || a.observedAt() != null || a.unitCode() != null || a.valueType() != null
                || !a.sub().isEmpty() || o.sysAttrs()) {
            return false;
        }
        return switch (a.kind()) {
            case PROPERTY -> a.value().isValueNode();
            case GEO_PROPERTY -> true;
            default -> false;
        };
    }

    /** The value member's content of {@code a}, as the normalized form writes it (terms compacted). */
    static void value(JsonGenerator g, Attribute a, LdContext ctx) throws IOException {
        switch (a.kind()) {
            case VOCAB_PROPERTY -> compactedTerms(g, a.value(), ctx);
            case LIST_RELATIONSHIP -> {
                // {"object": URI} entries in both: the concise form may drop them (4.5.22.3), but they
                // keep an entry readable as a Relationship wherever the array ends up
                g.writeStartArray();
                for (JsonNode uri : a.value()) {
                    g.writeStartObject();
                    g.writeStringField("object", uri.asText());
                    g.writeEndObject();
                }
                g.writeEndArray();
            }
            default -> g.writeTree(a.value());
        }
    }

    // ---------------------------------------------------------------- simplified

    private static void simplified(JsonGenerator g, List<Attribute> instances, LdContext ctx, Options o) throws IOException {
        if (instances.size() == 1) {
            simplifiedValue(g, instances.get(0), ctx, o);
            return;
        }
        // several instances: {"dataset": {"@none": v, "<datasetId>": v}} (§ 4.5.4)
        g.writeStartObject();
        g.writeObjectFieldStart("dataset");
        for (Attribute i : instances) {
            g.writeFieldName(i.datasetId() == null ? "@none" : i.datasetId());
            simplifiedValue(g, i, ctx, o);
        }
        g.writeEndObject();
        g.writeEndObject();
    }

    private static void simplifiedValue(JsonGenerator g, Attribute a, LdContext ctx, Options o) throws IOException {
        switch (a.kind()) {
            case PROPERTY, GEO_PROPERTY, RELATIONSHIP, LIST_PROPERTY, LIST_RELATIONSHIP -> g.writeTree(a.value());
            case LANGUAGE_PROPERTY -> {
                String lang = o.lang() != null ? pickLanguage(a.value(), o.lang()) : null;
                if (lang != null) {
                    g.writeTree(a.value().get(lang));
                } else {
                    g.writeStartObject();
                    g.writeFieldName("languageMap");
                    g.writeTree(a.value());
                    g.writeEndObject();
                }
            }
            case VOCAB_PROPERTY -> {
                g.writeStartObject();
                g.writeFieldName("vocab");
                compactedTerms(g, a.value(), ctx);
                g.writeEndObject();
            }
            case JSON_PROPERTY -> {
                g.writeStartObject();
                g.writeFieldName("json");
                g.writeTree(a.value());
                g.writeEndObject();
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    /**
     * The language of a languageMap to answer with (§ 4.15, RFC 4647 lookup): for each range asked,
     * best first, a tag equal to it, then one it is a prefix of ({@code en} takes {@code en-US}),
     * then the range cut back subtag by subtag ({@code nl-BE} takes {@code nl}); {@code *} takes
     * any. Without a match: the one without a language ({@code @none}), else the first.
     */
    static String pickLanguage(JsonNode languageMap, List<String> asked) {
        for (String range : asked) {
            if (range.equals("*")) {
                return languageMap.properties().iterator().next().getKey();
            }
            for (String r = range; !r.isEmpty(); r = r.lastIndexOf('-') > 0 ? r.substring(0, r.lastIndexOf('-')) : "") {
                String prefix = r + "-";
                String extended = null;
                for (Map.Entry<String, JsonNode> e : languageMap.properties()) {
                    String tag = e.getKey();
                    if (tag.equalsIgnoreCase(r)) {
                        return tag;
                    }
                    if (extended == null && tag.regionMatches(true, 0, prefix, 0, prefix.length())) {
                        extended = tag;
                    }
                }
                if (extended != null && r.equals(range)) {
                    return extended;
                }
            }
        }
        if (languageMap.has("@none")) {
            return "@none";
        }
        return languageMap.properties().iterator().next().getKey();
    }

    static void types(JsonGenerator g, String field, List<String> types, LdContext ctx) throws IOException {
        if (types.size() == 1) {
            g.writeStringField(field, ctx.compactIri(types.get(0)));
            return;
        }
        g.writeArrayFieldStart(field);
        for (String t : types) {
            g.writeString(ctx.compactIri(t));
        }
        g.writeEndArray();
    }

    static void strings(JsonGenerator g, String field, List<String> values) throws IOException {
        if (values.size() == 1) {
            g.writeStringField(field, values.get(0));
            return;
        }
        g.writeArrayFieldStart(field);
        for (String v : values) {
            g.writeString(v);
        }
        g.writeEndArray();
    }

    private static void compactedTerms(JsonGenerator g, JsonNode iris, LdContext ctx) throws IOException {
        if (iris.isArray()) {
            g.writeStartArray();
            for (JsonNode i : iris) {
                g.writeString(ctx.compactIri(i.asText()));
            }
            g.writeEndArray();
        } else {
            g.writeString(ctx.compactIri(iris.asText()));
        }
    }
}
