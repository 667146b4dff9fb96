package dev.cor.ngsild;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Consumer;

import dev.cor.http.CorHttpServer;
import dev.cor.rest.proto.CorProtoServer;

/**
 * A broker started for a test: {@link CorNgsild} behind a {@link CorHttpServer} on a free port of
 * 127.0.0.1, mounted as the server's service (its hooks and lifecycle), and - as the launcher's {@code --corPort} does - a
 * {@link CorProtoServer} on the same loops and dispatcher, on another free port. Tests talk to it
 * over real sockets at {@link #baseUrl()} (HTTP) or {@link #corUrl()} ({@code cor://}).
 */
public final class TestBroker implements AutoCloseable {
    private final CorNgsild broker;
    private final CorHttpServer server;
    private final CorProtoServer cor;

    private TestBroker(CorNgsild broker, CorHttpServer server, CorProtoServer cor) {
        this.broker = broker;
        this.server = server;
        this.cor = cor;
    }

    /** A broker with the defaults, on two loops. */
    public static TestBroker start() {
        return start(b -> { }, s -> { });
    }

    /** A broker configured by {@code brokerConfig}, served by a server configured by {@code serverConfig}. */
    public static TestBroker start(Consumer<CorNgsild.Builder> brokerConfig, Consumer<CorHttpServer.Builder> serverConfig) {
        CorNgsild.Builder b = CorNgsild.builder();
        brokerConfig.accept(b);
        CorNgsild broker = b.build();
        CorHttpServer.Builder s = CorHttpServer.builder().host("127.0.0.1").port(0).loops(2).service(broker);
        serverConfig.accept(s);
        CorHttpServer server = s.build().start();
        CorProtoServer cor;
        try {
            cor = CorProtoServer.builder().host("127.0.0.1").port(0).name("test-broker")
                    .loops(server.loops()).dispatcher(server.dispatcher()).build().start();
        } catch (IOException e) {
            server.stop();
            broker.close();
            throw new UncheckedIOException(e);
        }
        return new TestBroker(broker, server, cor);
    }

    /** {@code cor://127.0.0.1:PORT} of its {@code cor://} server (no path): a registration's endpoint. */
    public String corUrl() {
        return "cor://127.0.0.1:" + cor.port();
    }

    /** {@code http://127.0.0.1:PORT} (no path): a registration's endpoint. */
    public String origin() {
        return "http://127.0.0.1:" + server.port();
    }

    /** {@code http://127.0.0.1:PORT/ngsi-ld/v1} (no trailing slash). */
    public String baseUrl() {
        return "http://127.0.0.1:" + server.port() + "/ngsi-ld/v1";
    }

    public int port() {
        return server.port();
    }

    public CorNgsild broker() {
        return broker;
    }

    /** The broker's live subscriptions: what a test inspects beyond the API (timesSent, a failure's reason, its queue). */
    public dev.cor.ngsild.subscription.Subscriptions subscriptions() {
        return broker.subscriptions();
    }

    /** The broker's live context source registrations, beyond the API. */
    public dev.cor.ngsild.federation.Registrations registrations() {
        return broker.registrations();
    }

    /** The broker's {@code @context} service, beyond the API (its caches' sizes). */
    public dev.cor.ngsild.ld.LdContexts contexts() {
        return broker.contexts();
    }

    public CorHttpServer server() {
        return server;
    }

    @Override
    public void close() {
        cor.stop();
        server.stop();
        broker.close();
    }
}
