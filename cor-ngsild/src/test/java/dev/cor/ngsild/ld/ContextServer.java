package dev.cor.ngsild.ld;

import java.io.IOException;
import java.io.OutputStream;
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
 * A {@code @context} server for tests, on a free port of 127.0.0.1 (the JDK's HttpServer, real
 * sockets): serves what a test puts at a path - a document, a status, headers, a delay, a hang -
 * and counts the requests each path got. Any thread.
 */
final class ContextServer implements AutoCloseable {
    /** What a path answers. */
    record Reply(int status, Map<String, String> headers, byte[] body, long delayMs, boolean hang) {
        static Reply json(String body) {
            return new Reply(200, Map.of("Content-Type", "application/ld+json"), body.getBytes(StandardCharsets.UTF_8), 0, false);
        }
    }

    private final HttpServer server;
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "context-server");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, Reply> replies = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();
    private final Map<String, String> accepts = new ConcurrentHashMap<>();
    /** Released when the server closes, so that a hanging reply ends. */
    private final CountDownLatch closing = new CountDownLatch(1);

    ContextServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.createContext("/", this::serve);
        server.setExecutor(pool);
        server.start();
    }

    /** {@code http://127.0.0.1:PORT} + {@code path}. */
    String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    ContextServer put(String path, String json) {
        replies.put(path, Reply.json(json));
        return this;
    }

    ContextServer put(String path, Reply reply) {
        replies.put(path, reply);
        return this;
    }

    /** How many requests {@code path} got. */
    int hits(String path) {
        AtomicInteger n = hits.get(path);
        return n == null ? 0 : n.get();
    }

    /** The Accept header of the last request of {@code path}. */
    String accept(String path) {
        return accepts.get(path);
    }

    private void serve(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getRawPath();
        hits.computeIfAbsent(path, k -> new AtomicInteger()).incrementAndGet();
        String accept = ex.getRequestHeaders().getFirst("Accept");
        if (accept != null) {
            accepts.put(path, accept);
        }
        Reply r = replies.get(path);
        try (ex) {
            if (r == null) {
                ex.sendResponseHeaders(404, -1);
                return;
            }
            if (r.hang()) {
                closing.await(60, TimeUnit.SECONDS);
                return;
            }
            if (r.delayMs() > 0) {
                Thread.sleep(r.delayMs());
            }
            r.headers().forEach((k, v) -> ex.getResponseHeaders().add(k, v));
            ex.sendResponseHeaders(r.status(), r.body().length == 0 ? -1 : r.body().length);
            if (r.body().length > 0) {
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(r.body());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the client went away
        }
    }

    @Override
    public void close() {
        closing.countDown();
        server.stop(0);
        pool.shutdownNow();
    }
}
