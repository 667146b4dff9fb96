package dev.cor.ngsild.conformance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A context source that misbehaves on purpose, over a real socket: an HTTP/1.1 server on a free
 * port of 127.0.0.1 that reads each request (its head and body), records it, and does what
 * the test's {@link Behaviour} says - answer (after a delay), hang, die in the middle of its
 * answer, answer garbage. One thread per connection (a hung one must not stop the others); closed
 * by the test, which ends every connection.
 */
final class SourceStub implements AutoCloseable {
    /** One request as it arrived. */
    record Seen(String method, String target, List<String[]> headers, String body) {
        String header(String name) {
            for (String[] h : headers) {
                if (h[0].equalsIgnoreCase(name)) {
                    return h[1];
                }
            }
            return null;
        }
    }

    /** What to do with a request. */
    sealed interface Behaviour permits Answer, Hang, Die, Raw {
    }

    /** Answer {@code status} with {@code body} (as {@code application/json}) after {@code delayMs}. */
    record Answer(int status, String body, long delayMs) implements Behaviour {
    }

    /** Never answer: keep the connection open until the stub closes. */
    record Hang() implements Behaviour {
    }

    /** Send the head and part of a body promised longer, then close the connection. */
    record Die() implements Behaviour {
    }

    /** Send {@code response} as it is (whatever it is: a bad status line, a redirect), then close the connection. */
    record Raw(String response) implements Behaviour {
    }

    private final ServerSocket server;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final AtomicInteger hits = new AtomicInteger();
    private volatile Function<Seen, Behaviour> behaviour;
    private volatile boolean closed;

    private SourceStub(Function<Seen, Behaviour> behaviour) throws IOException {
        this.behaviour = behaviour;
        this.server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "source-stub-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    static SourceStub start(Function<Seen, Behaviour> behaviour) {
        try {
            return new SourceStub(behaviour);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** {@code http://127.0.0.1:PORT}: a registration's endpoint. */
    String endpoint() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    int hits() {
        return hits.get();
    }

    List<Seen> seen() {
        return new ArrayList<>(seen);
    }

    void behaviour(Function<Seen, Behaviour> b) {
        this.behaviour = b;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket s = server.accept();
                open.add(s);
                Thread t = new Thread(() -> serve(s), "source-stub-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            while (!closed) {
                Seen req = readHead(in);
                if (req == null) {
                    return;
                }
                seen.add(req);
                hits.incrementAndGet();
                Behaviour b = behaviour.apply(req);
                if (b instanceof Hang) {
                    while (!closed && in.read() >= 0) {
                        // the broker gives up and closes, or the stub does
                    }
                    return;
                }
                if (b instanceof Die) {
                    out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{\"id\":\"urn:")
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    return; // closes with 990 bytes still promised
                }
                if (b instanceof Raw r) {
                    out.write(r.response().getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                    return;
                }
                Answer a = (Answer) b;
                if (a.delayMs() > 0) {
                    Thread.sleep(a.delayMs());
                }
                byte[] body = a.body() == null ? new byte[0] : a.body().getBytes(StandardCharsets.UTF_8);
                out.write(("HTTP/1.1 " + a.status() + " X\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                        + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            // the broker hung up, or the stub closed
        } finally {
            open.remove(s);
        }
    }

    private static Seen readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int state = 0;
        while (state < 4) {
            int c = in.read();
            if (c < 0) {
                return null;
            }
            head.write(c);
            state = (c == '\r' && (state == 0 || state == 2)) || (c == '\n' && (state == 1 || state == 3)) ? state + 1 : 0;
        }
        String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
        String[] first = lines[0].split(" ");
        List<String[]> headers = new ArrayList<>();
        int length = 0;
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                String name = lines[i].substring(0, colon).trim();
                String value = lines[i].substring(colon + 1).trim();
                headers.add(new String[] {name, value});
                if (name.toLowerCase(Locale.ROOT).equals("content-length")) {
                    length = Integer.parseInt(value);
                }
            }
        }
        return new Seen(first[0], first[1], headers, new String(in.readNBytes(length), StandardCharsets.UTF_8));
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
}
