package dev.cor.http;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Writes a response head as bytes into one growing array that a connection reuses for every
 * answer: no string building, no copy. Its connection's loop thread only; the buffer it hands out
 * is valid until the next {@link #reset()}.
 */
final class HeadWriter {
    private byte[] buf = new byte[256];
    private int len;

    void reset() {
        len = 0;
    }

    HeadWriter bytes(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, buf, len, b.length);
        len += b.length;
        return this;
    }

    /** A header name or value: ISO-8859-1, as RFC 9110 field values are opaque octets. */
    @SuppressWarnings("deprecation") // getBytes(int, int, byte[], int) is the one bulk copy of a char's low byte
    HeadWriter latin1(String s) {
        int n = s.length();
        ensure(n);
        s.getBytes(0, n, buf, len);
        for (int i = len, end = len + n; i < end; i++) {
            if (buf[i] == '\r' || buf[i] == '\n') {
                buf[i] = ' '; // never let a value split the head
            }
        }
        len += n;
        return this;
    }

    HeadWriter number(long v) {
        if (v == 0) {
            ensure(1);
            buf[len++] = '0';
            return this;
        }
        int digits = 0;
        for (long t = v; t > 0; t /= 10) {
            digits++;
        }
        ensure(digits);
        for (int i = len + digits - 1; i >= len; i--) {
            buf[i] = (byte) ('0' + v % 10);
            v /= 10;
        }
        len += digits;
        return this;
    }

    ByteBuffer buffer() {
        return ByteBuffer.wrap(buf, 0, len);
    }

    private void ensure(int more) {
        if (len + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + more));
        }
    }
}
