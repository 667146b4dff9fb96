package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.TreeSet;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Geo-queries (4.10) on Query Entities (5.7.2, 6.4.3.2): one case per relation and per reference
 * geometry type, over five entities of a type no other test uses - A and B points in Berlin,
 * C a point 60 km away, D a small square around A, E a line south of A that also has an
 * observationSpace at C. ETSI: TP 019_01_05, 019_10_*, 019_11_*, 019_02_05.
 */
class GeoQueryTest extends ConformanceTest {
    private static final String BERLIN = "[[[13.1,52.3],[13.6,52.3],[13.6,52.6],[13.1,52.6],[13.1,52.3]]]";
    private static final String OVERLAPPING_D = "[[[13.40,52.555],[13.42,52.555],[13.42,52.565],[13.40,52.565],[13.40,52.555]]]";
    private static String type;
    private static List<String> ids;

    @BeforeAll
    static void entities() {
        type = Entities.uniqueName("Site");
        List<String> geometries = List.of(
                "{\"type\": \"Point\", \"coordinates\": [13.3986, 52.5547]}",
                "{\"type\": \"Point\", \"coordinates\": [13.3539, 52.5145]}",
                "{\"type\": \"Point\", \"coordinates\": [13.0, 52.0]}",
                "{\"type\": \"Polygon\", \"coordinates\": [[[13.39,52.55],[13.41,52.55],[13.41,52.56],[13.39,52.56],[13.39,52.55]]]}",
                "{\"type\": \"LineString\", \"coordinates\": [[13.30,52.50],[13.40,52.50]]}");
        ids = new java.util.ArrayList<>();
        for (int i = 0; i < geometries.size(); i++) {
            String id = Entities.id(type);
            ids.add(id);
            String extra = i == 4 ? ", \"observationSpace\": {\"type\": \"GeoProperty\", \"value\": {\"type\": \"Point\","
                    + " \"coordinates\": [13.0, 52.0]}}" : "";
            createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"location\": {\"type\": \"GeoProperty\", \"value\": %s}%s}",
                    id, type, geometries.get(i), extra));
        }
    }

    /** The fixture's letters (A..E) a geo-query lists. */
    private static String matches(Answer a) {
        JsonNode list = Checks.okJson(a, Json.CORE);
        TreeSet<String> out = new TreeSet<>();
        for (JsonNode e : list) {
            int i = ids.indexOf(e.path("id").asText());
            assertTrue(i >= 0, () -> "an entity of the fixture: " + e);
            out.add(String.valueOf((char) ('A' + i)));
        }
        return out.isEmpty() ? "-" : String.join(",", out);
    }

    private static String geo(String georel, String geometry, String coordinates) {
        return matches(api.get("/entities").query("type", type).query("georel", georel).query("geometry", geometry)
                .query("coordinates", coordinates).send());
    }

    @ParameterizedTest(name = "{0} {1} {2} -> {3}")
    @CsvSource(delimiter = '\t', value = {
        "near;maxDistance==15000\tPoint\t[13.388930, 52.534473]\tA,B,D,E",
        "near;minDistance==15000\tPoint\t[13.388930, 52.534473]\tC",
        "near;maxDistance==2000\tPoint\t[13.3986, 52.5370]\tA,D",
        "near;maxDistance==1900\tPoint\t[13.3986, 52.5370]\tD",
        "within\tPolygon\t" + BERLIN + "\tA,B,D,E",
        "disjoint\tPolygon\t" + BERLIN + "\tC",
        "contains\tPoint\t[13.3986, 52.5547]\tA,D",
        "intersects\tPoint\t[13.3986, 52.5547]\tA,D",
        "equals\tPoint\t[13.3986, 52.5547]\tA",
        "disjoint\tPoint\t[13.3986, 52.5547]\tB,C,E",
        "overlaps\tPolygon\t" + OVERLAPPING_D + "\tD",
        "overlaps\tPolygon\t" + BERLIN + "\t-",
        "intersects\tPolygon\t" + BERLIN + "\tA,B,D,E",
        "intersects\tLineString\t[[13.35,52.49],[13.35,52.51]]\tE",
        "intersects\tMultiPoint\t[[13.0,52.0],[13.3539,52.5145]]\tB,C",
        "intersects\tMultiLineString\t[[[13.35,52.49],[13.35,52.51]],[[12,50],[12,51]]]\tE",
        "intersects\tMultiPolygon\t[" + OVERLAPPING_D + "]\tD"})
    @DisplayName("4.10 TP 019_10_*, 019_11_*: near (great-circle metres), within, disjoint, contains, intersects, equals, overlaps; every geometry type")
    void relations(String georel, String geometry, String coordinates, String expected) {
        assertEquals(expected, geo(georel, geometry, coordinates));
    }

    @Test
    @DisplayName("4.10: geoproperty names the GeoProperty queried (location by default)")
    void geoproperty() {
        assertEquals("E", matches(api.get("/entities").query("type", type).query("georel", "near;maxDistance==1000")
                .query("geometry", "Point").query("coordinates", "[13.0,52.0]").query("geoproperty", "observationSpace").send()));
        assertEquals("C", geo("near;maxDistance==1000", "Point", "[13.0,52.0]"));
    }

    @Test
    @DisplayName("4.10: a geometry spanning more cells than the spatial index places (a district) is found by a point inside it,"
            + " even when one cell of the index is hit")
    void aWideGeometryIsFoundByAPointInside() {
        String districtType = Entities.uniqueName("District");
        String district = Entities.id(districtType);
        String stop = Entities.id(districtType);
        // 1 degree square: about 10 000 cells of 0.01 degree, so the index keeps it aside
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"location\": {\"type\": \"GeoProperty\", \"value\":"
                + " {\"type\": \"Polygon\", \"coordinates\": [[[20.0,40.0],[21.0,40.0],[21.0,41.0],[20.0,41.0],[20.0,40.0]]]}}}",
                district, districtType));
        // a point in the cell searched, so that the search hits exactly one cell
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"location\": {\"type\": \"GeoProperty\", \"value\":"
                + " {\"type\": \"Point\", \"coordinates\": [20.5051, 40.5051]}}}", stop, districtType));
        // no type: a geo-query alone, so the spatial index (not the type's two entities) is the plan
        String inside = "[[[20.504,40.504],[20.506,40.504],[20.506,40.506],[20.504,40.506],[20.504,40.504]]]";
        assertEquals(new TreeSet<>(List.of(district)), ours(geoOnly("intersects", "Point", "[20.505, 40.505]"), district, stop));
        assertEquals(new TreeSet<>(List.of(stop)), ours(geoOnly("within", "Polygon", inside), district, stop));
        assertEquals(new TreeSet<>(List.of(district, stop)), ours(geoOnly("intersects", "Polygon", inside), district, stop));
    }

    private static Answer geoOnly(String georel, String geometry, String coordinates) {
        return api.get("/entities").query("georel", georel).query("geometry", geometry).query("coordinates", coordinates)
                .query("limit", "1000").send();
    }

    /** Which of {@code ids} the answer lists (other tests' entities may share the tenant). */
    private static TreeSet<String> ours(Answer a, String... ids) {
        TreeSet<String> out = new TreeSet<>();
        Checks.okJson(a, Json.CORE).forEach(e -> out.add(e.path("id").asText()));
        out.retainAll(List.of(ids));
        return out;
    }

    @Test
    @DisplayName("6.4.3.2 TP 019_01_05: a geo-query alone bounds a query (no type needed)")
    void geoAlone() {
        Answer a = api.get("/entities").query("georel", "equals").query("geometry", "Point")
                .query("coordinates", "[13.3539, 52.5145]").query("limit", "1000").send();
        assertTrue(Checks.okJson(a, Json.CORE).toString().contains(ids.get(1)), () -> a.toString());
    }

    @Test
    @DisplayName("5.7.6 TP 019_02_*: POST /entityOperations/query takes geoQ in the Query body")
    void postGeoQ() {
        Answer a = api.post("/entityOperations/query").json(Json.obj("""
                {"type": "Query", "entities": [{"type": "%s"}],
                 "geoQ": {"georel": "near;minDistance==15000", "geometry": "Point", "coordinates": [13.388930, 52.534473]}}""",
                type)).send();
        assertEquals("C", matches(a));
    }

    @Test
    @DisplayName("6.3.15 TP 019_02_05, 019_05: Accept application/geo+json answers a FeatureCollection of the matches")
    void geoJsonFeatureCollection() {
        Answer a = api.get("/entities").query("type", type).query("georel", "equals").query("geometry", "Point")
                .query("coordinates", "[13.3986, 52.5547]").accept("application/geo+json").send();
        Checks.status(a, 200);
        JsonNode fc = a.json();
        assertEquals("FeatureCollection", fc.path("type").asText(), fc::toString);
        assertEquals(1, fc.path("features").size(), fc::toString);
        JsonNode f = fc.path("features").get(0);
        assertEquals("Feature", f.path("type").asText());
        assertEquals(ids.get(0), f.path("id").asText());
        assertEquals("Point", f.path("geometry").path("type").asText());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '\t', value = {
        "georel=near\tnear",
        "georel=near;maxDistance==x\tmaxDistance",
        "georel=near;farDistance==5\tfarDistance",
        "georel=beside\tbeside",
        "georel=touches\ttouches",
        "georel=near;maxDistance==0\tpositive",
        "georel=near;maxDistance==-100\tpositive",
        "georel=near;maxDistance==5;minDistance==1\tone modifier",
        "georel=within;maxDistance==5\twithin",
        "geometry=Circle\tCircle",
        "coordinates=[13.0\tcoordinates",
        "coordinates=[200,52]\tPoint",
        "coordinates=[[13,52],[14,53]]\tPoint",
        "geometry=Polygon\tPolygon"})
    @DisplayName("4.10, 6.4.3.2 TP 019_30_*: an invalid geo-query (a zero, negative or second distance too) is 400 BadRequestData naming what is wrong")
    void invalid(String change, String named) {
        String[] kv = change.split("=", 2);
        String georel = kv[0].equals("georel") ? kv[1] : "near;maxDistance==10";
        String geometry = kv[0].equals("geometry") ? kv[1] : "Point";
        String coordinates = kv[0].equals("coordinates") ? kv[1] : "[13,52]";
        Checks.badData(api.get("/entities").query("type", type).query("georel", georel).query("geometry", geometry)
                .query("coordinates", coordinates).send(), named);
    }

    @Test
    @DisplayName("6.4.3.2: georel, geometry and coordinates go together: one missing is 400 BadRequestData")
    void partsGoTogether() {
        Checks.badData(api.get("/entities").query("type", type).query("georel", "within").query("geometry", "Polygon").send(),
                "coordinates");
    }
}
