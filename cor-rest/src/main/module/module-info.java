/**
 * The request model over cor's loops: an application's "can this wait?" answer and handler
 * ({@code dev.cor.rest}), the dispatcher that runs each request inline, as a coroutine or on a
 * worker, the non-blocking HTTP client ({@code dev.cor.rest.client}) and the {@code cor://}
 * protocol ({@code dev.cor.rest.proto}). TLS on the loop ({@code dev.cor.rest.tls}) is shared
 * with the HTTP server only.
 */
module dev.cor.rest {
    requires transitive dev.cor.base;
    requires transitive com.fasterxml.jackson.databind;
    requires com.fasterxml.jackson.core;
    requires jdk.jfr;
    requires org.agrona;
    requires org.jctools.core;

    exports dev.cor.rest;
    exports dev.cor.rest.client;
    exports dev.cor.rest.proto;
    exports dev.cor.rest.tls to dev.cor.http;
}
