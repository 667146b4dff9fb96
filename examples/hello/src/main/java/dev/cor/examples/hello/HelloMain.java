package dev.cor.examples.hello;

import java.util.concurrent.CountDownLatch;

import dev.cor.http.CorHttpServer;

/**
 * Runs the hello example: {@code java -jar cor-hello.jar [--port N] [--httpLoops N]
 * [--coroutines N] [--workers N] [--host H]}.
 */
public final class HelloMain {
    private HelloMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        HelloOptions o;
        try {
            o = HelloOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("hello: " + e.getMessage());
            System.err.println(HelloOptions.USAGE);
            System.exit(2);
            return;
        }
        if (o.help()) {
            System.out.println(HelloOptions.USAGE);
            return;
        }
        CorHttpServer server = start(o);
        System.out.println("hello: listening on http://" + o.host() + ":" + server.port() + " (" + server.loopCount()
                + " loop(s), coroutines " + (o.coroutines() == 0 ? "off" : "up to " + o.coroutines() + " per loop")
                + ", " + o.workers() + " workers)");
        CountDownLatch stopped = new CountDownLatch(1);
        // SIGTERM ends the JVM with or without this hook; the hook lets the requests in flight be answered first.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop();
            System.out.println("hello: stopped after " + server.answersWritten() + " answer(s)");
            stopped.countDown();
        }, "hello-stop"));
        stopped.await();
    }

    static CorHttpServer start(HelloOptions o) {
        return CorHttpServer.builder().host(o.host()).port(o.port()).loops(o.httpLoops()).coroutineCap(o.coroutines())
                .workerThreads(o.workers()).application(new HelloApp()).coroutineHook(new HelloCoroutineHook())
                .build().start();
    }
}
