package dev.cor.rest.client;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test server on 127.0.0.1: a platform thread accepts, a virtual thread serves each connection
 * (a thousand connections waiting at once cost nothing). Either raw ({@link Conn}: the socket as
 * it is - to stall, reset, or write bytes that are not HTTP) or HTTP ({@link Handler}: requests
 * read one after another on a keep-alive connection, each answered by the handler).
 */
final class TestServer implements AutoCloseable {
    /** Serves one accepted connection, raw. */
    interface Conn {
        void serve(Socket s) throws Exception;
    }

    /** Answers one request; writes the whole response to {@code out}. Closing the socket ends the connection. */
    interface Handler {
        void handle(Request req, Socket s, OutputStream out) throws Exception;
    }

    record Request(String method, String target, Map<String, String> headers, byte[] body, int connection, int index) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        String query(String name) {
            int q = target.indexOf('?');
            if (q < 0) {
                return null;
            }
            for (String p : target.substring(q + 1).split("&")) {
                int eq = p.indexOf('=');
                if (eq > 0 && p.substring(0, eq).equals(name)) {
                    return p.substring(eq + 1);
                }
            }
            return null;
        }
    }

    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    /** Connections accepted so far. */
    final AtomicInteger connections = new AtomicInteger();
    /** Requests read so far (HTTP mode). */
    final AtomicInteger requests = new AtomicInteger();

    private TestServer(ServerSocket server, Conn conn) {
        this.server = server;
        this.acceptor = Thread.ofPlatform().daemon().name("test-server-accept-" + server.getLocalPort()).start(() -> {
            while (!server.isClosed()) {
                Socket s;
                try {
                    s = server.accept();
                } catch (IOException e) {
                    return;
                }
                connections.incrementAndGet();
                sockets.add(s);
                Thread.ofVirtual().start(() -> {
                    try {
                        conn.serve(s);
                    } catch (Exception e) {
                        // the client went away, or the test closed the server
                    } finally {
                        sockets.remove(s);
                        try {
                            s.close();
                        } catch (IOException e) {
                            // closing
                        }
                    }
                });
            }
        });
    }

    static ServerSocket listen() throws IOException {
        return new ServerSocket(0, 2048, InetAddress.getByName("127.0.0.1"));
    }

    static TestServer raw(Conn conn) throws IOException {
        return new TestServer(listen(), conn);
    }

    static TestServer http(Handler handler) throws IOException {
        return http(listen(), handler);
    }

    /** An HTTP server on {@code server} (an {@code SSLServerSocket} for https). */
    static TestServer http(ServerSocket server, Handler handler) {
        AtomicInteger connectionIds = new AtomicInteger();
        TestServer[] self = new TestServer[1];
        self[0] = new TestServer(server, s -> {
            int id = connectionIds.incrementAndGet();
            InputStream in = new BufferedInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            for (int index = 0; !s.isClosed(); index++) {
                Request req = readRequest(in, id, index);
                if (req == null) {
                    return;
                }
                self[0].requests.incrementAndGet();
                handler.handle(req, s, out);
                out.flush();
            }
        });
        return self[0];
    }

    int port() {
        return server.getLocalPort();
    }

    String url(String path) {
        return "http://127.0.0.1:" + port() + path;
    }

    /** Reads a request head and its Content-Length body; {@code null} at a clean end of stream. */
    static Request readRequest(InputStream in, int connection, int index) throws IOException {
        String line = readLine(in);
        if (line == null) {
            return null;
        }
        String[] parts = line.split(" ");
        if (parts.length != 3) {
            throw new IOException("bad request line: " + line);
        }
        Map<String, String> headers = new LinkedHashMap<>();
        String h;
        while ((h = readLine(in)) != null && !h.isEmpty()) {
            int colon = h.indexOf(':');
            headers.put(h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
        }
        int len = headers.containsKey("content-length") ? Integer.parseInt(headers.get("content-length")) : 0;
        byte[] body = in.readNBytes(len);
        return new Request(parts[0], parts[1], headers, body, connection, index);
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                String s = b.toString(StandardCharsets.ISO_8859_1);
                return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            }
            b.write(c);
        }
        return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
    }

    /** A keep-alive response with a Content-Length body. */
    static void respond(OutputStream out, int status, String body, String... headerLines) throws IOException {
        respond(out, status, body.getBytes(StandardCharsets.UTF_8), headerLines);
    }

    static void respond(OutputStream out, int status, byte[] body, String... headerLines) throws IOException {
        StringBuilder sb = new StringBuilder("HTTP/1.1 ").append(status).append(" X\r\n");
        sb.append("Content-Length: ").append(body.length).append("\r\n");
        for (String l : headerLines) {
            sb.append(l).append("\r\n");
        }
        sb.append("\r\n");
        out.write(sb.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
    }

    static void write(OutputStream out, String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /** Reads until the client closes: a server that never answers. */
    static void drain(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        byte[] b = new byte[4096];
        while (in.read(b) >= 0) {
            // nothing: never answer
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
        try {
            acceptor.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
