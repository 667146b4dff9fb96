package dev.cor.rest.client;

import java.nio.charset.StandardCharsets;

import dev.cor.rest.CorRestHeaders;

/**
 * A complete response read by {@link CorRestClient}: status, reason, header fields and the whole
 * body, read to its end before the response is handed over. It belongs to whoever received it.
 */
public final class CorRestClientResponse {
    private final int status;
    private final String reason;
    private final String version;
    private final CorRestHeaders headers;
    private final byte[] body;

    CorRestClientResponse(String version, int status, String reason, CorRestHeaders headers, byte[] body) {
        this.version = version;
        this.status = status;
        this.reason = reason;
        this.headers = headers;
        this.body = body;
    }

    public int status() {
        return status;
    }

    /** The reason phrase (may be empty). */
    public String reason() {
        return reason;
    }

    /** {@code HTTP/1.1} or {@code HTTP/1.0}. */
    public String version() {
        return version;
    }

    public CorRestHeaders headers() {
        return headers;
    }

    /** The first value of a header field, or {@code null}. */
    public String header(String name) {
        return headers.get(name);
    }

    /** The body, de-chunked; empty when there is none. */
    public byte[] body() {
        return body;
    }

    /** The body as UTF-8 text. */
    public String bodyText() {
        return new String(body, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return version + " " + status + " " + reason + " (" + body.length + " body bytes)";
    }
}
