package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.TreeSet;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The {@code datasetId} parameter of Query Entities and Retrieve Entity (4.5.5, 5.7.1, 5.7.2):
 * only the attribute instances it names are shown ({@code @none}: the default one), an attribute
 * left with none is dropped, and the entity is listed even with none left. One entity of a type
 * no other test uses: {@code name} in three instances (default, fr, de), {@code locatedAt} in fr.
 * ETSI: TP 019_12_01..07.
 */
class QueryDatasetIdTest extends ConformanceTest {
    private static String type;
    private static String id;

    @BeforeAll
    static void entity() {
        type = Entities.uniqueName("Tower");
        id = Entities.id(type);
        createPlain(Json.obj("""
                {"id": "%s", "type": "%s",
                 "name": [{"type": "Property", "value": "Eiffel Tower"},
                          {"type": "Property", "value": "Tour Eiffel", "datasetId": "urn:ngsi-ld:Dataset:fr"},
                          {"type": "Property", "value": "Eiffelturm", "datasetId": "urn:ngsi-ld:Dataset:de"}],
                 "locatedAt": {"type": "Relationship", "object": "urn:ngsi-ld:City:Paris", "datasetId": "urn:ngsi-ld:Dataset:fr"}}""",
                id, type));
    }

    /** "attribute=value|value" for each attribute shown, sorted. */
    private static String shown(JsonNode e) {
        TreeSet<String> out = new TreeSet<>();
        e.properties().forEach(m -> {
            if (m.getKey().equals("id") || m.getKey().equals("type")) {
                return;
            }
            TreeSet<String> values = new TreeSet<>();
            JsonNode v = m.getValue();
            for (JsonNode i : v.isArray() ? v : Json.array(v)) {
                values.add(i.has("value") ? i.get("value").asText() : i.path("object").asText());
            }
            out.add(m.getKey() + "=" + String.join("|", values));
        });
        return out.isEmpty() ? "-" : String.join(" ", out);
    }

    @ParameterizedTest(name = "attrs={0} datasetId={1} -> {2}")
    @CsvSource(delimiter = '\t', nullValues = "", value = {
        "name\t\tname=Eiffel Tower|Eiffelturm|Tour Eiffel",
        "\turn:ngsi-ld:Dataset:fr\tlocatedAt=urn:ngsi-ld:City:Paris name=Tour Eiffel",
        "\turn:ngsi-ld:Dataset:fr,urn:ngsi-ld:Dataset:de\tlocatedAt=urn:ngsi-ld:City:Paris name=Eiffelturm|Tour Eiffel",
        "\t@none\tname=Eiffel Tower",
        "name\t@none\tname=Eiffel Tower",
        "name\turn:ngsi-ld:Dataset:de\tname=Eiffelturm",
        "name\turn:ngsi-ld:Dataset:es\t-"})
    @DisplayName("4.5.5, 5.7.2 TP 019_12_01..07: datasetId keeps the instances it names; the entity stays listed with none left")
    void datasetIdSelectsInstances(String attrs, String datasetId, String expected) {
        Ngsi.Request r = api.get("/entities").query("type", type);
        if (attrs != null) {
            r.query("attrs", attrs);
        }
        if (datasetId != null) {
            r.query("datasetId", datasetId);
        }
        JsonNode list = Checks.okJson(r.send(), Json.CORE);
        assertEquals(1, list.size(), list::toString);
        assertEquals(expected, shown(list.get(0)));
        if (attrs == null && datasetId != null) {
            JsonNode one = Checks.okJson(api.get(Ngsi.entity(id)).query("datasetId", datasetId).send(), Json.CORE);
            assertEquals(expected, shown(one), "Retrieve Entity narrows the same way");
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '\t', value = {"not-a-uri", "urn:ngsi-ld:Dataset:fr,@nada"})
    @DisplayName("5.7.2: a datasetId that is neither a URI nor @none is 400 BadRequestData")
    void invalidDatasetId(String datasetId) {
        Checks.badData(api.get("/entities").query("type", type).query("datasetId", datasetId).send(), "datasetId");
    }
}
