package dev.cor.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * What one fsync costs on this disk: appends of {@code size} bytes to a file, each followed by
 * {@code FileChannel.force(true)} - what the journal does once per group commit - timed one by
 * one. Run as {@code java -jar benchmarks.jar fsyncCost DIR [count] [size]}.
 */
final class FsyncCost {
    private FsyncCost() {
    }

    static void run(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : ".");
        int count = args.length > 1 ? Integer.parseInt(args[1]) : 2_000;
        int size = args.length > 2 ? Integer.parseInt(args[2]) : 4_096;
        Path file = Files.createTempFile(dir, "fsync-cost", ".tmp");
        long[] nanos = new long[count];
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocateDirect(size);
            long pos = 0;
            for (int i = -200; i < count; i++) { // 200 to warm up
                b.clear();
                long t0 = System.nanoTime();
                while (b.hasRemaining()) {
                    pos += ch.write(b, pos);
                }
                ch.force(true);
                if (i >= 0) {
                    nanos[i] = System.nanoTime() - t0;
                }
            }
        } finally {
            Files.deleteIfExists(file);
        }
        Arrays.sort(nanos);
        double mean = Arrays.stream(nanos).average().orElse(0) / 1_000;
        System.out.printf("fsync of a %d-byte append in %s, %d times: mean %.0f us, p50 %d us, p99 %d us, max %d us%n",
                size, dir.toAbsolutePath(), count, mean, nanos[count / 2] / 1_000, nanos[count * 99 / 100] / 1_000,
                nanos[count - 1] / 1_000);
    }
}
