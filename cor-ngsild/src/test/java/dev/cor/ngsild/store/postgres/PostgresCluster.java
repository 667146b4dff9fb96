package dev.cor.ngsild.store.postgres;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway PostgreSQL cluster for a test: {@code initdb} into a directory of its own, the
 * server on a free port of 127.0.0.1 (trust authentication, user {@code postgres}), stopped and
 * its files left to the test's temporary directory. The binaries are the machine's (PostgreSQL 15
 * or newer, from its packages: {@code ./cor test} installs them when missing); run as root, the
 * cluster runs as the user {@code postgres}, as PostgreSQL demands.
 */
public final class PostgresCluster implements AutoCloseable {
    private final Path dir;
    private final int port;
    private final List<String> command;
    private volatile Process server;

    private PostgresCluster(Path dir, int port, List<String> command, Process server) {
        this.dir = dir;
        this.port = port;
        this.command = command;
        this.server = server;
    }

    /** Makes and starts a cluster under {@code parent} (a test's temporary directory). */
    public static PostgresCluster start(Path parent) throws IOException, InterruptedException {
        Path bin = binaries();
        boolean root = "root".equals(System.getProperty("user.name"));
        Path dir = parent.resolve("pg");
        Files.createDirectories(dir);
        if (root) {
            for (Path p = parent; p != null && !p.equals(p.getRoot()); p = p.getParent()) {
                if (Files.getOwner(p).getName().equals("root") && !Files.getPosixFilePermissions(p).contains(
                        java.nio.file.attribute.PosixFilePermission.OTHERS_EXECUTE)) {
                    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx--x--x"));
                }
            }
            run(List.of("chown", "postgres:", dir.toString()));
        }
        List<String> initdb = new ArrayList<>(asUser(root, "runuser"));
        initdb.addAll(List.of(bin.resolve("initdb").toString(), "-D", dir.toString(), "-U", "postgres", "--auth=trust",
                "-E", "UTF8", "--no-sync"));
        run(initdb);
        int port = freePort();
        List<String> postgres = new ArrayList<>(asUser(root, "setpriv"));
        postgres.addAll(List.of(bin.resolve("postgres").toString(), "-D", dir.toString(), "-p", Integer.toString(port), "-k",
                dir.toString(), "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", "-c", "fsync=off"));
        PostgresCluster c = new PostgresCluster(dir, port, List.copyOf(postgres), null);
        c.launch();
        return c;
    }

    /** Starts the server on the cluster's directory and port, and waits until it accepts connections. */
    private void launch() throws IOException, InterruptedException {
        Files.deleteIfExists(dir.resolve("server.log"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile())
                .start();
        server = p;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!accepts()) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                close();
                throw new IOException("PostgreSQL did not start: " + Files.readString(dir.resolve("server.log")));
            }
            Thread.sleep(50);
        }
    }

    /** Stops the server (a fast shutdown: every session ended) and starts it again on the same port and data. */
    public void restart() throws IOException, InterruptedException {
        close();
        launch();
    }

    /** Stops the server; {@link #start()} starts it again. */
    public void stop() {
        close();
    }

    /** Starts the server again after {@link #stop()}. */
    public void start() throws IOException, InterruptedException {
        launch();
    }

    /** Makes a database of the cluster; returns its libpq URI (user postgres, no password). */
    public String createDatabase(String name) throws IOException, InterruptedException {
        if (!name.matches("[a-z][a-z0-9_]*")) {
            throw new IllegalArgumentException("a database name of lower-case letters, digits and _: " + name);
        }
        Path bin = binaries();
        run(List.of(bin.resolve("psql").toString(), "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", "postgres", "-qc",
                "CREATE DATABASE " + name, "postgres"));
        return "postgresql://postgres@127.0.0.1:" + port + "/" + name;
    }

    /** Whether the server answers a connection (its startup done: the log says so). */
    private boolean accepts() throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        } catch (IOException e) {
            return false;
        }
        Path log = dir.resolve("server.log");
        return Files.exists(log) && Files.readString(log).contains("ready to accept connections");
    }

    private static List<String> asUser(boolean root, String how) {
        if (!root) {
            return List.of();
        }
        return how.equals("runuser") ? List.of("runuser", "-u", "postgres", "--")
                : List.of("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups");
    }

    /** The directory of initdb and postgres: on the PATH, else the newest under /usr/lib/postgresql. */
    static Path binaries() throws IOException {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path p = Path.of(d.isEmpty() ? "." : d, "initdb");
            if (Files.isExecutable(p)) {
                return p.toRealPath().getParent();
            }
        }
        Path lib = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(lib)) {
            try (Stream<Path> versions = Files.list(lib)) {
                var newest = versions.filter(v -> Files.isExecutable(v.resolve("bin/initdb")))
                        .max(Comparator.comparingInt(v -> Integer.parseInt(v.getFileName().toString().replaceAll("\\D", "0"))));
                if (newest.isPresent()) {
                    return newest.get().resolve("bin");
                }
            }
        }
        throw new IOException("no PostgreSQL found (initdb on the PATH or under /usr/lib/postgresql): ./cor test installs "
                + "postgresql-15 when it is missing");
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + out);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    public int port() {
        return port;
    }

    /** The JDBC URL of database {@code postgres} as user {@code postgres}, through {@link YieldingSocketFactory}. */
    String url() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres&sslmode=disable&socketFactory="
                + YieldingSocketFactory.class.getName();
    }

    /** Stops the server (a fast shutdown: SIGINT), and kills it if it has not gone within 10 s. */
    @Override
    public void close() {
        Process server = this.server;
        if (server == null) {
            return;
        }
        try {
            if (server.isAlive()) {
                try {
                    new ProcessBuilder("kill", "-INT", Long.toString(server.pid())).start().waitFor(5, TimeUnit.SECONDS);
                } catch (IOException e) {
                    server.destroy();
                }
                if (!server.waitFor(10, TimeUnit.SECONDS)) {
                    server.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            }
        } catch (InterruptedException e) {
            server.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
