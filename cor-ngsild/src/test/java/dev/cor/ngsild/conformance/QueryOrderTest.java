package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * orderBy (V1.9.1 4.23) on Query Entities: three entities of a type no other test uses, created
 * in the order 2, 1, 3 - names A, B, C for 1, 2, 3, a sub-property 10, 20, 30, locations 3, 1 and
 * 2 degrees east of the origin - and a fourth without a name, which sorts last. ETSI: TP 019_19_*.
 */
class QueryOrderTest extends ConformanceTest {
    private static String type;
    private static final List<String> ids = new ArrayList<>();

    @BeforeAll
    static void entities() throws InterruptedException {
        type = Entities.uniqueName("Ordered");
        String prefix = Entities.id(type) + ":";
        for (int i = 1; i <= 4; i++) {
            ids.add(prefix + i);
        }
        String[] names = {"A", "B", "C"};
        int[] east = {3, 1, 2};
        for (int i : new int[] {2, 1, 3, 4}) {
            String name = i <= 3 ? ", \"name\": {\"type\": \"Property\", \"value\": \"" + names[i - 1]
                    + "\", \"sub\": {\"type\": \"Property\", \"value\": " + (10 * i) + "}}" : "";
            String location = i <= 3 ? ", \"location\": {\"type\": \"GeoProperty\", \"value\": {\"type\": \"Point\", \"coordinates\": ["
                    + east[i - 1] + ", 0]}}" : "";
            createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\"%s%s}", ids.get(i - 1), type, name, location));
            Thread.sleep(3); // createdAt is in milliseconds: keep the creation order visible in it
        }
    }

    private static String order(String orderBy, String... more) {
        Ngsi.Request r = api.get("/entities").query("type", type).query("orderBy", orderBy);
        for (int i = 0; i < more.length; i += 2) {
            r.query(more[i], more[i + 1]);
        }
        List<String> out = new ArrayList<>();
        for (JsonNode e : Checks.okJson(r.send(), Json.CORE)) {
            out.add(String.valueOf(ids.indexOf(e.path("id").asText()) + 1));
        }
        return String.join(",", out);
    }

    @ParameterizedTest(name = "orderBy={0} -> {1}")
    @CsvSource(delimiter = '\t', value = {
        "name\t1,2,3,4",
        "name;asc\t1,2,3,4",
        "name;desc\t3,2,1,4",
        "id\t1,2,3,4",
        "id;desc\t4,3,2,1",
        "createdAt\t2,1,3,4",
        "name.createdAt\t2,1,3,4",
        "name.sub\t1,2,3,4",
        "type,name\t1,2,3,4",
        "type;asc,name.sub;desc,name;asc\t3,2,1,4"})
    @DisplayName("4.23 TP 019_19_*: orderBy an attribute, id, createdAt, metadata, a sub-property, several terms, asc/desc; no value sorts last")
    void orderBy(String orderBy, String expected) {
        assertEquals(expected, order(orderBy));
    }

    @Test
    @DisplayName("4.23.3 example 8/9: location;dist-asc/dist-desc from orderFrom orders by great-circle distance")
    void byDistance() {
        assertEquals("2,3,1,4", order("location;dist-asc", "orderFrom", "[0,0]"));
        assertEquals("1,3,2,4", order("location;dist-desc", "orderFrom", "[0,0]"));
    }

    @Test
    @DisplayName("4.23: limit and offset page through the ordered answer")
    void pagesFollowTheOrder() {
        assertEquals("2,1", order("name;desc", "limit", "2", "offset", "1"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '\t', value = {"name;up\tup", "name;\torderBy", ",name\torderBy", "location;dist-asc\torderFrom"})
    @DisplayName("4.23.3: an invalid orderBy is 400 BadRequestData naming what is wrong")
    void invalid(String orderBy, String named) {
        Checks.badData(api.get("/entities").query("type", type).query("orderBy", orderBy).send(), named);
    }
}
