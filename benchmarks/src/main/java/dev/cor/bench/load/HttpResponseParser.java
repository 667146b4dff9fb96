package dev.cor.bench.load;

import java.nio.ByteBuffer;

/**
 * Reads one HTTP/1.1 response at a time from whatever bytes arrive, without keeping the body:
 * the status line, the header fields that frame the message (Content-Length, Transfer-Encoding,
 * Connection), then a body delimited by length, by chunks (trailers skipped) or by the end of
 * the connection (RFC 9112 section 6.3). Interim 1xx answers are skipped. Every line and the
 * header section are bounded. Allocates nothing per response. Owned by one
 * {@link HttpConnection}; not thread-safe.
 */
final class HttpResponseParser {
    static final int MAX_LINE = 16 * 1024;
    static final int MAX_HEADER_BYTES = 64 * 1024;

    /** A response that breaks HTTP/1.1 framing or a bound: the connection cannot be trusted any more. */
    static final class ProtocolException extends Exception {
        ProtocolException(String message) {
            super(message, null, false, false);
        }
    }

    private enum Part { STATUS_LINE, HEADERS, BODY, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, TRAILERS, UNTIL_CLOSE, DONE }

    private final byte[] line = new byte[MAX_LINE];
    private int lineLength;
    private int headerBytes;
    private Part part = Part.STATUS_LINE;
    private boolean headRequest;
    private int status;
    private long contentLength;
    private boolean chunked;
    private boolean otherCoding;
    private boolean close;
    private boolean http10;
    private long remaining;

    /** Gets ready for the answer to the next request; {@code head}: it was a HEAD (no body follows). */
    void reset(boolean head) {
        headRequest = head;
        part = Part.STATUS_LINE;
        lineLength = 0;
        startMessage();
    }

    private void startMessage() {
        headerBytes = 0;
        status = 0;
        contentLength = -1;
        chunked = false;
        otherCoding = false;
        close = false;
    }

    /** The status of the answer read (valid once {@link #feed} returned true). */
    int status() {
        return status;
    }

    /** Whether the connection may carry another request after this answer. */
    boolean keepAlive() {
        return !close;
    }

    /** Whether an answer is being read (some of it has arrived). */
    boolean started() {
        return part != Part.STATUS_LINE || lineLength > 0 || headerBytes > 0;
    }

    /**
     * Consumes bytes from {@code in} until the answer is complete or {@code in} is empty.
     *
     * @return true when the answer is complete; {@code in} is then positioned just after it
     */
    boolean feed(ByteBuffer in) throws ProtocolException {
        while (part != Part.DONE && in.hasRemaining()) {
            switch (part) {
                case STATUS_LINE, HEADERS, CHUNK_SIZE, CHUNK_END, TRAILERS -> {
                    if (readLine(in)) {
                        onLine();
                        lineLength = 0;
                    }
                }
                case BODY, CHUNK_DATA -> {
                    int n = (int) Math.min(remaining, in.remaining());
                    in.position(in.position() + n);
                    remaining -= n;
                    if (remaining == 0) {
                        part = part == Part.BODY ? Part.DONE : Part.CHUNK_END;
                    }
                }
                case UNTIL_CLOSE -> in.position(in.limit());
                default -> throw new IllegalStateException(part.name());
            }
        }
        return part == Part.DONE;
    }

    /** The peer closed the connection: true when that ends the answer (a body read until close). */
    boolean endOfStream() {
        if (part == Part.UNTIL_CLOSE) {
            part = Part.DONE;
            return true;
        }
        return false;
    }

    /** Appends bytes up to LF to the line; true when the line is complete (CR LF stripped). */
    private boolean readLine(ByteBuffer in) throws ProtocolException {
        while (in.hasRemaining()) {
            byte b = in.get();
            if (part == Part.STATUS_LINE || part == Part.HEADERS || part == Part.TRAILERS) {
                if (++headerBytes > MAX_HEADER_BYTES) {
                    throw new ProtocolException("header section over " + MAX_HEADER_BYTES + " bytes");
                }
            }
            if (b == '\n') {
                if (lineLength > 0 && line[lineLength - 1] == '\r') {
                    lineLength--;
                }
                return true;
            }
            if (lineLength == MAX_LINE) {
                throw new ProtocolException("line over " + MAX_LINE + " bytes");
            }
            line[lineLength++] = b;
        }
        return false;
    }

    private void onLine() throws ProtocolException {
        switch (part) {
            case STATUS_LINE -> statusLine();
            case HEADERS -> {
                if (lineLength == 0) {
                    headersDone();
                } else {
                    headerField();
                }
            }
            case CHUNK_SIZE -> chunkSize();
            case CHUNK_END -> {
                if (lineLength != 0) {
                    throw new ProtocolException("chunk data longer than its size");
                }
                part = Part.CHUNK_SIZE;
            }
            case TRAILERS -> {
                if (lineLength == 0) {
                    part = Part.DONE;
                }
            }
            default -> throw new IllegalStateException(part.name());
        }
    }

    private void statusLine() throws ProtocolException {
        // "HTTP/1.x SSS reason"; the reason may be empty, even without its space.
        if (lineLength < 12 || !startsWith("HTTP/1.") || line[8] != ' ' || (lineLength > 12 && line[12] != ' ')) {
            throw new ProtocolException("not an HTTP/1.x status line");
        }
        int s = 0;
        for (int i = 9; i < 12; i++) {
            int d = line[i] - '0';
            if (d < 0 || d > 9) {
                throw new ProtocolException("status is not three digits");
            }
            s = s * 10 + d;
        }
        if (s < 100) {
            throw new ProtocolException("status below 100");
        }
        status = s;
        http10 = line[7] == '0';
        close = http10; // HTTP/1.0 closes unless it says keep-alive
        part = Part.HEADERS;
    }

    private void headerField() throws ProtocolException {
        int colon = indexOf((byte) ':');
        if (colon <= 0) {
            throw new ProtocolException("header field without a name");
        }
        int from = skipSpaces(colon + 1);
        int to = lineLength;
        while (to > from && (line[to - 1] == ' ' || line[to - 1] == '\t')) {
            to--;
        }
        if (nameIs("content-length", colon)) {
            long n = 0;
            if (from == to || to - from > 18) {
                throw new ProtocolException("bad Content-Length");
            }
            for (int i = from; i < to; i++) {
                int d = line[i] - '0';
                if (d < 0 || d > 9) {
                    throw new ProtocolException("bad Content-Length");
                }
                n = n * 10 + d;
            }
            if (contentLength >= 0 && contentLength != n) {
                throw new ProtocolException("two different Content-Length values");
            }
            contentLength = n;
        } else if (nameIs("transfer-encoding", colon)) {
            chunked = lastTokenIs("chunked", from, to);
            otherCoding = !chunked; // another final coding: the body runs to the close
        } else if (nameIs("connection", colon)) {
            if (hasToken("close", from, to)) {
                close = true;
            } else if (http10 && hasToken("keep-alive", from, to)) {
                close = false;
            }
        }
    }

    private void headersDone() {
        if (status < 200) {
            // An interim answer (100 Continue and the like): the real one follows.
            part = Part.STATUS_LINE;
            startMessage();
            return;
        }
        if (headRequest || status == 204 || status == 304) {
            part = Part.DONE;
        } else if (chunked) {
            part = Part.CHUNK_SIZE;
        } else if (!otherCoding && contentLength >= 0) {
            remaining = contentLength;
            part = remaining == 0 ? Part.DONE : Part.BODY;
        } else {
            close = true;
            part = Part.UNTIL_CLOSE;
        }
    }

    private void chunkSize() throws ProtocolException {
        long n = 0;
        int digits = 0;
        for (int i = 0; i < lineLength; i++) {
            byte b = line[i];
            int d = Character.digit(b, 16);
            if (d < 0) {
                if (b == ';' || b == ' ' || b == '\t') {
                    break; // chunk extensions are ignored
                }
                throw new ProtocolException("bad chunk size");
            }
            if (++digits > 15) {
                throw new ProtocolException("chunk size too large");
            }
            n = n * 16 + d;
        }
        if (digits == 0) {
            throw new ProtocolException("bad chunk size");
        }
        if (n == 0) {
            headerBytes = 0;
            part = Part.TRAILERS;
        } else {
            remaining = n;
            part = Part.CHUNK_DATA;
        }
    }

    private boolean startsWith(String ascii) {
        for (int i = 0; i < ascii.length(); i++) {
            if (line[i] != ascii.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private int indexOf(byte b) {
        for (int i = 0; i < lineLength; i++) {
            if (line[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private int skipSpaces(int i) {
        while (i < lineLength && (line[i] == ' ' || line[i] == '\t')) {
            i++;
        }
        return i;
    }

    /** Whether the field name, line[0, end), is {@code lower} ignoring case. */
    private boolean nameIs(String lower, int end) {
        return end == lower.length() && regionIs(lower, 0);
    }

    private boolean regionIs(String lower, int at) {
        for (int i = 0; i < lower.length(); i++) {
            if ((line[at + i] | 0x20) != lower.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Whether the comma-separated list in line[from, to) holds {@code lower} as a token. */
    private boolean hasToken(String lower, int from, int to) {
        int i = from;
        while (i < to) {
            int end = i;
            while (end < to && line[end] != ',') {
                end++;
            }
            int a = i;
            int b = end;
            while (a < b && (line[a] == ' ' || line[a] == '\t')) {
                a++;
            }
            while (b > a && (line[b - 1] == ' ' || line[b - 1] == '\t')) {
                b--;
            }
            if (b - a == lower.length() && regionIs(lower, a)) {
                return true;
            }
            i = end + 1;
        }
        return false;
    }

    private boolean lastTokenIs(String lower, int from, int to) {
        int comma = to;
        while (comma > from && line[comma - 1] != ',') {
            comma--;
        }
        return hasToken(lower, comma, to);
    }
}
