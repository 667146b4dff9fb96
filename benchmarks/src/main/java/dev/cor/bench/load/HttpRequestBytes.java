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
 * one), then the body. Each connection writes a {@link ByteBuffer#duplicate()} of it - or, when
 * the body holds {@link #SEQ}, a copy of its own whose {@link #SEQ_DIGITS} digits at
 * {@link #seqOffset} it sets to a new number before each send (a create needs a new id each
 * time). Made by {@link HttpTarget}; immutable.
 */
final class HttpRequestBytes {
    /** What a body writes where each request puts a number of its own. */
    static final String SEQ = "{seq}";
    /** The digits that number takes, leading zeros included: the body keeps one length. */
    static final int SEQ_DIGITS = 12;

    private final ByteBuffer bytes;
    private final int seqOffset;

    private HttpRequestBytes(ByteBuffer bytes, int seqOffset) {
        this.bytes = bytes;
        this.seqOffset = seqOffset;
    }

    /** The encoded request (read-only). */
    ByteBuffer bytes() {
        return bytes;
    }

    /** Where in {@link #bytes()} the request number goes, or -1 when the body has no {@link #SEQ}. */
    int seqOffset() {
        return seqOffset;
    }

    /** Writes {@code seq} as {@link #SEQ_DIGITS} digits at {@code offset} of {@code into}. */
    static void putSeq(ByteBuffer into, int offset, long seq) {
        for (int i = SEQ_DIGITS - 1; i >= 0; i--) {
            into.put(offset + i, (byte) ('0' + seq % 10));
            seq /= 10;
        }
    }

    static HttpRequestBytes encode(Endpoint url, String method, List<LoadOptions.Header> headers, byte[] body) {
        int seqInBody = indexOf(body, SEQ.getBytes(StandardCharsets.US_ASCII));
        if (seqInBody >= 0) {
            byte[] withDigits = new byte[body.length - SEQ.length() + SEQ_DIGITS];
            System.arraycopy(body, 0, withDigits, 0, seqInBody);
            java.util.Arrays.fill(withDigits, seqInBody, seqInBody + SEQ_DIGITS, (byte) '0');
            System.arraycopy(body, seqInBody + SEQ.length(), withDigits, seqInBody + SEQ_DIGITS,
                    body.length - seqInBody - SEQ.length());
            body = withDigits;
        }
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
        byte[] headBytes = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        ByteArrayOutputStream all = new ByteArrayOutputStream(headBytes.length + body.length);
        all.writeBytes(headBytes);
        all.writeBytes(body);
        byte[] bytes = all.toByteArray();
        return new HttpRequestBytes(ByteBuffer.allocateDirect(bytes.length).put(bytes).flip().asReadOnlyBuffer(),
                seqInBody < 0 ? -1 : headBytes.length + seqInBody);
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int k = 0; k < needle.length; k++) {
                if (haystack[i + k] != needle[k]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
