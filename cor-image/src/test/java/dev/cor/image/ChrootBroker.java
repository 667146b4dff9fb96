package dev.cor.image;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An image's entrypoint and cmd started from its unpacked root, as a container runtime would
 * start them, with what this machine has: {@code chroot --userspec} as the image's user, the
 * image's environment (and nothing of the test's), {@code /proc} mounted, a {@code /dev} of its
 * own (a small tmpfs with null, zero, full, random and urandom - not the host's), and a host
 * directory bound on the image's volume. {@link #close} stops the process (SIGTERM, then KILL)
 * and unmounts what it mounted, on every path; a mount left by a killed test is harmless to
 * remove with the directory (the tmpfs and proc are its own, the volume is the test's).
 * <p>
 * chroot(1) starts the process in {@code /}, not the image's WorkingDir: the cmd names its data
 * directory by an absolute path, so nothing depends on it. One test thread.
 */
final class ChrootBroker implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    final Process process;
    final int port;
    private final Path log;
    private final Deque<Path> mounts;

    private ChrootBroker(Process process, int port, Path log, Deque<Path> mounts) {
        this.process = process;
        this.port = port;
        this.log = log;
        this.mounts = mounts;
    }

    /**
     * Starts {@code image}'s entrypoint + cmd in {@code root} with {@code volume} bound on its one
     * volume, {@code env} added to the image's environment (as {@code docker run -e}), its output
     * in {@code log}. Its port is {@code port}, given as {@code COR_PORT} in its environment: the
     * cmd names none, so the variable does not change the command a runtime would run, only the
     * port, which on a shared machine cannot be the image's 1026.
     */
    static ChrootBroker start(OciImage image, Path root, Path volume, int port, Map<String, String> env, Path log)
            throws Exception {
        List<String> volumes = new ArrayList<>();
        image.runConfig().path("Volumes").fieldNames().forEachRemaining(volumes::add);
        if (volumes.size() != 1) {
            throw new AssertionError("one volume in the image: " + volumes);
        }
        Deque<Path> mounts = new ArrayDeque<>();
        try {
            mount(mounts, root.resolve("proc"), "-t", "proc", "proc");
            Path dev = root.resolve("dev");
            mount(mounts, dev, "-t", "tmpfs", "-o", "mode=0755,nosuid,size=64k", "cor-dev");
            for (String[] node : new String[][] {{"null", "3"}, {"zero", "5"}, {"full", "7"}, {"random", "8"}, {"urandom", "9"}}) {
                Commands.run("mknod", "-m", "0666", dev.resolve(node[0]).toString(), "c", "1", node[1]);
            }
            mount(mounts, root.resolve(volumes.get(0).substring(1)), "--bind", volume.toString());

            List<String> cmd = new ArrayList<>(List.of("chroot", "--userspec=" + image.runConfig().path("User").asText(),
                    root.toString()));
            cmd.addAll(image.strings("Entrypoint"));
            cmd.addAll(image.strings("Cmd"));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
            pb.environment().clear();
            for (String e : image.strings("Env")) {
                int eq = e.indexOf('=');
                pb.environment().put(e.substring(0, eq), e.substring(eq + 1));
            }
            pb.environment().putAll(env);
            pb.environment().put("COR_PORT", String.valueOf(port));
            return new ChrootBroker(pb.start(), port, log, mounts);
        } catch (Throwable t) {
            unmount(mounts, t);
            throw t;
        }
    }

    private static void mount(Deque<Path> mounts, Path at, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("mount"));
        cmd.addAll(List.of(args));
        cmd.add(at.toString());
        Commands.run(cmd);
        mounts.push(at);
    }

    /** Unmounts in reverse order, every one tried; the first failure is thrown (added to {@code pending} if any). */
    private static void unmount(Deque<Path> mounts, Throwable pending) throws Exception {
        Exception first = null;
        while (!mounts.isEmpty()) {
            Path m = mounts.pop();
            try {
                Commands.run("umount", m.toString());
            } catch (AssertionError | Exception busy) {
                try {
                    Commands.run("umount", "--lazy", m.toString()); // still detached, once its last user is gone
                } catch (AssertionError | Exception e) {
                    if (first == null) {
                        first = new IOException("cannot unmount " + m + ": " + e.getMessage());
                    }
                }
            }
        }
        if (first != null) {
            if (pending != null) {
                pending.addSuppressed(first);
            } else {
                throw first;
            }
        }
    }

    /** Polls {@code GET /health/ready} until it answers 200; fails with the broker's output if it ends or the deadline passes. */
    void awaitReady(Duration deadline) throws Exception {
        long end = System.nanoTime() + deadline.toNanos();
        while (System.nanoTime() < end) {
            if (!process.isAlive()) {
                throw new AssertionError("the broker ended (exit " + process.exitValue() + ") before it was ready: " + output());
            }
            try {
                if (send("GET", "/health/ready", null).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new AssertionError("/health/ready not 200 within " + deadline + ": " + output());
    }

    HttpResponse<String> send(String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The process's real user and group ids, from {@code /proc/PID/status}. */
    String uidGid() throws IOException {
        String uid = null;
        String gid = null;
        for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(process.pid()), "status"))) {
            if (line.startsWith("Uid:")) {
                uid = line.split("\\s+")[1];
            } else if (line.startsWith("Gid:")) {
                gid = line.split("\\s+")[1];
            }
        }
        return uid + ":" + gid;
    }

    /** SIGTERM, then its exit status (it must end within 60 s). */
    int stop() throws Exception {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            throw new AssertionError("the broker did not end within 60 s of SIGTERM: " + output());
        }
        return process.exitValue();
    }

    String output() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no output: " + e + ")";
        }
    }

    @Override
    public void close() throws Exception {
        try {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                }
            }
        } finally {
            unmount(mounts, null);
        }
    }
}
