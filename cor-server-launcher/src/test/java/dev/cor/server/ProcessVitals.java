package dev.cor.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A running JVM measured from outside, as an operator would measure it, with nothing inside it
 * cooperating: its threads ({@code Threads:} of {@code /proc/PID/status}, and their names from
 * {@code /proc/PID/task/TID/comm}), its open file descriptors ({@code /proc/PID/fd}) and its heap
 * after a full GC ({@code jcmd PID GC.run}, then the used heap of {@code jcmd PID GC.heap_info};
 * the JVM's default collector, G1, runs a full collection on {@code GC.run}). Linux only.
 * <p>
 * The first {@code jcmd} starts the target's attach listener - one more thread and socket for the
 * rest of its life - so {@link #attach} runs one before anything is measured. Calls block (jcmd is
 * a process of its own, each with a deadline); one thread at a time.
 */
final class ProcessVitals {
    private static final long JCMD_SECONDS = 60;
    private static final Pattern USED = Pattern.compile("used (\\d+)K");
    /** A thread's kind: its name without the number that tells it from its siblings. */
    private static final Pattern NUMBERED = Pattern.compile("[-#_ ]?\\d+$");

    /** What one measurement found. {@code threadKinds}: threads by name, numbers stripped (sorted). */
    record Sample(int threads, int fds, long heapAfterGcBytes, Map<String, Integer> threadKinds) {
        long heapAfterGcMiB() {
            return heapAfterGcBytes >> 20;
        }
    }

    private final long pid;
    private final Path jcmd;

    private ProcessVitals(long pid, Path jcmd) {
        this.pid = pid;
        this.jcmd = jcmd;
    }

    /** Measures {@code pid} with the {@code jcmd} of this JDK, attached once already (see above). */
    static ProcessVitals attach(long pid) {
        ProcessVitals v = new ProcessVitals(pid, Path.of(System.getProperty("java.home"), "bin", "jcmd"));
        v.jcmd("VM.version");
        return v;
    }

    /** Threads, fds and the heap after a full GC, now. */
    Sample sample() {
        int threads = threads();
        int fds = fds();
        Map<String, Integer> kinds = threadKinds();
        return new Sample(threads, fds, heapAfterGc(), kinds);
    }

    /** Threads and fds only (no GC). */
    Sample cheapSample() {
        return new Sample(threads(), fds(), -1, threadKinds());
    }

    int threads() {
        for (String line : lines(Path.of("/proc", String.valueOf(pid), "status"))) {
            if (line.startsWith("Threads:")) {
                return Integer.parseInt(line.substring("Threads:".length()).trim());
            }
        }
        throw new AssertionError("no Threads: in /proc/" + pid + "/status");
    }

    int fds() {
        try (Stream<Path> fds = Files.list(Path.of("/proc", String.valueOf(pid), "fd"))) {
            return (int) fds.count();
        } catch (IOException e) {
            throw new AssertionError("cannot list /proc/" + pid + "/fd (is the process alive?)", e);
        }
    }

    /** The threads by kind (the kernel keeps the first 15 bytes of each Java thread's name). */
    Map<String, Integer> threadKinds() {
        Map<String, Integer> kinds = new TreeMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", String.valueOf(pid), "task"))) {
            for (Path task : tasks.toList()) {
                String name;
                try {
                    name = Files.readString(task.resolve("comm"), StandardCharsets.UTF_8).strip();
                } catch (NoSuchFileException ended) {
                    continue; // the thread ended between the listing and the read
                }
                kinds.merge(NUMBERED.matcher(name).replaceFirst(""), 1, Integer::sum);
            }
        } catch (IOException e) {
            throw new AssertionError("cannot list /proc/" + pid + "/task", e);
        }
        return kinds;
    }

    /** The used heap right after a full GC, in bytes. */
    long heapAfterGc() {
        jcmd("GC.run");
        String info = jcmd("GC.heap_info");
        Matcher m = USED.matcher(info);
        if (!m.find()) {
            throw new AssertionError("no used heap in jcmd GC.heap_info:\n" + info);
        }
        return Long.parseLong(m.group(1)) * 1024;
    }

    /** The first {@code rows} rows of the live-object histogram (a full GC first): what fills the heap. */
    String classHistogram(int rows) {
        List<String> lines = jcmd("GC.class_histogram").lines().toList();
        return String.join("\n", lines.subList(0, Math.min(lines.size(), rows + 3)));
    }

    private String jcmd(String command) {
        Path out = null;
        try {
            // to a file, not a pipe: a jcmd that hangs must not hang the reader past the deadline
            out = Files.createTempFile("jcmd", ".txt");
            Process p = new ProcessBuilder(jcmd.toString(), String.valueOf(pid), command).redirectErrorStream(true)
                    .redirectOutput(out.toFile()).start();
            if (!p.waitFor(JCMD_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("jcmd " + pid + " " + command + " took more than " + JCMD_SECONDS + " s");
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new AssertionError("jcmd " + pid + " " + command + " exited " + p.exitValue() + ":\n" + text);
            }
            return text;
        } catch (IOException e) {
            throw new AssertionError("cannot run " + jcmd, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } finally {
            if (out != null) {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException e) {
                    // a temporary file left behind is no failure
                }
            }
        }
    }

    private static List<String> lines(Path p) {
        try {
            return Files.readAllLines(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError("cannot read " + p + " (is the process alive?)", e);
        }
    }
}
