package dev.cor.rest.proto;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * The bytes one side has read and not yet decoded, over one reused array, and the reader of the
 * frame being decoded (its payload {@code [pos, limit)}). Every read checks the payload's bounds:
 * a short or malformed payload is an {@code INVALID_PAYLOAD} violation, never an exception of
 * the array. The array grows only to hold the largest frame received. One thread.
 */
final class ProtoIn {
    private byte[] buf;
    private ByteBuffer view;
    /** First byte not yet consumed. */
    private int start;
    /** End of the bytes read. */
    private int end;
    /** The payload of the current frame. */
    int pos;
    int limit;

    ProtoIn(int initialCapacity) {
        buf = new byte[initialCapacity];
        view = ByteBuffer.wrap(buf);
    }

    // ---------------------------------------------------------------- the buffer

    /** Bytes read and not yet consumed. */
    int available() {
        return end - start;
    }

    int start() {
        return start;
    }

    /** Marks everything up to {@code to} consumed. */
    void consumeTo(int to) {
        start = to;
        if (start == end) {
            start = end = 0;
        }
    }

    /** Drops every unconsumed byte (a closing connection discards input). */
    void clear() {
        start = end = 0;
        pos = limit = 0;
    }

    /** Makes room for a frame of {@code frameBytes} starting at {@code start}. */
    void reserve(int frameBytes) {
        if (start + frameBytes <= buf.length) {
            return;
        }
        compact();
        if (frameBytes > buf.length) {
            byte[] bigger = new byte[Math.max(frameBytes, Math.min(buf.length * 2, Integer.MAX_VALUE - 16))];
            System.arraycopy(buf, 0, bigger, 0, end);
            buf = bigger;
            view = ByteBuffer.wrap(buf);
        }
    }

    private void compact() {
        if (start > 0) {
            System.arraycopy(buf, start, buf, 0, end - start);
            end -= start;
            start = 0;
        }
    }

    /**
     * Reads what the channel has without blocking.
     *
     * @return the bytes read, 0 if none, -1 at the end of the stream
     */
    int readFrom(ReadableByteChannel ch) throws IOException {
        if (start > 0 && buf.length - end < buf.length / 4) {
            compact(); // no small reads into a short tail: move the unfinished frame to the front
        }
        if (end == buf.length) {
            compact();
            if (end == buf.length) {
                reserve(buf.length * 2);
            }
        }
        view.limit(buf.length).position(end);
        int n = ch.read(view);
        if (n > 0) {
            end += n;
        }
        return n;
    }

    /** Copies bytes in (a test, a benchmark, a transport of its own); returns how many. */
    int receive(ByteBuffer src) {
        int n = src.remaining();
        if (end + n > buf.length) {
            compact();
            if (end + n > buf.length) {
                byte[] bigger = new byte[Math.max(end + n, buf.length * 2)];
                System.arraycopy(buf, 0, bigger, 0, end);
                buf = bigger;
                view = ByteBuffer.wrap(buf);
            }
        }
        src.get(buf, end, n);
        end += n;
        return n;
    }

    /** A big-endian u32 at {@code at} of the unconsumed bytes (the frame header). */
    int intAt(int at) {
        return ((buf[at] & 0xFF) << 24) | ((buf[at + 1] & 0xFF) << 16) | ((buf[at + 2] & 0xFF) << 8) | (buf[at + 3] & 0xFF);
    }

    int byteAt(int at) {
        return buf[at] & 0xFF;
    }

    // ---------------------------------------------------------------- the payload

    void payload(int from, int to) {
        pos = from;
        limit = to;
    }

    int remaining() {
        return limit - pos;
    }

    private void need(int n, String what) throws CorProtoException {
        if (n < 0 || limit - pos < n) {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD,
                    "truncated payload: " + what + " needs " + n + " byte(s), " + (limit - pos) + " left");
        }
    }

    int u8(String what) throws CorProtoException {
        need(1, what);
        return buf[pos++] & 0xFF;
    }

    int u16(String what) throws CorProtoException {
        need(2, what);
        int v = ((buf[pos] & 0xFF) << 8) | (buf[pos + 1] & 0xFF);
        pos += 2;
        return v;
    }

    int u32(String what) throws CorProtoException {
        need(4, what);
        int v = intAt(pos);
        pos += 4;
        return v;
    }

    long u64(String what) throws CorProtoException {
        need(8, what);
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (buf[pos++] & 0xFF);
        }
        return v;
    }

    /** An unsigned 32-bit varint (spec § 2.2), returned as a non-negative long. */
    long varint(String what) throws CorProtoException {
        long v = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            need(1, what);
            int b = buf[pos++];
            if (shift == 28 && (b & 0xF0) != 0) {
                throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "varint overflow in " + what);
            }
            v |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return v;
            }
        }
        throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "varint longer than 5 bytes in " + what);
    }

    /** A varint that counts things or bytes still to come in this payload: at most {@link #remaining()}. */
    int count(String what) throws CorProtoException {
        long n = varint(what);
        if (n > limit - pos) {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD,
                    what + " of " + n + " with " + (limit - pos) + " byte(s) left");
        }
        return (int) n;
    }

    /** An unsigned 64-bit varint (spec § 2.2). */
    long varlong(String what) throws CorProtoException {
        long v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            need(1, what);
            int b = buf[pos++];
            if (shift == 63 && (b & 0xFE) != 0) {
                throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "varlong overflow in " + what);
            }
            v |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return v;
            }
        }
        throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "varlong longer than 10 bytes in " + what);
    }

    /** A {@code str} (spec § 2.3) of at most {@code maxBytes}. */
    String string(int maxBytes, String what) throws CorProtoException {
        int n = count(what);
        if (n > maxBytes) {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, what + " of " + n + " bytes, more than " + maxBytes);
        }
        return stringOfLength(n);
    }

    /** {@code n} bytes of UTF-8 whose length was read already. */
    String stringOfLength(int n) throws CorProtoException {
        need(n, "string");
        String s = n == 0 ? "" : new String(buf, pos, n, StandardCharsets.UTF_8);
        pos += n;
        return s;
    }

    /** {@code n} raw bytes, copied out. */
    byte[] bytes(int n, String what) throws CorProtoException {
        need(n, what);
        byte[] b = new byte[n];
        System.arraycopy(buf, pos, b, 0, n);
        pos += n;
        return b;
    }

    /** The payload must be used up exactly (spec § 5.2). */
    void expectEnd(String what) throws CorProtoException {
        if (pos != limit) {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD,
                    (limit - pos) + " byte(s) left over after the " + what);
        }
    }
}
