package dev.cor.ngsild;

import java.util.function.Consumer;

import dev.cor.http.CorHttpServer;

/**
 * A broker started for a test: {@link CorNgsild} behind a {@link CorHttpServer} on a free port of
 * 127.0.0.1, with the broker's own hooks. Tests talk to it over real sockets at {@link #baseUrl()}.
 */
public final class TestBroker implements AutoCloseable {
    private final CorNgsild broker;
    private final CorHttpServer server;

    private TestBroker(CorNgsild broker, CorHttpServer server) {
        this.broker = broker;
        this.server = server;
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
        CorHttpServer.Builder s = CorHttpServer.builder().host("127.0.0.1").port(0).loops(2)
                .application(broker.application())
                .coroutineHook(broker.coroutineHook())
                .finishCoroutineHook(broker.finishCoroutineHook());
        serverConfig.accept(s);
        CorHttpServer server = s.build().start();
        broker.tickOn(server.loops());
        return new TestBroker(broker, server);
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

    public CorHttpServer server() {
        return server;
    }

    @Override
    public void close() {
        server.stop();
        broker.close();
    }
}
