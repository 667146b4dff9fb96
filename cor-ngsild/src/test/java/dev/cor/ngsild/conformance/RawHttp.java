package dev.cor.ngsild.conformance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import dev.cor.ngsild.KeepAliveHttp;

/**
 * One HTTP/1.1 exchange on a raw socket, for the requests {@link java.net.http.HttpClient} will not
 * make: no Content-Length, a chunked body, header values it refuses. Writes the bytes as given and
 * reads one answer (Content-Length or chunked body); every read has a deadline. One per exchange;
 * or a {@link Held} connection, whose requests many threads fire at the same moment.
 */
public final class RawHttp {
    private RawHttp() {
    }

    /** An answer as read: status, header fields (lower-case names), body bytes. */
    public record Answer(int status, Map<String, String> fields, byte[] body) {
        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        String field(String name) {
            return fields.get(name.toLowerCase(Locale.ROOT));
        }

        @Override
        public String toString() {
            return status + " " + fields + (body.length == 0 ? "" : " " + text());
        }
    }

    /**
     * Sends {@code head} (request line and header fields, without the blank line; lines separated by
     * CRLF here) followed by a blank line and {@code body}, and reads the answer.
     */
    static Answer exchange(int port, String head, byte[] body) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            s.setSoTimeout(10_000);
            String h = head.endsWith("\r\n") ? head : head + "\r\n";
            s.getOutputStream().write((h + "Connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().write(body);
            s.getOutputStream().flush();
            return read(s.getInputStream());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A kept-alive connection to 127.0.0.1:{@code port} on which a request is written ahead but
     * for its last byte ({@link #arm}) and completed when the test says ({@link #fire}): requests
     * held on many connections reach the server within microseconds of each other, whatever
     * connecting and sending cost. One thread at a time.
     */
    public static final class Held implements AutoCloseable {
        private final Socket socket;
        private int last = -1;

        public Held(int port) {
            socket = new Socket();
            try {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
                socket.setSoTimeout(10_000);
                socket.setTcpNoDelay(true);
            } catch (IOException e) {
                close();
                throw new UncheckedIOException(e);
            }
        }

        /** Writes {@code head} (request line and header fields, CRLF-separated), a blank line and {@code body}, but its last byte. */
        public void arm(String head, byte[] body) {
            String h = head.endsWith("\r\n") ? head : head + "\r\n";
            byte[] bytes = (h + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
            byte[] all = java.util.Arrays.copyOf(bytes, bytes.length + body.length);
            System.arraycopy(body, 0, all, bytes.length, body.length);
            try {
                socket.getOutputStream().write(all, 0, all.length - 1);
                socket.getOutputStream().flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            last = all[all.length - 1] & 0xFF;
        }

        /** Writes the armed request's last byte and reads its answer. */
        public Answer fire() {
            if (last < 0) {
                throw new IllegalStateException("nothing armed");
            }
            try {
                socket.getOutputStream().write(last);
                socket.getOutputStream().flush();
                last = -1;
                return read(socket.getInputStream());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    /** A chunked encoding of {@code body} in one chunk and the last chunk. */
    static byte[] chunked(String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes((Integer.toHexString(b.length) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.writeBytes(b);
        out.writeBytes("\r\n0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        return out.toByteArray();
    }

    /** Reads one answer with the project's one HTTP/1.1 response reader, names lower-cased and repeated fields joined. */
    private static Answer read(InputStream in) throws IOException {
        KeepAliveHttp.Response r = KeepAliveHttp.readResponse(in, false);
        Map<String, String> fields = new LinkedHashMap<>();
        r.headers().map().forEach((name, values) -> fields.put(name.toLowerCase(Locale.ROOT), String.join(", ", values)));
        return new Answer(r.status(), fields, r.body());
    }
}
