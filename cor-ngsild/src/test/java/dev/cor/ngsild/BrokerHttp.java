package dev.cor.ngsild;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** Requests to a {@link TestBroker} over real kept-alive sockets ({@link KeepAliveHttp}), for the broker's own tests. Thread-safe. */
public final class BrokerHttp {
    public static final ObjectMapper JSON = new ObjectMapper();
    private final KeepAliveHttp client = new KeepAliveHttp();
    private final String base;

    public BrokerHttp(TestBroker broker) {
        this.base = broker.baseUrl();
    }

    public HttpResponse<String> send(String method, String path, String contentType, String body, String... headers)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return client.sendString(b.build());
    }

    public HttpResponse<String> get(String path, String... headers) throws IOException, InterruptedException {
        return send("GET", path, null, null, headers);
    }

    public HttpResponse<String> postJson(String path, String body, String... headers) throws IOException, InterruptedException {
        return send("POST", path, "application/json", body, headers);
    }

    public static JsonNode json(HttpResponse<String> r) throws IOException {
        return JSON.readTree(r.body());
    }
}
