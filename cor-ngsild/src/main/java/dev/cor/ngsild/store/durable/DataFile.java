package dev.cor.ngsild.store.durable;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One open file of a data directory, as the store uses it: positional reads and writes, a
 * {@code force} that makes what was written durable, its size, a truncation. Used by one thread
 * at a time (the journal thread, the snapshot thread, the recovery).
 */
public interface DataFile extends Closeable {
    /** Reads into {@code dst} from {@code position}; -1 at the end. */
    int read(ByteBuffer dst, long position) throws IOException;

    /** Writes from {@code src} at {@code position}; may write less than all of it. */
    int write(ByteBuffer src, long position) throws IOException;

    /** Makes everything written durable (the file's data; its size too). */
    void force() throws IOException;

    long size() throws IOException;

    void truncate(long size) throws IOException;
}
