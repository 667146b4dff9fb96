package dev.cor.ngsild.federation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.cor.ngsild.ManualClock;
import dev.cor.ngsild.federation.RegistrationLookup.Want;
import org.junit.jupiter.api.Test;

/**
 * The lookup's matching rules (§ 4.3.6, § 5.12): an EntityInfo by type and by id or idPattern,
 * attribute names (none registered: all), operations (groups resolved, § 4.20), expiry and
 * tenants. Pure: the registry without the broker.
 */
class RegistrationsTest {
    static final String T = "https://t/";
    static final String VEHICLE = T + "Vehicle";
    static final String SPEED = T + "speed";
    static final String BRAND = T + "brandName";

    final ManualClock clock = new ManualClock(1_000_000);
    final Registrations regs = new Registrations(clock);

    static Registration reg(String tenant, String id, Set<String> ops, long expiresAt, Registration.Info... infos) {
        return new Registration(tenant, id, List.of(infos), Registration.Mode.INCLUSIVE, ops, "http://s", Map.of(), null,
                0, 0, expiresAt, null, null);
    }

    static Registration.Info info(Set<String> props, Registration.EntityInfo... es) {
        return new Registration.Info(List.of(es), props, Set.of());
    }

    static Registration.EntityInfo ei(String id, String idPattern, String type) {
        return new Registration.EntityInfo(id, idPattern, type);
    }

    static Want want(String op, String id, String idPattern, Set<String> types, Set<String> attrs) {
        return new Want(op, id, dev.cor.ngsild.query.BoundedPattern.compileOrNull(idPattern, "idPattern"), types, attrs);
    }

    private void add(Registration r) {
        regs.add(r, existing -> { });
    }

    private List<String> ids(Want w) {
        return regs.matching("", w, clock.millis()).stream().map(Registration::id).toList();
    }

    @Test
    void an_empty_registry_answers_nothing_and_any_is_false() {
        assertFalse(regs.any(""));
        assertEquals(List.of(), ids(want("retrieveEntity", "urn:a", null, Set.of(VEHICLE), Set.of())));
    }

    @Test
    void an_entity_info_with_an_id_matches_that_id_and_only_that_id() {
        add(reg("", "urn:r:1", OperationNames.DEFAULT, -1, info(Set.of(), ei("urn:v:1", null, VEHICLE))));
        assertTrue(regs.any(""));
        assertEquals(List.of("urn:r:1"), ids(want("retrieveEntity", "urn:v:1", null, Set.of(), Set.of())));
        assertEquals(List.of(), ids(want("retrieveEntity", "urn:v:2", null, Set.of(), Set.of())));
        // a query by type finds it; by another type not
        assertEquals(List.of("urn:r:1"), ids(want("queryEntity", null, null, Set.of(VEHICLE), Set.of())));
        assertEquals(List.of(), ids(want("queryEntity", null, null, Set.of(T + "Building"), Set.of())));
        // a request's idPattern against the registration's id
        assertEquals(List.of("urn:r:1"), ids(want("queryEntity", null, "urn:v:.*", Set.of(VEHICLE), Set.of())));
        assertEquals(List.of(), ids(want("queryEntity", null, "urn:x:.*", Set.of(VEHICLE), Set.of())));
    }

    @Test
    void an_id_pattern_in_the_registration_matches_the_requests_id() {
        add(reg("", "urn:r:1", OperationNames.DEFAULT, -1, info(Set.of(), ei(null, "^urn:v:[0-9]+$", VEHICLE))));
        assertEquals(List.of("urn:r:1"), ids(want("retrieveEntity", "urn:v:17", null, Set.of(), Set.of())));
        assertEquals(List.of(), ids(want("retrieveEntity", "urn:v:x", null, Set.of(), Set.of())));
        // two patterns cannot be compared: the source filters
        assertEquals(List.of("urn:r:1"), ids(want("queryEntity", null, "urn:zzz", Set.of(VEHICLE), Set.of())));
    }

    @Test
    void an_id_pattern_is_found_in_the_id_anchors_as_written() {
        // the suite's D012..D016 register urn:ngsi-ld:Vehicle:* for urn:ngsi-ld:Vehicle:<random>
        Registration.EntityInfo suite = ei(null, "urn:v:*", VEHICLE);
        assertTrue(suite.selectsId("urn:v:17"));
        assertTrue(suite.selectsId("x-urn:v"), "found anywhere without an anchor");
        Registration.EntityInfo anchored = ei(null, "^urn:v:[0-9]+$", VEHICLE);
        assertTrue(anchored.selectsId("urn:v:17"));
        assertFalse(anchored.selectsId("urn:v:17x"));
        assertTrue(ei("urn:v:1", null, VEHICLE).selectsId("urn:v:1"));
        assertFalse(ei("urn:v:1", null, VEHICLE).selectsId("urn:v:10"), "an id is equal, never found");
        assertTrue(ei(null, null, VEHICLE).selectsId("urn:anything"));
    }

    @Test
    void a_registration_pattern_that_runs_out_of_budget_is_spent_and_fails_no_request() {
        Registration.EntityInfo costly = ei(null, "((a+)+)+b", VEHICLE);
        add(reg("", "urn:r:costly", OperationNames.DEFAULT, -1, info(Set.of(), costly)));
        add(reg("", "urn:r:plain", OperationNames.DEFAULT, -1, info(Set.of(), ei(null, ":x$", VEHICLE))));
        String id = "a".repeat(40) + ":x";
        assertEquals(List.of("urn:r:plain"), ids(want("retrieveEntity", id, null, Set.of(), Set.of())),
                "the request is answered; the costly pattern does not match");
        assertTrue(costly.idPattern().spent());
        assertEquals(List.of("urn:r:plain"), ids(want("retrieveEntity", "ab:x", null, Set.of(), Set.of())),
                "spent, it matches nothing - not even an id it would find cheaply");
    }

    @Test
    void property_names_restrict_by_attrs_and_none_registered_means_all() {
        add(reg("", "urn:r:speed", OperationNames.DEFAULT, -1, info(Set.of(SPEED), ei(null, null, VEHICLE))));
        add(reg("", "urn:r:all", OperationNames.DEFAULT, -1, info(Set.of(), ei(null, null, VEHICLE))));
        assertEquals(List.of("urn:r:all", "urn:r:speed"), ids(want("queryEntity", null, null, Set.of(VEHICLE), Set.of(SPEED))));
        assertEquals(List.of("urn:r:all"), ids(want("queryEntity", null, null, Set.of(VEHICLE), Set.of(BRAND))));
        // a request naming no attributes wants them all: both sources have some
        assertEquals(List.of("urn:r:all", "urn:r:speed"), ids(want("queryEntity", null, null, Set.of(VEHICLE), Set.of())));
    }

    @Test
    void a_registration_without_entities_matches_by_attributes_alone() {
        add(reg("", "urn:r:1", OperationNames.DEFAULT, -1, new Registration.Info(List.of(), Set.of(), Set.of(BRAND))));
        assertEquals(List.of("urn:r:1"), ids(want("retrieveEntity", "urn:anything", null, Set.of(), Set.of(BRAND))));
        assertEquals(List.of(), ids(want("retrieveEntity", "urn:anything", null, Set.of(), Set.of(SPEED))));
    }

    @Test
    void the_operation_must_be_one_the_registration_serves_groups_resolved() {
        add(reg("", "urn:r:1", OperationNames.resolve(List.of("retrieveOps")), -1, info(Set.of(), ei(null, null, VEHICLE))));
        assertEquals(List.of("urn:r:1"), ids(want("retrieveEntity", "urn:v:1", null, Set.of(), Set.of())));
        assertEquals(List.of("urn:r:1"), ids(want("queryEntity", null, null, Set.of(VEHICLE), Set.of())));
        assertEquals(List.of(), ids(want("updateAttrs", "urn:v:1", null, Set.of(), Set.of())));
        assertEquals(List.of(), ids(want("retrieveEntityTypes", null, null, Set.of(), Set.of())));
    }

    @Test
    void operation_groups_resolve_as_table_4_20_2_says() {
        Set<String> update = OperationNames.resolve(List.of("updateOps"));
        assertEquals(Set.of("updateEntity", "updateAttrs", "replaceEntity", "replaceAttrs"), update);
        assertTrue(OperationNames.DEFAULT.contains("queryBatch"));
        assertFalse(OperationNames.DEFAULT.contains("createEntity"));
        assertTrue(OperationNames.resolve(List.of("redirectionOps", "createBatch")).contains("createBatch"));
        assertFalse(OperationNames.known("retrieveEverything"));
    }

    @Test
    void an_expired_registration_no_longer_matches_but_stays_retrievable() {
        add(reg("", "urn:r:1", OperationNames.DEFAULT, clock.millis() + 1000, info(Set.of(), ei(null, null, VEHICLE))));
        Want w = want("queryEntity", null, null, Set.of(VEHICLE), Set.of());
        assertEquals(List.of("urn:r:1"), ids(w));
        clock.advance(1000);
        assertEquals(List.of(), ids(w));
        assertEquals("urn:r:1", regs.get("", "urn:r:1").definition().id());
    }

    @Test
    void tenants_are_apart() {
        add(reg("a", "urn:r:1", OperationNames.DEFAULT, -1, info(Set.of(), ei(null, null, VEHICLE))));
        assertTrue(regs.any("a"));
        assertFalse(regs.any("b"));
        assertFalse(regs.any(""));
        assertEquals(List.of(), ids(want("queryEntity", null, null, Set.of(VEHICLE), Set.of())));
    }

    @Test
    void a_taken_id_is_refused_and_remove_makes_any_false_again() {
        Registration r = reg("", "urn:r:1", OperationNames.DEFAULT, -1, info(Set.of(), ei(null, null, VEHICLE)));
        add(r);
        assertNull(regs.add(r, existing -> { }));
        assertTrue(regs.remove("", "urn:r:1"));
        assertFalse(regs.remove("", "urn:r:1"));
        assertFalse(regs.any(""));
    }

    @Test
    void reports_count_forwards_and_set_the_status() {
        add(reg("", "urn:r:1", OperationNames.DEFAULT, -1, info(Set.of(), ei(null, null, VEHICLE))));
        Registrations.Live l = regs.get("", "urn:r:1");
        assertNull(l.status());
        regs.reportSuccess("", "urn:r:1", 10);
        assertEquals("ok", l.status());
        regs.reportFailure("", "urn:r:1", 20, "timeout");
        assertEquals("failed", l.status());
        assertEquals(2, l.timesSent());
        assertEquals(1, l.timesFailed());
        assertEquals(10, l.lastSuccess());
        assertEquals(20, l.lastFailure());
        assertEquals("timeout", l.lastFailureReason());
        regs.reportSuccess("", "urn:r:gone", 30); // a registration deleted meanwhile: ignored
    }

    @Test
    void a_registration_of_temporal_evolutions_serves_no_request_for_the_latest_information_5_2_9() throws Exception {
        com.fasterxml.jackson.databind.node.ObjectNode doc = new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode();
        doc.putObject("observationInterval").put("startAt", "2020-01-01T00:00:00Z");
        regs.add(new Registration("", "urn:r:t", List.of(info(Set.of(), ei(null, null, VEHICLE))), Registration.Mode.INCLUSIVE,
                OperationNames.resolve(List.of("retrieveEntity", "queryTemporal")), "http://s", Map.of(), null, 0, 0, -1,
                null, doc), existing -> { });
        assertEquals(List.of(), ids(want("retrieveEntity", "urn:v:1", null, Set.of(), Set.of())));
        assertEquals(List.of("urn:r:t"), ids(want("queryTemporal", null, null, Set.of(VEHICLE), Set.of())));
    }
}
