package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Tenants (4.14, 5.5.10, 6.3.14): NGSILD-Tenant selects a tenant; Create Entity and Batch Entity
 * Creation create it; every other operation on a tenant that does not exist is 404
 * NonexistentTenant; the default tenant always exists; tenants never see each other's data; the
 * tenant of a request is echoed in its answer. ETSI: TP/NGSI-LD/CommonBehaviours/Tenancy.
 */
class TenantTest extends ConformanceTest {

    private static Answer createIn(String tenant, ObjectNode entity) {
        return api.post("/entities").tenant(tenant).json(entity).link(model).send();
    }

    @Test
    @DisplayName("4.14 TP 414_01_01: an entity created in a tenant is read there, the tenant echoed; the default tenant does not see it")
    void isolatedAndEchoed() {
        String tenant = Entities.tenant();
        String id = Entities.id("Vehicle");
        Answer created = createIn(tenant, Entities.vehicle(id));
        Checks.created(created, id);
        assertEquals(tenant, created.header("NGSILD-Tenant"), created::toString);
        Answer read = api.get(Ngsi.entity(id)).tenant(tenant).link(model).send();
        Json.assertSame(Entities.vehicle(id), Checks.okJson(read, model));
        assertEquals(tenant, read.header("NGSILD-Tenant"), read::toString);
        assertGone(id);
    }

    @Test
    @DisplayName("4.14 TP 414_01_02: another existing tenant does not see the entity (404 ResourceNotFound)")
    void otherTenantBlind() {
        String a = Entities.tenant();
        String b = Entities.tenant();
        String id = Entities.id("Vehicle");
        Checks.created(createIn(a, Entities.vehicle(id)), id);
        String seed = Entities.id("Vehicle");
        Checks.created(createIn(b, Entities.minimal(seed, "Vehicle")), seed);
        Checks.problem(api.get(Ngsi.entity(id)).tenant(b).link(model).send(), 404, "ResourceNotFound");
    }

    @Test
    @DisplayName("5.5.10 TP 5510_01_01: a query in a tenant never created is 404 NonexistentTenant, echoed; after a create it answers 200")
    void nonexistentThenCreated() {
        String tenant = Entities.tenant();
        String type = Entities.uniqueName("Bldg");
        Answer before = api.get("/entities").tenant(tenant).query("type", type).send();
        Checks.problem(before, 404, "NonexistentTenant");
        assertEquals(tenant, before.header("NGSILD-Tenant"), before::toString);
        String id = Entities.id("Building");
        Answer created = api.post("/entities").tenant(tenant).json(Entities.minimal(id, type)).send();
        Checks.created(created, id);
        assertEquals(tenant, created.header("NGSILD-Tenant"), created::toString);
        JsonNode list = Checks.okJson(api.get("/entities").tenant(tenant).query("type", type).send(), Json.CORE);
        assertEquals(1, list.size(), list::toString);
        assertEquals(id, list.get(0).path("id").asText());
    }

    @Test
    @DisplayName("5.5.10 TP 5510_01_02: the default tenant always exists: a query without a tenant is never NonexistentTenant")
    void defaultTenantExists() {
        JsonNode list = Checks.okJson(api.get("/entities").query("type", Entities.uniqueName("Bldg")).send(), Json.CORE);
        assertTrue(list.isArray() && list.isEmpty(), list::toString);
    }

    @Test
    @DisplayName("5.5.10: retrieving an entity in a tenant never created is 404 NonexistentTenant")
    void retrieveInNonexistentTenant() {
        Checks.problem(api.get(Ngsi.entity(Entities.id("Vehicle"))).tenant(Entities.tenant()).send(), 404, "NonexistentTenant");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"delete", "append", "update", "partial", "replace", "merge", "deleteAttr", "batchDelete", "batchUpdate"})
    @DisplayName("5.5.10: any operation but a create on a tenant never created is 404 NonexistentTenant, and does not create it")
    void writesDoNotCreateTenants(String op) {
        String tenant = Entities.tenant();
        String id = Entities.id("Vehicle");
        ObjectNode attr = Json.obj("{\"speed\": {\"type\": \"Property\", \"value\": 1}}");
        Ngsi.Request r = switch (op) {
            case "delete" -> api.delete(Ngsi.entity(id));
            case "append" -> api.post(Ngsi.entity(id) + "/attrs").json(attr);
            case "update" -> api.patch(Ngsi.entity(id) + "/attrs").json(attr);
            case "partial" -> api.patch(Ngsi.attr(id, "speed")).json(Json.obj("{\"value\": 2}"));
            case "replace" -> api.put(Ngsi.entity(id)).json(Entities.minimal(id, "Vehicle"));
            case "merge" -> api.patch(Ngsi.entity(id)).json(attr);
            case "deleteAttr" -> api.delete(Ngsi.attr(id, "speed"));
            case "batchDelete" -> api.post("/entityOperations/delete").json("[\"" + id + "\"]");
            default -> api.post("/entityOperations/update").json(Json.array(Json.with(Entities.minimal(id, "Vehicle"), "speed",
                    attr.get("speed"))));
        };
        // A batch too: the tenant is wrong for the whole request, not per entity.
        Checks.problem(r.tenant(tenant).send(), 404, "NonexistentTenant");
        Checks.problem(api.get("/entities").tenant(tenant).query("type", "Vehicle").send(), 404, "NonexistentTenant");
    }

    @Test
    @DisplayName("5.5.10: Batch Entity Creation creates the tenant")
    void batchCreateCreatesTenant() {
        String tenant = Entities.tenant();
        String id = Entities.id("Vehicle");
        Answer a = api.post("/entityOperations/create").tenant(tenant).json(Json.array(Entities.minimal(id, "Vehicle"))).link(model).send();
        Checks.createdIds(a, List.of(id));
        Json.assertSame(Entities.minimal(id, "Vehicle"), Checks.okJson(api.get(Ngsi.entity(id)).tenant(tenant).link(model).send(), model));
    }

    @Test
    @DisplayName("4.14: one id in two tenants is two entities: each changes and goes alone")
    void sameIdTwoTenants() {
        String a = Entities.tenant();
        String b = Entities.tenant();
        String id = Entities.id("Vehicle");
        Checks.created(createIn(a, Entities.vehicle(id)), id);
        Checks.created(createIn(b, Entities.minimal(id, "Car")), id);
        Checks.noContent(api.post(Ngsi.entity(id) + "/attrs").tenant(b).json(Json.obj("{\"speed\": {\"type\": \"Property\", \"value\": 9}}"))
                .link(model).send());
        Json.assertSame(Entities.vehicle(id), Checks.okJson(api.get(Ngsi.entity(id)).tenant(a).link(model).send(), model));
        Checks.noContent(api.delete(Ngsi.entity(id)).tenant(a).send());
        Checks.problem(api.get(Ngsi.entity(id)).tenant(a).send(), 404, "ResourceNotFound");
        Json.assertSame(Json.obj("{\"id\": \"%s\", \"type\": \"Car\", \"speed\": {\"type\": \"Property\", \"value\": 9}}", id),
                Checks.okJson(api.get(Ngsi.entity(id)).tenant(b).link(model).send(), model));
    }

    @Test
    @DisplayName("4.14: a listing in a tenant holds that tenant's entities only")
    void listingIsolated() {
        String a = Entities.tenant();
        String b = Entities.tenant();
        List<String> inA = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String id = Entities.id("Vehicle");
            Checks.created(createIn(a, Entities.minimal(id, "Vehicle")), id);
            inA.add(id);
        }
        String inB = Entities.id("Vehicle");
        Checks.created(createIn(b, Entities.minimal(inB, "Vehicle")), inB);
        JsonNode list = Checks.okJson(api.get("/entities").tenant(a).link(model).query("type", "Vehicle").send(), model);
        List<String> ids = new ArrayList<>();
        list.forEach(e -> ids.add(e.path("id").asText()));
        assertEquals(new TreeSet<>(inA), new TreeSet<>(ids), list::toString);
    }
}
