package dev.cor.ngsild.store.codec;

import java.nio.charset.StandardCharsets;

/**
 * Reads what a {@link ByteSink} wrote, from {@code [offset, limit)} of an array. Anything that
 * does not fit - a length past the end, a varint too long, a string that is not UTF-8 - is a
 * {@link Malformed}, which the readers report as damage with the file and offset.
 */
public final class ByteSource {
    /** The bytes do not decode as the format says. */
    public static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        public Malformed(String message) {
            super(message, null, false, false);
        }
    }

    private final byte[] buf;
    private int pos;
    private final int limit;

    public ByteSource(byte[] buf, int offset, int limit) {
        this.buf = buf;
        this.pos = offset;
        this.limit = limit;
    }

    public int position() {
        return pos;
    }

    public int remaining() {
        return limit - pos;
    }

    private void need(int n) throws Malformed {
        if (n < 0 || limit - pos < n) {
            throw new Malformed("needs " + n + " bytes at " + pos + ", " + (limit - pos) + " left");
        }
    }

    public int u8() throws Malformed {
        need(1);
        return buf[pos++] & 0xFF;
    }

    public int u16() throws Malformed {
        need(2);
        int v = ((buf[pos] & 0xFF) << 8) | (buf[pos + 1] & 0xFF);
        pos += 2;
        return v;
    }

    public int u32() throws Malformed {
        need(4);
        int v = getU32(buf, pos);
        pos += 4;
        return v;
    }

    public long u64() throws Malformed {
        need(8);
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (buf[pos++] & 0xFF);
        }
        return v;
    }

    public static int getU32(byte[] b, int at) {
        return ((b[at] & 0xFF) << 24) | ((b[at + 1] & 0xFF) << 16) | ((b[at + 2] & 0xFF) << 8) | (b[at + 3] & 0xFF);
    }

    public static long getU64(byte[] b, int at) {
        return ((long) getU32(b, at) << 32) | (getU32(b, at + 4) & 0xFFFFFFFFL);
    }

    public long varlong() throws Malformed {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            int b = u8();
            v |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return v;
            }
        }
        throw new Malformed("a varint longer than 10 bytes at " + pos);
    }

    public int varint() throws Malformed {
        long v = varlong();
        if (v > Integer.MAX_VALUE || v < 0) {
            throw new Malformed("a count or length of " + v + " at " + pos);
        }
        return (int) v;
    }

    public long zigzag() throws Malformed {
        long v = varlong();
        return (v >>> 1) ^ -(v & 1);
    }

    public String string() throws Malformed {
        int n = varint();
        need(n);
        String s;
        boolean ascii = true;
        for (int i = pos; i < pos + n; i++) {
            if (buf[i] < 0) {
                ascii = false;
                break;
            }
        }
        if (ascii) {
            s = new String(buf, pos, n, StandardCharsets.ISO_8859_1);
        } else {
            var decoder = StandardCharsets.UTF_8.newDecoder();
            try {
                s = decoder.decode(java.nio.ByteBuffer.wrap(buf, pos, n)).toString();
            } catch (java.nio.charset.CharacterCodingException e) {
                throw new Malformed("a string that is not UTF-8 at " + pos);
            }
        }
        pos += n;
        return s;
    }

    public String nullableString() throws Malformed {
        return switch (u8()) {
            case 0 -> null;
            case 1 -> string();
            default -> throw new Malformed("a nullable string's flag is neither 0 nor 1 at " + (pos - 1));
        };
    }

    /** Passes over a {@link #string}, decoding nothing. */
    public void skipString() throws Malformed {
        skip(varint());
    }

    /** Passes over a {@link #nullableString}, decoding nothing. */
    public void skipNullableString() throws Malformed {
        switch (u8()) {
            case 0 -> { }
            case 1 -> skipString();
            default -> throw new Malformed("a nullable string's flag is neither 0 nor 1 at " + (pos - 1));
        }
    }

    /** Passes over the next {@code n} bytes. */
    public void skip(int n) throws Malformed {
        need(n);
        pos += n;
    }

    /** A source over {@code length} bytes of the same array from {@code offset} (of the array). */
    public ByteSource at(int offset, int length) {
        return new ByteSource(buf, offset, offset + length);
    }

    /** The next {@code n} bytes as a new array. */
    public byte[] bytes(int n) throws Malformed {
        need(n);
        byte[] b = java.util.Arrays.copyOfRange(buf, pos, pos + n);
        pos += n;
        return b;
    }
}
