package dev.cor.examples.gateway;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestException;
import dev.cor.rest.client.CorRestClient;
import dev.cor.rest.client.CorRestClientException;
import dev.cor.rest.client.CorRestClientRequest;
import dev.cor.rest.client.CorRestClientResponse;

/**
 * {@code GET /entities/{id}}: answered from the local map when the id is there - inline, it
 * cannot wait - or forwarded to the next hop and the answer relayed. A forward waits, so it may
 * be a coroutine; the client it uses yields inside one and blocks on a worker, with no change.
 */
final class GatewayApp implements CorRestApplication {
    private static final String PREFIX = "/entities/";
    /** Bound on nested in-process forwards of one request (a chain that loops onto itself). */
    private static final int MAX_FORWARD_DEPTH = 8;

    private final Map<String, byte[]> entities = new ConcurrentHashMap<>();
    private final String next;
    private final CorRestClient client;

    GatewayApp(String next, CorRestClient client) {
        this.next = next;
        this.client = client;
    }

    void put(String id, byte[] entity) {
        entities.put(id, entity);
    }

    @Override
    public boolean canWait(CorRest request) {
        String id = id(request);
        return id != null && next != null && !entities.containsKey(id);
    }

    @Override
    public void handle(CorRest request) throws Exception {
        String id = id(request);
        if (id == null) {
            throw new CorRestException(404, "Not Found", "no resource " + request.path() + " (try GET /entities/{id})");
        }
        if (!request.method().equals("GET") && !request.method().equals("HEAD")) {
            throw new CorRestException(405, "Method Not Allowed", "entities are read with GET");
        }
        byte[] local = entities.get(id);
        if (local != null) {
            request.respond(200, "application/json", local);
            return;
        }
        if (next == null) {
            throw new CorRestException(404, "https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound", "Not Found",
                    "no entity " + id, null);
        }
        forward(request);
    }

    private void forward(CorRest request) throws Exception {
        if (!request.state().enterForward(MAX_FORWARD_DEPTH)) {
            throw new CorRestException(508, "Loop Detected", "more than " + MAX_FORWARD_DEPTH + " nested forwards");
        }
        try {
            String url = next + request.path() + (request.query() != null ? "?" + request.query() : "");
            CorRestClientResponse r;
            try {
                r = client.send(CorRestClientRequest.get(url));
            } catch (CorRestClientException e) {
                throw new CorRestException(e.gatewayStatus(), e.gatewayStatus() == 504 ? "Gateway Timeout" : "Bad Gateway",
                        "the next hop " + next + ": " + e.getMessage());
            }
            String type = r.header("Content-Type");
            request.respond(r.status(), type, r.body());
        } finally {
            request.state().exitForward();
        }
    }

    private static String id(CorRest request) {
        String p = request.path();
        if (!p.startsWith(PREFIX) || p.length() == PREFIX.length() || p.indexOf('/', PREFIX.length()) >= 0) {
            return null;
        }
        try {
            return URLDecoder.decode(p.substring(PREFIX.length()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
