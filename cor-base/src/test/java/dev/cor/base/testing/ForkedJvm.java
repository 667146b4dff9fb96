package dev.cor.base.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a main class of the test classpath in a fresh JVM with the flags given, and collects its
 * output (cor-base's test-jar: every module's tests may fork). Any test thread.
 */
public final class ForkedJvm {
    public final int exitCode;
    public final String stdout;
    public final String stderr;

    private ForkedJvm(int exitCode, String stdout, String stderr) {
        this.exitCode = exitCode;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    public static ForkedJvm run(Class<?> main, List<String> jvmFlags) throws IOException, InterruptedException {
        return run(List.of(), main, jvmFlags);
    }

    /**
     * As {@link #run(Class, List)}, the java command placed after {@code wrapper}: e.g.
     * {@code bash -c 'ulimit -n 256 && exec "$0" "$@"'} to run it under a lower limit.
     */
    public static ForkedJvm run(List<String> wrapper, Class<?> main, List<String> jvmFlags) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(wrapper);
        cmd.add(java);
        cmd.addAll(jvmFlags);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        Process p = new ProcessBuilder(cmd).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread o = Thread.ofPlatform().start(() -> copy(p, true, out));
        Thread e = Thread.ofPlatform().start(() -> copy(p, false, err));
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("forked JVM " + main.getSimpleName() + " did not end in 60 s");
        }
        o.join();
        e.join();
        return new ForkedJvm(p.exitValue(), out.toString(), err.toString());
    }

    private static void copy(Process p, boolean stdout, ByteArrayOutputStream to) {
        try {
            (stdout ? p.getInputStream() : p.getErrorStream()).transferTo(to);
        } catch (IOException ignored) {
            // the process ended
        }
    }

    @Override
    public String toString() {
        return "exit " + exitCode + "\n--- stdout\n" + stdout + "\n--- stderr\n" + stderr;
    }
}
