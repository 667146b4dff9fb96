package dev.cor.ngsild.query;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.Syntax;
import dev.cor.rest.CorRestJson;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Envelope;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.geom.LinearRing;
import org.locationtech.jts.geom.Point;
import org.locationtech.jts.geom.Polygon;
import org.locationtech.jts.geom.prep.PreparedGeometry;
import org.locationtech.jts.geom.prep.PreparedGeometryFactory;
import org.locationtech.jts.operation.distance.DistanceOp;

/**
 * A parsed geo-query (ETSI GS CIM 009 § 4.10): a relation ({@code near;maxDistance==m},
 * {@code near;minDistance==m}, {@code within}, {@code contains}, {@code intersects},
 * {@code equals}, {@code disjoint}, {@code overlaps}) between an entity's GeoProperty (the target,
 * {@code location} unless {@code geoproperty} names another) and a reference geometry. The
 * predicates are JTS's on longitude/latitude; distances are great-circle metres. Immutable and
 * thread-safe: parse once, {@link #test} any entity from any thread.
 */
public final class GeoQuery {
    /** The mean Earth radius (IUGG), metres. */
    static final double EARTH_RADIUS = 6_371_008.8;
    static final GeometryFactory FACTORY = new GeometryFactory();

    enum Relation { NEAR, WITHIN, CONTAINS, INTERSECTS, EQUALS, DISJOINT, OVERLAPS }

    private final Relation relation;
    private final double maxDistance;
    private final double minDistance;
    private final Geometry reference;
    private final PreparedGeometry prepared;
    private final String geoproperty;

    private GeoQuery(Relation relation, double maxDistance, double minDistance, Geometry reference, String geoproperty) {
        this.relation = relation;
        this.maxDistance = maxDistance;
        this.minDistance = minDistance;
        this.reference = reference;
        this.prepared = PreparedGeometryFactory.prepare(reference);
        this.geoproperty = geoproperty;
    }

    /**
     * Parses the four parameters of a GET (§ 6.4.3.2): {@code coordinates} a JSON array as text,
     * {@code geoproperty} a term or {@code null} (location).
     */
    public static GeoQuery parse(String georel, String geometry, String coordinates, String geoproperty, LdContext context) {
        if (georel == null || geometry == null || coordinates == null) {
            throw NgsiLdException.badData("a geo-query gives georel, geometry and coordinates together (missing: "
                    + (georel == null ? "georel " : "") + (geometry == null ? "geometry " : "")
                    + (coordinates == null ? "coordinates" : "").trim() + ")");
        }
        JsonNode coords;
        try {
            coords = CorRestJson.mapper().readTree(coordinates);
        } catch (JsonProcessingException e) {
            throw NgsiLdException.badData("coordinates is not a JSON array: " + e.getOriginalMessage());
        }
        return of(georel, geometry, coords, geoproperty, context);
    }

    /** Parses a GeoQuery object (§ 5.2.13): of a POST query's body, or of a subscription. */
    public static GeoQuery parse(JsonNode geoQ, LdContext context) {
        if (geoQ == null || !geoQ.isObject()) {
            throw NgsiLdException.badData("geoQ is a JSON object (georel, geometry, coordinates, geoproperty)");
        }
        JsonNode coords = geoQ.get("coordinates");
        if (coords != null && coords.isTextual()) {
            return parse(text(geoQ, "georel"), text(geoQ, "geometry"), coords.asText(), text(geoQ, "geoproperty"), context);
        }
        String georel = text(geoQ, "georel");
        String geometry = text(geoQ, "geometry");
        if (georel == null || geometry == null || coords == null) {
            throw NgsiLdException.badData("geoQ gives georel, geometry and coordinates");
        }
        return of(georel, geometry, coords, text(geoQ, "geoproperty"), context);
    }

    private static String text(JsonNode o, String member) {
        JsonNode v = o.get(member);
        if (v == null) {
            return null;
        }
        if (!v.isTextual()) {
            throw NgsiLdException.badData("geoQ: " + member + " is a string");
        }
        return v.asText();
    }

    private static GeoQuery of(String georel, String geometry, JsonNode coords, String geoproperty, LdContext context) {
        Relation relation;
        double max = Double.NaN;
        double min = Double.NaN;
        String[] parts = georel.split(";", -1);
        switch (parts[0]) {
            case "near" -> {
                relation = Relation.NEAR;
                if (parts.length != 2) {
                    // nearRel = nearOp andOp distance equal PositiveNumber: exactly one modifier
                    throw NgsiLdException.badData("georel near takes one modifier, ;maxDistance==metres or"
                            + " ;minDistance==metres: '" + georel + "'");
                }
                for (int i = 1; i < parts.length; i++) {
                    String p = parts[i];
                    int eq = p.indexOf("==");
                    String name = eq < 0 ? p : p.substring(0, eq);
                    double d = eq < 0 ? Double.NaN : distance(georel, p.substring(eq + 2));
                    switch (name) {
                        case "maxDistance" -> max = d;
                        case "minDistance" -> min = d;
                        default -> throw NgsiLdException.badData("georel: '" + p + "' is not maxDistance==metres or"
                                + " minDistance==metres (in '" + georel + "')");
                    }
                }
            }
            case "within" -> relation = Relation.WITHIN;
            case "contains" -> relation = Relation.CONTAINS;
            case "intersects" -> relation = Relation.INTERSECTS;
            case "equals" -> relation = Relation.EQUALS;
            case "disjoint" -> relation = Relation.DISJOINT;
            case "overlaps" -> relation = Relation.OVERLAPS;
            default -> throw NgsiLdException.badData("georel '" + georel + "' is none of near;maxDistance==m,"
                    + " near;minDistance==m, within, contains, intersects, equals, disjoint, overlaps");
        }
        if (relation != Relation.NEAR && parts.length > 1) {
            throw NgsiLdException.badData("georel " + parts[0] + " takes no modifier: '" + georel + "'");
        }
        Geometry ref;
        try {
            ref = geometry(geometry, coords);
        } catch (IllegalArgumentException e) {
            throw NgsiLdException.badData("the coordinates are not a valid " + geometry + ": " + e.getMessage());
        }
        if (ref == null) {
            throw NgsiLdException.badData("geometry '" + geometry + "' with coordinates " + coords + " is not a GeoJSON"
                    + " geometry (Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon)");
        }
        String prop = geoproperty == null ? "location" : geoproperty;
        if (!Syntax.isName(prop)) {
            throw NgsiLdException.badData("geoproperty '" + prop + "' is not an attribute name");
        }
        String iri = context.expand(prop);
        if (iri == null || !Syntax.isAbsoluteIri(iri)) {
            throw NgsiLdException.badData("geoproperty '" + prop + "' does not expand to an IRI");
        }
        return new GeoQuery(relation, max, min, ref, iri);
    }

    private static double distance(String georel, String s) {
        if (!QParser.isNumber(s)) {
            throw NgsiLdException.badData("georel: '" + s + "' is not a number of metres (in '" + georel + "')");
        }
        double d = Double.parseDouble(s);
        if (!(d > 0) || Double.isInfinite(d)) {
            throw NgsiLdException.badData("georel: a distance is a positive number of metres (not 0), not " + s);
        }
        return d;
    }

    @Override
    public String toString() {
        return relation + (Double.isNaN(maxDistance) ? "" : " max " + maxDistance) + (Double.isNaN(minDistance) ? "" : " min "
                + minDistance) + " " + reference + " on " + geoproperty;
    }

    /** The expanded name of the GeoProperty the query targets. */
    public String geoproperty() {
        return geoproperty;
    }

    /**
     * A longitude/latitude box every matching target geometry intersects, or {@code null} when
     * matches can lie anywhere ({@code disjoint}, {@code minDistance}): a spatial index may
     * start from the entities in it.
     */
    public Envelope bounds() {
        if (relation == Relation.DISJOINT || (relation == Relation.NEAR && Double.isNaN(maxDistance))) {
            return null;
        }
        Envelope env = new Envelope(reference.getEnvelopeInternal());
        if (relation == Relation.NEAR) {
            double dLat = Math.toDegrees(maxDistance / EARTH_RADIUS) * 1.01 + 1e-9;
            double maxAbsLat = Math.max(Math.abs(env.getMinY()), Math.abs(env.getMaxY())) + dLat;
            double cos = maxAbsLat >= 89.9 ? 0 : Math.cos(Math.toRadians(maxAbsLat));
            double dLon = cos <= 0 || dLat / cos >= 180 ? 360 : dLat / cos;
            env.expandBy(dLon, dLat);
        }
        return env;
    }

    /** Whether some instance of the entity's target GeoProperty stands in the relation to the reference. */
    public boolean test(Entity e) {
        AttributeList l = e.attributes().get(geoproperty);
        if (l == null) {
            return false;
        }
        for (Attribute a : l.instances()) {
            if (a.kind() != AttributeKind.GEO_PROPERTY) {
                continue;
            }
            if (relation == Relation.NEAR && reference instanceof Point p && "Point".equals(a.value().path("type").textValue())) {
                // the common case - a point near a point - without building a JTS geometry per entity
                JsonNode c = a.value().get("coordinates");
                if (c != null && c.size() >= 2 && near(haversine(c.get(0).asDouble(), c.get(1).asDouble(), p.getX(), p.getY()))) {
                    return true;
                }
                continue;
            }
            Geometry g = target(a.value());
            if (g != null && test(g)) {
                return true;
            }
        }
        return false;
    }

    /** Whether a GeoJSON geometry (a registration's location, say) stands in the relation; not one: false. */
    public boolean testGeometry(JsonNode geometry) {
        Geometry g = target(geometry);
        return g != null && test(g);
    }

    /** The relation on a target geometry. */
    boolean test(Geometry target) {
        return switch (relation) {
            case NEAR -> near(distance(target, reference));
            case WITHIN -> prepared.contains(target);
            case CONTAINS -> prepared.within(target);
            case INTERSECTS -> prepared.intersects(target);
            case DISJOINT -> prepared.disjoint(target);
            case OVERLAPS -> prepared.overlaps(target);
            case EQUALS -> target.equalsTopo(reference);
        };
    }

    private boolean near(double d) {
        return (Double.isNaN(maxDistance) || d <= maxDistance) && (Double.isNaN(minDistance) || d >= minDistance);
    }

    /** The great-circle distance in metres between the nearest points of two geometries (0 when they meet). */
    static double distance(Geometry a, Geometry b) {
        if (a instanceof Point p && b instanceof Point q) {
            return haversine(p.getX(), p.getY(), q.getX(), q.getY());
        }
        if (a.intersects(b)) {
            return 0;
        }
        Coordinate[] near = DistanceOp.nearestPoints(a, b);
        return haversine(near[0].x, near[0].y, near[1].x, near[1].y);
    }

    static double haversine(double lon1, double lat1, double lon2, double lat2) {
        double dLat = Math.toRadians(lat2 - lat1);
        double dLon = Math.toRadians(lon2 - lon1);
        double h = Math.sin(dLat / 2) * Math.sin(dLat / 2)
                + Math.cos(Math.toRadians(lat1)) * Math.cos(Math.toRadians(lat2)) * Math.sin(dLon / 2) * Math.sin(dLon / 2);
        return 2 * EARTH_RADIUS * Math.asin(Math.min(1, Math.sqrt(h)));
    }

    /** A stored GeoJSON geometry as JTS's; {@code null} when it is none (never thrown: it was checked when written). */
    public static Geometry target(JsonNode geometry) {
        if (geometry == null || !geometry.isObject()) {
            return null;
        }
        try {
            return geometry(geometry.path("type").asText(), geometry.get("coordinates"));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * A GeoJSON geometry (RFC 7946 § 3.1) of {@code type} with {@code coords}, or {@code null}
     * when the coordinates do not have the type's shape.
     *
     * @throws IllegalArgumentException when JTS refuses them (a ring not closed, too few points)
     */
    static Geometry geometry(String type, JsonNode coords) {
        if (coords == null || !coords.isArray()) {
            return null;
        }
        switch (type) {
            case "Point" -> {
                Coordinate c = position(coords);
                return c == null ? null : FACTORY.createPoint(c);
            }
            case "MultiPoint" -> {
                Coordinate[] cs = positions(coords, 1);
                return cs == null ? null : FACTORY.createMultiPointFromCoords(cs);
            }
            case "LineString" -> {
                Coordinate[] cs = positions(coords, 2);
                return cs == null ? null : FACTORY.createLineString(cs);
            }
            case "MultiLineString" -> {
                var lines = new org.locationtech.jts.geom.LineString[coords.size()];
                for (int i = 0; i < lines.length; i++) {
                    Coordinate[] cs = positions(coords.get(i), 2);
                    if (cs == null) {
                        return null;
                    }
                    lines[i] = FACTORY.createLineString(cs);
                }
                return lines.length == 0 ? null : FACTORY.createMultiLineString(lines);
            }
            case "Polygon" -> {
                return polygon(coords);
            }
            case "MultiPolygon" -> {
                Polygon[] polys = new Polygon[coords.size()];
                for (int i = 0; i < polys.length; i++) {
                    polys[i] = polygon(coords.get(i));
                    if (polys[i] == null) {
                        return null;
                    }
                }
                return polys.length == 0 ? null : FACTORY.createMultiPolygon(polys);
            }
            default -> {
                return null;
            }
        }
    }

    private static Polygon polygon(JsonNode rings) {
        if (rings == null || !rings.isArray() || rings.isEmpty()) {
            return null;
        }
        LinearRing[] rs = new LinearRing[rings.size()];
        for (int i = 0; i < rs.length; i++) {
            Coordinate[] cs = positions(rings.get(i), 4);
            if (cs == null) {
                return null;
            }
            rs[i] = FACTORY.createLinearRing(cs);
        }
        LinearRing[] holes = new LinearRing[rs.length - 1];
        System.arraycopy(rs, 1, holes, 0, holes.length);
        return FACTORY.createPolygon(rs[0], holes);
    }

    private static Coordinate[] positions(JsonNode a, int min) {
        if (a == null || !a.isArray() || a.size() < min) {
            return null;
        }
        Coordinate[] cs = new Coordinate[a.size()];
        for (int i = 0; i < cs.length; i++) {
            cs[i] = position(a.get(i));
            if (cs[i] == null) {
                return null;
            }
        }
        return cs;
    }

    /** [longitude, latitude(, altitude)], each a number, in range. */
    private static Coordinate position(JsonNode p) {
        if (!p.isArray() || p.size() < 2 || p.size() > 3 || !p.get(0).isNumber() || !p.get(1).isNumber()) {
            return null;
        }
        double lon = p.get(0).asDouble();
        double lat = p.get(1).asDouble();
        if (!(lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90)) {
            return null;
        }
        return new Coordinate(lon, lat);
    }
}
