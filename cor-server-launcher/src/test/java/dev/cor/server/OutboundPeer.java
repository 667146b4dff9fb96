package dev.cor.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

import javax.net.ssl.SSLContext;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;

/**
 * A peer the broker connects to, on one loopback address, over HTTP or HTTPS (with a certificate
 * a test made): a {@code @context} at {@link #CONTEXT_PATH} (or a 302 to another URL), a
 * notification receiver at {@link #NOTIFY_PATH}, and a context source under {@code /ngsi-ld/v1/}
 * that has nothing. Counts what it was asked; any thread.
 */
final class OutboundPeer implements AutoCloseable {
    static final String CONTEXT_PATH = "/ctx.jsonld";
    static final String NOTIFY_PATH = "/notify";
    static final String CONTEXT = "{\"@context\":{\"speed\":\"https://example.org/speed\"}}";

    private final HttpServer server;
    private final String scheme;
    private final String host;
    final AtomicInteger requests = new AtomicInteger();
    final AtomicInteger notifications = new AtomicInteger();
    final AtomicInteger forwards = new AtomicInteger();
    volatile String redirectTo;

    private OutboundPeer(HttpServer server, String scheme, String host) {
        this.server = server;
        this.scheme = scheme;
        this.host = host;
        server.createContext("/", this::handle);
        server.start();
    }

    /** Plain HTTP on {@code address} (e.g. 127.0.0.2), named by that address. */
    static OutboundPeer http(String address) throws IOException {
        return new OutboundPeer(HttpServer.create(new InetSocketAddress(address, 0), 16), "http", address);
    }

    /** HTTPS with {@code tls} on 127.0.0.1, named {@code localhost} (what its certificate names, or not). */
    static OutboundPeer https(SSLContext tls) throws IOException {
        HttpsServer s = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        s.setHttpsConfigurator(new HttpsConfigurator(tls));
        return new OutboundPeer(s, "https", "localhost");
    }

    /** {@code scheme://host:port} then {@code path}. */
    String url(String path) {
        return origin() + path;
    }

    String origin() {
        return scheme + "://" + host + ":" + server.getAddress().getPort();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            requests.incrementAndGet();
            ex.getRequestBody().readAllBytes();
            String path = ex.getRequestURI().getPath();
            if (path.equals(CONTEXT_PATH) && redirectTo != null) {
                ex.getResponseHeaders().set("Location", redirectTo);
                ex.sendResponseHeaders(302, -1);
            } else if (path.equals(CONTEXT_PATH)) {
                answer(ex, "application/ld+json", CONTEXT);
            } else if (path.equals(NOTIFY_PATH)) {
                notifications.incrementAndGet();
                ex.sendResponseHeaders(204, -1);
            } else if (path.startsWith("/ngsi-ld/v1/entities")) {
                forwards.incrementAndGet();
                answer(ex, "application/json", "[]");
            } else {
                ex.sendResponseHeaders(404, -1);
            }
        }
    }

    private static void answer(HttpExchange ex, String type, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(200, b.length);
        ex.getResponseBody().write(b);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
