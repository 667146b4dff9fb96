package dev.cor.image;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A system command run to its end (tar, mount, umount...) within a deadline; its output, or an AssertionError with it. */
final class Commands {
    private static final long DEADLINE_SECONDS = 300;

    private Commands() {
    }

    /** Runs {@code command}; its stdout when it exits 0, else an AssertionError with its stderr. */
    static String run(String... command) throws IOException, InterruptedException {
        Path out = Files.createTempFile("cor-image-cmd", ".out");
        Path err = Files.createTempFile("cor-image-cmd", ".err");
        try {
            Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(DEADLINE_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError(String.join(" ", command) + ": not done in " + DEADLINE_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                throw new AssertionError(String.join(" ", command) + ": exit " + p.exitValue() + ": "
                        + Files.readString(err, StandardCharsets.UTF_8));
            }
            return Files.readString(out, StandardCharsets.UTF_8);
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    static String run(List<String> command) throws IOException, InterruptedException {
        return run(command.toArray(String[]::new));
    }
}
