package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * SIGTERM as a load balancer sees it: {@code /health/ready} turns 503 while the broker still
 * takes connections, for {@code --drainMs}; only then does the listener close, and a request in
 * flight all along is still answered.
 */
@Tag("process")
class DrainProcessTest {
    private static final long DRAIN_MS = 2_000;
    private static final String LINK = ">; rel=\"http://www.w3.org/ns/json-ld#context\"; type=\"application/ld+json\"";

    @Test
    void sigtermTurnsReady503WhileConnectionsAreTakenForTheDrainThenStopsAndAnswersWhatWasInFlight() throws Exception {
        try (HeldContext peer = HeldContext.start();
                ServerProcess s = ServerProcess.start("--store", "memory", "--httpLoops", "1", "--drainMs",
                        String.valueOf(DRAIN_MS), "--contextTimeout", "60000")) {
            // In flight from before the SIGTERM to after the listener closed: a query whose
            // @context the peer holds back until told.
            CompletableFuture<HttpResponse<String>> inFlight = CompletableFuture.supplyAsync(() -> {
                try {
                    return s.send("GET", "/ngsi-ld/v1/entities?type=T", null, "Link", "<" + peer.url() + LINK);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            peer.awaitRequest();
            assertEquals(200, probe(s.port, Health.READY));
            assertEquals(200, probe(s.port, Health.LIVE));

            long sigterm = System.nanoTime();
            s.process.destroy(); // SIGTERM
            // A new connection for each probe, as a load balancer's health check makes.
            long first503 = 0;
            boolean tookOthersWhileDraining = false;
            long deadline = sigterm + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                int ready = probeWhileClosing(s.port, Health.READY);
                long at = System.nanoTime();
                if (ready < 0) {
                    assertTrue(first503 != 0, "/health/ready never answered 503 before the listener closed: " + s);
                    long drained = TimeUnit.NANOSECONDS.toMillis(at - sigterm);
                    assertTrue(drained >= DRAIN_MS, "the listener closed " + drained + " ms after SIGTERM, before the "
                            + DRAIN_MS + " ms drain: " + s);
                    break;
                }
                if (ready == 503) {
                    if (first503 == 0) {
                        first503 = at;
                        // draining, not broken: a liveness probe leaves it alone, and other requests are served
                        assertEquals(200, probe(s.port, Health.LIVE), "live while draining");
                        assertEquals(200, probe(s.port, ServerApplication.VERSION), "served while draining");
                        tookOthersWhileDraining = true;
                    }
                } else {
                    assertEquals(200, ready, "ready before the signal arrived");
                    assertEquals(0, first503, "ready again after it answered 503");
                }
                assertTrue(at < deadline, "the listener never closed: " + s);
                Thread.sleep(20); // the probes' period
            }
            assertTrue(tookOthersWhileDraining);
            assertTrue(s.stdout().contains("cor-server: draining for " + DRAIN_MS + " ms"), s.stdout());

            peer.release();
            HttpResponse<String> answered = inFlight.get(30, TimeUnit.SECONDS);
            assertEquals(200, answered.statusCode(), "the request in flight is answered: " + answered.body());
            assertTrue(s.process.waitFor(30, TimeUnit.SECONDS), "ended: " + s);
            assertEquals(0, s.process.exitValue(), s.toString());
        }
    }

    @Test
    void aSecondSigtermSkipsTheDrain() throws Exception {
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--drainMs", "600000")) {
            s.process.destroy();
            s.awaitStdout("cor-server: draining for 600000 ms", java.time.Duration.ofSeconds(30));
            assertEquals(503, probe(s.port, Health.READY));
            s.process.destroy();
            assertTrue(s.process.waitFor(30, TimeUnit.SECONDS), "a second SIGTERM stops it at once: " + s);
            assertEquals(0, s.process.exitValue(), s.toString());
        }
    }

    /**
     * {@link #probe} while the listener may be closing: a connection the kernel took into the
     * listener's backlog just before it closed is reset unanswered - what a load balancer sees as
     * a refused connection - and counts as one (-1).
     */
    static int probeWhileClosing(int port, String path) throws IOException {
        try {
            String head = exchange(port, path);
            return head == null ? -1 : Integer.parseInt(HttpHead.startLineWord(head, 1));
        } catch (java.net.SocketException reset) {
            return -1;
        }
    }

    /** {@code GET path} on a connection of its own: the status, or -1 when the connection is refused. */
    static int probe(int port, String path) throws IOException {
        String head = exchange(port, path);
        assertNotNull(head, "the broker closed the connection without an answer to " + path);
        return Integer.parseInt(HttpHead.startLineWord(head, 1));
    }

    /** {@code GET path} on a connection of its own: the answer's head, {@code null} if closed unanswered, a status of -1 if refused. */
    private static String exchange(int port, String path) throws IOException {
        try (Socket c = new Socket()) {
            try {
                c.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            } catch (ConnectException refused) {
                return "HTTP/1.1 -1 refused\r\n"; // read as the status -1
            }
            c.setSoTimeout(30_000);
            OutputStream o = c.getOutputStream();
            o.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            o.flush();
            return HttpHead.read(new BufferedInputStream(c.getInputStream()));
        }
    }

    /** An {@code @context} server of one request, whose answer waits until {@link #release}. */
    private static final class HeldContext implements AutoCloseable {
        private final ServerSocket listener;
        private final CountDownLatch requested = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);

        private HeldContext(ServerSocket listener) {
            this.listener = listener;
        }

        static HeldContext start() throws IOException {
            HeldContext p = new HeldContext(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
            Thread.ofPlatform().daemon().name("held-context").start(p::serveOne);
            return p;
        }

        String url() {
            return "http://127.0.0.1:" + listener.getLocalPort() + "/held.jsonld";
        }

        private void serveOne() {
            try (Socket c = listener.accept()) {
                InputStream in = new BufferedInputStream(c.getInputStream());
                if (HttpHead.read(in) == null) {
                    return;
                }
                requested.countDown();
                if (!released.await(60, TimeUnit.SECONDS)) {
                    return;
                }
                byte[] body = "{\"@context\":{\"held\":\"https://cor.test/drain#held\"}}".getBytes(StandardCharsets.UTF_8);
                OutputStream o = c.getOutputStream();
                o.write(("HTTP/1.1 200 OK\r\nContent-Type: application/ld+json\r\nContent-Length: " + body.length
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                o.write(body);
                o.flush();
            } catch (IOException | InterruptedException e) {
                // closed by the test
            }
        }

        void awaitRequest() throws InterruptedException {
            assertTrue(requested.await(30, TimeUnit.SECONDS), "the broker never asked for the held @context");
        }

        void release() {
            released.countDown();
        }

        @Override
        public void close() throws IOException {
            released.countDown();
            listener.close();
        }
    }
}
