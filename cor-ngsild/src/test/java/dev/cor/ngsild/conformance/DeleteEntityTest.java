package dev.cor.ngsild.conformance;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Delete Entity (5.6.6), DELETE /entities/{entityId} (6.5.3.2).
 * ETSI: TP/NGSI-LD/ContextInformation/Provision/Entities/DeleteEntity.
 */
class DeleteEntityTest extends ConformanceTest {

    @Test
    @DisplayName("5.6.6 TP 002_01_01: delete answers 204 with no body; the entity is gone")
    void delete() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.noContent(api.delete(Ngsi.entity(id)).send());
        assertGone(id);
    }

    @Test
    @DisplayName("5.6.6 TP 002_02_01: an id that is not a URI is 400 BadRequestData")
    void invalidId() {
        Checks.badData(api.delete(Ngsi.entity("thisisaninvaliduri")).send(), "thisisaninvaliduri");
    }

    @Test
    @DisplayName("5.6.6 TP 002_03_01: an id not known is 404 ResourceNotFound")
    void unknownId() {
        Checks.problem(api.delete(Ngsi.entity(Entities.id("Building"))).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.6.6: a second delete of the same entity is 404 ResourceNotFound")
    void deleteTwice() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.noContent(api.delete(Ngsi.entity(id)).send());
        Checks.problem(api.delete(Ngsi.entity(id)).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.6.6: a deleted id can be created again, as a new entity")
    void recreate() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        Checks.noContent(api.delete(Ngsi.entity(id)).send());
        create(Entities.minimal(id, "Vehicle"));
        Json.assertSame(Entities.minimal(id, "Vehicle"), retrieve(id));
    }

    @Test
    @DisplayName("4.17 TP 566_01_01: a type selector the entity does not match is 404 and the entity stays; the matching one deletes it")
    void typeSelector() {
        String id = Entities.id("Vehicle");
        createPlain(Entities.minimal(id, "Building"));
        Checks.problem(api.delete(Ngsi.entity(id)).query("type", "Vehicle").send(), 404, "ResourceNotFound");
        Checks.okJson(api.get(Ngsi.entity(id)).send());
        Checks.noContent(api.delete(Ngsi.entity(id)).query("type", "Building").send());
        Checks.problem(api.get(Ngsi.entity(id)).send(), 404, "ResourceNotFound");
    }
}
