package dev.cor.ngsild.conformance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.KeepAliveHttp;

/**
 * The broker under test, seen from a client: builds requests against its base URL
 * ({@code http://127.0.0.1:PORT/ngsi-ld/v1}) and sends them on kept-alive HTTP/1.1 connections
 * ({@link KeepAliveHttp}, which takes the JDK's {@link HttpRequest}). Requests HttpRequest cannot describe (no Content-Length, odd header values) go through
 * {@link RawHttp}. Shared by the tests of one class; thread-safe.
 */
final class Ngsi {
    static final String JSON = "application/json";
    static final String LD_JSON = "application/ld+json";
    static final String GEO_JSON = "application/geo+json";
    static final String MERGE_PATCH = "application/merge-patch+json";
    /** The link relation of a JSON-LD context {@code Link} header (JSON-LD 1.1 § 6.1). */
    static final String CONTEXT_REL = "http://www.w3.org/ns/json-ld#context";
    /** The NGSI-LD core context the project targets (V1.8). */
    static final String CORE_CONTEXT = "https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld";
    /** The path prefix every resource of the API has. */
    static final String PREFIX = "/ngsi-ld/v1";

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final KeepAliveHttp http;
    private final String base;

    Ngsi(String baseUrl) {
        this.base = baseUrl;
        this.http = new KeepAliveHttp();
    }

    /** {@code http://127.0.0.1:PORT/ngsi-ld/v1}. */
    String baseUrl() {
        return base;
    }

    /** {@code http://127.0.0.1:PORT}: where the broker's own resources are reachable by absolute URL. */
    String origin() {
        return base.substring(0, base.length() - PREFIX.length());
    }

    Request get(String path) {
        return new Request("GET", path);
    }

    Request post(String path) {
        return new Request("POST", path);
    }

    Request put(String path) {
        return new Request("PUT", path);
    }

    Request patch(String path) {
        return new Request("PATCH", path);
    }

    Request delete(String path) {
        return new Request("DELETE", path);
    }

    Request method(String method, String path) {
        return new Request(method, path);
    }

    /** The path of an entity: {@code /entities/{id}}. Ids are URIs and go into the path as they are. */
    static String entity(String id) {
        return "/entities/" + id;
    }

    /** {@code /entities/{id}/attrs/{attr}}. */
    static String attr(String id, String attr) {
        return "/entities/" + id + "/attrs/" + attr;
    }

    /** Percent-encodes one path segment (a URL used as a {@code jsonldContexts} identifier). */
    static String segment(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** The value of a {@code Link} header naming {@code url} as the request's JSON-LD context. */
    static String contextLink(String url) {
        return "<" + url + ">; rel=\"" + CONTEXT_REL + "\"; type=\"application/ld+json\"";
    }

    /** One request, built fluently and sent once. */
    final class Request {
        private final String method;
        private final String path;
        private final List<String> query = new ArrayList<>();
        private final List<String[]> headers = new ArrayList<>();
        private byte[] body;

        private Request(String method, String path) {
            this.method = method;
            this.path = path;
        }

        /** A query parameter, percent-encoded. */
        Request query(String name, String value) {
            query.add(URLEncoder.encode(name, StandardCharsets.UTF_8) + "="
                    + URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20"));
            return this;
        }

        /** Query parameters exactly as given ({@code name=value&...}, escapes and pluses as the test writes them). */
        Request rawQuery(String pairs) {
            query.add(pairs);
            return this;
        }

        Request header(String name, String value) {
            headers.add(new String[] {name, value});
            return this;
        }

        Request accept(String mediaRange) {
            return header("Accept", mediaRange);
        }

        /** A JSON-LD context {@code Link} header naming {@code contextUrl}. */
        Request link(String contextUrl) {
            return header("Link", contextLink(contextUrl));
        }

        Request tenant(String tenant) {
            return header("NGSILD-Tenant", tenant);
        }

        /** {@code body} as {@code application/json}. */
        Request json(Object body) {
            return body(JSON, body);
        }

        /** {@code body} as {@code application/ld+json}. */
        Request ldJson(Object body) {
            return body(LD_JSON, body);
        }

        /** {@code body} (a {@link JsonNode} or text) with the given Content-Type. */
        Request body(String contentType, Object body) {
            header("Content-Type", contentType);
            this.body = (body instanceof JsonNode n ? Json.write(n) : body.toString()).getBytes(StandardCharsets.UTF_8);
            return this;
        }

        /** A body without a Content-Type header. */
        Request bodyWithoutContentType(String text) {
            this.body = text.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        URI uri() {
            return URI.create(base + path + (query.isEmpty() ? "" : "?" + String.join("&", query)));
        }

        private HttpRequest build() {
            HttpRequest.Builder b = HttpRequest.newBuilder(uri()).timeout(TIMEOUT);
            for (String[] h : headers) {
                b.header(h[0], h[1]);
            }
            HttpRequest.BodyPublisher p = body == null
                    ? (method.equals("GET") || method.equals("DELETE") ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofByteArray(new byte[0]))
                    : HttpRequest.BodyPublishers.ofByteArray(body);
            return b.method(method, p).build();
        }

        Answer send() {
            try {
                HttpResponse<byte[]> r = http.send(build());
                return new Answer(method + " " + uri(), r.statusCode(), r.headers(), r.body());
            } catch (IOException e) {
                throw new UncheckedIOException(method + " " + uri() + " failed", e);
            }
        }

        /** Sends without waiting; the answer completes the future (within the request timeout). */
        CompletableFuture<Answer> sendAsync() {
            String what = method + " " + uri();
            return http.sendAsync(build())
                    .thenApply(r -> new Answer(what, r.statusCode(), r.headers(), r.body()));
        }
    }

    /** An answer as received: status, header fields, body bytes. */
    record Answer(String request, int status, HttpHeaders headers, byte[] body) {

        /** The first value of a header field, or {@code null}. */
        String header(String name) {
            return headers.firstValue(name).orElse(null);
        }

        List<String> headerValues(String name) {
            return headers.allValues(name);
        }

        boolean has(String name) {
            return headers.firstValue(name).isPresent();
        }

        String contentType() {
            return header("Content-Type");
        }

        /** The media type of the Content-Type, lower case, without parameters; {@code null} when absent. */
        String mediaType() {
            String ct = contentType();
            if (ct == null) {
                return null;
            }
            int semi = ct.indexOf(';');
            return (semi < 0 ? ct : ct.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        /** The body parsed as JSON; fails the test, showing the answer, when it is not JSON. */
        JsonNode json() {
            try {
                return Json.parse(text());
            } catch (RuntimeException e) {
                throw new AssertionError("the answer body is not JSON: " + this, e);
            }
        }

        @Override
        public String toString() {
            StringBuilder s = new StringBuilder(request).append(" -> ").append(status);
            headers.map().forEach((k, v) -> s.append("\n  ").append(k).append(": ").append(String.join(", ", v)));
            String t = text();
            if (!t.isEmpty()) {
                s.append("\n  ").append(t.length() > 2000 ? t.substring(0, 2000) + "..." : t);
            }
            return s.toString();
        }
    }
}
