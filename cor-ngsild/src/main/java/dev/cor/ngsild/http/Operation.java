package dev.cor.ngsild.http;

import java.util.Set;

/**
 * The broker's operations (ETSI GS CIM 009 § 5.6-5.7, 5.13), each with the query parameters it
 * takes (§ 6.4-6.30): a parameter outside that set is an InvalidRequest (§ 6.3.20). The name is
 * what {@code /metrics} counts requests by.
 */
enum Operation {
    CREATE_ENTITY("createEntity", false, Set.of("local")),
    QUERY_ENTITIES("queryEntities", true, Set.of("id", "type", "idPattern", "attrs", "pick", "omit", "q", "scopeQ",
            "geoQ", "georel", "geometry", "coordinates", "geoproperty", "geometryProperty", "lang", "options",
            "format", "limit", "offset", "count", "csf", "local", "datasetId", "containedBy", "join", "joinLevel",
            "entityMap", "collation", "orderBy", "ordering", "orderFrom", "orderGeometry", "expandValues", "jsonKeys",
            "splitEntities")),
    QUERY_ENTITIES_POST("queryEntitiesPost", true, Set.of("lang", "options", "format", "limit", "offset", "count",
            "local", "geometryProperty", "splitEntities")),
    RETRIEVE_ENTITY("retrieveEntity", true, Set.of("attrs", "pick", "omit", "geometryProperty", "lang", "options",
            "format", "type", "local", "datasetId", "join", "joinLevel", "containedBy", "entityMap")),
    REPLACE_ENTITY("replaceEntity", false, Set.of("type", "local")),
    MERGE_ENTITY("mergeEntity", false, Set.of("type", "options", "local", "observedAt", "format")),
    DELETE_ENTITY("deleteEntity", false, Set.of("type", "local")),
    PURGE_ENTITIES("purgeEntity", false, Set.of("type", "id", "idPattern", "attrs", "q", "scopeQ", "geoQ", "georel",
            "geometry", "coordinates", "geoproperty", "csf", "local", "keep", "drop")),
    APPEND_ATTRIBUTES("appendAttributes", false, Set.of("options", "type", "local", "format")),
    UPDATE_ATTRIBUTES("updateAttributes", false, Set.of("type", "local", "options", "format")),
    PARTIAL_ATTRIBUTE_UPDATE("partialAttributeUpdate", false, Set.of("type", "local", "options", "format")),
    REPLACE_ATTRIBUTE("replaceAttribute", false, Set.of("type", "local", "options", "format")),
    DELETE_ATTRIBUTE("deleteAttribute", false, Set.of("datasetId", "deleteAll", "type", "local")),
    BATCH_CREATE("batchCreate", false, Set.of("local")),
    BATCH_UPSERT("batchUpsert", false, Set.of("options", "local")),
    BATCH_UPDATE("batchUpdate", false, Set.of("options", "local")),
    BATCH_DELETE("batchDelete", false, Set.of("local")),
    BATCH_MERGE("batchMerge", false, Set.of("local", "options")),
    LIST_TYPES("retrieveEntityTypes", true, Set.of("details", "local")),
    RETRIEVE_TYPE("retrieveEntityTypeInfo", true, Set.of("local")),
    LIST_ATTRIBUTES("retrieveAttributes", true, Set.of("details", "local")),
    RETRIEVE_ATTRIBUTE("retrieveAttributeInfo", true, Set.of("local")),
    CREATE_SUBSCRIPTION("createSubscription", false, Set.of()),
    QUERY_SUBSCRIPTIONS("querySubscriptions", true, Set.of("limit", "offset", "count", "local", "options")),
    RETRIEVE_SUBSCRIPTION("retrieveSubscription", true, Set.of("options")),
    UPDATE_SUBSCRIPTION("updateSubscription", false, Set.of()),
    DELETE_SUBSCRIPTION("deleteSubscription", false, Set.of()),
    /** A context source's notification of a subscription this broker forwarded to it (§ 5.8.1.4). */
    REMOTE_NOTIFY("remoteNotify", false, Set.of()),
    CREATE_CSR("registerContextSource", false, Set.of()),
    QUERY_CSR("queryContextSourceRegistrations", true, Set.of("id", "type", "idPattern", "attrs", "q", "csf", "georel",
            "geometry", "coordinates", "geoproperty", "timeproperty", "timerel", "timeAt", "endTimeAt", "scopeQ",
            "options", "limit", "offset", "count", "local")),
    RETRIEVE_CSR("retrieveContextSourceRegistration", true, Set.of("options")),
    UPDATE_CSR("updateContextSourceRegistration", false, Set.of()),
    DELETE_CSR("deleteContextSourceRegistration", false, Set.of()),
    CREATE_CSR_SUBSCRIPTION("createCSRSubscription", false, Set.of()),
    QUERY_CSR_SUBSCRIPTIONS("queryCSRSubscriptions", true, Set.of("limit", "offset", "count", "options")),
    RETRIEVE_CSR_SUBSCRIPTION("retrieveCSRSubscription", true, Set.of("options")),
    UPDATE_CSR_SUBSCRIPTION("updateCSRSubscription", false, Set.of()),
    DELETE_CSR_SUBSCRIPTION("deleteCSRSubscription", false, Set.of()),
    CREATE_TEMPORAL("createTemporalEvolution", false, Set.of("local")),
    QUERY_TEMPORAL("queryTemporalEvolution", true, Set.of("id", "type", "idPattern", "attrs", "pick", "omit", "q",
            "scopeQ", "geoQ", "georel", "geometry", "coordinates", "geoproperty", "csf", "lang", "options", "format",
            "limit", "offset", "count", "local", "datasetId", "timerel", "timeAt", "endTimeAt", "timeproperty", "lastN",
            "aggrMethods", "aggrPeriodDuration", "expandValues", "orderBy")),
    QUERY_TEMPORAL_POST("queryTemporalEvolutionPost", true, Set.of("lang", "options", "format", "limit", "offset",
            "count", "local")),
    RETRIEVE_TEMPORAL("retrieveTemporalEvolution", true, Set.of("attrs", "pick", "omit", "lang", "options", "format",
            "type", "local", "datasetId", "timerel", "timeAt", "endTimeAt", "timeproperty", "lastN", "aggrMethods",
            "aggrPeriodDuration")),
    DELETE_TEMPORAL("deleteTemporalEvolution", false, Set.of("type", "local")),
    APPEND_TEMPORAL("addTemporalAttributes", false, Set.of("local")),
    DELETE_TEMPORAL_ATTRIBUTE("deleteTemporalAttribute", false, Set.of("datasetId", "deleteAll", "local")),
    MODIFY_INSTANCE("modifyAttributeInstance", false, Set.of("local")),
    DELETE_INSTANCE("deleteAttributeInstance", false, Set.of("local")),
    LIST_CONTEXTS("listContexts", true, Set.of("details", "kind")),
    ADD_CONTEXT("addContext", false, Set.of()),
    SERVE_CONTEXT("serveContext", true, Set.of("details")),
    DELETE_CONTEXT("deleteContext", false, Set.of("reload"));

    private final String metricName;
    private final boolean read;
    private final Set<String> parameters;

    Operation(String metricName, boolean read, Set<String> parameters) {
        this.metricName = metricName;
        this.read = read;
        this.parameters = parameters;
    }

    String metricName() {
        return metricName;
    }

    /** Whether it is one of the temporal API's (§ 5.6.11-5.6.16, 5.7.3-5.7.4). */
    boolean isTemporal() {
        return switch (this) {
            case CREATE_TEMPORAL, QUERY_TEMPORAL, QUERY_TEMPORAL_POST, RETRIEVE_TEMPORAL, DELETE_TEMPORAL, APPEND_TEMPORAL,
                    DELETE_TEMPORAL_ATTRIBUTE, MODIFY_INSTANCE, DELETE_INSTANCE -> true;
            default -> false;
        };
    }

    /** Whether it reads only: a read of a tenant that does not exist is NonexistentTenant (§ 5.5.10). */
    boolean isRead() {
        return read;
    }

    boolean takes(String parameter) {
        return parameters.contains(parameter);
    }
}
