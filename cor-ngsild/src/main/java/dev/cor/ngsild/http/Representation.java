package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.EntityRenderer.Format;
import dev.cor.ngsild.model.EntityRenderer;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.query.LinkedEntities;

/**
 * What a read asks to see (ETSI GS CIM 009 § 6.3.7, § 4.15, § 4.21): the representation from
 * {@code format} or {@code options}, {@code sysAttrs}, the attributes from {@code attrs},
 * {@code pick} and {@code omit}, the instances of {@code datasetId}, the languages of {@code lang},
 * the GeoJSON geometry. Parsed
 * once per request into {@link EntityRenderer.Options}; every malformed part is a
 * BadRequestData naming it.
 */
final class Representation {
    private static final Set<String> CORE_MEMBERS = Set.of("id", "type", "scope");

    final EntityRenderer.Options options;
    /** The members {@code pick} named ({@code null}: no pick): at least one must be there. */
    private final Set<String> picked;
    private final boolean omits;
    /** The instances {@code datasetId} keeps ({@code null} in it: the default instance), or {@code null}: all. */
    private final Set<String> datasetIds;
    /** How a join shows the entities reached through a relationship (by its expanded name) that pick or omit brace. */
    final Map<String, LinkedEntities.Shape> linked;

    private Representation(EntityRenderer.Options options, Set<String> picked, boolean omits, Set<String> datasetIds,
            Map<String, LinkedEntities.Shape> linked) {
        this.options = options;
        this.picked = picked;
        this.omits = omits;
        this.datasetIds = datasetIds;
        this.linked = linked;
    }

    /** Whether {@code datasetId} narrows the instances shown: the rendered bytes are then not the record's own. */
    boolean selectsInstances() {
        return datasetIds != null;
    }

    /**
     * {@code e} with only the attribute instances {@code datasetId} names (§ 4.5.5; {@code @none}:
     * the default instance), an attribute left with none dropped; {@code e} itself without it.
     */
    Entity instances(Entity e) {
        if (datasetIds == null) {
            return e;
        }
        java.util.Map<String, AttributeList> kept = new java.util.LinkedHashMap<>();
        for (java.util.Map.Entry<String, AttributeList> a : e.attributes().entrySet()) {
            List<Attribute> is = new ArrayList<>(a.getValue().size());
            for (Attribute i : a.getValue().instances()) {
                if (datasetIds.contains(i.datasetId())) {
                    is.add(i);
                }
            }
            if (!is.isEmpty()) {
                kept.put(a.getKey(), AttributeList.of(is));
            }
        }
        return new Entity(e.id(), e.types(), e.scopes(), java.util.Collections.unmodifiableMap(kept), e.createdAt(),
                e.modifiedAt());
    }

    /** The datasetIds of {@code datasetId} ({@code @none}: the default instance, as {@code null}). */
    private static Set<String> datasetIds(QueryParams p) {
        if (!p.has("datasetId")) {
            return null;
        }
        Set<String> ids = new HashSet<>();
        for (String d : p.list("datasetId")) {
            if (d.equals("@none")) {
                ids.add(null);
            } else if (Syntax.isUri(d)) {
                ids.add(d);
            } else {
                throw NgsiLdException.badData("datasetId '" + d + "' is neither a URI nor @none");
            }
        }
        return ids;
    }

    static Representation of(QueryParams p, EntityParser parser) {
        Format format = null;
        boolean sysAttrs = false;
        for (String o : p.list("options")) {
            Format f = switch (o) {
                case "keyValues", "simplified" -> Format.SIMPLIFIED;
                case "concise" -> Format.CONCISE;
                case "normalized" -> Format.NORMALIZED;
                case "sysAttrs", "count" -> null; // count: Orion-LD's spelling of count=true, a query's (EntityOperations)
                default -> throw NgsiLdException.invalid("unknown option '" + o + "' (keyValues, simplified, concise,"
                        + " normalized, sysAttrs, count)");
            };
            if (o.equals("sysAttrs")) {
                sysAttrs = true;
            } else if (o.equals("count")) {
                continue;
            } else if (format != null && format != f) {
                throw NgsiLdException.invalid("options asks for two representations at once: " + p.get("options"));
            } else {
                format = f;
            }
        }
        String fmt = p.get("format");
        if (fmt != null) {
            format = switch (fmt) {
                case "keyValues", "simplified" -> Format.SIMPLIFIED;
                case "concise" -> Format.CONCISE;
                case "normalized" -> Format.NORMALIZED;
                default -> throw NgsiLdException.invalid("unknown format '" + fmt + "' (normalized, concise, simplified,"
                        + " keyValues)");
            };
        }
        if (format == null) {
            format = Format.NORMALIZED;
        }
        boolean hasAttrs = p.has("attrs");
        if (hasAttrs && (p.has("pick") || p.has("omit"))) {
            throw NgsiLdException.badData("attrs cannot be combined with pick or omit");
        }
        Set<String> attrs = null;
        if (hasAttrs) {
            attrs = new HashSet<>();
            for (String a : p.list("attrs")) {
                attrs.add(parser.attributeName(a));
            }
        }
        Projection pickTree = p.has("pick") ? parseProjection("pick", p.get("pick")) : null;
        Projection omitTree = p.has("omit") ? parseProjection("omit", p.get("omit")) : null;
        Set<String> pick = pickTree == null ? null : pickTree.members();
        Set<String> omit = null;
        if (omitTree != null) {
            // a braced member is omitted inside the entities it links to, not itself (the suite's 019_21_03)
            omit = new LinkedHashSet<>(omitTree.members());
            omit.removeAll(omitTree.nested().keySet());
        }
        if (pick != null && omit != null) {
            for (String m : pick) {
                if (omit.contains(m)) {
                    throw NgsiLdException.badData("'" + m + "' is both picked and omitted");
                }
            }
        }
        boolean showId = true;
        boolean showType = true;
        boolean showScope = true;
        Set<String> pickedAttrs = null;
        if (pick != null) {
            showId = pick.contains("id");
            showType = pick.contains("type");
            showScope = pick.contains("scope");
            pickedAttrs = names(pick, parser);
            attrs = pickedAttrs;
        }
        Set<String> omitted = null;
        if (omit != null && !omit.isEmpty()) {
            showId &= !omit.contains("id");
            showType &= !omit.contains("type");
            showScope &= !omit.contains("scope");
            omitted = names(omit, parser);
        }
        List<String> lang = p.has("lang") ? languages(p.get("lang")) : null;
        String geometry = p.has("geometryProperty") ? parser.attributeName(p.get("geometryProperty")) : null;
        Set<String> picked = null;
        if (pick != null) {
            picked = new HashSet<>(pickedAttrs);
            for (String m : CORE_MEMBERS) {
                if (pick.contains(m)) {
                    picked.add(m);
                }
            }
        }
        EntityRenderer.Options options = new EntityRenderer.Options(format, sysAttrs, attrs, omitted, showId, showType,
                showScope, lang, geometry);
        return new Representation(options, picked, omit != null, datasetIds(p),
                linked(pickTree == null ? Map.of() : pickTree.nested(), omitTree == null ? Map.of() : omitTree.nested(),
                        options, parser));
    }

    /**
     * How the entities a join reaches through each relationship are shown (§ 4.21 with § 4.5.23):
     * by relationship (expanded name), the nested pick and omit of that relationship's member; a
     * relationship neither names shows its entities whole. Empty without braces.
     */
    private static Map<String, LinkedEntities.Shape> linked(Map<String, Projection> picks, Map<String, Projection> omits,
            EntityRenderer.Options outer, EntityParser parser) {
        Map<String, LinkedEntities.Shape> out = new java.util.HashMap<>();
        Set<String> names = new LinkedHashSet<>(picks.keySet());
        names.addAll(omits.keySet());
        for (String n : names) {
            Projection pick = picks.get(n);
            Projection omit = omits.get(n);
            Set<String> attrs = pick == null ? null : names(pick.members(), parser);
            Set<String> omitted = omit == null ? null : names(omit.members(), parser);
            boolean showId = (pick == null || pick.members().contains("id")) && (omit == null || !omit.members().contains("id"));
            boolean showType = (pick == null || pick.members().contains("type"))
                    && (omit == null || !omit.members().contains("type"));
            boolean showScope = (pick == null || pick.members().contains("scope"))
                    && (omit == null || !omit.members().contains("scope"));
            EntityRenderer.Options o = new EntityRenderer.Options(outer.format(), outer.sysAttrs(), attrs, omitted, showId,
                    showType, showScope, outer.lang(), null);
            out.put(parser.attributeName(n), new LinkedEntities.Shape(o, linked(pick == null ? Map.of() : pick.nested(),
                    omit == null ? Map.of() : omit.nested(), outer, parser)));
        }
        return out;
    }

    /**
     * Whether anything of {@code e} is left to show after pick and omit (§ 4.21: nothing left is
     * ResourceNotFound), or - with attrs - whether it has any of the attributes asked for.
     */
    boolean showsAnything(Entity e) {
        EntityRenderer.Options o = options;
        if (picked == null && !omits) {
            if (o.attrs() == null) {
                return true;
            }
            // attrs names attributes of which the entity has none: nothing asked for is there (5.7.1.4)
            for (String a : o.attrs()) {
                if (e.attributes().containsKey(a)) {
                    return true;
                }
            }
            return false;
        }
        if (o.showId() || o.showType() || (o.showScope() && !e.scopes().isEmpty())) {
            return true;
        }
        for (String a : e.attributes().keySet()) {
            if (o.shows(a)) {
                return true;
            }
        }
        return false;
    }

    /** The attribute names of a projection expanded, the core members left out. */
    private static Set<String> names(Set<String> members, EntityParser parser) {
        Set<String> out = new HashSet<>();
        for (String m : members) {
            if (!CORE_MEMBERS.contains(m)) {
                out.add(parser.attributeName(m));
            }
        }
        return out;
    }

    /**
     * A parsed projection (§ 4.21): its members, and for a member followed by braces the
     * projection of the entities it links to ({@code locatedAt{id,name}}, applied with a join).
     */
    record Projection(Set<String> members, Map<String, Projection> nested) {
    }

    /**
     * Parses a projection: {@code list := member ((',' | '|') member)*}, {@code member := name
     * ['{' list '}']}. An empty member, a brace that does not close or closes nothing, braces not
     * after a name, or a character outside a name is a BadRequestData naming where it is.
     */
    static Projection parseProjection(String param, String value) {
        int[] at = {0};
        Projection p = list(param, value, at, 0);
        if (at[0] < value.length()) {
            throw NgsiLdException.badData(param + ": '" + value.charAt(at[0]) + "' at character " + (at[0] + 1) + " of '"
                    + value + "' closes nothing");
        }
        return p;
    }

    private static Projection list(String param, String value, int[] at, int depth) {
        if (depth > 8) {
            throw NgsiLdException.badData(param + ": projections nest 8 deep at most ('" + value + "')");
        }
        Set<String> members = new LinkedHashSet<>();
        Map<String, Projection> nested = new java.util.LinkedHashMap<>();
        while (true) {
            StringBuilder name = new StringBuilder();
            int start = at[0];
            while (at[0] < value.length()) {
                char c = value.charAt(at[0]);
                if (Character.isLetterOrDigit(c) || c == '_' || c == ':' || c == '/' || c == '.' || c == '-' || c == '#') {
                    if (name.isEmpty() && !Character.isLetter(c)) {
                        throw NgsiLdException.badData(param + ": a member cannot start with '" + c + "' (character "
                                + (at[0] + 1) + " of '" + value + "')");
                    }
                    name.append(c);
                    at[0]++;
                } else if (c == ',' || c == '|' || c == '{' || c == '}') {
                    break;
                } else {
                    throw NgsiLdException.badData(param + ": '" + c + "' at character " + (at[0] + 1) + " of '" + value
                            + "' is not allowed in a projection");
                }
            }
            if (name.isEmpty()) {
                throw NgsiLdException.badData(param + ": an empty member at character " + (start + 1) + " of '" + value + "'");
            }
            members.add(name.toString());
            if (at[0] < value.length() && value.charAt(at[0]) == '{') {
                at[0]++;
                nested.put(name.toString(), list(param, value, at, depth + 1));
                if (at[0] >= value.length() || value.charAt(at[0]) != '}') {
                    throw NgsiLdException.badData(param + ": the '{' after '" + name + "' does not close in '" + value + "'");
                }
                at[0]++;
            }
            if (at[0] >= value.length() || value.charAt(at[0]) == '}') {
                return new Projection(members, nested);
            }
            char sep = value.charAt(at[0]);
            if (sep != ',' && sep != '|') {
                throw NgsiLdException.badData(param + ": '" + sep + "' at character " + (at[0] + 1) + " of '" + value
                        + "' follows a member without a separator");
            }
            at[0]++;
        }
    }

    /** The language ranges of {@code lang} (§ 4.15), highest quality first, {@code q=0} dropped. */
    static List<String> languages(String value) {
        record Range(String tag, double q, int order) {
        }
        List<Range> ranges = new ArrayList<>();
        String[] parts = value.split(",");
        for (int i = 0; i < parts.length; i++) {
            String[] r = parts[i].trim().split(";");
            String tag = r[0].trim();
            if (tag.isEmpty()) {
                throw NgsiLdException.badData("lang: an empty language range in '" + value + "'");
            }
            double q = 1;
            for (int k = 1; k < r.length; k++) {
                String param = r[k].trim();
                if (param.startsWith("q=")) {
                    try {
                        q = Double.parseDouble(param.substring(2));
                    } catch (NumberFormatException e) {
                        throw NgsiLdException.badData("lang: '" + param + "' is not a quality value");
                    }
                }
            }
            if (q > 0) {
                ranges.add(new Range(tag, q, i));
            }
        }
        ranges.sort(Comparator.comparingDouble(Range::q).reversed().thenComparingInt(Range::order));
        List<String> tags = new ArrayList<>(ranges.size());
        for (Range r : ranges) {
            tags.add(r.tag());
        }
        return tags;
    }
}
