package dev.cor.server;

import dev.cor.http.CorHttpServer;
import dev.cor.rest.proto.CorProtoServer;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;

/**
 * {@code GET /metrics}: the launcher's Prometheus registry and its text. The broker registers its
 * meters in it (it is the registry the broker is built with); the servers' are added once they
 * are started (a scrape that comes before has the broker's only); the process and JVM families
 * come from the Prometheus client's own instrumentation, in the registry under Micrometer's. Every
 * meter reads counters any thread may read; the scrape runs on the loop that asked (recent values,
 * not a snapshot across them).
 */
final class ServerMetrics {
    /** The Prometheus text format 0.0.4, which {@code promtool check metrics} reads. */
    static final String CONTENT_TYPE = PrometheusTextFormatWriter.CONTENT_TYPE;

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    ServerMetrics(BuildInfo build) {
        Gauge.builder("cor.server.info", () -> 1).description("The running launcher: its version and build.")
                .tag("version", build.version()).tag("build", build.build()).tag("jdk", Runtime.version().toString())
                .register(registry);
        JvmMetrics.builder().register(registry.getPrometheusRegistry());
    }

    /** The registry the broker is built with. */
    MeterRegistry registry() {
        return registry;
    }

    /**
     * Adds the servers' meters: HTTP (and {@code cor://} when it runs, the access log when it is
     * on). Called once, when they are started.
     */
    void attach(CorHttpServer http, CorProtoServer cor, AccessLog accessLog) {
        counter("cor.http.requests", "HTTP requests read and dispatched.", http, CorHttpServer::requests);
        counter("cor.http.requests.rejected", "HTTP requests refused before dispatch (malformed, over a limit, timed out).",
                http, CorHttpServer::requestsRejected);
        counter("cor.http.answers.written", "HTTP answers written in full.", http, CorHttpServer::answersWritten);
        counter("cor.http.connections.accepted", "HTTP connections accepted.", http, CorHttpServer::connectionsAccepted);
        gauge("cor.http.connections.open", "HTTP connections open now.", http, CorHttpServer::connectionsOpen);
        String dispatch = "Requests by where they ran: inline on their loop, as a coroutine of it, or on a worker (the hop).";
        FunctionCounter.builder("cor.dispatch", http, CorHttpServer::inlineCount).description(dispatch).tag("mode", "inline")
                .register(registry);
        FunctionCounter.builder("cor.dispatch", http, CorHttpServer::coroutineCount).description(dispatch)
                .tag("mode", "coroutine").register(registry);
        FunctionCounter.builder("cor.dispatch", http, CorHttpServer::hopCount).description(dispatch).tag("mode", "hop")
                .register(registry);
        int loops = http.liveCoroutines().length;
        for (int i = 0; i < loops; i++) {
            int loop = i;
            Gauge.builder("cor.loop.coroutines.live", http, h -> h.liveCoroutines()[loop])
                    .description("Live coroutines on each loop.").tag("loop", Integer.toString(loop)).strongReference(true)
                    .register(registry);
            Gauge.builder("cor.loop.connections", http, h -> h.connectionsPerLoop()[loop])
                    .description("HTTP connections on each loop.").tag("loop", Integer.toString(loop)).strongReference(true)
                    .register(registry);
        }
        if (cor != null) {
            counter("cor.proto.requests", "cor:// requests read.", cor, CorProtoServer::requests);
            counter("cor.proto.responses", "cor:// responses sent.", cor, CorProtoServer::responses);
            counter("cor.proto.connections.accepted", "cor:// connections accepted.", cor, CorProtoServer::connectionsAccepted);
            gauge("cor.proto.connections.open", "cor:// connections open now.", cor, CorProtoServer::connectionsOpen);
        }
        if (accessLog != null) {
            counter("cor.access.log.dropped", "Access log lines dropped because their output did not keep up.", accessLog,
                    AccessLog::dropped);
        }
    }

    /** The scrape: every family in the Prometheus text format 0.0.4. */
    String render() {
        return registry.scrape(CONTENT_TYPE);
    }

    private <T> void counter(String name, String help, T server, java.util.function.ToDoubleFunction<T> value) {
        FunctionCounter.builder(name, server, value).description(help).register(registry);
    }

    private <T> void gauge(String name, String help, T server, java.util.function.ToDoubleFunction<T> value) {
        Gauge.builder(name, server, value).description(help).strongReference(true).register(registry);
    }
}
