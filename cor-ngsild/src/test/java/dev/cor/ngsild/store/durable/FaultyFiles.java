package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The real file system with a disk that can fail on demand: full (a write puts half its bytes
 * down, then fails with ENOSPC's message), read-only (no file opens for writing, no write
 * succeeds) or an I/O error on {@code force} (EIO) - and a slow {@code force}. It counts writes
 * and forces and remembers the threads that made them. For the store's tests and the launcher's
 * (through cor-ngsild's test jar): the layer under it, not a stand-in for any of its own code.
 */
public final class FaultyFiles implements DataFiles {
    /** How the disk fails, from now on. */
    public enum Fault { NONE, FULL, READ_ONLY, IO_ERROR }

    private final DataFiles real = DataFiles.system();
    /** Set by the test, read by every file call. */
    public volatile Fault fault = Fault.NONE;
    volatile long forceDelayMs;
    final AtomicLong writes = new AtomicLong();
    final AtomicLong forces = new AtomicLong();
    /** Forces begun (a slow one is counted here before it ends). */
    final AtomicLong forcesBegun = new AtomicLong();
    final AtomicLong failedCalls = new AtomicLong();
    final Set<String> ioThreads = ConcurrentHashMap.newKeySet();

    @Override
    public DataFile open(Path file, Mode mode) throws IOException {
        if (mode != Mode.READ && fault == Fault.READ_ONLY) {
            failedCalls.incrementAndGet();
            throw new FileSystemException(file.toString(), null, "Read-only file system");
        }
        DataFile f = real.open(file, mode);
        return new DataFile() {
            @Override
            public int read(ByteBuffer dst, long position) throws IOException {
                return f.read(dst, position);
            }

            @Override
            public int write(ByteBuffer src, long position) throws IOException {
                ioThreads.add(Thread.currentThread().getName());
                writes.incrementAndGet();
                Fault x = fault;
                if (x == Fault.FULL) {
                    failedCalls.incrementAndGet();
                    // a full disk takes what fits, then refuses: a torn append
                    int half = src.remaining() / 2;
                    if (half > 0) {
                        ByteBuffer part = src.duplicate();
                        part.limit(part.position() + half);
                        f.write(part, position);
                    }
                    throw new IOException("No space left on device");
                }
                if (x == Fault.READ_ONLY) {
                    failedCalls.incrementAndGet();
                    throw new IOException("Read-only file system");
                }
                return f.write(src, position);
            }

            @Override
            public void force() throws IOException {
                ioThreads.add(Thread.currentThread().getName());
                forcesBegun.incrementAndGet();
                long delay = forceDelayMs;
                if (delay > 0) {
                    try {
                        Thread.sleep(delay);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IOException("interrupted");
                    }
                }
                if (fault == Fault.IO_ERROR) {
                    failedCalls.incrementAndGet();
                    throw new IOException("Input/output error");
                }
                forces.incrementAndGet();
                f.force();
            }

            @Override
            public long size() throws IOException {
                return f.size();
            }

            @Override
            public void truncate(long size) throws IOException {
                f.truncate(size);
            }

            @Override
            public void close() throws IOException {
                f.close();
            }
        };
    }

    @Override
    public List<Path> list(Path dir) throws IOException {
        return real.list(dir);
    }

    @Override
    public void delete(Path file) throws IOException {
        if (fault == Fault.READ_ONLY) {
            failedCalls.incrementAndGet();
            throw new FileSystemException(file.toString(), null, "Read-only file system");
        }
        real.delete(file);
    }

    @Override
    public void rename(Path from, Path to) throws IOException {
        if (fault == Fault.READ_ONLY) {
            failedCalls.incrementAndGet();
            throw new FileSystemException(from.toString(), null, "Read-only file system");
        }
        real.rename(from, to);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        if (fault == Fault.IO_ERROR) {
            failedCalls.incrementAndGet();
            throw new IOException("Input/output error");
        }
        real.syncDirectory(dir);
    }
}
