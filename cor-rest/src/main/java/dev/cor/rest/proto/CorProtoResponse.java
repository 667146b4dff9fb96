package dev.cor.rest.proto;

import java.io.IOException;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestJson;
import dev.cor.rest.CorRestHeaders;

/**
 * The answer to one {@code cor://} request: status, headers and the body - as bytes, or as the
 * JSON tree it travelled as (spec § 6.2). Each form is made from the other only when asked for,
 * once. Handed to the one caller that sent the request; not thread-safe.
 */
public final class CorProtoResponse {
    private static final byte[] EMPTY = new byte[0];

    private final int status;
    private final CorRestHeaders headers;
    private byte[] body;
    private JsonNode json;
    private boolean jsonTried;

    CorProtoResponse(int status, CorRestHeaders headers) {
        this.status = status;
        this.headers = headers;
    }

    void tree(JsonNode tree) {
        this.json = tree;
        this.jsonTried = true;
    }

    void bytes(byte[] bytes) {
        this.body = bytes;
    }

    public int status() {
        return status;
    }

    public CorRestHeaders headers() {
        return headers;
    }

    /** Whether the body travelled as a tree (spec § 6.2). */
    public boolean arrivedAsTree() {
        return json != null && body == null;
    }

    /**
     * Whether the body is JSON: it travelled as a tree, or its Content-Type says JSON
     * ({@code application/json} or {@code +json}).
     */
    public boolean isJson() {
        if (json != null) {
            return true;
        }
        return CorRestJson.isJsonType(headers.get("Content-Type"));
    }

    /** The body as bytes (empty if none); a tree is serialized to JSON text the first time. */
    public byte[] body() {
        if (body == null) {
            if (json == null) {
                return EMPTY;
            }
            try {
                body = CorRestJson.mapper().writeValueAsBytes(json);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("a JSON tree that does not serialize", e);
            }
        }
        return body;
    }

    /**
     * The body as a JSON tree: the tree it travelled as, or the bytes parsed once when they are
     * JSON; {@code null} when there is no JSON body.
     *
     * @throws CorProtoException kind {@code PROTOCOL} when the bytes say they are JSON and are not
     */
    public JsonNode json() throws CorProtoException {
        if (!jsonTried) {
            jsonTried = true;
            if (body != null && body.length > 0 && isJson()) {
                try {
                    json = CorRestJson.mapper().readTree(body);
                } catch (IOException e) {
                    throw new CorProtoException(CorProtoException.Kind.PROTOCOL, CorProtoError.INVALID_PAYLOAD,
                            "the peer's JSON body does not parse: " + e.getMessage(), false, e);
                }
            }
        }
        return json;
    }

    @Override
    public String toString() {
        return "CorProtoResponse[" + status + ", " + (json != null ? "tree" : (body == null ? 0 : body.length) + " bytes") + "]";
    }
}
