package dev.cor.http;

import java.nio.charset.StandardCharsets;

/** {@code HTTP/1.1 <code> <reason>\r\n} as bytes, made once per status. Immutable; any thread. */
final class HttpStatusLines {
    private static final byte[][] LINES = new byte[600][];

    static {
        for (int s = 100; s < 600; s++) {
            LINES[s] = ("HTTP/1.1 " + s + " " + HttpConnection.reasonPhrase(s) + "\r\n").getBytes(StandardCharsets.US_ASCII);
        }
    }

    private HttpStatusLines() {
    }

    static byte[] of(int status) {
        if (status < 100 || status >= 600) {
            throw new IllegalArgumentException("status out of range: " + status);
        }
        return LINES[status];
    }
}
