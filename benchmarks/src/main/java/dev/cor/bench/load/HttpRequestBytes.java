package dev.cor.bench.load;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

import dev.cor.bench.cli.Endpoint;

/**
 * The one HTTP/1.1 request a run sends over and over, encoded once: request line, Host (unless
 * given), the given headers, Content-Length when there is a body (or the method usually has
 * one), then the body. Each connection writes a {@link ByteBuffer#duplicate()} of it. Made by
 * {@link HttpTarget}; immutable.
 */
final class HttpRequestBytes {
    private HttpRequestBytes() {
    }

    static ByteBuffer encode(Endpoint url, String method, List<LoadOptions.Header> headers, byte[] body) {
        StringBuilder head = new StringBuilder(256);
        head.append(method).append(' ').append(url.requestTarget()).append(" HTTP/1.1\r\n");
        boolean hasHost = false;
        boolean hasAgent = false;
        for (LoadOptions.Header h : headers) {
            String name = h.name().toLowerCase(Locale.ROOT);
            hasHost |= name.equals("host");
            hasAgent |= name.equals("user-agent");
        }
        if (!hasHost) {
            head.append("Host: ").append(url.authority()).append("\r\n");
        }
        if (!hasAgent) {
            head.append("User-Agent: corRequest\r\n");
        }
        for (LoadOptions.Header h : headers) {
            head.append(h.name()).append(": ").append(h.value()).append("\r\n");
        }
        if (body.length > 0 || method.equals("POST") || method.equals("PUT") || method.equals("PATCH")) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        ByteArrayOutputStream all = new ByteArrayOutputStream(head.length() + body.length);
        all.writeBytes(head.toString().getBytes(StandardCharsets.ISO_8859_1));
        all.writeBytes(body);
        byte[] bytes = all.toByteArray();
        return ByteBuffer.allocateDirect(bytes.length).put(bytes).flip().asReadOnlyBuffer();
    }
}
