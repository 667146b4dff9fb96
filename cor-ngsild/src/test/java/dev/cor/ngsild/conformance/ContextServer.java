package dev.cor.ngsild.conformance;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * Remote {@code @context}s for the broker under test, served over HTTP on 127.0.0.1: the documents
 * of {@code src/test/resources/conformance/} with their {@code ${ORIGIN}} filled in, answers set by a
 * test (an error status, garbage), and a path that never answers (until {@link #close}, or 30 s).
 * Counts the requests per path. Its handlers run on a small pool of its own; safe to use from any
 * thread.
 */
public final class ContextServer implements AutoCloseable {
    /** The user context of the tests: entity types and attribute names under {@code https://cor.test/model#}. */
    static final String MODEL = "/model.jsonld";
    /** [{@link #MODEL}, the core context]: a context that names the core one, which must never be downloaded. */
    static final String COMPOUND = "/compound.jsonld";
    /** Maps {@code speed} and {@code Vehicle} to other IRIs than {@link #MODEL} does. */
    static final String OTHER = "/other.jsonld";
    /** Never answers. */
    static final String HANG = "/hang.jsonld";

    private record Reply(int status, String contentType, byte[] body) {
    }

    private final HttpServer server;
    private final ExecutorService pool = Executors.newFixedThreadPool(6, r -> {
        Thread t = new Thread(r, "context-server");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, Reply> replies = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();
    private final CountDownLatch released = new CountDownLatch(1);

    private ContextServer(HttpServer server) {
        this.server = server;
    }

    public static ContextServer start() {
        try {
            HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
            ContextServer c = new ContextServer(s);
            s.createContext("/", c::handle);
            s.setExecutor(c.pool);
            s.start();
            c.serveResource(MODEL, "conformance/model.jsonld");
            c.serveResource(COMPOUND, "conformance/compound.jsonld");
            c.serveResource(OTHER, "conformance/other.jsonld");
            return c;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code http://127.0.0.1:PORT}. */
    String origin() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The absolute URL of {@code path}. */
    public String url(String path) {
        return origin() + path;
    }

    /** Serves {@code json} at {@code path} as {@code application/ld+json}. */
    public void serve(String path, String json) {
        reply(path, 200, "application/ld+json", json);
    }

    /** Answers {@code path} with {@code status} and {@code body} as they are. */
    void reply(String path, int status, String contentType, String body) {
        replies.put(path, new Reply(status, contentType, body.getBytes(StandardCharsets.UTF_8)));
    }

    /** Stops answering {@code path}: it gets a 404. */
    void remove(String path) {
        replies.remove(path);
    }

    /** How many requests {@code path} has had. */
    int hits(String path) {
        AtomicInteger n = hits.get(path);
        return n == null ? 0 : n.get();
    }

    private void serveResource(String path, String resource) {
        try (InputStream in = ContextServer.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource " + resource);
            }
            serve(path, new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("${ORIGIN}", origin()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void handle(HttpExchange x) throws IOException {
        String path = x.getRequestURI().getPath();
        hits.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
        try (x) {
            if (path.equals(HANG)) {
                try {
                    released.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            Reply r = replies.get(path);
            if (r == null) {
                r = new Reply(404, "text/plain", "no such context".getBytes(StandardCharsets.UTF_8));
            }
            x.getResponseHeaders().set("Content-Type", r.contentType());
            x.sendResponseHeaders(r.status(), r.body().length == 0 ? -1 : r.body().length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(r.body());
            }
        }
    }

    /** Releases the hanging path and stops the server. */
    @Override
    public void close() {
        released.countDown();
        server.stop(0);
        pool.shutdownNow();
    }
}
