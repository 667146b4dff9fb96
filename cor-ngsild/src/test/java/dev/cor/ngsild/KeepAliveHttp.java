package dev.cor.ngsild;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.function.Function;

import javax.net.ssl.SSLSession;

/**
 * A blocking HTTP/1.1 client with kept-alive connections, for tests that talk plain {@code http://}
 * to a broker. It takes the JDK's {@link HttpRequest} and gives back an {@link HttpResponse}, so a
 * test builds its requests as it would for {@link HttpClient}.
 *
 * <p>Why not the JDK's client: its HTTP/1.1 pool watches an idle connection for unexpected bytes and,
 * when a server answers a request on a connection just taken from the pool, that watcher can still
 * claim the answer as "data received while in pool" and close the connection; the request then fails
 * with "HTTP/1.1 header parser received no bytes". The JDK retries a GET silently, never a POST or
 * PATCH, so tests that write fail now and then for a reason outside the broker. Here each connection
 * is held by one exchange at a time and nothing reads it in between.
 *
 * <p>A connection goes back to the pool only after a whole answer delimited by Content-Length or
 * chunked coding and without {@code Connection: close}. One idle longer than {@link #MAX_IDLE}, or
 * found closed by a non-blocking read before reuse (a restarted or idling-out server), is closed,
 * never written to: no request is ever retried. Every read has the request's timeout (30 s when it
 * has none). Thread-safe; close it to close the idle connections.
 */
public final class KeepAliveHttp implements AutoCloseable {
    /** A pooled connection idle longer than this is closed rather than reused (servers time out at 60 s by default). */
    static final Duration MAX_IDLE = Duration.ofSeconds(5);
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    private static final int CONNECT_TIMEOUT_MS = 10_000;

    private final Map<String, ArrayDeque<Connection>> idle = new HashMap<>();
    private final ExecutorService async = Executors.newVirtualThreadPerTaskExecutor();
    private boolean closed;

    /** Sends {@code request} and reads its whole answer as bytes. */
    public HttpResponse<byte[]> send(HttpRequest request) throws IOException {
        return send(request, b -> b);
    }

    /** Sends {@code request} and reads its whole answer as UTF-8 text. */
    public HttpResponse<String> sendString(HttpRequest request) throws IOException {
        return send(request, b -> new String(b, StandardCharsets.UTF_8));
    }

    /** {@link #send} on a virtual thread; an I/O failure completes the future exceptionally. */
    public CompletableFuture<HttpResponse<byte[]>> sendAsync(HttpRequest request) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return send(request);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, async);
    }

    private <T> HttpResponse<T> send(HttpRequest request, Function<byte[], T> body) throws IOException {
        URI uri = request.uri();
        if (!"http".equalsIgnoreCase(uri.getScheme())) {
            throw new IllegalArgumentException("plain http only: " + uri);
        }
        String authority = uri.getHost() + ":" + (uri.getPort() < 0 ? 80 : uri.getPort());
        byte[] head = head(request, authority);
        byte[] content = content(request);
        int timeoutMs = (int) request.timeout().orElse(DEFAULT_TIMEOUT).toMillis();
        Connection c = take(authority);
        if (c == null) {
            c = Connection.open(uri.getHost(), uri.getPort() < 0 ? 80 : uri.getPort());
        }
        boolean keep = false;
        try {
            c.setTimeout(timeoutMs);
            OutputStream out = c.out();
            out.write(head);
            out.write(content);
            out.flush();
            Response r = readResponse(c.in(), "HEAD".equals(request.method()));
            keep = r.reusable();
            return new Answer<>(request, r.status(), r.headers(), body.apply(r.body()));
        } finally {
            if (keep) {
                give(authority, c);
            } else {
                c.close();
            }
        }
    }

    private static byte[] head(HttpRequest request, String authority) {
        URI uri = request.uri();
        String target = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        if (uri.getRawQuery() != null) {
            target += "?" + uri.getRawQuery();
        }
        StringBuilder h = new StringBuilder(request.method()).append(' ').append(target).append(" HTTP/1.1\r\n");
        h.append("Host: ").append(authority).append("\r\n");
        request.headers().map().forEach((name, values) -> {
            if (!name.equalsIgnoreCase("Host") && !name.equalsIgnoreCase("Content-Length")) {
                values.forEach(v -> h.append(name).append(": ").append(v).append("\r\n"));
            }
        });
        long length = request.bodyPublisher().map(HttpRequest.BodyPublisher::contentLength).orElse(0L);
        boolean bodiless = length == 0 && switch (request.method()) {
            case "GET", "HEAD", "DELETE", "OPTIONS" -> true;
            default -> false;
        };
        if (!bodiless) {
            h.append("Content-Length: ").append(Math.max(length, 0)).append("\r\n");
        }
        return h.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** The request's body bytes, collected from its publisher (which, for the JDK's own publishers, delivers at once). */
    private static byte[] content(HttpRequest request) {
        HttpRequest.BodyPublisher p = request.bodyPublisher().orElse(null);
        if (p == null || p.contentLength() == 0) {
            return new byte[0];
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CompletableFuture<byte[]> done = new CompletableFuture<>();
        p.subscribe(new Flow.Subscriber<>() {
            @Override
            public void onSubscribe(Flow.Subscription s) {
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(ByteBuffer b) {
                byte[] a = new byte[b.remaining()];
                b.get(a);
                out.writeBytes(a);
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onComplete() {
                done.complete(out.toByteArray());
            }
        });
        byte[] b = done.getNow(null);
        if (b == null) {
            throw new IllegalArgumentException("the request body publisher did not deliver at once");
        }
        if (p.contentLength() > 0 && b.length != p.contentLength()) {
            throw new IllegalArgumentException("the body publisher gave " + b.length + " bytes, announced " + p.contentLength());
        }
        return b;
    }

    private synchronized Connection take(String authority) {
        ArrayDeque<Connection> q = idle.get(authority);
        long now = System.nanoTime();
        while (q != null && !q.isEmpty()) {
            Connection c = q.pollLast();
            if (now - c.idleSince <= MAX_IDLE.toNanos() && c.stillOpen()) {
                return c;
            }
            c.close();
        }
        return null;
    }

    private synchronized void give(String authority, Connection c) {
        if (closed) {
            c.close();
            return;
        }
        c.idleSince = System.nanoTime();
        idle.computeIfAbsent(authority, k -> new ArrayDeque<>()).addLast(c);
    }

    /** The number of idle connections kept for reuse (for this class's own tests). */
    synchronized int idleConnections() {
        return idle.values().stream().mapToInt(ArrayDeque::size).sum();
    }

    @Override
    public synchronized void close() {
        closed = true;
        idle.values().forEach(q -> q.forEach(Connection::close));
        idle.clear();
        async.shutdownNow();
    }

    /** A response as read off the wire; {@code reusable} when the connection may carry another exchange. */
    public record Response(int status, HttpHeaders headers, byte[] body, boolean reusable) {
    }

    /**
     * Reads one HTTP/1.1 response (interim 1xx answers skipped): status line, header fields, and a body
     * delimited by Content-Length, chunked coding or, failing both, the end of the connection.
     */
    public static Response readResponse(InputStream in, boolean toHead) throws IOException {
        while (true) {
            String status = line(in);
            if (status == null) {
                throw new EOFException("the connection closed before a status line");
            }
            if (status.length() < 12 || !status.startsWith("HTTP/1.")) {
                throw new IOException("not an HTTP/1.x status line: " + status);
            }
            int code = Integer.parseInt(status.substring(9, 12));
            Map<String, List<String>> fields = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            String l;
            while ((l = line(in)) != null && !l.isEmpty()) {
                int c = l.indexOf(':');
                if (c <= 0) {
                    throw new IOException("a header line without a name: " + l);
                }
                fields.computeIfAbsent(l.substring(0, c).trim(), k -> new ArrayList<>()).add(l.substring(c + 1).trim());
            }
            if (l == null) {
                throw new EOFException("the connection closed inside the header");
            }
            if (code >= 100 && code < 200) {
                continue;
            }
            HttpHeaders headers = HttpHeaders.of(fields, (a, b) -> true);
            boolean close = headers.allValues("Connection").stream()
                    .anyMatch(v -> v.toLowerCase(Locale.ROOT).contains("close"));
            Optional<String> length = headers.firstValue("Content-Length");
            boolean chunked = headers.firstValue("Transfer-Encoding").map(v -> v.equalsIgnoreCase("chunked")).orElse(false);
            if (toHead || code == 204 || code == 304) {
                return new Response(code, headers, new byte[0], !close);
            }
            if (chunked) {
                return new Response(code, headers, chunks(in), !close);
            }
            if (length.isPresent()) {
                int n = Integer.parseInt(length.get());
                byte[] b = in.readNBytes(n);
                if (b.length != n) {
                    throw new EOFException("the connection closed after " + b.length + " of " + n + " body bytes");
                }
                return new Response(code, headers, b, !close);
            }
            return new Response(code, headers, in.readAllBytes(), false);
        }
    }

    private static byte[] chunks(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (true) {
            String size = line(in);
            if (size == null) {
                throw new EOFException("the connection closed inside a chunked body");
            }
            int n = Integer.parseInt(size.split(";")[0].trim(), 16);
            if (n == 0) {
                String trailer;
                while ((trailer = line(in)) != null && !trailer.isEmpty()) {
                    // trailer fields are not kept
                }
                return out.toByteArray();
            }
            byte[] b = in.readNBytes(n);
            if (b.length != n) {
                throw new EOFException("the connection closed inside a chunk");
            }
            out.writeBytes(b);
            line(in);
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                String s = b.toString(StandardCharsets.ISO_8859_1);
                return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            }
            b.write(c);
        }
        return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
    }

    /** One socket, held by one exchange at a time. */
    private static final class Connection {
        private final SocketChannel channel;
        private final InputStream in;
        private final OutputStream out;
        long idleSince;

        private Connection(SocketChannel channel) throws IOException {
            this.channel = channel;
            this.in = new java.io.BufferedInputStream(channel.socket().getInputStream());
            this.out = new java.io.BufferedOutputStream(channel.socket().getOutputStream());
        }

        static Connection open(String host, int port) throws IOException {
            SocketChannel ch = SocketChannel.open();
            try {
                ch.socket().connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MS);
                ch.socket().setTcpNoDelay(true);
                return new Connection(ch);
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
        }

        InputStream in() {
            return in;
        }

        OutputStream out() {
            return out;
        }

        void setTimeout(int ms) throws IOException {
            channel.socket().setSoTimeout(ms);
        }

        /**
         * Whether the server has not closed this idle connection: a non-blocking read finds nothing
         * to read. End of stream, a reset or stray bytes all mean it must not carry a request.
         */
        boolean stillOpen() {
            try {
                if (in.available() > 0) {
                    return false;
                }
                channel.configureBlocking(false);
                int n = channel.read(ByteBuffer.allocate(1));
                channel.configureBlocking(true);
                return n == 0;
            } catch (IOException e) {
                return false;
            }
        }

        void close() {
            try {
                channel.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    /** An answer as {@link HttpResponse}, so tests read it as they would the JDK client's. */
    private record Answer<T>(HttpRequest request, int statusCode, HttpHeaders headers, T body) implements HttpResponse<T> {
        @Override
        public Optional<HttpResponse<T>> previousResponse() {
            return Optional.empty();
        }

        @Override
        public Optional<SSLSession> sslSession() {
            return Optional.empty();
        }

        @Override
        public URI uri() {
            return request.uri();
        }

        @Override
        public HttpClient.Version version() {
            return HttpClient.Version.HTTP_1_1;
        }
    }
}
