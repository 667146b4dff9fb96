package dev.cor.server;

import java.util.ArrayList;
import java.util.List;

import static dev.cor.ngsild.PrometheusText.counter;
import static dev.cor.ngsild.PrometheusText.family;
import static dev.cor.ngsild.PrometheusText.label;
import static dev.cor.ngsild.PrometheusText.sample;

import dev.cor.http.CorHttpServer;
import dev.cor.ngsild.CorNgsild;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.durable.DurableEntityStore;
import dev.cor.rest.proto.CorProtoServer;

/**
 * {@code GET /metrics}: the broker's counters and the servers' in the Prometheus text format
 * 0.0.4. Rendered on the loop that asked, from counters any thread may read (recent values, not
 * a snapshot across them). The servers are attached once they are started; a scrape that comes
 * before gets the broker's part only.
 */
final class ServerMetrics {
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final CorNgsild broker;
    private final BuildInfo build;
    private volatile CorHttpServer http;
    private volatile CorProtoServer cor;
    private volatile AccessLog accessLog;

    ServerMetrics(CorNgsild broker, BuildInfo build) {
        this.broker = broker;
        this.build = build;
    }

    void attach(CorHttpServer http, CorProtoServer cor, AccessLog accessLog) {
        this.http = http;
        this.cor = cor;
        this.accessLog = accessLog;
    }

    String render() {
        StringBuilder out = new StringBuilder(4096);
        family(out, "cor_server_info", "gauge", "The running launcher: its version and build.");
        out.append("cor_server_info{version=\"");
        label(out, build.version()).append("\",build=\"");
        label(out, build.build()).append("\",jdk=\"");
        label(out, Runtime.version().toString()).append("\"} 1\n");

        broker.metrics().appendPrometheus(out);
        entities(out);
        contextCache(out);
        if (broker.store() instanceof DurableEntityStore durable) {
            durable.appendPrometheus(out);
        }

        CorHttpServer h = http;
        if (h != null) {
            counter(out, "cor_http_requests_total", "HTTP requests read and dispatched.", h.requests());
            counter(out, "cor_http_requests_rejected_total",
                    "HTTP requests refused before dispatch (malformed, over a limit, timed out).", h.requestsRejected());
            counter(out, "cor_http_answers_written_total", "HTTP answers written in full.", h.answersWritten());
            counter(out, "cor_http_connections_accepted_total", "HTTP connections accepted.", h.connectionsAccepted());
            family(out, "cor_http_connections_open", "gauge", "HTTP connections open now.");
            sample(out, "cor_http_connections_open", h.connectionsOpen());
            family(out, "cor_dispatch_total", "counter",
                    "Requests by where they ran: inline on their loop, as a coroutine of it, or on a worker (the hop).");
            out.append("cor_dispatch_total{mode=\"inline\"} ").append(h.inlineCount()).append('\n');
            out.append("cor_dispatch_total{mode=\"coroutine\"} ").append(h.coroutineCount()).append('\n');
            out.append("cor_dispatch_total{mode=\"hop\"} ").append(h.hopCount()).append('\n');
            perLoop(out, "cor_loop_coroutines_live", "Live coroutines on each loop.", h.liveCoroutines());
            perLoop(out, "cor_loop_connections", "HTTP connections on each loop.", h.connectionsPerLoop());
        }
        CorProtoServer c = cor;
        if (c != null) {
            counter(out, "cor_proto_requests_total", "cor:// requests read.", c.requests());
            counter(out, "cor_proto_responses_total", "cor:// responses sent.", c.responses());
            counter(out, "cor_proto_connections_accepted_total", "cor:// connections accepted.", c.connectionsAccepted());
            family(out, "cor_proto_connections_open", "gauge", "cor:// connections open now.");
            sample(out, "cor_proto_connections_open", c.connectionsOpen());
        }
        AccessLog a = accessLog;
        if (a != null) {
            counter(out, "cor_access_log_dropped_total",
                    "Access log lines dropped because their output did not keep up.", a.dropped());
        }
        return out.toString();
    }

    /** Entities held per tenant (the default tenant is {@code tenant=""}). */
    private void entities(StringBuilder out) {
        EntityStore store = broker.store();
        List<String> tenants = new ArrayList<>(store.tenants());
        tenants.sort(null);
        family(out, "cor_ngsild_entities", "gauge", "Entities held, by tenant.");
        for (String t : tenants) {
            out.append("cor_ngsild_entities{tenant=\"");
            label(out, t).append("\"} ").append(store.count(t)).append('\n');
        }
    }

    /** The {@code @context} cache's counters: hits, misses, downloads, failures, entries, bytes. */
    private void contextCache(StringBuilder out) {
        broker.contexts().appendPrometheus(out);
    }

    private static void perLoop(StringBuilder out, String name, String help, int[] values) {
        family(out, name, "gauge", help);
        for (int i = 0; i < values.length; i++) {
            out.append(name).append("{loop=\"").append(i).append("\"} ").append(values[i]).append('\n');
        }
    }
}
