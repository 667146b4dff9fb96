package dev.cor.ngsild.conformance;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Fresh identifiers and the entities the tests create, written once here so every test class builds
 * them alike. Each call returns a new object; nothing is shared.
 */
final class Entities {
    private Entities() {
    }

    /** A fresh entity id, {@code urn:ngsi-ld:<type>:<uuid>}. */
    static String id(String type) {
        return "urn:ngsi-ld:" + type + ":" + UUID.randomUUID();
    }

    /**
     * A fresh NGSI-LD name (4.6.2: a letter, then letters, digits, underscores), for entity types and
     * attribute names no other test uses: a listing by type then sees only this test's entities.
     */
    static String uniqueName(String prefix) {
        StringBuilder s = new StringBuilder(prefix);
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < 10; i++) {
            s.append((char) ('a' + r.nextInt(26)));
        }
        return s.toString();
    }

    /** A fresh tenant name. */
    static String tenant() {
        return uniqueName("tenant");
    }

    /** {@code {"id": id, "type": type}}. */
    static ObjectNode minimal(String id, String type) {
        return Json.obj("""
                {"id": "%s", "type": "%s"}""", id, type);
    }

    /** {@code entity} with {@code "@context": url} (for an application/ld+json body). */
    static ObjectNode withContext(ObjectNode entity, String url) {
        return Json.with(entity, "@context", url);
    }

    /** A Building with the four simple Properties of the suite's examples (one with unitCode and observedAt). */
    static ObjectNode building(String id) {
        return Json.obj("""
                {
                  "id": "%s",
                  "type": "Building",
                  "name": {"type": "Property", "value": "Eiffel Tower"},
                  "subCategory": {"type": "Property", "value": "tourism"},
                  "airQualityLevel": {"type": "Property", "value": 4, "unitCode": "C62", "observedAt": "2020-09-09T16:40:00.000Z"},
                  "almostFull": {"type": "Property", "value": false}
                }""", id);
    }

    /**
     * A Vehicle with a Property, a Relationship with a sub-Relationship and observedAt, and a
     * two-instance {@code speed} (the default instance and {@code urn:ngsi-ld:Dataset:gps}).
     */
    static ObjectNode vehicle(String id) {
        return Json.obj("""
                {
                  "id": "%s",
                  "type": "Vehicle",
                  "brandName": {"type": "Property", "value": "Mercedes"},
                  "isParked": {
                    "type": "Relationship",
                    "object": "urn:ngsi-ld:OffStreetParking:Downtown1",
                    "observedAt": "2017-07-29T12:00:04Z",
                    "providedBy": {"type": "Relationship", "object": "urn:ngsi-ld:Person:Bob"}
                  },
                  "speed": [
                    {"type": "Property", "value": 55, "source": {"type": "Property", "value": "Speedometer"}},
                    {"type": "Property", "value": 54.5, "source": {"type": "Property", "value": "GPS"},
                     "datasetId": "urn:ngsi-ld:Dataset:gps"}
                  ]
                }""", id);
    }

    /**
     * A Building with one attribute of the four kinds an NGSI-LD Null deletes (name, locatedAt,
     * location, street), each with a default instance and one of {@code urn:ngsi-ld:Dataset:01}.
     */
    static ObjectNode twoInstancesOfEachKind(String id) {
        return Json.obj("""
                {"id": "%s", "type": "Building",
                 "name": [{"type": "Property", "value": "Eiffel Tower"},
                          {"type": "Property", "value": "Tour Eiffel", "datasetId": "urn:ngsi-ld:Dataset:01"}],
                 "locatedAt": [{"type": "Relationship", "object": "urn:ngsi-ld:City:Paris"},
                               {"type": "Relationship", "object": "urn:ngsi-ld:City:Lyon", "datasetId": "urn:ngsi-ld:Dataset:01"}],
                 "location": [{"type": "GeoProperty", "value": {"type": "Point", "coordinates": [-8.5, 41.2]}},
                              {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [2.3, 48.8]}, "datasetId": "urn:ngsi-ld:Dataset:01"}],
                 "street": [{"type": "LanguageProperty", "languageMap": {"fr": "Grand Place", "nl": "Grote Markt"}},
                            {"type": "LanguageProperty", "languageMap": {"en": "Main Square"}, "datasetId": "urn:ngsi-ld:Dataset:01"}]}""", id);
    }

    /** The NGSI-LD Null of an attribute kind (5.2.1, 4.5.0): the value, object or languageMap that deletes. */
    static ObjectNode nullOf(String kind) {
        return switch (kind) {
            case "Property" -> Json.obj("{\"type\": \"Property\", \"value\": \"urn:ngsi-ld:null\"}");
            case "Relationship" -> Json.obj("{\"type\": \"Relationship\", \"object\": \"urn:ngsi-ld:null\"}");
            case "GeoProperty" -> Json.obj("{\"type\": \"GeoProperty\", \"value\": \"urn:ngsi-ld:null\"}");
            case "LanguageProperty" -> Json.obj("{\"type\": \"LanguageProperty\", \"languageMap\": {\"@none\": \"urn:ngsi-ld:null\"}}");
            default -> throw new IllegalArgumentException(kind);
        };
    }
}
