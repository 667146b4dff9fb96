package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.zip.CRC32C;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * The history's segment files under {@code <dataDir>/history/}: append-only files of frames
 * ({@link HistoryFormat}), each begun with the 32-byte header ({@link HistoryFormat#SEGMENT_MAGIC},
 * its number), a new one once one reaches the segment size. Owns the files: the recovery's scan,
 * the history writer's appends and forces (one thread: {@link #append}, {@link #force}), the
 * readers' positional reads (any thread: {@link #read}), and retention's deletions (one thread at
 * a time: {@link #delete}).
 */
final class HistoryFiles {
    private static final System.Logger LOG = System.getLogger(HistoryFiles.class.getName());

    /** What the scan is shown: each good frame, where it is. */
    interface Visitor {
        void frame(long segment, long offset, int length, long version, int type, ByteSource payload)
                throws ByteSource.Malformed;
    }

    private final Path dir;
    private final DataFiles files;
    private final long segmentBytes;
    /** Every segment on disk, by number: its size in bytes. */
    final ConcurrentSkipListMap<Long, Long> sizes = new ConcurrentSkipListMap<>();
    private final ConcurrentHashMap<Long, DataFile> readers = new ConcurrentHashMap<>();

    // the writer's own
    private final CRC32C crc = new CRC32C();
    private DataFile out;
    private long outNumber = -1;
    private long outPos;
    private boolean dirDirty;
    private volatile long active = -1;

    HistoryFiles(Path dir, DataFiles files, long segmentBytes) {
        this.dir = dir;
        this.files = files;
        this.segmentBytes = segmentBytes;
    }

    Path dir() {
        return dir;
    }

    /** The segment appends go to, or -1 before the first append. */
    long active() {
        return active;
    }

    // ---------------------------------------------------------------- the recovery's scan

    /**
     * Reads every segment, in order, showing each good frame to {@code visitor}. A frame cut short
     * or failing its CRC at the very end of the last segment, with no good frame after it, is a
     * crash in the middle of a write: dropped (truncated when {@code repair}) and said in
     * {@code notes}. Anything else is a {@link DataDamagedException}.
     */
    void scan(boolean repair, Visitor visitor, List<String> notes) throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        TreeMap<Long, Path> segments = new TreeMap<>();
        for (Path p : files.list(dir)) {
            long n = Format.number(p, HistoryFormat.SEGMENT_PREFIX, HistoryFormat.SEGMENT_SUFFIX);
            if (n >= 0) {
                segments.put(n, p);
            }
        }
        EntityCodec codec = new EntityCodec();
        for (var e : segments.entrySet()) {
            boolean last = e.getKey().equals(segments.lastKey());
            Path file = e.getValue();
            DataFiles.Mode mode = repair && last ? DataFiles.Mode.WRITE : DataFiles.Mode.READ;
            try (DataFile f = files.open(file, mode)) {
                long size = f.size();
                Format.Header h;
                try {
                    h = Format.readHeader(f, HistoryFormat.SEGMENT_MAGIC, crc);
                } catch (ByteSource.Malformed x) {
                    if (last && size <= Format.HEADER_BYTES) {
                        notes.add(file.getFileName() + ": a history segment torn while it was created (" + size
                                + " bytes): " + (repair ? "deleted" : "the broker deletes it when it starts"));
                        if (repair) {
                            f.close();
                            files.delete(file);
                        }
                        continue;
                    }
                    throw new DataDamagedException(file, 0, x.getMessage());
                }
                if (h.seq() != e.getKey()) {
                    throw new DataDamagedException(file, 0, "the header says segment " + h.seq() + ", its name says "
                            + e.getKey());
                }
                FrameReader r = new FrameReader(f, Format.HEADER_BYTES);
                long end = size;
                while (true) {
                    long at = r.offset();
                    int status = r.next();
                    if (status == FrameReader.END) {
                        break;
                    }
                    if (status != FrameReader.FRAME) {
                        if (last && !goodFrameAfter(f, at, size)) {
                            String what = file.getFileName() + ": a chunk cut short at offset " + at + " (" + r.problem()
                                    + ", " + FrameReader.bytes(size - at) + " to the end)";
                            if (repair) {
                                f.truncate(at);
                                f.force();
                                LOG.log(System.Logger.Level.WARNING, "cor-store: " + what + ": truncated there - a crash"
                                        + " while the history was written; the journal holds what it held");
                            }
                            notes.add(what + (repair ? ": truncated" : ": the broker truncates it there when it starts"));
                            end = at;
                            break;
                        }
                        throw new DataDamagedException(file, at, r.problem() + (last ? ", with good frames after it" : ""));
                    }
                    try {
                        visitor.frame(e.getKey(), at, (int) (r.offset() - at), r.seq(), r.type(), r.payload());
                    } catch (ByteSource.Malformed x) {
                        throw new DataDamagedException(file, at, "a history " + HistoryFormat.frameName(r.type())
                                + " that does not decode: " + x.getMessage());
                    }
                }
                sizes.put(e.getKey(), end);
            }
        }
    }

    /** Whether a frame whose length fits and whose CRC matches begins anywhere after {@code from}. */
    private boolean goodFrameAfter(DataFile f, long from, long size) throws IOException {
        long rest = size - from;
        if (rest <= Format.FRAME_HEAD + Format.MIN_BODY) {
            return false;
        }
        if (rest > Integer.MAX_VALUE - 16) {
            return true;
        }
        byte[] b = new byte[(int) rest];
        readFully(f, ByteBuffer.wrap(b), from);
        CRC32C c = new CRC32C();
        for (int at = 1; at + Format.FRAME_HEAD + Format.MIN_BODY <= b.length; at++) {
            int len = ByteSource.getU32(b, at);
            if (len >= Format.MIN_BODY && len <= b.length - at - Format.FRAME_HEAD && Format.crcMatches(b, at, len, c)) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- the writer

    /**
     * Writes the frames in {@code frame} (whole frames, from its start) at the end of the active
     * segment - a new one first when they would take it past the segment size - and returns where
     * they begin: {segment, offset}. Not forced: {@link #force} does. The writer thread only.
     */
    long[] append(ByteSink frame) throws IOException {
        int len = frame.position();
        if (out == null || (outPos > Format.HEADER_BYTES && outPos + len > segmentBytes)) {
            roll();
        }
        long at = outPos;
        writeFully(out, frame.slice(0), at);
        outPos += len;
        sizes.put(outNumber, outPos);
        return new long[] {outNumber, at};
    }

    private void roll() throws IOException {
        if (out != null) {
            out.force();
            out.close();
            out = null;
        }
        Files.createDirectories(dir);
        long n = Math.max(sizes.isEmpty() ? 0 : sizes.lastKey(), outNumber) + 1;
        Path p = dir.resolve(HistoryFormat.segmentName(n));
        DataFile f = files.open(p, DataFiles.Mode.CREATE);
        try {
            ByteSink h = new ByteSink(Format.HEADER_BYTES);
            Format.writeHeader(h, HistoryFormat.SEGMENT_MAGIC, n, System.currentTimeMillis(), crc);
            writeFully(f, h.slice(0), 0);
        } catch (IOException e) {
            f.close();
            throw e;
        }
        out = f;
        outNumber = n;
        outPos = Format.HEADER_BYTES;
        sizes.put(n, outPos);
        active = n;
        dirDirty = true;
    }

    /** Makes every frame appended so far durable (and the segments' names). The writer thread only. */
    void force() throws IOException {
        if (out != null) {
            out.force();
        }
        if (dirDirty) {
            files.syncDirectory(dir);
            dirDirty = false;
        }
    }

    /** Closes the active segment (the writer has stopped). */
    void closeWriter() {
        if (out != null) {
            try {
                out.close();
            } catch (IOException ignored) {
                // nothing more to write to it
            }
            out = null;
        }
    }

    // ---------------------------------------------------------------- readers

    /**
     * The frame of {@code length} bytes at {@code offset} of {@code segment}, its CRC checked: its
     * type ({@code u8}), then its payload. Any thread.
     *
     * @throws IOException the segment is gone (retention deleted it) or cannot be read
     */
    ByteSource read(long segment, long offset, int length) throws IOException {
        DataFile f = readers.get(segment);
        if (f == null) {
            if (!sizes.containsKey(segment)) {
                throw new IOException("history segment " + segment + " was deleted");
            }
            DataFile opened = files.open(dir.resolve(HistoryFormat.segmentName(segment)), DataFiles.Mode.READ);
            f = readers.putIfAbsent(segment, opened);
            if (f == null) {
                f = opened;
            } else {
                opened.close();
            }
        }
        byte[] b = new byte[length];
        readFully(f, ByteBuffer.wrap(b), offset);
        int len = ByteSource.getU32(b, 0);
        if (len != length - Format.FRAME_HEAD || !Format.crcMatches(b, 0, len, new CRC32C())) {
            throw new DataDamagedException(dir.resolve(HistoryFormat.segmentName(segment)), offset,
                    "a history chunk whose length or CRC does not match its index");
        }
        return new ByteSource(b, Format.FRAME_HEAD + Format.MIN_BODY - 1, length);
    }

    /** Deletes a segment (retention): its readers are closed; a read of it then fails. */
    void delete(long segment) throws IOException {
        sizes.remove(segment);
        DataFile f = readers.remove(segment);
        if (f != null) {
            f.close();
        }
        files.delete(dir.resolve(HistoryFormat.segmentName(segment)));
        files.syncDirectory(dir);
    }

    /** Closes every reader. */
    void closeReaders() {
        for (DataFile f : new ArrayList<>(readers.values())) {
            try {
                f.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        readers.clear();
    }

    private static void writeFully(DataFile f, ByteBuffer b, long position) throws IOException {
        long at = position;
        while (b.hasRemaining()) {
            at += f.write(b, at);
        }
    }

    private static void readFully(DataFile f, ByteBuffer b, long position) throws IOException {
        while (b.hasRemaining()) {
            if (f.read(b, position + b.position()) < 0) {
                throw new IOException("a history segment ends at " + (position + b.position()));
            }
        }
    }
}
