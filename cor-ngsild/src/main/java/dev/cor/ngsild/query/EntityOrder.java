package dev.cor.ngsild.query;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.Syntax;
import dev.cor.rest.CorRestJson;
import org.locationtech.jts.geom.Geometry;

/**
 * A parsed {@code orderBy} (ETSI GS CIM 009 V1.9.1 § 4.23): terms separated by {@code ,}, each
 * {@code id}, {@code type} or an attribute path as q has them ({@code name}, {@code name.observedAt},
 * {@code address[city]}), optionally {@code ;asc} (the default), {@code ;desc}, or - on a
 * GeoProperty, from {@code orderFrom} - {@code ;dist-asc}/{@code ;dist-desc}. Numbers order
 * numerically, texts by UTF-16 code units (a date-time's ISO form orders in time), then booleans;
 * an entity without the value comes last either way, and ties end in id order. Immutable.
 */
public final class EntityOrder implements Comparator<Entity> {
    private enum Special { NONE, ID, TYPE }

    private record Term(Special special, QPath path, boolean desc, Geometry from, String geoproperty) {
    }

    private final List<Term> terms;

    private EntityOrder(List<Term> terms) {
        this.terms = terms;
    }

    /**
     * @param orderFrom     the reference coordinates of a distance order (a JSON array), or {@code null}
     * @param orderGeometry its geometry type ({@code Point} when {@code null})
     */
    public static EntityOrder parse(String orderBy, LdContext context, String orderFrom, String orderGeometry) {
        List<Term> terms = new ArrayList<>();
        Geometry from = null;
        for (String item : orderBy.split(",", -1)) {
            String[] parts = item.split(";", -1);
            if (parts.length > 2 || parts[0].isEmpty()) {
                throw NgsiLdException.badData("orderBy: '" + item + "' is an attribute path, then optionally ;asc, ;desc,"
                        + " ;dist-asc or ;dist-desc (in '" + orderBy + "')");
            }
            String dir = parts.length == 2 ? parts[1] : "asc";
            boolean dist = dir.startsWith("dist-");
            if (!Set.of("asc", "desc", "dist-asc", "dist-desc").contains(dir)) {
                throw NgsiLdException.badData("orderBy: '" + dir + "' is none of asc, desc, dist-asc, dist-desc");
            }
            boolean desc = dir.endsWith("desc");
            if (dist) {
                if (from == null) {
                    from = reference(orderFrom, orderGeometry);
                }
                String iri = context.expand(parts[0]);
                if (!Syntax.isName(parts[0]) || iri == null) {
                    throw NgsiLdException.badData("orderBy: '" + parts[0] + "' is not a GeoProperty name");
                }
                terms.add(new Term(Special.NONE, null, desc, from, iri));
            } else if (parts[0].equals("id") || parts[0].equals("type")) {
                terms.add(new Term(parts[0].equals("id") ? Special.ID : Special.TYPE, null, desc, null, null));
            } else {
                terms.add(new Term(Special.NONE, new QParser(parts[0], context, Set.of(), "orderBy").pathOnly(), desc, null,
                        null));
            }
        }
        return new EntityOrder(terms);
    }

    private static Geometry reference(String orderFrom, String orderGeometry) {
        if (orderFrom == null) {
            throw NgsiLdException.badData("orderBy by distance needs orderFrom (the reference coordinates)");
        }
        JsonNode coords;
        try {
            coords = CorRestJson.mapper().readTree(orderFrom);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw NgsiLdException.badData("orderFrom is not a JSON array: " + e.getOriginalMessage());
        }
        String type = orderGeometry == null ? "Point" : orderGeometry;
        Geometry g;
        try {
            g = GeoQuery.geometry(type, coords);
        } catch (IllegalArgumentException e) {
            g = null;
        }
        if (g == null) {
            throw NgsiLdException.badData("orderFrom " + orderFrom + " is not the coordinates of a " + type);
        }
        return g;
    }

    @Override
    public int compare(Entity a, Entity b) {
        for (Term t : terms) {
            int c = compare(t, a, b);
            if (c != 0) {
                return c;
            }
        }
        return a.id().compareTo(b.id());
    }

    private static int compare(Term t, Entity a, Entity b) {
        switch (t.special()) {
            case ID -> {
                return t.desc() ? b.id().compareTo(a.id()) : a.id().compareTo(b.id());
            }
            case TYPE -> {
                int c = a.types().get(0).compareTo(b.types().get(0));
                return t.desc() ? -c : c;
            }
            default -> {
                if (t.from() != null) {
                    double da = distance(t, a);
                    double db = distance(t, b);
                    return missingLast(Double.isNaN(da), Double.isNaN(db), t.desc() ? Double.compare(db, da)
                            : Double.compare(da, db));
                }
                JsonNode va = first(t.path(), a);
                JsonNode vb = first(t.path(), b);
                if (va == null || vb == null) {
                    return missingLast(va == null, vb == null, 0);
                }
                int c = compareValues(va, vb);
                return t.desc() ? -c : c;
            }
        }
    }

    private static int missingLast(boolean aMissing, boolean bMissing, int otherwise) {
        if (aMissing || bMissing) {
            return aMissing == bMissing ? 0 : aMissing ? 1 : -1;
        }
        return otherwise;
    }

    /** The first target value of the path in {@code e} (an array's first item), or {@code null}. */
    private static JsonNode first(QPath path, Entity e) {
        JsonNode[] out = new JsonNode[1];
        path.any(e, (v, k) -> {
            out[0] = v.isArray() && !v.isEmpty() ? v.get(0) : v;
            return true;
        });
        return out[0];
    }

    /** Numbers, then texts, then booleans, then anything else; within a kind, its natural order. */
    private static int compareValues(JsonNode a, JsonNode b) {
        int ra = rank(a);
        int rb = rank(b);
        if (ra != rb) {
            return Integer.compare(ra, rb);
        }
        return switch (ra) {
            case 0 -> Double.compare(a.asDouble(), b.asDouble());
            case 1 -> QValue.text(a).compareTo(QValue.text(b));
            case 2 -> Boolean.compare(a.booleanValue(), b.booleanValue());
            default -> a.toString().compareTo(b.toString());
        };
    }

    private static int rank(JsonNode v) {
        if (v.isNumber()) {
            return 0;
        }
        if (QValue.text(v) != null) {
            return 1;
        }
        return v.isBoolean() ? 2 : 3;
    }

    /** The smallest distance from the reference to an instance of the GeoProperty, NaN without one. */
    private static double distance(Term t, Entity e) {
        AttributeList l = e.attributes().get(t.geoproperty());
        double best = Double.NaN;
        if (l != null) {
            for (Attribute a : l.instances()) {
                Geometry g = a.kind() == AttributeKind.GEO_PROPERTY ? GeoQuery.target(a.value()) : null;
                if (g != null) {
                    double d = GeoQuery.distance(g, t.from());
                    best = Double.isNaN(best) ? d : Math.min(best, d);
                }
            }
        }
        return best;
    }
}
