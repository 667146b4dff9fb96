package dev.cor.rest.proto;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestHeaders;

/**
 * One {@code cor://} connection's codec (doc/cor-protocol.md): the frames it encodes and has not
 * written yet, the bytes it has read and not decoded yet, and the connection's two name tables
 * (spec § 6.4). Both buffers are reused: once they have grown to the largest frame, encoding and
 * decoding allocate nothing but what is decoded (the request, the tree).
 * <p>
 * Decoding reassembles a frame only from bytes already read: {@link #nextFrame()} answers
 * {@link #NEED_MORE} until a whole frame is in, then its type; the typed readers then decode its
 * payload. A violation is a {@link CorProtoException} of kind {@code PROTOCOL} whose
 * {@link CorProtoException#code() code} is what the GOAWAY must carry.
 * <p>
 * <b>Threading.</b> A codec belongs to one connection and is used by one thread at a time (the
 * connection's loop, or the thread that owns it); it is not thread-safe. The server and the
 * client drive it; {@link #open} gives tools, tests and benchmarks one past the handshake.
 */
public final class CorProtoCodec {
    /** {@link #nextFrame()}: no whole frame buffered yet. */
    public static final int NEED_MORE = -1;

    /** Frame types (spec § 3.2). */
    public static final int HELLO = 1;
    public static final int HELLO_ACK = 2;
    public static final int REQUEST = 3;
    public static final int RESPONSE = 4;
    public static final int ERROR = 5;
    public static final int PING = 6;
    public static final int PONG = 7;
    public static final int GOAWAY = 8;
    public static final int CANCEL = 9;

    /** The protocol version this codec speaks (spec § 4.1). */
    public static final int VERSION = 1;
    /** The frame header (spec § 3.1). */
    public static final int HEADER_BYTES = 10;
    /** Flags (spec § 3.4). */
    public static final int FLAG_BODY_TREE = 0x01;
    public static final int FLAG_BODY_BYTES = 0x02;

    /** Frame payload limits (spec § 3.5). */
    public static final int DEFAULT_MAX_FRAME = 1 << 20;
    public static final int MIN_MAX_FRAME = 4 << 10;
    public static final int HARD_MAX_FRAME = 16 << 20;
    /** The payload limit until HELLO-ACK (spec § 3.5). */
    public static final int HELLO_MAX_FRAME = 1 << 10;
    /** Streams in flight (spec § 5.3). */
    public static final int DEFAULT_MAX_STREAMS = 256;
    public static final int HARD_MAX_STREAMS = 65_535;
    /** Name table entries (spec § 6.4). */
    public static final int DEFAULT_NAME_TABLE = 4096;
    public static final int HARD_MAX_NAME_TABLE = 65_535;

    static final int MAX_HEADERS = 256;
    static final int MAX_METHOD_BYTES = 32;
    static final int MAX_PEER_NAME_BYTES = 255;
    static final int MAX_TOKEN_BYTES = 255;
    /** GOAWAY reasons and ERROR messages: small enough that a GOAWAY fits before HELLO (spec § 2.4). */
    static final int MAX_REASON_BYTES = 1000;

    private static final String[] METHODS = {null, "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"};
    private static final String[] TYPE_NAMES = {"?", "HELLO", "HELLO-ACK", "REQUEST", "RESPONSE", "ERROR", "PING", "PONG", "GOAWAY", "CANCEL"};

    private final ProtoOut out;
    private final ProtoIn in;
    private final NameTable.Out namesOut;
    private final NameTable.In namesIn;
    private int maxFrame = HELLO_MAX_FRAME;

    // The frame being decoded.
    private int type = NEED_MORE;
    private int flags;
    private int stream;
    private int frameEnd = -1;

    /** A codec before the handshake: frames of at most 1 KiB, empty tables that take nothing yet. */
    CorProtoCodec() {
        out = new ProtoOut(8 << 10);
        in = new ProtoIn(8 << 10);
        namesOut = new NameTable.Out(0);
        namesIn = new NameTable.In(0);
    }

    /**
     * A codec past the handshake, with these agreed limits (spec § 4.2): what tools, tests and
     * benchmarks drive directly. Two such codecs, one's output fed to the other's input, are the
     * two ends of one direction of a connection.
     */
    public static CorProtoCodec open(int maxFrameBytes, int nameTableSize) {
        CorProtoCodec c = new CorProtoCodec();
        c.agree(maxFrameBytes, nameTableSize);
        return c;
    }

    /** Sets the agreed limits, for both directions, from the next frame on (spec § 4.2). */
    void agree(int maxFrameBytes, int nameTableSize) {
        if (maxFrameBytes < MIN_MAX_FRAME || maxFrameBytes > HARD_MAX_FRAME) {
            throw new IllegalArgumentException("max frame out of " + MIN_MAX_FRAME + ".." + HARD_MAX_FRAME + ": " + maxFrameBytes);
        }
        if (nameTableSize < 0 || nameTableSize > HARD_MAX_NAME_TABLE) {
            throw new IllegalArgumentException("name table out of 0.." + HARD_MAX_NAME_TABLE + ": " + nameTableSize);
        }
        maxFrame = maxFrameBytes;
        namesOut.capacity(nameTableSize);
        namesIn.capacity(nameTableSize);
    }

    /** The largest frame payload sent or received now. */
    public int maxFrame() {
        return maxFrame;
    }

    // ================================================================ encoding

    /**
     * Appends a REQUEST frame (spec § 5.1). The body is {@code json} as a tree if given, else
     * {@code body} as bytes if not empty, else none.
     *
     * @throws CorProtoException kind {@code TOO_LARGE} when it does not fit in a frame: nothing
     *                           was appended and the name table is as it was
     */
    public void writeRequest(int stream, String method, String path, String query, CorRestHeaders headers,
            JsonNode json, byte[] body) throws CorProtoException {
        if (stream == 0) {
            throw new IllegalArgumentException("stream 0 is not a request's (spec § 3.3)");
        }
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException("a request needs a path");
        }
        int code = methodCode(method);
        if (code == 0 && ProtoOut.utf8Length(method) > MAX_METHOD_BYTES) {
            throw new IllegalArgumentException("method longer than " + MAX_METHOD_BYTES + " bytes");
        }
        checkHeaderCount(headers);
        int mark = namesOut.size();
        try {
            out.beginFrame(REQUEST, bodyFlags(json, body), stream, maxFrame);
            out.putByte(code);
            if (code == 0) {
                out.putString(method);
            }
            out.putString(path);
            if (query == null) {
                out.putVarint(0);
            } else {
                int n = ProtoOut.utf8Length(query);
                out.putVarint(n + 1); // 0 is "no query", so an empty query is 1
                out.putUtf8(query, n);
            }
            writeHeaders(headers);
            writeBody(json, body);
            out.endFrame();
        } catch (ProtoOut.FrameFull e) {
            abort(mark);
            throw new CorProtoException(CorProtoException.Kind.TOO_LARGE, null,
                    "the request does not fit in a frame of " + maxFrame + " bytes", false, null);
        } catch (RuntimeException | Error e) {
            abort(mark);
            throw e;
        }
    }

    /**
     * Appends a RESPONSE frame (spec § 5.2); the body as for {@link #writeRequest}.
     *
     * @throws CorProtoException kind {@code TOO_LARGE} when it does not fit: nothing was appended
     *                           (the server answers ERROR {@code TOO_LARGE} instead, spec § 3.5)
     */
    public void writeResponse(int stream, int status, CorRestHeaders headers, JsonNode json, byte[] body)
            throws CorProtoException {
        if (stream == 0) {
            throw new IllegalArgumentException("stream 0 is not a request's (spec § 3.3)");
        }
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("status out of 100..599: " + status);
        }
        checkHeaderCount(headers);
        int mark = namesOut.size();
        try {
            out.beginFrame(RESPONSE, bodyFlags(json, body), stream, maxFrame);
            out.putShort(status);
            writeHeaders(headers);
            writeBody(json, body);
            out.endFrame();
        } catch (ProtoOut.FrameFull e) {
            abort(mark);
            throw new CorProtoException(CorProtoException.Kind.TOO_LARGE, CorProtoError.TOO_LARGE,
                    "the response does not fit in a frame of " + maxFrame + " bytes", false, null);
        } catch (RuntimeException | Error e) {
            abort(mark);
            throw e;
        }
    }

    private void abort(int mark) {
        out.abortFrame();
        namesOut.rollback(mark);
    }

    private static int bodyFlags(JsonNode json, byte[] body) {
        if (json != null) {
            return FLAG_BODY_TREE;
        }
        return body != null && body.length > 0 ? FLAG_BODY_BYTES : 0;
    }

    private void writeBody(JsonNode json, byte[] body) {
        if (json != null) {
            JsonTree.write(json, out, namesOut);
        } else if (body != null && body.length > 0) {
            out.putVarint(body.length);
            out.putBytes(body, 0, body.length);
        }
    }

    private static void checkHeaderCount(CorRestHeaders headers) {
        if (headers != null && headers.size() > MAX_HEADERS) {
            throw new IllegalArgumentException(headers.size() + " headers, more than " + MAX_HEADERS);
        }
    }

    private void writeHeaders(CorRestHeaders headers) {
        int n = headers == null ? 0 : headers.size();
        out.putVarint(n);
        for (int i = 0; i < n; i++) {
            namesOut.write(out, headers.name(i));
            out.putString(headers.value(i));
        }
    }

    private static int methodCode(String method) {
        return switch (method) {
            case "GET" -> 1;
            case "POST" -> 2;
            case "PUT" -> 3;
            case "PATCH" -> 4;
            case "DELETE" -> 5;
            case "HEAD" -> 6;
            case "OPTIONS" -> 7;
            default -> 0;
        };
    }

    // ---------------------------------------------------------------- control frames

    /** HELLO (spec § 4.1): encoded within the 1 KiB of before the handshake. */
    void writeHello(int maxFrameBytes, int maxStreams, int nameTable, String name, String token) {
        out.beginFrame(HELLO, 0, 0, HELLO_MAX_FRAME);
        out.putShort(VERSION);
        out.putInt(maxFrameBytes);
        out.putShort(maxStreams);
        out.putShort(nameTable);
        out.putString(ProtoOut.truncate(name, MAX_PEER_NAME_BYTES));
        out.putString(token == null ? "" : token);
        out.endFrame();
    }

    /** HELLO-ACK (spec § 4.2). */
    void writeHelloAck(int maxFrameBytes, int maxStreams, int nameTable, String name) {
        out.beginFrame(HELLO_ACK, 0, 0, HELLO_MAX_FRAME);
        out.putShort(VERSION);
        out.putInt(maxFrameBytes);
        out.putShort(maxStreams);
        out.putShort(nameTable);
        out.putString(ProtoOut.truncate(name, MAX_PEER_NAME_BYTES));
        out.endFrame();
    }

    /** ERROR on a stream (spec § 5.4). */
    void writeError(int stream, CorProtoError code, String message) {
        out.beginFrame(ERROR, 0, stream, maxFrame);
        out.putShort(code.code());
        out.putString(ProtoOut.truncate(message, MAX_REASON_BYTES));
        out.endFrame();
    }

    /** GOAWAY (spec § 8.1). */
    void writeGoAway(int lastStream, CorProtoError code, String reason) {
        out.beginFrame(GOAWAY, 0, 0, maxFrame);
        out.putInt(lastStream);
        out.putShort(code.code());
        out.putString(ProtoOut.truncate(reason, MAX_REASON_BYTES));
        out.endFrame();
    }

    /** CANCEL (spec § 5.5): the caller of {@code stream} gave up. */
    void writeCancel(int stream) {
        if (stream == 0) {
            throw new IllegalArgumentException("stream 0 is not a request's (spec § 3.3)");
        }
        out.beginFrame(CANCEL, 0, stream, maxFrame);
        out.endFrame();
    }

    /** PING or PONG (spec § 7). */
    void writePing(int type, long data) {
        out.beginFrame(type, 0, 0, maxFrame);
        out.putLong(data);
        out.endFrame();
    }

    // ---------------------------------------------------------------- moving the output

    /** Bytes encoded and not yet written. */
    public int pendingOutput() {
        return out.pending();
    }

    /**
     * Writes what {@code ch} (non-blocking) takes now.
     *
     * @return the bytes still pending
     */
    public int writeTo(WritableByteChannel ch) throws IOException {
        return out.writeTo(ch);
    }

    /** Moves pending output into {@code dst}, as much as fits; returns how many bytes. */
    public int drainTo(ByteBuffer dst) {
        return out.drainTo(dst);
    }

    /** Forgets the pending output (the connection is gone). */
    void clearOutput() {
        out.clear();
    }

    // ================================================================ decoding

    /**
     * Reads what {@code ch} (non-blocking) has now into the input.
     *
     * @return bytes read, 0 if none, -1 at the end of the stream
     */
    public int readFrom(ReadableByteChannel ch) throws IOException {
        finishFrame();
        return in.readFrom(ch);
    }

    /** Appends {@code src}'s remaining bytes to the input (a transport of one's own, a test). */
    public void receive(ByteBuffer src) {
        finishFrame();
        in.receive(src);
    }

    /** Bytes read and not yet decoded: after {@link #NEED_MORE}, non-zero means a frame is unfinished. */
    public int bufferedInput() {
        finishFrame();
        return in.available();
    }

    /** Drops all buffered input (a closing connection discards what still comes). */
    void clearInput() {
        finishFrame();
        in.clear();
    }

    /**
     * Steps to the next whole frame buffered, checking its header (spec § 8.3, step 1) as soon as
     * the header is in.
     *
     * @return its type, or {@link #NEED_MORE}
     * @throws CorProtoException an unknown type, an oversized frame, a stream field against § 3.2
     */
    public int nextFrame() throws CorProtoException {
        finishFrame();
        int avail = in.available();
        if (avail < HEADER_BYTES) {
            return NEED_MORE;
        }
        int s = in.start();
        long length = in.intAt(s) & 0xFFFF_FFFFL;
        int t = in.byteAt(s + 4);
        int f = in.byteAt(s + 5);
        int st = in.intAt(s + 6);
        if (t < HELLO || t > CANCEL) {
            throw CorProtoException.violation(CorProtoError.UNKNOWN_TYPE, "unknown frame type " + t);
        }
        if (length > maxFrame) {
            throw CorProtoException.violation(CorProtoError.FRAME_TOO_LARGE, "a " + typeName(t) + " frame of " + length
                    + " bytes, more than the maximum of " + maxFrame);
        }
        boolean onStream = t == REQUEST || t == RESPONSE || t == ERROR || t == CANCEL;
        if (onStream == (st == 0)) {
            throw CorProtoException.violation(CorProtoError.PROTOCOL_ERROR, typeName(t) + " on stream "
                    + Integer.toUnsignedString(st) + (onStream ? ": it needs a stream" : ": it belongs to stream 0"));
        }
        int total = HEADER_BYTES + (int) length;
        if (avail < total) {
            in.reserve(total);
            return NEED_MORE;
        }
        frameEnd = s + total;
        in.payload(s + HEADER_BYTES, frameEnd);
        type = t;
        flags = f;
        stream = st;
        return t;
    }

    private void finishFrame() {
        if (frameEnd >= 0) {
            in.consumeTo(frameEnd);
            frameEnd = -1;
            type = NEED_MORE;
        }
    }

    /** The type of the frame {@link #nextFrame()} stepped to. */
    public int frameType() {
        return type;
    }

    /** Its stream. */
    public int stream() {
        return stream;
    }

    /** Its flags. */
    public int flags() {
        return flags;
    }

    /** The size on the wire of a frame whose header is buffered but not its payload, else 0 (messages). */
    int expectedFrameBytes() {
        finishFrame();
        return in.available() >= HEADER_BYTES ? HEADER_BYTES + (int) Math.min(in.intAt(in.start()) & 0xFFFF_FFFFL, maxFrame) : 0;
    }

    static String typeName(int type) {
        return type > 0 && type < TYPE_NAMES.length ? TYPE_NAMES[type] : "type " + type;
    }

    private void expect(int t) {
        if (type != t) {
            throw new IllegalStateException("the current frame is " + (type == NEED_MORE ? "none" : typeName(type))
                    + ", not " + typeName(t));
        }
    }

    /** Decodes the current REQUEST (spec § 5.1) into a request for the dispatcher. */
    public CorRest readRequest() throws CorProtoException {
        expect(REQUEST);
        int code = in.u8("method");
        String method;
        if (code == 0) {
            method = in.string(MAX_METHOD_BYTES, "method");
            if (method.isEmpty()) {
                throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "an empty method");
            }
        } else if (code < METHODS.length) {
            method = METHODS[code];
        } else {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "unknown method code " + code);
        }
        String path = in.string(Integer.MAX_VALUE, "path");
        if (path.isEmpty()) {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "an empty path");
        }
        String query = null;
        long q = in.varint("query");
        if (q > 0) {
            int n = (int) (q - 1);
            if (n > in.remaining()) {
                throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "query of " + n + " bytes with " + in.remaining() + " left");
            }
            query = in.stringOfLength(n);
        }
        CorRest.Builder b = CorRest.builder(method, path).query(query).headers(readHeaders());
        readBody(b::json, b::body);
        in.expectEnd("request body");
        return b.build();
    }

    /** Decodes the current RESPONSE (spec § 5.2). */
    public CorProtoResponse readResponse() throws CorProtoException {
        expect(RESPONSE);
        int status = in.u16("status");
        if (status < 100 || status > 599) {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "status " + status + " out of 100..599");
        }
        CorRestHeaders headers = readHeaders();
        CorProtoResponse r = new CorProtoResponse(status, headers);
        readBody(r::tree, r::bytes);
        in.expectEnd("response body");
        return r;
    }

    private CorRestHeaders readHeaders() throws CorProtoException {
        int n = in.count("header count");
        if (n > MAX_HEADERS) {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, n + " headers, more than " + MAX_HEADERS);
        }
        CorRestHeaders h = new CorRestHeaders();
        for (int i = 0; i < n; i++) {
            String name = namesIn.read(in);
            h.add(name, in.string(Integer.MAX_VALUE, "header value"));
        }
        return h;
    }

    private void readBody(java.util.function.Consumer<JsonNode> tree, java.util.function.Consumer<byte[]> bytes)
            throws CorProtoException {
        int kind = flags & (FLAG_BODY_TREE | FLAG_BODY_BYTES);
        if (kind == (FLAG_BODY_TREE | FLAG_BODY_BYTES)) {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "both body flags set");
        }
        if (kind == FLAG_BODY_TREE) {
            tree.accept(JsonTree.read(in, namesIn));
        } else if (kind == FLAG_BODY_BYTES) {
            int n = in.count("body length");
            bytes.accept(in.bytes(n, "body"));
        }
    }

    /** HELLO or HELLO-ACK as read. */
    record Hello(int version, int maxFrame, int maxStreams, int nameTable, String name, String token) {
    }

    /**
     * Decodes the current HELLO (spec § 4.1); the version first, so that another version is told
     * apart from a malformed HELLO.
     */
    Hello readHello() throws CorProtoException {
        expect(HELLO);
        int version = in.u16("version");
        if (version != VERSION) {
            throw CorProtoException.violation(CorProtoError.VERSION_MISMATCH,
                    "version " + version + " is not spoken here; this side speaks " + VERSION);
        }
        int mf = in.u32("maxFrame");
        int ms = in.u16("maxStreams");
        int nt = in.u16("nameTable");
        String name = in.string(MAX_PEER_NAME_BYTES, "name");
        String token = in.string(MAX_TOKEN_BYTES, "token");
        in.expectEnd("HELLO");
        return new Hello(version, mf, ms, nt, name, token);
    }

    /** Decodes the current HELLO-ACK (spec § 4.2). */
    Hello readHelloAck() throws CorProtoException {
        expect(HELLO_ACK);
        int version = in.u16("version");
        if (version != VERSION) {
            throw CorProtoException.violation(CorProtoError.VERSION_MISMATCH,
                    "the peer answered version " + version + "; this side speaks " + VERSION);
        }
        int mf = in.u32("maxFrame");
        int ms = in.u16("maxStreams");
        int nt = in.u16("nameTable");
        String name = in.string(MAX_PEER_NAME_BYTES, "name");
        in.expectEnd("HELLO-ACK");
        return new Hello(version, mf, ms, nt, name, "");
    }

    /** GOAWAY or ERROR as read: the raw code kept for messages. */
    record Problem(int lastStream, CorProtoError code, int rawCode, String reason) {
        String describe() {
            return code + (code.code() != rawCode ? " (code " + rawCode + ")" : "") + ": " + reason;
        }
    }

    /** Decodes the current GOAWAY (spec § 8.1). */
    Problem readGoAway() throws CorProtoException {
        expect(GOAWAY);
        int last = in.u32("lastStream");
        int code = in.u16("code");
        String reason = in.string(Integer.MAX_VALUE, "reason");
        in.expectEnd("GOAWAY");
        return new Problem(last, CorProtoError.of(code), code, reason);
    }

    /** Decodes the current ERROR (spec § 5.4). */
    Problem readError() throws CorProtoException {
        expect(ERROR);
        int code = in.u16("code");
        String message = in.string(Integer.MAX_VALUE, "message");
        in.expectEnd("ERROR");
        return new Problem(stream, CorProtoError.of(code), code, message);
    }

    /** Decodes the current CANCEL (spec § 5.5): its payload is empty; {@link #stream()} names it. */
    void readCancel() throws CorProtoException {
        expect(CANCEL);
        in.expectEnd("CANCEL");
    }

    /** Decodes the current PING or PONG (spec § 7). */
    long readPing() throws CorProtoException {
        if (type != PING && type != PONG) {
            expect(PING);
        }
        long data = in.u64("ping data");
        in.expectEnd(typeName(type));
        return data;
    }
}
