package dev.cor.examples.embedded;

import java.util.concurrent.CountDownLatch;

import dev.cor.http.CorHttpServer;
import dev.cor.ngsild.CorNgsild;
import dev.cor.rest.CorArgs;

/**
 * Runs the embedded-broker example: {@code java -jar cor-embedded-broker.jar [--port N]
 * [--host H] [--httpLoops N]} - one {@link CorHttpServer} serving the host's {@code /shop/...}
 * routes and the NGSI-LD broker's {@code /ngsi-ld/v1/...} side by side.
 */
public final class EmbeddedMain {
    static final String USAGE = """
            usage: embedded-broker [--port N] [--host H] [--httpLoops N]
              --port N        port to listen on (default 8080; 0 = any free port)
              --host H        address to bind (default 0.0.0.0)
              --httpLoops N   event loops (default: one per core)""";

    private EmbeddedMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        String host = "0.0.0.0";
        int port = 8080;
        int loops = Runtime.getRuntime().availableProcessors();
        try {
            CorArgs a = new CorArgs(args);
            for (String flag = a.next(); flag != null; flag = a.next()) {
                switch (flag) {
                    case "-h", "--help" -> {
                        System.out.println(USAGE);
                        return;
                    }
                    case "--host" -> host = a.value();
                    case "--port" -> port = a.number(0, 65535);
                    case "--httpLoops" -> loops = a.number(1, 1024);
                    default -> throw a.unknown();
                }
            }
        } catch (IllegalArgumentException e) {
            System.err.println("embedded-broker: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        CorNgsild broker = CorNgsild.builder().build();
        CorHttpServer server = start(broker, host, port, loops);
        System.out.println("embedded-broker: listening on http://" + host + ":" + server.port()
                + " (/shop/... and /ngsi-ld/v1/..., " + server.loopCount() + " loop(s))");
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop();
            broker.close();
            stopped.countDown();
        }, "embedded-broker-stop"));
        stopped.await();
    }

    /** The host's server: its application and hooks, the broker mounted inside them. */
    static CorHttpServer start(CorNgsild broker, String host, int port, int loops) {
        ShopCoroutineHook hook = new ShopCoroutineHook(broker);
        CorHttpServer server = CorHttpServer.builder().host(host).port(port).loops(loops)
                .application(new ShopApp(broker))
                .coroutineHook(hook)
                .finishCoroutineHook(hook.finish())
                .build().start();
        broker.started(server.loops()); // mounted inside the host's application: its lifecycle is the host's to call
        return server;
    }
}
