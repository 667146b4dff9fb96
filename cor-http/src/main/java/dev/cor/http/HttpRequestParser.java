package dev.cor.http;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import dev.cor.rest.CorRestHeaders;

/**
 * An incremental HTTP/1.1 request parser (RFC 9112): request line, header section, a body by
 * Content-Length or chunked. It is fed the connection's input buffer (read mode) as bytes arrive,
 * consumes what it understood, and says when a whole request is in - or, at the first violation,
 * which status to answer with and why. One per connection; the connection's loop thread only.
 */
final class HttpRequestParser {
    enum Result { NEED_MORE, REQUEST, ERROR }

    private enum State { REQUEST_LINE, HEADERS, BODY, CHUNK_SIZE, CHUNK_DATA, CHUNK_DATA_END, TRAILERS, DONE }

    private final HttpLimits limits;
    private State state = State.REQUEST_LINE;

    // the request being read
    String method;
    String target;
    String path;
    String query;
    int minorVersion;
    CorRestHeaders headers;
    private byte[] body;
    private int bodyLength;
    private long contentLength;
    private boolean chunked;
    private long chunkLeft;
    private int headerBytes;
    private boolean headersComplete;

    // the error
    int errorStatus;
    String errorReason;

    HttpRequestParser(HttpLimits limits) {
        this.limits = limits;
    }

    /** Forgets the last request; keeps unparsed input for the next. */
    void reset() {
        state = State.REQUEST_LINE;
        method = null;
        target = null;
        path = null;
        query = null;
        headers = null;
        body = null;
        bodyLength = 0;
        contentLength = 0;
        chunked = false;
        chunkLeft = 0;
        headerBytes = 0;
        headersComplete = false;
        errorStatus = 0;
        errorReason = null;
    }

    /** Whether a request has begun (bytes of it consumed): an idle connection has none. */
    boolean inRequest() {
        return state != State.REQUEST_LINE || headerBytes > 0;
    }

    /** Whether the header section is complete and the body is being read. */
    boolean headersComplete() {
        return headersComplete;
    }

    boolean expectsContinue() {
        return headersComplete && minorVersion == 1 && headers.hasToken("Expect", "100-continue");
    }

    /** Whether a body is still to come (for 100-continue). */
    boolean bodyPending() {
        return headersComplete && state != State.DONE;
    }

    byte[] body() {
        if (body == null) {
            return new byte[0];
        }
        if (bodyLength == body.length) {
            return body;
        }
        byte[] exact = new byte[bodyLength];
        System.arraycopy(body, 0, exact, 0, bodyLength);
        return exact;
    }

    /** The capacity of the body buffer while a body is read, or -1 when none is. */
    int bodyCapacity() {
        return body != null && state != State.DONE ? body.length : -1;
    }

    /** Whether the connection stays open after this request (HTTP/1.1 default, 1.0 on request). */
    boolean keepAlive() {
        if (headers.hasToken("Connection", "close")) {
            return false;
        }
        return minorVersion == 1 || headers.hasToken("Connection", "keep-alive");
    }

    Result parse(ByteBuffer in) {
        while (true) {
            switch (state) {
                case REQUEST_LINE -> {
                    int end = lineEnd(in, limits.maxRequestLineBytes());
                    if (end < 0) {
                        return end == NOT_YET ? Result.NEED_MORE
                                : lineError(end, 414, "request line longer than " + limits.maxRequestLineBytes() + " bytes");
                    }
                    int len = end - in.position();
                    String line = ascii(in, in.position(), lineLength(in, end));
                    headerBytes += len;
                    in.position(end);
                    if (line.isEmpty() && headerBytes <= 4) {
                        continue; // RFC 9112 § 2.2: ignore an empty line before the request line
                    }
                    if (!requestLine(line)) {
                        return Result.ERROR;
                    }
                    headers = new CorRestHeaders();
                    state = State.HEADERS;
                }
                case HEADERS -> {
                    int room = limits.maxHeaderBytes() - headerBytes;
                    int end = lineEnd(in, Math.max(room, 0));
                    if (end < 0) {
                        return end == NOT_YET ? Result.NEED_MORE
                                : lineError(end, 431, "header section larger than " + limits.maxHeaderBytes() + " bytes");
                    }
                    int len = end - in.position();
                    headerBytes += len;
                    if (headerBytes > limits.maxHeaderBytes()) {
                        return error(431, "header section larger than " + limits.maxHeaderBytes() + " bytes");
                    }
                    int lineLen = lineLength(in, end);
                    if (lineLen == 0) {
                        in.position(end);
                        if (!headersDone()) {
                            return Result.ERROR;
                        }
                        continue;
                    }
                    byte first = in.get(in.position());
                    if (first == ' ' || first == '\t') {
                        return error(400, "obsolete line folding in the header section");
                    }
                    String line = latin1(in, in.position(), lineLen);
                    in.position(end);
                    if (!headerLine(line)) {
                        return Result.ERROR;
                    }
                }
                case BODY -> {
                    int want = (int) (contentLength - bodyLength);
                    int take = Math.min(want, in.remaining());
                    if (take == 0) {
                        return Result.NEED_MORE;
                    }
                    growBody(bodyLength + take, contentLength);
                    in.get(body, bodyLength, take);
                    bodyLength += take;
                    if (bodyLength < contentLength) {
                        return Result.NEED_MORE;
                    }
                    state = State.DONE;
                }
                case CHUNK_SIZE -> {
                    int end = lineEnd(in, 1024);
                    if (end < 0) {
                        return end == NOT_YET ? Result.NEED_MORE : lineError(end, 400, "chunk size line too long");
                    }
                    String line = ascii(in, in.position(), lineLength(in, end));
                    in.position(end);
                    int semi = line.indexOf(';');
                    String hex = (semi >= 0 ? line.substring(0, semi) : line).trim();
                    long size;
                    try {
                        if (hex.isEmpty() || hex.length() > 15) {
                            throw new NumberFormatException(hex);
                        }
                        size = Long.parseLong(hex, 16);
                    } catch (NumberFormatException e) {
                        return error(400, "invalid chunk size: " + printable(hex));
                    }
                    if (size < 0) {
                        return error(400, "invalid chunk size: " + printable(hex));
                    }
                    if (size == 0) {
                        state = State.TRAILERS;
                        continue;
                    }
                    if (bodyLength + size > limits.maxBodyBytes()) {
                        return error(413, "chunked body larger than " + limits.maxBodyBytes() + " bytes");
                    }
                    chunkLeft = size;
                    state = State.CHUNK_DATA;
                }
                case CHUNK_DATA -> {
                    int take = (int) Math.min(chunkLeft, in.remaining());
                    if (take == 0) {
                        return Result.NEED_MORE;
                    }
                    growBody(bodyLength + take, limits.maxBodyBytes());
                    in.get(body, bodyLength, take);
                    bodyLength += take;
                    chunkLeft -= take;
                    if (chunkLeft > 0) {
                        return Result.NEED_MORE;
                    }
                    state = State.CHUNK_DATA_END;
                }
                case CHUNK_DATA_END -> {
                    int end = lineEnd(in, 2);
                    if (end < 0) {
                        return end == NOT_YET ? Result.NEED_MORE : lineError(end, 400, "chunk data not followed by CRLF");
                    }
                    if (lineLength(in, end) != 0) {
                        return error(400, "chunk data not followed by CRLF");
                    }
                    in.position(end);
                    state = State.CHUNK_SIZE;
                }
                case TRAILERS -> {
                    int end = lineEnd(in, limits.maxHeaderBytes());
                    if (end < 0) {
                        return end == NOT_YET ? Result.NEED_MORE : lineError(end, 431, "trailer section too large");
                    }
                    int lineLen = lineLength(in, end);
                    in.position(end);
                    headerBytes += lineLen;
                    if (headerBytes > 2 * limits.maxHeaderBytes()) {
                        return error(431, "trailer section too large");
                    }
                    if (lineLen == 0) {
                        state = State.DONE; // trailers are read and dropped
                    }
                }
                case DONE -> {
                    return Result.REQUEST;
                }
                default -> throw new IllegalStateException(state.name());
            }
        }
    }

    private boolean requestLine(String line) {
        int sp1 = line.indexOf(' ');
        int sp2 = sp1 < 0 ? -1 : line.indexOf(' ', sp1 + 1);
        if (sp1 <= 0 || sp2 < 0 || line.indexOf(' ', sp2 + 1) >= 0) {
            return fail(400, "malformed request line");
        }
        method = line.substring(0, sp1);
        target = line.substring(sp1 + 1, sp2);
        String version = line.substring(sp2 + 1);
        if (!isToken(method)) {
            return fail(400, "invalid method");
        }
        if (target.isEmpty()) {
            return fail(400, "empty request target");
        }
        if (target.length() > limits.maxRequestTargetBytes()) {
            return fail(414, "request target longer than " + limits.maxRequestTargetBytes() + " bytes");
        }
        for (int i = 0; i < target.length(); i++) {
            char c = target.charAt(i);
            if (c <= ' ' || c >= 0x7f) {
                return fail(400, "invalid character in the request target");
            }
        }
        if (!version.startsWith("HTTP/") || version.length() != 8 || version.charAt(6) != '.'
                || !Character.isDigit(version.charAt(5)) || !Character.isDigit(version.charAt(7))) {
            return fail(400, "malformed HTTP version");
        }
        if (version.charAt(5) != '1' || (version.charAt(7) != '0' && version.charAt(7) != '1')) {
            return fail(505, "HTTP version " + version.substring(5) + " is not supported (1.0 and 1.1 are)");
        }
        minorVersion = version.charAt(7) - '0';
        String pathAndQuery = target;
        if (target.startsWith("http://") || target.startsWith("https://")) {
            int slash = target.indexOf('/', target.indexOf("//") + 2);
            pathAndQuery = slash < 0 ? "/" : target.substring(slash);
        } else if (!target.startsWith("/") && !(target.equals("*") && method.equals("OPTIONS"))) {
            return fail(400, "request target is not in origin or absolute form");
        }
        int q = pathAndQuery.indexOf('?');
        path = q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
        query = q < 0 ? null : pathAndQuery.substring(q + 1);
        int hash = path.indexOf('#');
        if (hash >= 0 || (query != null && query.indexOf('#') >= 0)) {
            return fail(400, "a fragment in the request target");
        }
        return true;
    }

    private boolean headerLine(String line) {
        int colon = line.indexOf(':');
        if (colon <= 0) {
            return fail(400, "malformed header field");
        }
        String name = line.substring(0, colon);
        if (!isToken(name)) {
            return fail(400, "invalid header field name" + (name.endsWith(" ") || name.endsWith("\t")
                    ? " (whitespace before the colon)" : ""));
        }
        String value = line.substring(colon + 1).strip();
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if ((c < ' ' && c != '\t') || c == 0x7f) {
                return fail(400, "invalid character in header field " + name);
            }
        }
        if (headers.size() >= limits.maxHeaderCount()) {
            return fail(431, "more than " + limits.maxHeaderCount() + " header fields");
        }
        headers.add(name, value);
        return true;
    }

    private boolean headersDone() {
        headersComplete = true;
        if (minorVersion == 1) {
            int hosts = headers.getAll("Host").size();
            if (hosts != 1) {
                return fail(400, hosts == 0 ? "missing Host header" : "more than one Host header");
            }
        }
        var te = headers.getAll("Transfer-Encoding");
        var cl = headers.getAll("Content-Length");
        if (!te.isEmpty()) {
            if (!cl.isEmpty()) {
                return fail(400, "both Content-Length and Transfer-Encoding");
            }
            String[] codings = String.join(",", te).split(",");
            String last = codings[codings.length - 1].trim();
            for (String c : codings) {
                String coding = c.trim().toLowerCase(java.util.Locale.ROOT);
                if (!coding.equals("chunked")) {
                    return fail(501, "transfer coding " + printable(coding) + " is not implemented");
                }
            }
            if (!last.equalsIgnoreCase("chunked") || codings.length > 1) {
                return fail(400, "chunked must be applied once, last");
            }
            if (minorVersion == 0) {
                return fail(400, "Transfer-Encoding in an HTTP/1.0 request");
            }
            chunked = true;
            state = State.CHUNK_SIZE;
            return true;
        }
        if (!cl.isEmpty()) {
            if (cl.size() > 1) {
                return fail(400, "more than one Content-Length");
            }
            String v = cl.get(0);
            if (v.isEmpty() || v.length() > 18 || !v.chars().allMatch(Character::isDigit)) {
                return fail(400, "invalid Content-Length");
            }
            contentLength = Long.parseLong(v);
            if (contentLength > limits.maxBodyBytes()) {
                return fail(413, "body of " + contentLength + " bytes, more than " + limits.maxBodyBytes());
            }
            if (contentLength > 0) {
                state = State.BODY; // the buffer grows as the bytes come: a declared length costs nothing yet
                return true;
            }
        }
        state = State.DONE;
        return true;
    }

    /**
     * Makes room for {@code need} bytes of body, doubling up to {@code cap} (the declared length,
     * or the limit for a chunked body): memory follows the bytes that arrived, not what a peer
     * declared, and a body read in full by its length ends in an array of exactly that length.
     */
    private void growBody(int need, long cap) {
        if (body == null) {
            body = new byte[(int) Math.min(cap, Math.max(need, INITIAL_BODY))];
        } else if (body.length < need) {
            body = java.util.Arrays.copyOf(body, (int) Math.min(cap, Math.max(need, 2L * body.length)));
        }
    }

    private static final int INITIAL_BODY = 4096;

    /** {@link #lineEnd}: no line terminator yet. */
    private static final int NOT_YET = -1;
    /** {@link #lineEnd}: more than the limit buffered without a line terminator. */
    private static final int TOO_LONG = -2;
    /** {@link #lineEnd}: a CR not followed by LF. */
    private static final int BARE_CR = -3;

    /**
     * The position just past the next line terminator (CRLF, or a bare LF), or {@link #NOT_YET},
     * {@link #TOO_LONG} (over {@code max} bytes), {@link #BARE_CR}. The caller builds the error
     * message only then: this runs for every line of every request.
     */
    private static int lineEnd(ByteBuffer in, int max) {
        int start = in.position();
        int limit = in.limit();
        for (int i = start; i < limit; i++) {
            byte b = in.get(i);
            if (b == '\n') {
                return i - start > max + 1 ? TOO_LONG : i + 1;
            }
            if (b == '\r' && i + 1 < limit && in.get(i + 1) != '\n') {
                return BARE_CR;
            }
        }
        return limit - start > max + 1 ? TOO_LONG : NOT_YET;
    }

    private Result lineError(int end, int status, String tooLong) {
        return end == BARE_CR ? error(400, "a bare CR") : error(status, tooLong);
    }

    /** Length of the line ending just before {@code end}, its CR LF or LF excluded. */
    private static int lineLength(ByteBuffer in, int end) {
        int len = end - 1 - in.position();
        if (len > 0 && in.get(end - 2) == '\r') {
            len--;
        }
        return len;
    }

    private boolean fail(int status, String reason) {
        error(status, reason);
        return false;
    }

    private Result error(int status, String reason) {
        if (errorStatus == 0) {
            errorStatus = status;
            errorReason = reason;
        }
        return Result.ERROR;
    }

    private static String ascii(ByteBuffer in, int at, int len) {
        byte[] b = new byte[len];
        in.get(at, b);
        return new String(b, StandardCharsets.US_ASCII);
    }

    private static String latin1(ByteBuffer in, int at, int len) {
        byte[] b = new byte[len];
        in.get(at, b);
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    private static boolean isToken(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean tchar = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            if (!tchar) {
                return false;
            }
        }
        return true;
    }

    private static String printable(String s) {
        String t = s.length() > 40 ? s.substring(0, 40) + "..." : s;
        return t.replaceAll("[^\\x20-\\x7e]", "?");
    }
}
