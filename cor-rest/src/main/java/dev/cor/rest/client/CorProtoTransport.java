package dev.cor.rest.client;

import java.io.IOException;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.rest.CorRestJson;
import dev.cor.rest.client.CorRestClientException.Kind;
import dev.cor.rest.proto.CorProtoException;
import dev.cor.rest.proto.CorProtoResponse;

/**
 * {@code cor://host:port/path}: the request goes over the client's multiplexed {@code cor://}
 * connections ({@link dev.cor.rest.proto.CorProtoClient}) - a JSON body as a tree, as the
 * protocol carries it - and its answer, or its failure, comes back in the HTTP client's terms, so
 * a caller takes {@code cor://} wherever it takes {@code http://}. {@code cors://} is the same
 * inside TLS, over a second {@code CorProtoClient} of the client's, with its {@code SSLContext}.
 */
final class CorProtoTransport implements Transport {
    static final CorProtoTransport PLAIN = new CorProtoTransport(false);
    static final CorProtoTransport TLS = new CorProtoTransport(true);

    private final boolean tls;

    private CorProtoTransport(boolean tls) {
        this.tls = tls;
    }

    @Override
    public CorRestClientResponse exchange(CorRestClient client, CorRestClientRequest req) throws CorRestClientException {
        if (req.port <= 0) {
            throw new CorRestClientException(Kind.REFUSED, "cannot send " + req + ": a " + req.scheme + ":// URL needs a port");
        }
        int q = req.target.indexOf('?');
        String path = q < 0 ? req.target : req.target.substring(0, q);
        String query = q < 0 ? null : req.target.substring(q + 1);
        byte[] body = req.body();
        JsonNode tree = null;
        if (body.length > 0 && CorRestJson.isJsonType(req.headers().get("Content-Type"))) {
            try {
                tree = CorRestJson.mapper().readTree(body);
                body = null;
            } catch (IOException e) {
                tree = null; // not JSON after all: it travels as the bytes it is
            }
        }
        CorProtoResponse r;
        try {
            r = (tls ? client.protoTls() : client.proto()).send(req.method(), req.host, req.port, path, query, req.headers(), tree, body,
                    req.responseTimeoutMs(client.responseTimeoutMs));
        } catch (CorProtoException e) {
            throw new CorRestClientException(kind(e), req.scheme + "://" + req.host + ":" + req.port + ": " + e.getMessage(), e);
        }
        return new CorRestClientResponse("COR/1", r.status(), "", r.headers(), r.body());
    }

    private static Kind kind(CorProtoException e) {
        return switch (e.kind()) {
            case CONNECT, REFUSED -> Kind.REFUSED;
            case CLOSED -> Kind.CLOSED;
            case TIMEOUT -> Kind.TIMEOUT;
            case TOO_LARGE -> Kind.TOO_LARGE;
            case PROTOCOL, STREAM -> Kind.MALFORMED;
            case DENIED -> Kind.DENIED;
        };
    }
}
