package dev.cor.ngsild.store.durable;

import java.nio.file.Path;

/**
 * A data directory the store will not start on: a record damaged anywhere but at the tail of the
 * journal, a snapshot that does not read back whole, records missing, a file of another format
 * version. The message names the file and the byte offset; nothing is skipped or repaired.
 */
public final class DataDamagedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;
    private final long offset;

    DataDamagedException(Path file, long offset, String problem) {
        super(file + ": damaged at offset " + offset + ": " + problem);
        this.file = file;
        this.offset = offset;
    }

    /** The damaged file. */
    public Path file() {
        return file;
    }

    /** Where in it the damage begins (the start of the record, or 0 for the header). */
    public long offset() {
        return offset;
    }
}
