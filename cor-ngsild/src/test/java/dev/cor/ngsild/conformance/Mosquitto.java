package dev.cor.ngsild.conformance;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A real mosquitto broker (Debian's package) on a free port of 127.0.0.1, started for a test and
 * stopped after it (public: the launcher's soak starts one too, through this module's test jar).
 * {@code .ci/run} installs the package when it is missing; a test that finds no binary fails,
 * naming it.
 */
public final class Mosquitto implements AutoCloseable {
    private static final String[] BINARIES = {"/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"};

    private final Process process;
    private final int port;
    private final Path dir;

    private Mosquitto(Process process, int port, Path dir) {
        this.process = process;
        this.port = port;
        this.dir = dir;
    }

    public static Mosquitto start() {
        String binary = null;
        for (String b : BINARIES) {
            if (Files.isExecutable(Path.of(b))) {
                binary = b;
            }
        }
        if (binary == null) {
            throw new AssertionError("no mosquitto binary (apt-get install -y mosquitto; .ci/run installs it)");
        }
        try {
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
            Path dir = Files.createTempDirectory("cor-mosquitto");
            Path conf = dir.resolve("mosquitto.conf");
            Files.writeString(conf, "listener " + port + " 127.0.0.1\nallow_anonymous true\npersistence false\n");
            Process p = new ProcessBuilder(binary, "-c", conf.toString()).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("mosquitto.log").toFile()).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (true) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                    return new Mosquitto(p, port, dir);
                } catch (IOException e) {
                    if (!p.isAlive() || System.nanoTime() > deadline) {
                        p.destroyForcibly();
                        throw new AssertionError("mosquitto did not listen on " + port + ": "
                                + Files.readString(dir.resolve("mosquitto.log")));
                    }
                    Thread.sleep(20); // waiting for a process to listen: no event to wait on
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public int port() {
        return port;
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a temporary directory left behind is no failure
        }
    }
}
