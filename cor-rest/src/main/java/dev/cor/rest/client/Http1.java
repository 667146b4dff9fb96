package dev.cor.rest.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.client.CorRestClientException.Kind;

/**
 * HTTP/1.1 on one connection (RFC 9112): the request head out, the response in - status line,
 * header fields, and the body framed by Content-Length, chunked coding or the close. Every input
 * is bounded: the header section (interim responses and trailers included) by the header limit,
 * the body by the response limit, a chunk-size line by {@link #MAX_CHUNK_LINE}.
 * <p>
 * A reader is made per response and used by the one request that owns the connection.
 */
final class Http1 {
    static final int MAX_CHUNK_LINE = 1024;
    private static final byte[] EMPTY = new byte[0];

    /** What a response left for the connection: whether it may carry the next request. */
    record Result(CorRestClientResponse response, boolean keepAlive) {
    }

    private final Connection c;
    private final long deadlineNanos;
    private final Waits.Phase phase;
    private final int maxHeaderBytes;
    private final int maxBodyBytes;
    private int headerBudget;

    Http1(Connection c, long deadlineNanos, Waits.Phase phase, int maxHeaderBytes, int maxBodyBytes) {
        this.c = c;
        this.deadlineNanos = deadlineNanos;
        this.phase = phase;
        this.maxHeaderBytes = maxHeaderBytes;
        this.maxBodyBytes = maxBodyBytes;
    }

    // ---------------------------------------------------------------- the request

    /** The request line and header fields, Host and Content-Length the client's own. */
    static byte[] encodeHead(CorRestClientRequest req, String hostHeader) {
        CorRestHeaders h = req.headers();
        StringBuilder sb = new StringBuilder(64 + 32 * h.size());
        sb.append(req.method()).append(' ').append(req.target).append(" HTTP/1.1\r\n");
        if (!h.contains("Host")) {
            sb.append("Host: ").append(hostHeader).append("\r\n");
        }
        for (int i = 0, n = h.size(); i < n; i++) {
            String name = h.name(i);
            // the framing is the client's: a caller's value could contradict the body it sends
            if (name.equalsIgnoreCase("Content-Length") || name.equalsIgnoreCase("Transfer-Encoding")) {
                continue;
            }
            sb.append(name).append(": ").append(h.value(i)).append("\r\n");
        }
        int len = req.body().length;
        if (len > 0 || switch (req.method()) {
            case "POST", "PUT", "PATCH" -> true;
            default -> false;
        }) {
            sb.append("Content-Length: ").append(len).append("\r\n");
        }
        sb.append("\r\n");
        return sb.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    // ---------------------------------------------------------------- the response

    /** Reads one final response (interim 1xx ones skipped) with its whole body. */
    Result read(boolean head) throws IOException {
        headerBudget = maxHeaderBytes;
        while (true) {
            String statusLine = readLine(true);
            if (statusLine.isEmpty()) {
                continue; // a stray CRLF after an earlier message; the budget bounds how many
            }
            int sp = statusLine.indexOf(' ');
            String version = sp == 8 ? statusLine.substring(0, sp) : "";
            if (!(version.equals("HTTP/1.1") || version.equals("HTTP/1.0"))) {
                throw malformed("not an HTTP/1.x status line: '" + printable(statusLine) + "'");
            }
            int status = parseStatus(statusLine, sp);
            String reason = statusLine.length() > sp + 4 ? statusLine.substring(sp + 5) : "";
            CorRestHeaders headers = readFields();
            if (status / 100 == 1) {
                if (status == 101) {
                    throw malformed("101 Switching Protocols, and no upgrade was asked for");
                }
                continue; // 100 Continue, 103 Early Hints: the final answer follows
            }
            return readBody(version, status, reason, headers, head);
        }
    }

    private int parseStatus(String line, int sp) throws CorRestClientException {
        if (line.length() < sp + 4 || (line.length() > sp + 4 && line.charAt(sp + 4) != ' ')) {
            throw malformed("bad status line: '" + printable(line) + "'");
        }
        int status = 0;
        for (int i = sp + 1; i < sp + 4; i++) {
            char ch = line.charAt(i);
            if (ch < '0' || ch > '9') {
                throw malformed("bad status code in '" + printable(line) + "'");
            }
            status = status * 10 + (ch - '0');
        }
        if (status < 100 || status > 599) {
            throw malformed("status code out of range in '" + printable(line) + "'");
        }
        return status;
    }

    private CorRestHeaders readFields() throws IOException {
        CorRestHeaders headers = new CorRestHeaders();
        while (true) {
            String line = readLine(true);
            if (line.isEmpty()) {
                return headers;
            }
            char first = line.charAt(0);
            if (first == ' ' || first == '\t') {
                throw malformed("obsolete line folding in the header section");
            }
            int colon = line.indexOf(':');
            if (colon <= 0 || !isToken(line, 0, colon)) {
                throw malformed("bad header field: '" + printable(line) + "'");
            }
            headers.add(line.substring(0, colon), trimOws(line, colon + 1));
        }
    }

    private Result readBody(String version, int status, String reason, CorRestHeaders headers, boolean head)
            throws IOException {
        boolean keepAlive = version.equals("HTTP/1.1")
                ? !headers.hasToken("Connection", "close")
                : headers.hasToken("Connection", "keep-alive");
        byte[] body;
        if (head || status == 204 || status == 304) {
            body = EMPTY;
        } else if (headers.contains("Transfer-Encoding")) {
            if (lastCodingIsChunked(headers)) {
                body = readChunked();
                // with both framings, a message could be read two ways: never reuse such a connection
                keepAlive &= !headers.contains("Content-Length");
            } else {
                body = readToClose();
                keepAlive = false;
            }
        } else {
            long length = contentLength(headers);
            if (length >= 0) {
                body = readFixed(length);
            } else {
                body = readToClose();
                keepAlive = false;
            }
        }
        if (c.start != c.end) {
            keepAlive = false; // bytes after the response that nobody asked for
        }
        return new Result(new CorRestClientResponse(version, status, reason, headers, body), keepAlive);
    }

    private static boolean lastCodingIsChunked(CorRestHeaders headers) {
        String last = null;
        for (String v : headers.getAll("Transfer-Encoding")) {
            for (String t : v.split(",")) {
                if (!t.isBlank()) {
                    last = t.trim();
                }
            }
        }
        return last != null && last.equalsIgnoreCase("chunked");
    }

    private long contentLength(CorRestHeaders headers) throws CorRestClientException {
        long length = -1;
        for (String v : headers.getAll("Content-Length")) {
            for (String part : v.split(",")) {
                String t = part.trim();
                if (t.isEmpty() || t.length() > 18) {
                    throw malformed("bad Content-Length: '" + printable(v) + "'");
                }
                long n = 0;
                for (int i = 0; i < t.length(); i++) {
                    char ch = t.charAt(i);
                    if (ch < '0' || ch > '9') {
                        throw malformed("bad Content-Length: '" + printable(v) + "'");
                    }
                    n = n * 10 + (ch - '0');
                }
                if (length >= 0 && n != length) {
                    throw malformed("Content-Length values disagree: " + headers.getAll("Content-Length"));
                }
                length = n;
            }
        }
        return length;
    }

    private byte[] readFixed(long length) throws IOException {
        if (length > maxBodyBytes) {
            throw tooLarge("a body of " + length + " bytes is over the limit of " + maxBodyBytes);
        }
        Body body = new Body((int) length);
        readExactly(body, (int) length, (int) length);
        return body.bytes();
    }

    private byte[] readChunked() throws IOException {
        Body body = new Body(0);
        while (true) {
            String line = readLine(false);
            int semi = line.indexOf(';');
            String hex = (semi >= 0 ? line.substring(0, semi) : line).trim();
            if (hex.isEmpty() || hex.length() > 8) {
                throw malformed("bad chunk size: '" + printable(line) + "'");
            }
            long size = 0;
            for (int i = 0; i < hex.length(); i++) {
                int d = Character.digit(hex.charAt(i), 16);
                if (d < 0) {
                    throw malformed("bad chunk size: '" + printable(line) + "'");
                }
                size = size * 16 + d;
            }
            if (size == 0) {
                break;
            }
            if (body.size + size > maxBodyBytes) {
                throw tooLarge("a chunked body over the limit of " + maxBodyBytes + " bytes");
            }
            readExactly(body, (int) size, maxBodyBytes);
            if (!readLine(false).isEmpty()) {
                throw malformed("a chunk not followed by CRLF");
            }
        }
        // trailers: bounded like a header section of their own, and dropped
        headerBudget = maxHeaderBytes;
        while (!readLine(true).isEmpty()) {
            // skipped
        }
        return body.bytes();
    }

    private byte[] readToClose() throws IOException {
        Body body = new Body(0);
        take(body, c.end - c.start);
        while (true) {
            if (body.size >= maxBodyBytes) {
                // one byte more than the limit decides whether the body is over it
                body.ensure(1, maxBodyBytes + 1);
            } else {
                body.ensure(Math.min(8192, maxBodyBytes - body.size), maxBodyBytes);
            }
            int n = c.conduit.read(ByteBuffer.wrap(body.array, body.size, body.array.length - body.size), deadlineNanos, phase);
            if (n < 0) {
                return body.bytes();
            }
            c.received += n;
            body.size += n;
            if (body.size > maxBodyBytes) {
                throw tooLarge("a body over the limit of " + maxBodyBytes + " bytes");
            }
        }
    }

    /** Appends exactly {@code n} body bytes: those already read first, then from the connection. */
    private void readExactly(Body body, int n, int max) throws IOException {
        int want = body.size + n;
        body.ensure(n, max);
        take(body, Math.min(n, c.end - c.start));
        while (body.size < want) {
            int r = c.conduit.read(ByteBuffer.wrap(body.array, body.size, want - body.size), deadlineNanos, phase);
            if (r < 0) {
                throw new CorRestClientException(Kind.CLOSED, "the peer " + c.origin
                        + " closed the connection in the middle of the body (" + (body.size) + " bytes in)");
            }
            c.received += r;
            body.size += r;
        }
    }

    private void take(Body body, int n) {
        body.ensure(n, body.size + n);
        System.arraycopy(c.buf, c.start, body.array, body.size, n);
        body.size += n;
        c.start += n;
    }

    /**
     * One line, CRLF (or a bare LF) cut off. A header line counts against the header budget; any
     * other (chunk size, CRLF after a chunk) against {@link #MAX_CHUNK_LINE}.
     */
    private String readLine(boolean header) throws IOException {
        int limit = header ? headerBudget : MAX_CHUNK_LINE;
        int scanned = 0;
        while (true) {
            byte[] buf = c.buf;
            for (int i = c.start + scanned; i < c.end; i++) {
                if (buf[i] == '\n') {
                    int used = i + 1 - c.start;
                    if (used > limit) {
                        throw overLine(header);
                    }
                    int lineEnd = i > c.start && buf[i - 1] == '\r' ? i - 1 : i;
                    String line = new String(buf, c.start, lineEnd - c.start, StandardCharsets.ISO_8859_1);
                    c.start = i + 1;
                    if (header) {
                        headerBudget -= used;
                    }
                    return line;
                }
            }
            scanned = c.end - c.start;
            if (scanned >= limit) {
                throw overLine(header);
            }
            if (fill() < 0) {
                throw new CorRestClientException(Kind.CLOSED, "the peer " + c.origin + " closed the connection "
                        + (c.received == 0 ? "before any response" : "before a full response (in the "
                        + (header ? "header section" : "chunked framing") + ")"));
            }
        }
    }

    private CorRestClientException overLine(boolean header) {
        return header
                ? tooLarge("the response's header section is over the limit of " + maxHeaderBytes + " bytes")
                : malformed("a chunk-size line over " + MAX_CHUNK_LINE + " bytes");
    }

    /** Reads more into the connection's buffer; -1 at the end of the stream. */
    private int fill() throws IOException {
        if (c.start == c.end) {
            c.start = 0;
            c.end = 0;
        } else if (c.buf.length - c.end < 1024) {
            if (c.start > 0) {
                System.arraycopy(c.buf, c.start, c.buf, 0, c.end - c.start);
                c.end -= c.start;
                c.start = 0;
            } else {
                // a line longer than the buffer: the line limits bound how far it grows
                c.buf = java.util.Arrays.copyOf(c.buf, c.buf.length * 2);
            }
        }
        int n = c.conduit.read(ByteBuffer.wrap(c.buf, c.end, c.buf.length - c.end), deadlineNanos, phase);
        if (n > 0) {
            c.end += n;
            c.received += n;
        }
        return n;
    }

    private CorRestClientException malformed(String what) {
        return new CorRestClientException(Kind.MALFORMED, "malformed response from " + c.origin + ": " + what);
    }

    private CorRestClientException tooLarge(String what) {
        return new CorRestClientException(Kind.TOO_LARGE, "response from " + c.origin + " too large: " + what);
    }

    /** A body being gathered, grown by doubling up to what is allowed. */
    private static final class Body {
        byte[] array;
        int size;

        Body(int initial) {
            array = initial == 0 ? EMPTY : new byte[initial];
        }

        void ensure(int more, int max) {
            int need = size + more;
            if (need > array.length) {
                int cap = (int) Math.min(Math.max(need, Math.max(array.length * 2L, 1024)), Math.max(max, need));
                array = java.util.Arrays.copyOf(array, cap);
            }
        }

        byte[] bytes() {
            return size == array.length ? array : java.util.Arrays.copyOf(array, size);
        }
    }

    // ---------------------------------------------------------------- syntax

    static boolean isToken(String s) {
        return isToken(s, 0, s.length());
    }

    /** RFC 9110 § 5.6.2 tchar. */
    static boolean isToken(String s, int from, int to) {
        if (from >= to) {
            return false;
        }
        for (int i = from; i < to; i++) {
            char ch = s.charAt(i);
            boolean ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
                    || "!#$%&'*+-.^_`|~".indexOf(ch) >= 0;
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static String trimOws(String s, int from) {
        int a = from;
        int b = s.length();
        while (a < b && (s.charAt(a) == ' ' || s.charAt(a) == '\t')) {
            a++;
        }
        while (b > a && (s.charAt(b - 1) == ' ' || s.charAt(b - 1) == '\t')) {
            b--;
        }
        return s.substring(a, b);
    }

    /** A peer's line as it can be shown in a message: short, controls escaped. */
    private static String printable(String s) {
        StringBuilder sb = new StringBuilder(Math.min(s.length(), 80));
        for (int i = 0; i < s.length() && sb.length() < 80; i++) {
            char ch = s.charAt(i);
            if (ch < ' ' || ch >= 0x7f) {
                sb.append(String.format("\\x%02x", (int) ch));
            } else {
                sb.append(ch);
            }
        }
        return s.length() > 80 ? sb + "..." : sb.toString();
    }
}
