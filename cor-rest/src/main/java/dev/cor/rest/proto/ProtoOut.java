package dev.cor.rest.proto;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;

/**
 * The bytes one side has encoded and not yet written: a byte queue over one reused array, into
 * which frames are encoded in place (the header first, its length patched at the end). The
 * array grows until it holds the largest frame sent plus what the socket would not take, and is
 * then reused for good: the steady state allocates nothing. One thread.
 */
final class ProtoOut {
    /** Thrown while encoding past the frame's limit; stackless and shared: it is caught at once. */
    static final class FrameFull extends RuntimeException {
        private static final long serialVersionUID = 1L;
        static final FrameFull INSTANCE = new FrameFull();

        private FrameFull() {
            super("frame full", null, false, false);
        }
    }

    private byte[] buf;
    private ByteBuffer view;
    /** First byte not yet written to the channel. */
    private int start;
    /** End of the encoded bytes. */
    private int end;
    /** Where the frame being encoded begins, or -1. */
    private int frameStart = -1;
    /** How far the frame being encoded may go (its header included). */
    private long frameLimit = Long.MAX_VALUE;

    ProtoOut(int initialCapacity) {
        buf = new byte[initialCapacity];
        view = ByteBuffer.wrap(buf);
    }

    // ---------------------------------------------------------------- frames

    void beginFrame(int type, int flags, int stream, int maxPayload) {
        if (frameStart >= 0) {
            throw new IllegalStateException("a frame is already being encoded");
        }
        ensure(CorProtoCodec.HEADER_BYTES);
        frameStart = end;
        frameLimit = (long) end + CorProtoCodec.HEADER_BYTES + maxPayload;
        end += 4; // the length, patched by endFrame
        buf[end++] = (byte) type;
        buf[end++] = (byte) flags;
        putIntRaw(stream);
    }

    /** Patches the frame's length; returns the frame's size on the wire. */
    int endFrame() {
        int payload = end - frameStart - CorProtoCodec.HEADER_BYTES;
        putIntAt(frameStart, payload);
        frameStart = -1;
        frameLimit = Long.MAX_VALUE;
        return payload + CorProtoCodec.HEADER_BYTES;
    }

    /** Drops the frame being encoded, as if it had never begun. */
    void abortFrame() {
        if (frameStart >= 0) {
            end = frameStart;
            frameStart = -1;
            frameLimit = Long.MAX_VALUE;
        }
    }

    // ---------------------------------------------------------------- the queue

    /** Bytes encoded and not yet written. */
    int pending() {
        return end - start;
    }

    /**
     * Writes what the channel takes without blocking.
     *
     * @return the bytes still pending
     */
    int writeTo(WritableByteChannel ch) throws IOException {
        if (end > start) {
            view.limit(end).position(start);
            start += ch.write(view);
            if (start == end && frameStart < 0) {
                start = end = 0;
            }
        }
        return end - start;
    }

    /** Copies up to {@code dst.remaining()} pending bytes into {@code dst}; returns how many. */
    int drainTo(ByteBuffer dst) {
        int n = Math.min(dst.remaining(), end - start);
        dst.put(buf, start, n);
        start += n;
        if (start == end && frameStart < 0) {
            start = end = 0;
        }
        return n;
    }

    /** Forgets everything pending (the connection is gone). */
    void clear() {
        start = end = 0;
        frameStart = -1;
        frameLimit = Long.MAX_VALUE;
    }

    // ---------------------------------------------------------------- primitives

    void ensure(int n) {
        if (end + (long) n > frameLimit) {
            throw FrameFull.INSTANCE;
        }
        if (end + n <= buf.length) {
            return;
        }
        // Move the unsent bytes to the front first; grow only if that is not enough.
        if (start > 0) {
            int shift = start;
            System.arraycopy(buf, start, buf, 0, end - start);
            end -= shift;
            start = 0;
            if (frameStart >= 0) {
                frameStart -= shift;
                frameLimit -= shift;
            }
            if (end + n <= buf.length) {
                return;
            }
        }
        long want = Math.max((long) buf.length * 2, (long) end + n);
        if (want > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException("cor:// output buffer past 2 GiB");
        }
        byte[] bigger = new byte[(int) want];
        System.arraycopy(buf, 0, bigger, 0, end);
        buf = bigger;
        view = ByteBuffer.wrap(buf);
    }

    void putByte(int b) {
        ensure(1);
        buf[end++] = (byte) b;
    }

    void putShort(int v) {
        ensure(2);
        buf[end++] = (byte) (v >>> 8);
        buf[end++] = (byte) v;
    }

    void putInt(int v) {
        ensure(4);
        putIntRaw(v);
    }

    private void putIntRaw(int v) {
        buf[end++] = (byte) (v >>> 24);
        buf[end++] = (byte) (v >>> 16);
        buf[end++] = (byte) (v >>> 8);
        buf[end++] = (byte) v;
    }

    private void putIntAt(int at, int v) {
        buf[at] = (byte) (v >>> 24);
        buf[at + 1] = (byte) (v >>> 16);
        buf[at + 2] = (byte) (v >>> 8);
        buf[at + 3] = (byte) v;
    }

    void putLong(long v) {
        ensure(8);
        for (int shift = 56; shift >= 0; shift -= 8) {
            buf[end++] = (byte) (v >>> shift);
        }
    }

    /** An unsigned 32-bit varint (spec § 2.2). */
    void putVarint(int v) {
        ensure(5);
        while ((v & ~0x7F) != 0) {
            buf[end++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[end++] = (byte) v;
    }

    /** An unsigned 64-bit varint (spec § 2.2). */
    void putVarlong(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf[end++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[end++] = (byte) v;
    }

    void putBytes(byte[] b, int off, int len) {
        ensure(len);
        System.arraycopy(b, off, buf, end, len);
        end += len;
    }

    /** A {@code str} (spec § 2.3): its UTF-8 length, then the bytes, encoded in place. */
    void putString(String s) {
        putString(s, utf8Length(s));
    }

    /** A {@code str} whose UTF-8 length the caller has computed already. */
    void putString(String s, int utf8Length) {
        putVarint(utf8Length);
        putUtf8(s, utf8Length);
    }

    /** The UTF-8 bytes of {@code s}, no length before them; {@code utf8Length} from {@link #utf8Length}. */
    void putUtf8(String s, int utf8Length) {
        ensure(utf8Length);
        int n = s.length();
        byte[] b = buf;
        int p = end;
        int i = 0;
        // The ASCII run first: most names and values are all of it.
        while (i < n) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                break;
            }
            b[p++] = (byte) c;
            i++;
        }
        for (; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                b[p++] = (byte) c;
            } else if (c < 0x800) {
                b[p++] = (byte) (0xC0 | (c >> 6));
                b[p++] = (byte) (0x80 | (c & 0x3F));
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                b[p++] = (byte) (0xF0 | (cp >> 18));
                b[p++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                b[p++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                b[p++] = (byte) (0x80 | (cp & 0x3F));
            } else if (Character.isSurrogate(c)) {
                b[p++] = '?'; // unpaired: as String.getBytes does
            } else {
                b[p++] = (byte) (0xE0 | (c >> 12));
                b[p++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                b[p++] = (byte) (0x80 | (c & 0x3F));
            }
        }
        end = p;
    }

    /** The UTF-8 length of {@code s}, unpaired surrogates counted as the one byte of {@code ?}. */
    static int utf8Length(String s) {
        int n = s.length();
        int len = n;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                if (c < 0x800) {
                    len += 1;
                } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    len += 2; // four bytes for two chars
                    i++;
                } else if (!Character.isSurrogate(c)) {
                    len += 2;
                }
            }
        }
        return len;
    }

    /** {@code s} cut to at most {@code maxBytes} of UTF-8 (a reason, a message: spec § 2.4). */
    static String truncate(String s, int maxBytes) {
        if (s == null) {
            return "";
        }
        if (s.length() * 3L <= maxBytes || utf8Length(s) <= maxBytes) {
            return s;
        }
        int cut = Math.min(s.length(), maxBytes);
        while (cut > 0 && utf8Length(s.substring(0, cut)) > maxBytes) {
            cut -= Math.max(1, cut / 8);
        }
        if (cut > 0 && Character.isHighSurrogate(s.charAt(cut - 1))) {
            cut--;
        }
        return s.substring(0, Math.max(cut, 0));
    }
}
