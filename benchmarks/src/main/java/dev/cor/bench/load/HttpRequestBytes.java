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
 * the body holds {@link #SEQ}, a copy of its own whose {@link #SEQ_DIGITS} digits at each
 * {@link #SEQ} place it sets to a new number before each send (a create needs a new id each
 * time; a batch of 20 creates, 20 ids that share the number). Made by {@link HttpTarget}; immutable.
 */
final class HttpRequestBytes {
    /** What a body writes where each request puts a number of its own. */
    static final String SEQ = "{seq}";
    /** The digits that number takes, leading zeros included: the body keeps one length. */
    static final int SEQ_DIGITS = 12;
    /** What a URL writes where each connection puts its own number (0, 1, ... K-1 of K sockets). */
    static final String SOCKET = "{socket}";
    /** {@link #SOCKET} as the parsed URL holds it (a URI takes no braces). */
    static final String SOCKET_IN_URL = "%7Bsocket%7D";

    private final ByteBuffer bytes;
    private final int[] seqOffsets;

    private HttpRequestBytes(ByteBuffer bytes, int[] seqOffsets) {
        this.bytes = bytes;
        this.seqOffsets = seqOffsets;
    }

    /** The encoded request (read-only). */
    ByteBuffer bytes() {
        return bytes;
    }

    /** Whether the body holds a {@link #SEQ}: each request then needs a copy of its own. */
    boolean numbered() {
        return seqOffsets.length > 0;
    }

    /** Writes {@code seq} as {@link #SEQ_DIGITS} digits at every {@link #SEQ} place of {@code into}, a copy of {@link #bytes()}. */
    void putSeq(ByteBuffer into, long seq) {
        for (int offset : seqOffsets) {
            long n = seq;
            for (int i = SEQ_DIGITS - 1; i >= 0; i--) {
                into.put(offset + i, (byte) ('0' + n % 10));
                n /= 10;
            }
        }
    }

    static HttpRequestBytes encode(Endpoint url, String method, List<LoadOptions.Header> headers, byte[] body) {
        // every {seq} becomes SEQ_DIGITS zeros, its place remembered (relative to the body for now)
        byte[] marker = SEQ.getBytes(StandardCharsets.US_ASCII);
        ByteArrayOutputStream numbered = new ByteArrayOutputStream(body.length);
        List<Integer> places = new java.util.ArrayList<>();
        int from = 0;
        for (int at; (at = indexOf(body, marker, from)) >= 0; from = at + marker.length) {
            numbered.write(body, from, at - from);
            places.add(numbered.size());
            for (int i = 0; i < SEQ_DIGITS; i++) {
                numbered.write('0');
            }
        }
        if (!places.isEmpty()) {
            numbered.write(body, from, body.length - from);
            body = numbered.toByteArray();
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
        int[] offsets = places.stream().mapToInt(p -> headBytes.length + p).toArray();
        return new HttpRequestBytes(ByteBuffer.allocateDirect(bytes.length).put(bytes).flip().asReadOnlyBuffer(), offsets);
    }

    private static int indexOf(byte[] haystack, byte[] needle, int from) {
        outer:
        for (int i = from; i + needle.length <= haystack.length; i++) {
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
