/**
 * An embeddable NGSI-LD context broker (ETSI GS CIM 009) on cor's loops. Its API: the broker and
 * its status ({@code dev.cor.ngsild}), what a host decides - limits and authorization
 * ({@code dev.cor.ngsild.policy}) -, its meters ({@code dev.cor.ngsild.metrics}), the store SPI
 * with the in-memory store ({@code dev.cor.ngsild.store}, its data in {@code dev.cor.ngsild.model})
 * and the durable store ({@code dev.cor.ngsild.store.durable}), and the error types its
 * ProblemDetails name ({@code dev.cor.ngsild.error}). Everything else - the HTTP binding, the
 * {@code @context} service, queries, subscriptions, federation - is internal: doc/architecture.md
 * draws it.
 */
module dev.cor.ngsild {
    requires transitive dev.cor.rest;
    requires transitive micrometer.core;
    requires com.fasterxml.jackson.core;
    requires jdk.jfr;
    requires org.eclipse.paho.client.mqttv3;
    requires org.jctools.core;
    requires org.locationtech.jts;
    requires org.postgresql.jdbc;
    requires transitive java.sql;

    exports dev.cor.ngsild;
    exports dev.cor.ngsild.error;
    exports dev.cor.ngsild.metrics;
    exports dev.cor.ngsild.model;
    exports dev.cor.ngsild.policy;
    exports dev.cor.ngsild.store;
    exports dev.cor.ngsild.store.durable;
    exports dev.cor.ngsild.store.postgres; // PostgresEntityStore; pgjdbc makes YieldingSocketFactory by reflection
}
