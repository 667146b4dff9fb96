package dev.cor.examples.gateway;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;

import dev.cor.http.CorHttpServer;
import dev.cor.rest.proto.CorProtoServer;
import dev.cor.rest.client.CorRestClient;

/**
 * Runs one node of the forwarding chain: {@code java -jar cor-gateway.jar --port N [--next URL]
 * [--preload] ...}. Three of them, the entity on the last, are the three-broker chain.
 */
public final class GatewayMain {
    private GatewayMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        GatewayOptions o;
        try {
            o = GatewayOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("gateway: " + e.getMessage());
            System.err.println(GatewayOptions.USAGE);
            System.exit(2);
            return;
        }
        if (o.help()) {
            System.out.println(GatewayOptions.USAGE);
            return;
        }
        Gateway g = Gateway.start(o);
        System.out.println("gateway: listening on http://" + o.host() + ":" + g.http().port()
                + (g.corPort() > 0 ? " and cor://" + o.host() + ":" + g.corPort() : "")
                + (o.next() != null ? ", next hop " + o.next() : "") + (o.preload() ? ", entities preloaded" : "")
                + " (coroutines " + (o.coroutines() == 0 ? "off" : "on") + ")");
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            g.stop();
            stopped.countDown();
        }, "gateway-stop"));
        stopped.await();
    }

    /** A running gateway: its HTTP server (and, with --corPort, its cor:// server) and its client. */
    record Gateway(CorHttpServer http, CorRestClient client, int corPort, Runnable stopCor) {
        static Gateway start(GatewayOptions o) {
            CorRestClient client = CorRestClient.builder().build();
            GatewayApp app = new GatewayApp(o.next(), client);
            if (o.preload()) {
                app.put(BenchEntities.SMALL_ID, BenchEntities.SMALL);
                app.put(BenchEntities.ATTRS20_ID, BenchEntities.ATTRS20);
            }
            CorHttpServer http = CorHttpServer.builder().host(o.host()).port(o.port()).loops(o.httpLoops())
                    .coroutineCap(o.coroutines()).workerThreads(o.workers()).application(app)
                    .coroutineHook(new GatewayCoroutineHook()).build().start();
            if (o.corPort() < 0) {
                return new Gateway(http, client, -1, () -> { });
            }
            try {
                // Same loops, same dispatch decision: a cor:// request waits exactly as an HTTP one does.
                CorProtoServer cor = CorProtoServer.builder().host(o.host()).port(o.corPort()).name("gateway")
                        .loops(http.loops()).dispatcher(http.dispatcher()).build().start();
                return new Gateway(http, client, cor.port(), cor::stop);
            } catch (IOException | RuntimeException e) {
                http.stop();
                client.close();
                throw new IllegalStateException("cannot serve cor:// on port " + o.corPort() + ": " + e.getMessage(), e);
            }
        }

        void stop() {
            stopCor.run();
            http.stop();
            client.close();
        }
    }
}
