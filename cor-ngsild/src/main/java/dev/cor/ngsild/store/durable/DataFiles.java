package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The file layer under the durable store: every file the store opens, lists, renames or deletes,
 * and every directory it makes durable, goes through here - {@link #system()} on the real file
 * system, or a layer of the caller's (a test injects a full disk or an I/O error). Thread-safe.
 */
public interface DataFiles {
    /** How a file is opened. */
    enum Mode {
        /** An existing file, to read. */
        READ,
        /** An existing file, to read and write. */
        WRITE,
        /** A new file to write (an existing one is emptied). */
        CREATE
    }

    DataFile open(Path file, Mode mode) throws IOException;

    /** The files directly in {@code dir}. */
    List<Path> list(Path dir) throws IOException;

    /** Deletes the file if it exists. */
    void delete(Path file) throws IOException;

    /** Renames {@code from} to {@code to} atomically, replacing {@code to}. */
    void rename(Path from, Path to) throws IOException;

    /** Makes the directory's entries - files created, renamed, deleted - durable. */
    void syncDirectory(Path dir) throws IOException;

    /** The real file system, through {@link FileChannel}. */
    static DataFiles system() {
        return SystemFiles.INSTANCE;
    }

    /** {@link DataFiles#system()}. */
    final class SystemFiles implements DataFiles {
        static final SystemFiles INSTANCE = new SystemFiles();

        private SystemFiles() {
        }

        @Override
        public DataFile open(Path file, Mode mode) throws IOException {
            FileChannel ch = switch (mode) {
                case READ -> FileChannel.open(file, StandardOpenOption.READ);
                case WRITE -> FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
                case CREATE -> FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                        StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
            };
            return new ChannelFile(ch);
        }

        @Override
        public List<Path> list(Path dir) throws IOException {
            try (Stream<Path> s = Files.list(dir)) {
                return new ArrayList<>(s.toList());
            }
        }

        @Override
        public void delete(Path file) throws IOException {
            Files.deleteIfExists(file);
        }

        @Override
        public void rename(Path from, Path to) throws IOException {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }

        @Override
        public void syncDirectory(Path dir) throws IOException {
            // Linux makes a directory's entries durable with fsync on the directory opened for reading
            try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
                ch.force(true);
            }
        }
    }

    /** A {@link DataFile} on a {@link FileChannel}. */
    final class ChannelFile implements DataFile {
        private final FileChannel ch;

        ChannelFile(FileChannel ch) {
            this.ch = ch;
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return ch.read(dst, position);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            return ch.write(src, position);
        }

        @Override
        public void force() throws IOException {
            ch.force(true);
        }

        @Override
        public long size() throws IOException {
            return ch.size();
        }

        @Override
        public void truncate(long size) throws IOException {
            ch.truncate(size);
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }
}
