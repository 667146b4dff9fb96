package dev.cor.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.cor.ngsild.KeepAliveHttp;

/**
 * The shaded jar run as its own process - {@code java -jar cor-server.jar} with the JVM of the
 * test, no other flag - its stdout and stderr written to files, read as they grow. (Not pipes: a
 * pipe's reader loses the last lines when the JDK drains and closes it at the process's exit.)
 * It runs in a directory of its own, deleted with it, so that its default data directory
 * ({@code ./cor-data}) is its own too - or in one the test gives, to start it again on the same
 * data. The jar is the one the build just packaged ({@code cor.server.jar}, set by the pom for
 * the tests that run after {@code package}).
 */
final class ServerProcess implements AutoCloseable {
    private static final Duration START_DEADLINE = Duration.ofSeconds(60);

    final Process process;
    final int port;
    private final Path dir;
    /** http, or https once {@link #startHttps} gave a trust. */
    private String scheme = "http";
    /** The JDK's client once {@link #startHttps} gave a trust; plain http goes through {@link #PLAIN}. */
    private HttpClient tlsClient;

    private ServerProcess(Process process, int port, Path dir) {
        this.process = process;
        this.port = port;
        this.dir = dir;
    }

    private static ServerProcess launch(List<String> args, int port, Path workDir) throws IOException {
        return launch(command(), java.util.Map.of(), args, port, workDir);
    }

    private static ServerProcess launch(List<String> launcher, java.util.Map<String, String> env, List<String> args, int port,
            Path workDir) throws IOException {
        return launch(launcher, env, args, port, workDir, true);
    }

    /** With {@code stdoutToFile} false, stdout is a pipe that {@link #stdoutPipe()} gives and nobody reads unless the test does. */
    private static ServerProcess launch(List<String> launcher, java.util.Map<String, String> env, List<String> args, int port,
            Path workDir, boolean stdoutToFile) throws IOException {
        Path dir = Files.createTempDirectory("cor-server-test");
        List<String> cmd = new ArrayList<>(launcher);
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).directory((workDir != null ? workDir : dir).toFile())
                .redirectOutput(stdoutToFile ? ProcessBuilder.Redirect.to(dir.resolve("stdout").toFile()) : ProcessBuilder.Redirect.PIPE)
                .redirectError(dir.resolve("stderr").toFile());
        pb.environment().putAll(env);
        return new ServerProcess(pb.start(), port, dir);
    }

    /**
     * Starts the launcher on 127.0.0.1, a free port and {@code --drainMs 0} with {@code flags} added
     * (a flag given again there wins), and returns once {@code GET /health} answers 200; fails (with
     * the process's output) past the deadline.
     */
    static ServerProcess start(String... flags) throws Exception {
        return start(null, flags);
    }

    /** {@link #start(String...)} in {@code workDir} (its {@code ./cor-data} outlives the process). */
    static ServerProcess start(Path workDir, String... flags) throws Exception {
        return start(command(), java.util.Map.of(), workDir, flags);
    }

    /**
     * {@link #start(Path, String...)} with another command in front of the flags than
     * {@code java -jar cor-server.jar} (JVM options, or the {@code ./cor} wrapper, which execs
     * the JVM: the process is still the broker's), and {@code env} added to the environment.
     */
    static ServerProcess start(List<String> launcher, java.util.Map<String, String> env, Path workDir, String... flags)
            throws Exception {
        return start(launcher, env, workDir, null, flags);
    }

    /**
     * {@link #start(List, java.util.Map, Path, String...)} for a broker on HTTPS (its flags give
     * {@code --https}): the health is awaited, and {@link #send} sent, over TLS trusting {@code trust}.
     */
    static ServerProcess startHttps(List<String> launcher, javax.net.ssl.SSLContext trust, String... flags) throws Exception {
        return start(launcher, java.util.Map.of(), null, trust, flags);
    }

    /**
     * {@link #start(String...)} with stdout a pipe that nobody reads ({@link #stdoutPipe()} is
     * there to read it): what the process writes there fills the pipe, then its writes block.
     */
    static ServerProcess startWithStdoutUnread(String... flags) throws Exception {
        return start(command(), java.util.Map.of(), null, null, false, flags);
    }

    private static ServerProcess start(List<String> launcher, java.util.Map<String, String> env, Path workDir,
            javax.net.ssl.SSLContext trust, String... flags) throws Exception {
        return start(launcher, env, workDir, trust, true, flags);
    }

    private static ServerProcess start(List<String> launcher, java.util.Map<String, String> env, Path workDir,
            javax.net.ssl.SSLContext trust, boolean stdoutToFile, String... flags) throws Exception {
        int port = freePort();
        // No drain unless the test asks for one: a SIGTERM stops at once, as the stop tests expect.
        List<String> args = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", String.valueOf(port), "--drainMs", "0"));
        args.addAll(List.of(flags));
        ServerProcess s = launch(launcher, env, args, port, workDir, stdoutToFile);
        if (trust != null) {
            s.scheme = "https";
            s.tlsClient = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(trust)
                    .connectTimeout(Duration.ofSeconds(10)).build();
        }
        try {
            s.awaitHealthy();
            return s;
        } catch (Throwable t) {
            s.close();
            throw t;
        }
    }

    /** Runs the launcher with {@code args} to its end (it must end within 60 s). */
    static ServerProcess runToEnd(String... args) throws Exception {
        return runToEnd(null, args);
    }

    /** {@link #runToEnd(String...)} in {@code workDir}. */
    static ServerProcess runToEnd(Path workDir, String... args) throws Exception {
        ServerProcess s = launch(List.of(args), -1, workDir);
        if (!s.process.waitFor(60, TimeUnit.SECONDS)) {
            s.close();
            throw new AssertionError("cor-server " + String.join(" ", args) + " did not end within 60 s");
        }
        return s;
    }

    /** {@code java -jar cor-server.jar}: this test's JVM, the jar the build just packaged. */
    static List<String> command() {
        return List.of(java(), "-jar", jar());
    }

    static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    static String jar() {
        String jar = System.getProperty("cor.server.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new AssertionError("no shaded jar at cor.server.jar=" + jar + " (these tests run after package)");
        }
        return jar;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private void awaitHealthy() throws Exception {
        long deadline = System.nanoTime() + START_DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new AssertionError("cor-server ended before it was healthy: " + this);
            }
            try {
                HttpResponse<String> r = exchange(HttpRequest.newBuilder(uri("/health")).timeout(Duration.ofSeconds(2)).build());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(50);
        }
        throw new AssertionError("cor-server not healthy within " + START_DEADLINE + ": " + this);
    }

    /**
     * Plain http goes through {@link KeepAliveHttp}: the JDK client can lose the answer to a write
     * on a connection it just took from its pool (see there).
     */
    private static final KeepAliveHttp PLAIN = new KeepAliveHttp();

    /** One request to this broker, through the client its scheme needs. */
    HttpResponse<String> exchange(HttpRequest request) throws IOException, InterruptedException {
        return tlsClient != null ? tlsClient.send(request, HttpResponse.BodyHandlers.ofString()) : PLAIN.sendString(request);
    }

    /**
     * One request to this broker (HTTP/1.1, a 30 s deadline): {@code body}, if any, as
     * {@code application/json} unless {@code headers} (name, value, ...) give a Content-Type.
     */
    HttpResponse<String> send(String method, String path, String body, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        for (int i = 0; i < headers.length; i += 2) {
            b.setHeader(headers[i], headers[i + 1]);
        }
        return exchange(b.build());
    }

    /** Its {@code /metrics}, parsed (a 200 or the test fails). */
    PromText metrics() throws Exception {
        HttpResponse<String> r = send("GET", "/metrics", null);
        if (r.statusCode() != 200) {
            throw new AssertionError("/metrics answered " + r.statusCode() + ": " + r.body());
        }
        return PromText.parse(r.body());
    }

    URI uri(String path) {
        return URI.create(scheme + "://127.0.0.1:" + port + path);
    }

    /** Waits until stdout holds {@code text}; fails past {@code timeout}. */
    void awaitStdout(String text, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!stdout().contains(text)) {
            if (System.nanoTime() > deadline || (!process.isAlive() && !stdout().contains(text))) {
                throw new AssertionError("stdout never said '" + text + "': " + this);
            }
            Thread.sleep(10);
        }
    }

    /** The process's stdout when it is a pipe ({@link #startWithStdoutUnread}). */
    java.io.InputStream stdoutPipe() {
        return process.getInputStream();
    }

    /** What the process wrote to stdout so far (nothing when stdout is a pipe). */
    String stdout() {
        return read("stdout");
    }

    /** What the process wrote to stderr so far. */
    String stderr() {
        return read("stderr");
    }

    private String read(String name) {
        if (!Files.exists(dir.resolve(name))) {
            return "";
        }
        try {
            return Files.readString(dir.resolve(name), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Kills the process with SIGKILL (nothing of it runs after: no hook, no flush) and waits until it is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException, IOException {
        if (process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        try (var files = Files.walk(dir)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    @Override
    public String toString() {
        return (process.isAlive() ? "running" : "exit " + process.exitValue()) + "\n--- stdout\n" + stdout() + "\n--- stderr\n" + stderr();
    }
}
