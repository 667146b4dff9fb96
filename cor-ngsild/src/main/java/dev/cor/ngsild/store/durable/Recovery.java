package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.zip.CRC32C;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * Reads a data directory back: the newest snapshot, then the journal records after it, each
 * applied in order. A record cut short or failing its CRC at the very end of the last segment,
 * with no good record after it, is a crash in the middle of an append: it is dropped (the file
 * truncated there, when repairing) and said in one line. Anything else - damage followed by good
 * records, a bad header, records missing, a snapshot that does not read back whole - is a
 * {@link DataDamagedException} naming the file and the offset. Used at start (repairing: the
 * torn tail truncated, files no longer needed deleted) and by {@code --check-data} (reading only).
 * One thread.
 */
final class Recovery {
    private static final System.Logger LOG = System.getLogger(Recovery.class.getName());

    /** What was read. */
    static final class Outcome {
        /** The last record the snapshot covers (0: no snapshot). */
        long snapshotSeq;
        Path snapshot;
        long snapshotEntities;
        long snapshotTenants;
        long snapshotContexts;
        long snapshotSubscriptions;
        long snapshotRegistrations;
        long snapshotCsourceSubscriptions;
        /** The last record read from the journal (0: none). */
        long journalSeq;
        /** Records applied from the journal (those after the snapshot). */
        long replayed;
        /** The last segment, where appending goes on, and where its good records end; null when a new one is needed. */
        Path lastSegment;
        long lastSegmentEnd;
        long lastSegmentFirstSeq;
        /** What a reader should know: the torn tail dropped, the files no longer needed. */
        final List<String> notes = new ArrayList<>();
        /** Segments whose records the snapshot covers entirely. */
        final List<Path> coveredSegments = new ArrayList<>();
        final List<Path> staleFiles = new ArrayList<>();
        final List<Path> segments = new ArrayList<>();

        /** The last record the state holds: where the journal goes on. */
        long lastSeq() {
            return Math.max(snapshotSeq, journalSeq);
        }
    }

    private final Path dir;
    private final DataFiles files;
    private final Format.Apply apply;
    private final boolean repair;
    private final CRC32C crc = new CRC32C();
    private final EntityCodec codec = new EntityCodec();

    Recovery(Path dir, DataFiles files, Format.Apply apply, boolean repair) {
        this.dir = dir;
        this.files = files;
        this.apply = apply;
        this.repair = repair;
    }

    Outcome run() throws IOException {
        Outcome out = new Outcome();
        TreeMap<Long, Path> snapshots = new TreeMap<>();
        TreeMap<Long, Path> segments = new TreeMap<>();
        for (Path p : files.list(dir)) {
            String name = p.getFileName().toString();
            long s = Format.number(p, Format.SNAPSHOT_PREFIX, Format.SNAPSHOT_SUFFIX);
            long j = Format.number(p, Format.JOURNAL_PREFIX, Format.JOURNAL_SUFFIX);
            if (s >= 0) {
                snapshots.put(s, p);
            } else if (j >= 0) {
                segments.put(j, p);
            } else if (name.endsWith(Format.TEMP_SUFFIX) && name.startsWith(Format.SNAPSHOT_PREFIX)) {
                out.staleFiles.add(p); // a snapshot that was being written
            }
        }
        if (!snapshots.isEmpty()) {
            var newest = snapshots.lastEntry();
            readSnapshot(newest.getValue(), newest.getKey(), out);
            for (Path older : snapshots.headMap(newest.getKey()).values()) {
                out.staleFiles.add(older);
            }
        }
        out.segments.addAll(segments.values());
        readJournal(segments, out);
        if (repair) {
            for (Path p : out.staleFiles) {
                files.delete(p);
            }
            for (Path p : out.coveredSegments) {
                files.delete(p);
            }
            if (!out.staleFiles.isEmpty() || !out.coveredSegments.isEmpty()) {
                files.syncDirectory(dir);
            }
        }
        return out;
    }

    private DataDamagedException damaged(Path file, long offset, String problem) {
        return new DataDamagedException(file, offset, problem);
    }

    // ---------------------------------------------------------------- the snapshot

    private void readSnapshot(Path file, long nameSeq, Outcome out) throws IOException {
        try (DataFile f = files.open(file, DataFiles.Mode.READ)) {
            Format.Header h;
            try {
                h = Format.readHeader(f, Format.SNAPSHOT_MAGIC, crc);
            } catch (ByteSource.Malformed e) {
                throw damaged(file, 0, e.getMessage());
            }
            if (h.seq() != nameSeq) {
                throw damaged(file, 0, "the header says it covers record " + h.seq() + ", its name says " + nameSeq);
            }
            FrameReader r = new FrameReader(f, Format.HEADER_BYTES);
            long ordinal = 0;
            long tenants = 0;
            long entities = 0;
            long contexts = 0;
            long subscriptions = 0;
            long registrations = 0;
            long csourceSubscriptions = 0;
            while (true) {
                long at = r.offset();
                int status = r.next();
                if (status == FrameReader.END) {
                    throw damaged(file, at, "the snapshot ends without its last record (it was cut short)");
                }
                if (status != FrameReader.FRAME) {
                    throw damaged(file, at, r.problem());
                }
                if (r.seq() != ++ordinal) {
                    throw damaged(file, at, "record " + r.seq() + " where record " + ordinal + " was expected");
                }
                int type = r.type();
                long[] end;
                try {
                    end = Format.readRecord(r.seq(), type, r.payload(), codec, apply);
                } catch (ByteSource.Malformed e) {
                    throw damaged(file, at, "a record of " + Format.typeName(type) + " that does not decode: " + e.getMessage());
                } catch (RuntimeException e) {
                    throw damaged(file, at, "a record of " + Format.typeName(type) + " that cannot be applied: " + e);
                }
                switch (type) {
                    case Format.TENANT -> tenants++;
                    case Format.ENTITY_PUT -> entities++;
                    case Format.CONTEXT_PUT -> contexts++;
                    case Format.SUBSCRIPTION_PUT -> subscriptions++;
                    case Format.REGISTRATION_PUT -> registrations++;
                    case Format.CSOURCE_SUBSCRIPTION_PUT -> csourceSubscriptions++;
                    case Format.SNAPSHOT_END -> { }
                    default -> throw damaged(file, at, "a snapshot holds no record of " + Format.typeName(type));
                }
                if (end != null) {
                    if (end[0] != tenants || end[1] != entities || end[2] != contexts || end[3] != subscriptions
                            || end[4] != registrations || end[5] != csourceSubscriptions) {
                        throw damaged(file, at, "its last record counts " + end[0] + " tenants, " + end[1] + " entities, "
                                + end[2] + " @contexts, " + end[3] + " subscriptions, " + end[4] + " registrations and "
                                + end[5] + " subscriptions to registrations, and it holds " + tenants + ", " + entities + ", "
                                + contexts + ", " + subscriptions + ", " + registrations + " and " + csourceSubscriptions);
                    }
                    if (r.offset() != r.size()) {
                        throw damaged(file, r.offset(), (r.size() - r.offset()) + " bytes after its last record");
                    }
                    break;
                }
            }
            out.snapshot = file;
            out.snapshotSeq = h.seq();
            out.snapshotTenants = tenants;
            out.snapshotEntities = entities;
            out.snapshotContexts = contexts;
            out.snapshotSubscriptions = subscriptions;
            out.snapshotRegistrations = registrations;
            out.snapshotCsourceSubscriptions = csourceSubscriptions;
        }
    }

    // ---------------------------------------------------------------- the journal

    private void readJournal(TreeMap<Long, Path> segments, Outcome out) throws IOException {
        long snapshotSeq = out.snapshotSeq;
        long prevLast = -1; // the last record of the previous segment, -1: none yet
        List<Path> list = new ArrayList<>(segments.values());
        for (int i = 0; i < list.size(); i++) {
            Path file = list.get(i);
            long first = Format.number(file, Format.JOURNAL_PREFIX, Format.JOURNAL_SUFFIX);
            boolean last = i == list.size() - 1;
            // every record after the snapshot must be there: a segment may begin past the end of
            // the one before it only where the snapshot covers what lies between
            long expectedFirst = prevLast >= 0 ? prevLast + 1 : 1;
            if (first > expectedFirst && first > snapshotSeq + 1) {
                throw damaged(file, 0, "records " + Math.max(expectedFirst, snapshotSeq + 1) + " to " + (first - 1)
                        + " are missing (a journal segment was lost?)");
            }
            if (prevLast >= 0 && first <= prevLast) {
                throw damaged(file, 0, "it begins with record " + first + ", and the segment before it ends at " + prevLast);
            }
            SegmentEnd end = readSegment(file, first, last, snapshotSeq, out);
            if (end == null) {
                out.coveredSegments.add(file); // torn while it was created: it never held a record
                continue;
            }
            prevLast = end.lastSeq;
            if (!last) {
                if (end.lastSeq <= snapshotSeq) {
                    out.coveredSegments.add(file);
                }
            } else if (snapshotSeq > 0 && end.lastSeq <= snapshotSeq) {
                // all of it is in the snapshot: appends go to a new segment that begins after it
                out.coveredSegments.add(file);
            } else {
                out.lastSegment = file;
                out.lastSegmentEnd = end.end;
                out.lastSegmentFirstSeq = first;
            }
        }
    }

    /** Where a segment's good records end: the last one's sequence number (first - 1: none) and the offset after it. */
    private record SegmentEnd(long lastSeq, long end) {
    }

    /** Reads one segment, applying its records after the snapshot; {@code null} when it was torn as it was created. */
    private SegmentEnd readSegment(Path file, long first, boolean last, long snapshotSeq, Outcome out) throws IOException {
        DataFiles.Mode mode = repair && last ? DataFiles.Mode.WRITE : DataFiles.Mode.READ;
        try (DataFile f = files.open(file, mode)) {
            long size = f.size();
            Format.Header h;
            try {
                h = Format.readHeader(f, Format.JOURNAL_MAGIC, crc);
            } catch (ByteSource.Malformed e) {
                if (last && size <= Format.HEADER_BYTES) {
                    // created, and the crash came before its header was whole: it never held a record
                    out.notes.add(file.getFileName() + ": a segment torn while it was created (" + size
                            + " bytes): " + (repair ? "deleted" : "the broker deletes it when it starts"));
                    if (repair) {
                        LOG.log(System.Logger.Level.WARNING, "cor-store: " + file + ": a segment torn while it was created ("
                                + size + " bytes, " + e.getMessage() + "): deleted");
                    }
                    return null;
                }
                throw damaged(file, 0, e.getMessage());
            }
            if (h.seq() != first) {
                throw damaged(file, 0, "the header says it begins with record " + h.seq() + ", its name says " + first);
            }
            FrameReader r = new FrameReader(f, Format.HEADER_BYTES);
            long expected = first;
            long end = Format.HEADER_BYTES;
            while (true) {
                long at = r.offset();
                int status = r.next();
                if (status == FrameReader.END) {
                    break;
                }
                if (status == FrameReader.FRAME && r.seq() != expected) {
                    throw damaged(file, at, "record " + r.seq() + " where record " + expected + " was expected");
                }
                if (status != FrameReader.FRAME) {
                    if (last && !r.validFrameAfter(at, expected - 1)) {
                        long dropped = r.size() - at;
                        String what = file.getFileName() + ": a torn record at offset " + at + " (" + r.problem()
                                + ", " + FrameReader.bytes(dropped) + " to the end)";
                        if (repair) {
                            f.truncate(at);
                            f.force();
                            LOG.log(System.Logger.Level.WARNING, "cor-store: " + what + ": truncated there - a crash in the"
                                    + " middle of an append, of a write that was not acknowledged");
                            out.notes.add(what + ": truncated");
                        } else {
                            out.notes.add(what + ": the broker truncates it there when it starts");
                        }
                        end = at;
                        break;
                    }
                    throw damaged(file, at, r.problem() + (last ? ", with good records after it" : "") + " (record "
                            + expected + " was expected)");
                }
                if (r.seq() > snapshotSeq) {
                    int type = r.type();
                    try {
                        Format.readRecord(r.seq(), type, r.payload(), codec, apply);
                    } catch (ByteSource.Malformed e) {
                        throw damaged(file, at, "a record of " + Format.typeName(type) + " that does not decode: " + e.getMessage());
                    } catch (RuntimeException e) {
                        throw damaged(file, at, "a record of " + Format.typeName(type) + " that cannot be applied: " + e);
                    }
                    if (type == Format.SNAPSHOT_END) {
                        throw damaged(file, at, "a journal holds no record of " + Format.typeName(type));
                    }
                    out.replayed++;
                }
                out.journalSeq = r.seq();
                expected++;
                end = r.offset();
            }
            return new SegmentEnd(expected - 1, end);
        }
    }
}
