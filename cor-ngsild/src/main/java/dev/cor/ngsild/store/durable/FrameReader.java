package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;
import dev.cor.ngsild.store.codec.ByteSource;

/**
 * Reads the frames of one file front to back, checking each one's length and CRC, through a
 * buffer that grows to the largest frame. {@link #next()} says what it found at
 * {@link #offset()}: a good frame (its sequence number, type and body are then readable), the
 * clean end of the file, a frame cut short by the end of the file, or a bad one. Whether a bad or
 * short frame is a torn tail or damage is the caller's question ({@link #validFrameAfter}).
 * One thread.
 */
final class FrameReader {
    static final int FRAME = 0;
    static final int END = 1;
    /** The file ends inside the frame (its head, or the body its length announces). */
    static final int SHORT = 2;
    /** A length no frame can have, or a CRC that does not match. */
    static final int BAD = 3;

    private final DataFile file;
    private final long size;
    private final CRC32C crc = new CRC32C();
    private byte[] buf = new byte[1 << 16];
    /** The file offset of buf[0], and how many bytes of buf hold the file from there. */
    private long bufStart;
    private int bufLen;

    private long offset;
    private long seq;
    private int type;
    private int bodyAt;
    private int bodyLen;
    private String problem;

    FrameReader(DataFile file, long start) throws IOException {
        this.file = file;
        this.size = file.size();
        this.offset = start;
        this.bufStart = start;
    }

    /** Where the frame {@link #next()} looked at begins (after {@link #FRAME}: the next one). */
    long offset() {
        return offset;
    }

    long size() {
        return size;
    }

    long seq() {
        return seq;
    }

    int type() {
        return type;
    }

    /** What was wrong with the frame at {@link #offset()}. */
    String problem() {
        return problem;
    }

    /** The body's payload - after its sequence number and type - as a source. */
    ByteSource payload() {
        return new ByteSource(buf, bodyAt + Format.MIN_BODY, bodyAt + bodyLen);
    }

    /** Reads the frame at {@link #offset()}; after {@link #FRAME} the offset moves past it. */
    int next() throws IOException {
        long left = size - offset;
        if (left == 0) {
            return END;
        }
        if (left < Format.FRAME_HEAD) {
            problem = "the file ends " + bytes(left) + " into a record's head";
            return SHORT;
        }
        fill(offset, Format.FRAME_HEAD);
        int at = (int) (offset - bufStart);
        int len = ByteSource.getU32(buf, at);
        if (len < Format.MIN_BODY || len > Format.MAX_BODY) {
            problem = "a record length of " + Integer.toUnsignedString(len) + " bytes";
            return BAD;
        }
        if (left - Format.FRAME_HEAD < len) {
            problem = "the file ends " + bytes(left - Format.FRAME_HEAD) + " into a record of " + len;
            return SHORT;
        }
        fill(offset, Format.FRAME_HEAD + len);
        at = (int) (offset - bufStart);
        if (!Format.crcMatches(buf, at, len, crc)) {
            problem = "a record whose CRC does not match";
            return BAD;
        }
        seq = ByteSource.getU64(buf, at + Format.FRAME_HEAD);
        type = buf[at + Format.FRAME_HEAD + 8] & 0xFF;
        bodyAt = at + Format.FRAME_HEAD;
        bodyLen = len;
        offset += Format.FRAME_HEAD + len;
        return FRAME;
    }

    static String bytes(long n) {
        return n == 1 ? "1 byte" : n + " bytes";
    }

    /** Makes {@code [from, from+n)} of the file readable in buf. */
    private void fill(long from, int n) throws IOException {
        if (from >= bufStart && from + n <= bufStart + bufLen) {
            return;
        }
        int keep = from >= bufStart && from < bufStart + bufLen ? (int) (bufStart + bufLen - from) : 0;
        if (keep > 0) {
            System.arraycopy(buf, (int) (from - bufStart), buf, 0, keep);
        }
        if (n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(n, buf.length * 2));
        }
        bufStart = from;
        bufLen = keep;
        ByteBuffer bb = ByteBuffer.wrap(buf, keep, buf.length - keep);
        while (bufLen < n) {
            int r = file.read(bb, bufStart + bufLen);
            if (r < 0) {
                throw new IOException("the file ended at " + (bufStart + bufLen) + " while " + size + " bytes were expected");
            }
            bufLen += r;
        }
    }

    /**
     * Whether a good frame with a sequence number above {@code afterSeq} begins anywhere in
     * {@code (from, end of file)}: the frame that follows a damaged one when the damage is not
     * at the tail. Looks at every byte offset (a bad length gives no hint where the next frame
     * is), cheaply: a candidate needs a plausible length that fits, and a plausible sequence
     * number, before its CRC is computed.
     */
    boolean validFrameAfter(long from, long afterSeq) throws IOException {
        long rest = size - from;
        if (rest <= Format.FRAME_HEAD + Format.MIN_BODY) {
            return false;
        }
        if (rest > Integer.MAX_VALUE - 16) {
            return true; // no torn append leaves gigabytes behind it
        }
        byte[] b = new byte[(int) rest];
        ByteBuffer bb = ByteBuffer.wrap(b);
        while (bb.hasRemaining()) {
            if (file.read(bb, from + bb.position()) < 0) {
                break;
            }
        }
        long maxSeq = afterSeq + rest / (Format.FRAME_HEAD + Format.MIN_BODY) + 1;
        for (int at = 1; at + Format.FRAME_HEAD + Format.MIN_BODY <= b.length; at++) {
            int len = ByteSource.getU32(b, at);
            if (len < Format.MIN_BODY || len > b.length - at - Format.FRAME_HEAD) {
                continue;
            }
            long s = ByteSource.getU64(b, at + Format.FRAME_HEAD);
            if (s <= afterSeq || s > maxSeq) {
                continue;
            }
            if (Format.crcMatches(b, at, len, crc)) {
                return true;
            }
        }
        return false;
    }
}
