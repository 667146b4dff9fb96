package dev.cor.ngsild.conformance;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;

/**
 * A notification receiver for tests, on a free port of 127.0.0.1, in one of six behaviours: it
 * answers (a status, after a delay), it never answers (accepts and holds the connection), it
 * resets every connection, it closes every connection at once, it answers every connection with
 * the same garbage (or with the header of a 256 MiB MQTT packet, or with an MQTT CONNACK and never
 * a PUBACK) and holds it, or it refuses (nothing listens). The raw ones speak no protocol,
 * so they stand for a silent or hostile MQTT broker as well as an HTTP receiver. It keeps every
 * notification it took with its headers and arrival time; {@link #next} waits for one with a
 * deadline.
 */
public final class NotificationReceiver implements AutoCloseable {
    /** What the receiver does with a notification. */
    enum Mode { ANSWER, HANG, RESET, CLOSE, GARBAGE, HUGE_MQTT_PACKET, MQTT_CONNACK_ONLY }

    /**
     * What GARBAGE answers: not HTTP, not MQTT (its first byte is no MQTT packet type), and a
     * token that no error text the broker shows may carry.
     */
    static final String GARBAGE_TOKEN = "eyJhbGciOiJub25lIn0.secret-of-the-peer";

    /** One notification as it arrived. */
    public record Received(String path, Map<String, List<String>> headers, byte[] body, long arrivedNanos) {
        public String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }

        public JsonNode json() {
            return Json.parse(new String(body, StandardCharsets.UTF_8));
        }
    }

    private final LinkedBlockingQueue<Received> received = new LinkedBlockingQueue<>();
    private final HttpServer http;
    private final ServerSocket raw;
    private final List<Socket> held = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "notification-receiver");
        t.setDaemon(true);
        return t;
    });
    volatile int status = 204;
    volatile long delayMs;
    private final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger openHeld = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger answered = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger maxInFlight = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger accepted = new java.util.concurrent.atomic.AtomicInteger();

    private NotificationReceiver(Mode mode) throws IOException {
        if (mode == Mode.ANSWER) {
            raw = null;
            http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
            http.setExecutor(threads);
            http.createContext("/", ex -> {
                byte[] body;
                try (InputStream in = ex.getRequestBody()) {
                    body = in.readAllBytes();
                }
                int now = inFlight.incrementAndGet();
                maxInFlight.accumulateAndGet(now, Math::max);
                received.add(new Received(ex.getRequestURI().getPath(), Map.copyOf(ex.getRequestHeaders()), body,
                        System.nanoTime()));
                long d = delayMs;
                if (d > 0) {
                    try {
                        Thread.sleep(d); // the receiver is slow: that is what is being tested
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                inFlight.decrementAndGet();
                answered.incrementAndGet();
                ex.sendResponseHeaders(status, -1);
                ex.close();
            });
            http.start();
        } else {
            http = null;
            raw = new ServerSocket(0, 64, java.net.InetAddress.getLoopbackAddress());
            threads.execute(() -> {
                while (!raw.isClosed()) {
                    try {
                        Socket s = raw.accept();
                        accepted.incrementAndGet();
                        if (mode == Mode.RESET) {
                            s.setSoLinger(true, 0);
                            s.close();
                        } else if (mode == Mode.CLOSE) {
                            s.close();
                        } else {
                            if (mode == Mode.GARBAGE) {
                                s.getOutputStream().write(("\u00ff\u00ff GARBAGE " + GARBAGE_TOKEN + "\r\n\r\n")
                                        .getBytes(StandardCharsets.ISO_8859_1));
                            } else if (mode == Mode.HUGE_MQTT_PACKET) {
                                // a CONNACK's first byte, then the largest remaining length MQTT can say: 268 435 455
                                s.getOutputStream().write(new byte[] {0x20, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x7F});
                            } else if (mode == Mode.MQTT_CONNACK_ONLY) {
                                // "connection accepted" to whatever CONNECT comes; nothing more, ever
                                s.getOutputStream().write(new byte[] {0x20, 0x02, 0x00, 0x00});
                            }
                            synchronized (held) {
                                held.add(s);
                            }
                            openHeld.incrementAndGet();
                            threads.execute(() -> {
                                // reads until the broker closes its end: what counts the connections it left open
                                try (InputStream in = s.getInputStream()) {
                                    while (in.read() >= 0) {
                                        // a notification that is never answered
                                    }
                                } catch (IOException e) {
                                    // closed either way
                                }
                                openHeld.decrementAndGet();
                            });
                        }
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        }
    }

    public static NotificationReceiver start() {
        return start(Mode.ANSWER);
    }

    static NotificationReceiver start(Mode mode) {
        try {
            return new NotificationReceiver(mode);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A port nothing listens on (it was free a moment ago). */
    static int refusingPort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The port it listens on. */
    int port() {
        return http != null ? http.getAddress().getPort() : raw.getLocalPort();
    }

    /** The raw modes: how many connections it has accepted. */
    int accepted() {
        return accepted.get();
    }

    public String url() {
        return "http://127.0.0.1:" + (http != null ? http.getAddress().getPort() : raw.getLocalPort()) + "/notify";
    }

    /** The next notification, waiting up to {@code ms}; fails the test when none comes. */
    public Received next(long ms) {
        try {
            Received r = received.poll(ms, TimeUnit.MILLISECONDS);
            if (r == null) {
                throw new AssertionError("no notification within " + ms + " ms");
            }
            return r;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * The next notification a broker sent at {@code sinceMillis} or later (its {@code notifiedAt},
     * on the same clock), skipping those sent before - what a broker stopped since had sent -
     * waiting up to {@code ms} in all; fails the test when none comes.
     */
    public Received nextSentSince(long sinceMillis, long ms) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (true) {
            Received r = next(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (java.time.Instant.parse(r.json().path("notifiedAt").asText()).toEpochMilli() >= sinceMillis) {
                return r;
            }
        }
    }

    /**
     * The next notification within {@code ms}, or {@code null}. Never for "none comes": decide
     * that with a barrier (a later event that must come after the one that must not).
     */
    public Received poll(long ms) {
        try {
            return received.poll(ms, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** How many notifications it was holding at once, at most (while it delays its answers). */
    int maxInFlight() {
        return maxInFlight.get();
    }

    /** How many notifications it holds now (taken, not answered yet). */
    int inFlight() {
        return inFlight.get();
    }

    /** HANG: the connections the broker still holds open to it (closed by the broker: no longer counted). */
    int openConnections() {
        return openHeld.get();
    }

    /** How many notifications it has answered (or begun to). */
    int answered() {
        return answered.get();
    }

    int count() {
        return received.size();
    }

    @Override
    public void close() {
        if (http != null) {
            http.stop(0);
        }
        if (raw != null) {
            try {
                raw.close();
            } catch (IOException e) {
                // closing anyway
            }
            synchronized (held) {
                for (Socket s : held) {
                    try {
                        s.close();
                    } catch (IOException e) {
                        // closing anyway
                    }
                }
            }
        }
        threads.shutdownNow();
    }
}
