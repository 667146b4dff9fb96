package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Query Context Source Registrations (ETSI GS CIM 009 § 5.10.2, § 6.8.3.2): by entity ids, idPattern,
 * type, attribute names, csf and q over the registrant's own members, scopeQ and geo-queries over
 * the registration's own members, with pagination (§ 5.5.9). ETSI TP 037 and 51024. Each test
 * works in a tenant of its own: a query sees every registration of its tenant.
 */
class RegistrationQueryTest extends ConformanceTest {
    private String tenant;
    private final String vehicleReg = RegistrationResourceTest.registrationId();
    private final String buildingReg = RegistrationResourceTest.registrationId();
    private final String namesReg = RegistrationResourceTest.registrationId();

    /** Three registrations: Vehicle urn:...:V1 (speed), Buildings by pattern (name, locatedAt), attributes alone (name). */
    private void three() {
        tenant = RegistrationResourceTest.freshTenant();
        reg(Json.obj("""
                {"id": "%s", "type": "ContextSourceRegistration",
                 "information": [{"entities": [{"type": "Vehicle", "id": "urn:ngsi-ld:Vehicle:V1"}], "propertyNames": ["speed"]}],
                 "endpoint": "http://a.example:1026", "scope": "/Madrid/Centro", "sourceKind": "camera",
                 "location": {"type": "Point", "coordinates": [8.68, 49.41]}, "@context": "%s"}""", vehicleReg, model));
        reg(Json.obj("""
                {"id": "%s", "type": "ContextSourceRegistration",
                 "information": [{"entities": [{"type": "Building", "idPattern": "^urn:ngsi-ld:Building:[0-9]+$"}],
                                  "propertyNames": ["name"], "relationshipNames": ["locatedAt"]}],
                 "endpoint": "http://b.example:1026", "scope": "/Paris", "sourceKind": "meter", "@context": "%s"}""",
                buildingReg, model));
        reg(Json.obj("""
                {"id": "%s", "type": "ContextSourceRegistration",
                 "information": [{"propertyNames": ["name"]}],
                 "endpoint": "http://c.example:1026", "@context": "%s"}""", namesReg, model));
    }

    private void reg(ObjectNode r) {
        Checks.status(RegistrationResourceTest.registerIn(tenant, r), 201);
    }

    private Answer query(String... params) {
        Ngsi.Request r = api.get("/csourceRegistrations").link(model).tenant(tenant);
        for (int i = 0; i < params.length; i += 2) {
            r = r.query(params[i], params[i + 1]);
        }
        return r.send();
    }

    private List<String> ids(String... params) {
        JsonNode a = Checks.okJson(query(params));
        List<String> out = new ArrayList<>();
        a.forEach(r -> out.add(r.path("id").asText()));
        return out;
    }

    private List<String> sorted(String... ids) {
        return java.util.Arrays.stream(ids).sorted().toList();
    }

    @Test
    void by_type_037_01_01() {
        three();
        // the registration of attributes alone names no entity: it registers them of any type (037_05_02)
        assertEquals(sorted(buildingReg, namesReg), ids("type", "Building"));
        assertEquals(sorted(buildingReg, vehicleReg, namesReg), ids("type", "Building,Vehicle"));
    }

    @Test
    void by_attribute_names_matching_properties_and_relationships_037_01_02_037_06() {
        three();
        assertEquals(sorted(buildingReg, namesReg), ids("attrs", "name"));
        assertEquals(List.of(buildingReg), ids("attrs", "locatedAt"));
        assertEquals(List.of(vehicleReg), ids("attrs", "speed"));
    }

    @Test
    void by_entity_id_against_ids_and_patterns_037_10_01() {
        three();
        // the registration of attributes alone names no entity: it registers them of any id (037_05_02)
        assertEquals(sorted(buildingReg, namesReg), ids("id", "urn:ngsi-ld:Building:1,urn:ngsi-ld:Building:2"));
        assertEquals(sorted(vehicleReg, namesReg), ids("id", "urn:ngsi-ld:Vehicle:V1"));
        assertEquals(List.of(namesReg), ids("id", "urn:ngsi-ld:Vehicle:V2"));
        // a pattern against a registration's id; against a registration's pattern it matches (they cannot be compared)
        assertEquals(sorted(buildingReg, vehicleReg, namesReg), ids("idPattern", "Vehicle:V[0-9]"));
        assertEquals(sorted(vehicleReg, namesReg), ids("type", "Vehicle", "idPattern", "Vehicle:V[0-9]"));
        assertEquals(List.of(namesReg), ids("type", "Vehicle", "idPattern", "Vehicle:X"));
    }

    @Test
    void the_returned_registrations_are_compacted_with_the_requests_context_037_05() {
        three();
        JsonNode r = Checks.okJson(query("type", "Vehicle", "attrs", "speed")).path(0);
        assertEquals("Vehicle", r.path("information").path(0).path("entities").path(0).path("type").asText());
        assertEquals("speed", r.path("information").path(0).path("propertyNames").path(0).asText());
        assertEquals("camera", r.path("sourceKind").asText());
    }

    @Test
    void a_registration_info_without_entities_matches_any_entity_037_05_02() {
        // § 5.2.10: a RegistrationInfo without entities registers its attributes of any entity, so a query
        // by type and idPattern lists it - as the lookup (Coverage) serves it to any request for them
        tenant = RegistrationResourceTest.freshTenant();
        reg(Json.obj("""
                {"id": "%s", "type": "ContextSourceRegistration",
                 "information": [{"propertyNames": ["name", "subCategory"]}],
                 "endpoint": "http://c.example:1026", "@context": "%s"}""", namesReg, model));
        assertEquals(List.of(namesReg), ids("type", "OffStreetParking", "idPattern", ".*downtown$"));
        assertEquals(List.of(namesReg), ids("id", "urn:ngsi-ld:OffStreetParking:downtown"));
        // its attributes still select: a query for others does not list it
        assertEquals(List.of(), ids("type", "OffStreetParking", "attrs", "availableSpotNumber"));
    }

    @Test
    void q_matches_the_registrants_own_members_037_10_02() {
        three();
        assertEquals(List.of(vehicleReg), ids("q", "sourceKind==\"camera\""));
        assertEquals(List.of(buildingReg), ids("type", "Building,Vehicle", "q", "sourceKind==\"meter\""));
    }

    @Test
    void csf_matches_the_registrations_members_51024_01_01() {
        three();
        assertEquals(List.of(buildingReg), ids("csf", "endpoint==\"http://b.example:1026\""));
        assertEquals(List.of(vehicleReg), ids("type", "Building,Vehicle", "csf", "sourceKind==camera"));
        assertEquals(sorted(buildingReg, vehicleReg), ids("csf", "sourceKind"));
    }

    @Test
    void scopeQ_matches_the_registrations_scope_51024_01_02() {
        three();
        assertEquals(List.of(vehicleReg), ids("type", "Building,Vehicle", "scopeQ", "/Madrid/#"));
    }

    @Test
    void a_geoquery_matches_the_registrations_location_and_one_without_does_not_51024_01_03() {
        three();
        assertEquals(List.of(vehicleReg), ids("type", "Building,Vehicle", "georel", "near;maxDistance==2000",
                "geometry", "Point", "coordinates", "[8.68,49.41]"));
        assertEquals(List.of(), ids("type", "Building,Vehicle", "georel", "near;maxDistance==2000",
                "geometry", "Point", "coordinates", "[2.35,48.85]"));
    }

    @Test
    void neither_types_nor_attributes_is_400_037_02() {
        three();
        Checks.problem(query(), 400, "BadRequestData");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "id|invalidUri",
        "q|(invalidQuery",
        "georel|within",
        "timerel|before",
        "idPattern|(",
        "attrs|no name!"
    })
    void an_invalid_parameter_is_400_037_03(String name, String value) {
        three();
        Checks.problem(query("type", "Vehicle", name, value), 400, "BadRequestData");
    }

    @Test
    void limit_offset_count_and_the_links_to_other_pages_037_11() {
        three();
        Answer a = query("attrs", "name,speed", "limit", "1", "offset", "1", "count", "true");
        JsonNode page = Checks.okJson(a);
        assertEquals(1, page.size());
        assertEquals(sorted(vehicleReg, buildingReg, namesReg).get(1), page.path(0).path("id").asText());
        assertEquals("3", a.header("NGSILD-Results-Count"));
        assertEquals(List.of(
                "</ngsi-ld/v1/csourceRegistrations?attrs=name%2Cspeed&limit=1&offset=0&count=true>;rel=\"prev\";type=\"application/ld+json\"",
                "</ngsi-ld/v1/csourceRegistrations?attrs=name%2Cspeed&limit=1&offset=2&count=true>;rel=\"next\";type=\"application/ld+json\""),
                pageLinks(a));
        assertEquals(3, Checks.okJson(query("attrs", "name,speed", "limit", "15")).size());
    }

    /**
     * § 5.5.9, § 6.3.10, as ETSI's 037_11_01 asks: no Accept (an application/json answer), the
     * parameters in the request's order; the page links keep that order and name the NGSI-LD
     * media type.
     */
    @Test
    void the_page_links_keep_the_requests_parameter_order_and_name_ld_json_037_11() {
        three();
        Answer a = query("attrs", "name,speed", "limit", "1", "offset", "2");
        assertEquals("application/json", a.header("Content-Type"));
        assertEquals(List.of("</ngsi-ld/v1/csourceRegistrations?attrs=name%2Cspeed&limit=1&offset=1>;rel=\"prev\";type=\"application/ld+json\""),
                pageLinks(a));
        Answer b = query("offset", "0", "limit", "2", "attrs", "name,speed");
        assertEquals(List.of("</ngsi-ld/v1/csourceRegistrations?offset=2&limit=2&attrs=name%2Cspeed>;rel=\"next\";type=\"application/ld+json\""),
                pageLinks(b));
    }

    /** The Link values of an answer other than the context's. */
    private static List<String> pageLinks(Answer a) {
        return a.headerValues("Link").stream().filter(l -> !l.contains("json-ld#context")).toList();
    }

    @Test
    void an_expired_registration_is_still_listed() {
        tenant = RegistrationResourceTest.freshTenant();
        ObjectNode r = RegistrationResourceTest.vehicles(RegistrationResourceTest.registrationId());
        r.put("expiresAt", "2099-01-01T00:00:00Z");
        reg(r);
        assertEquals(List.of(r.get("id").asText()), ids("type", "Vehicle"));
    }

    @Test
    void without_a_temporal_query_only_sources_of_latest_information_with_one_those_whose_interval_it_meets_037_08_037_09() {
        three();
        String temporal = RegistrationResourceTest.registrationId();
        reg(Json.obj("""
                {"id": "%s", "type": "ContextSourceRegistration",
                 "information": [{"entities": [{"type": "Vehicle"}]}], "endpoint": "http://t.example:1026",
                 "observationInterval": {"startAt": "2020-08-01T00:00:00Z", "endAt": "2021-08-01T00:00:00Z"},
                 "@context": "%s"}""", temporal, model));
        assertEquals(sorted(vehicleReg, namesReg), ids("type", "Vehicle"));
        assertEquals(List.of(temporal), ids("type", "Vehicle", "timerel", "before", "timeAt", "2021-01-01T00:00:00Z"));
        assertEquals(List.of(), ids("type", "Vehicle", "timerel", "after", "timeAt", "2022-01-01T00:00:00Z"));
        assertEquals(List.of(temporal), ids("type", "Vehicle", "timerel", "between", "timeAt", "2019-01-01T00:00:00Z",
                "endTimeAt", "2020-09-01T00:00:00Z"));
        // createdAt/modifiedAt look at the managementInterval, which it has not
        assertEquals(List.of(), ids("type", "Vehicle", "timerel", "before", "timeAt", "2021-01-01T00:00:00Z",
                "timeproperty", "modifiedAt"));
    }
}
