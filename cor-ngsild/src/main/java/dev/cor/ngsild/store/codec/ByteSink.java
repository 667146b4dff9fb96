package dev.cor.ngsild.store.codec;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A growable byte array written front to back in the store's formats: big-endian fixed-width
 * integers, unsigned LEB128 varints, strings as a varint length and UTF-8. Reused by its one
 * owner (the journal thread, the snapshot thread): {@link #clear()} keeps the array.
 */
public final class ByteSink {
    private byte[] buf;
    private int pos;

    public ByteSink(int initial) {
        buf = new byte[Math.max(16, initial)];
    }

    public int position() {
        return pos;
    }

    public byte[] array() {
        return buf;
    }

    public void clear() {
        pos = 0;
    }

    /** Drops the first {@code n} bytes, moving the rest to the front. */
    public void discard(int n) {
        System.arraycopy(buf, n, buf, 0, pos - n);
        pos -= n;
    }

    /** The bytes {@code [from, position)} as a buffer over this array (valid until the next write). */
    public ByteBuffer slice(int from) {
        return ByteBuffer.wrap(buf, from, pos - from);
    }

    private void ensure(int n) {
        if (pos + n > buf.length) {
            long want = Math.max((long) buf.length * 2, (long) pos + n);
            if (want > Integer.MAX_VALUE - 16) {
                throw new IllegalStateException("a record larger than 2 GiB");
            }
            buf = Arrays.copyOf(buf, (int) want);
        }
    }

    public void u8(int v) {
        ensure(1);
        buf[pos++] = (byte) v;
    }

    public void u16(int v) {
        ensure(2);
        buf[pos++] = (byte) (v >>> 8);
        buf[pos++] = (byte) v;
    }

    public void u32(int v) {
        ensure(4);
        putU32(buf, pos, v);
        pos += 4;
    }

    public void u64(long v) {
        ensure(8);
        for (int i = 56; i >= 0; i -= 8) {
            buf[pos++] = (byte) (v >>> i);
        }
    }

    /** Skips {@code n} bytes to be filled later ({@link #putU32}): returns where they start. */
    public int reserve(int n) {
        ensure(n);
        int at = pos;
        pos += n;
        return at;
    }

    public static void putU32(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }

    public void varint(int v) {
        varlong(v & 0xFFFFFFFFL);
    }

    public void varlong(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf[pos++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[pos++] = (byte) v;
    }

    /** A signed value, zigzag-encoded so that small negatives stay short. */
    public void zigzag(long v) {
        varlong((v << 1) ^ (v >> 63));
    }

    public void bytes(byte[] b, int off, int len) {
        ensure(len);
        System.arraycopy(b, off, buf, pos, len);
        pos += len;
    }

    public void string(String s) {
        int n = s.length();
        // the common case - ASCII names and ids - in one pass, without an intermediate byte array
        int start = pos;
        varint(n);
        ensure(n);
        int at = pos;
        byte[] b = buf;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                pos = start;
                byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
                varint(utf8.length);
                bytes(utf8, 0, utf8.length);
                return;
            }
            b[at + i] = (byte) c;
        }
        pos = at + n;
    }

    /** A string or {@code null}: a flag byte (0 null, 1 a string follows). */
    public void nullableString(String s) {
        if (s == null) {
            u8(0);
            return;
        }
        u8(1);
        string(s);
    }
}
