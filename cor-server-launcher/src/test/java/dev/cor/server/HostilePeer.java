package dev.cor.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A peer of the broker under test that may misbehave on purpose - a notification receiver, a
 * {@code @context} server, an MQTT broker that never answers - on a free port of 127.0.0.1, over
 * a real socket. In {@link #http} mode it reads each HTTP/1.1 request (head and Content-Length
 * body) and does what its {@link Reply} function says: answer (after a delay), hang, reset the
 * connection, answer garbage. In {@link #silent} mode it accepts TCP and reads whatever comes,
 * never writing a byte (an MQTT server that never sends CONNACK).
 * <p>
 * Built for long runs: it keeps counts, not requests, so its memory stays flat however long a
 * soak lasts; {@link #watchFor} names the few strings whose arrival in a request body the test
 * waits for. A kept-alive connection with no request for {@link #IDLE_MS} is closed, as real
 * servers do, so the broker's pooled connections to it end too. One virtual thread per
 * connection (a hung one holds nobody else); any thread may call its methods.
 */
final class HostilePeer implements AutoCloseable {
    /** A kept-alive connection idle this long is closed by the peer. */
    static final int IDLE_MS = 1_000;

    /** One request as it arrived: its method, target and body. */
    record Request(String method, String target, String body) {
        String path() {
            int q = target.indexOf('?');
            return q < 0 ? target : target.substring(0, q);
        }
    }

    /** What the peer does with a request. */
    sealed interface Reply permits Answer, Hang, Reset, Garbage {
    }

    /** Answers {@code status} with {@code body} as {@code contentType}, after {@code delayMs}. */
    record Answer(int status, String contentType, byte[] body, long delayMs) implements Reply {
        static Answer of(int status) {
            return new Answer(status, "application/json", new byte[0], 0);
        }

        static Answer json(String body) {
            return new Answer(200, "application/ld+json", body.getBytes(StandardCharsets.UTF_8), 0);
        }

        Answer after(long ms) {
            return new Answer(status, contentType, body, ms);
        }
    }

    /** Never answers: holds the connection until the broker (or the peer's close) ends it. */
    record Hang() implements Reply {
    }

    /** Resets the connection (RST, SO_LINGER 0) once the request is read. */
    record Reset() implements Reply {
    }

    /** Writes bytes that are no HTTP answer, then closes. */
    record Garbage() implements Reply {
    }

    private static final byte[] GARBAGE = "\u0000\u00ff\u0013 not HTTP at all \r\n\r\n{]}".getBytes(StandardCharsets.ISO_8859_1);

    private final String name;
    private final ServerSocket server;
    private final Function<Request, Reply> replies;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final Set<String> watched = ConcurrentHashMap.newKeySet();
    private final Set<String> arrived = ConcurrentHashMap.newKeySet();
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong connections = new AtomicLong();
    private volatile boolean closed;

    private HostilePeer(String name, Function<Request, Reply> replies) throws IOException {
        this.name = name;
        this.replies = replies;
        this.server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().daemon().name("hostile-peer-" + name).start(this::accept);
    }

    /** An HTTP/1.1 peer that does what {@code replies} says with each request. */
    static HostilePeer http(String name, Function<Request, Reply> replies) {
        try {
            return new HostilePeer(name, replies);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** A TCP peer that accepts, reads and never writes: an MQTT server that never sends CONNACK. */
    static HostilePeer silent(String name) {
        return http(name, null);
    }

    /** A port nothing listens on (it was free a moment ago): a peer that refuses. */
    static int refusingPort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    int port() {
        return server.getLocalPort();
    }

    /** {@code http://127.0.0.1:PORT} followed by {@code path}. */
    String url(String path) {
        return "http://127.0.0.1:" + port() + path;
    }

    /** From now on, notes whether a request body holds {@code token} ({@link #arrived}). */
    void watchFor(String token) {
        watched.add(token);
    }

    /** Whether a request whose body held {@code token} arrived since {@link #watchFor} named it. */
    boolean arrived(String token) {
        return arrived.contains(token);
    }

    long requests() {
        return requests.get();
    }

    long connections() {
        return connections.get();
    }

    /** Connections the broker holds open to this peer now. */
    int openConnections() {
        return open.size();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket s = server.accept();
                connections.incrementAndGet();
                open.add(s);
                Thread.ofVirtual().name("hostile-peer-" + name + "-conn").start(() -> serve(s));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            InputStream in = s.getInputStream();
            if (replies == null) {
                drain(in);
                return;
            }
            OutputStream out = s.getOutputStream();
            while (!closed) {
                s.setSoTimeout(IDLE_MS);
                Request req = read(in);
                if (req == null) {
                    return; // the broker closed, or the connection was idle too long
                }
                s.setSoTimeout(0);
                requests.incrementAndGet();
                note(req.body());
                switch (replies.apply(req)) {
                    case Hang _ -> {
                        drain(in);
                        return;
                    }
                    case Reset _ -> {
                        s.setSoLinger(true, 0);
                        return;
                    }
                    case Garbage _ -> {
                        out.write(GARBAGE);
                        out.flush();
                        return;
                    }
                    case Answer a -> {
                        if (a.delayMs() > 0) {
                            Thread.sleep(a.delayMs()); // the slow peer: what is under test
                        }
                        out.write(("HTTP/1.1 " + a.status() + " X\r\nContent-Type: " + a.contentType() + "\r\nContent-Length: "
                                + a.body().length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                        out.write(a.body());
                        out.flush();
                    }
                }
            }
        } catch (IOException | InterruptedException e) {
            // the broker hung up, or the peer closed
        } finally {
            open.remove(s);
        }
    }

    private void note(String body) {
        for (String t : watched) {
            if (body.contains(t)) {
                arrived.add(t);
            }
        }
    }

    /** Reads until the other end closes (or the peer does). */
    private static void drain(InputStream in) throws IOException {
        byte[] buf = new byte[8192];
        while (in.read(buf) >= 0) {
            // nothing is ever answered
        }
    }

    /** One request, or {@code null} when the connection ends (or idles out) before its first byte. */
    private static Request read(InputStream in) throws IOException {
        String head;
        try {
            head = HttpHead.read(in);
        } catch (SocketTimeoutException idle) {
            return null; // an idle kept-alive connection (or one silent within a head): closed
        }
        if (head == null) {
            return null;
        }
        byte[] body = in.readNBytes(HttpHead.contentLength(head));
        return new Request(HttpHead.startLineWord(head, 0), HttpHead.startLineWord(head, 1), new String(body, StandardCharsets.UTF_8));
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        for (Socket s : open) {
            try {
                s.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    @Override
    public String toString() {
        return name + " (" + requests() + " requests, " + connections() + " connections, " + openConnections() + " open)";
    }
}
