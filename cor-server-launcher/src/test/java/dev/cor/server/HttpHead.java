package dev.cor.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The head of an HTTP/1.1 message read from a raw socket - its start line and header fields, up
 * to the empty line - for the tests that speak HTTP without a client library (a probe, a peer
 * that misbehaves, a reader that must not read ahead). Reads byte by byte, so nothing after the
 * head is taken from the stream. Stateless.
 */
final class HttpHead {
    private HttpHead() {
    }

    /**
     * The head, its lines separated by CRLF and ended by an empty one; {@code null} when the
     * stream ends before its first byte (the other end closed a connection between messages).
     *
     * @throws IOException the stream ended within the head, or a read failed (its timeout, too)
     */
    static String read(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                if (head.size() == 0) {
                    return null;
                }
                throw new IOException("the connection ended in the head: " + head);
            }
            head.write(b);
            matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3))
                    ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    /** The value of the Content-Length field of {@code head}, 0 when it has none. */
    static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                return Integer.parseInt(line.substring("content-length:".length()).trim());
            }
        }
        return 0;
    }

    /** Word {@code index} (from 0) of the start line: a request's method and target, an answer's status. */
    static String startLineWord(String head, int index) {
        String[] words = head.substring(0, head.indexOf("\r\n")).split(" ");
        return index < words.length ? words[index] : "";
    }
}
