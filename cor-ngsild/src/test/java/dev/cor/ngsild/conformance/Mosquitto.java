package dev.cor.ngsild.conformance;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

import com.fasterxml.jackson.databind.JsonNode;

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
    /** The TLS a subscriber of a TLS listener connects with, or {@code null} for plain MQTT. */
    private final javax.net.ssl.SSLContext tls;

    private Mosquitto(Process process, int port, Path dir, javax.net.ssl.SSLContext tls) {
        this.process = process;
        this.port = port;
        this.dir = dir;
        this.tls = tls;
    }

    public static Mosquitto start() {
        return start(freePort());
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A broker whose one listener speaks MQTT over TLS: {@code key} and {@code chain} (PEM) its
     * certificate, {@code ca} (PEM) the CA it names; its own subscribers ({@link #listen}) trust
     * {@code clientTls}.
     */
    public static Mosquitto startTls(Path ca, Path chain, Path key, javax.net.ssl.SSLContext clientTls) {
        return start(freePort(), new Path[] {ca, chain, key}, clientTls);
    }

    /** On {@code port} of 127.0.0.1: where something else listened before (a test's dead broker). */
    static Mosquitto start(int port) {
        return start(port, null, null);
    }

    /** {@code tlsFiles}: the CA, chain and key of a TLS listener, or {@code null}. */
    private static Mosquitto start(int port, Path[] tlsFiles, javax.net.ssl.SSLContext tls) {
        String binary = null;
        for (String b : BINARIES) {
            if (Files.isExecutable(Path.of(b))) {
                binary = b;
            }
        }
        if (binary == null) {
            throw new AssertionError("no mosquitto binary (apt-get install -y mosquitto; ./cor test installs it)");
        }
        try {
            Path dir = Files.createTempDirectory("cor-mosquitto");
            Path conf = dir.resolve("mosquitto.conf");
            String listenerSettings = tlsFiles == null ? "" : tlsSettings(dir, tlsFiles);
            Files.writeString(conf, "listener " + port + " 127.0.0.1\n" + listenerSettings
                    + "allow_anonymous true\npersistence false\n");
            Process p = new ProcessBuilder(binary, "-c", conf.toString()).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("mosquitto.log").toFile()).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (true) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                    return new Mosquitto(p, port, dir, tls);
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

    /**
     * The TLS files copied where mosquitto reads them: started as root, it reads them after it
     * has become its own user, which a test's private temporary directory keeps out.
     */
    private static String tlsSettings(Path dir, Path[] files) throws IOException {
        var readable = java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--");
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        String[] names = {"cafile", "certfile", "keyfile"};
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < names.length; i++) {
            Path copy = Files.copy(files[i], dir.resolve(names[i] + ".pem"));
            Files.setPosixFilePermissions(copy, readable);
            out.append(names[i]).append(' ').append(copy).append('\n');
        }
        return out.toString();
    }

    public int port() {
        return port;
    }

    /** A subscriber to {@code topic} on this broker (QoS 1); each message's payload, parsed, lands in {@code into}. */
    public MqttClient listen(String topic, LinkedBlockingQueue<JsonNode> into) throws MqttException {
        MqttClient c = new MqttClient((tls == null ? "tcp" : "ssl") + "://127.0.0.1:" + port,
                "test-" + topic.hashCode() + System.nanoTime(), new MemoryPersistence());
        MqttConnectOptions o = new MqttConnectOptions();
        if (tls != null) {
            o.setSocketFactory(tls.getSocketFactory());
        }
        o.setMqttVersion(MqttConnectOptions.MQTT_VERSION_3_1_1);
        o.setConnectionTimeout(5);
        c.connect(o);
        c.subscribe(topic, 1, (t, m) -> into.add(Json.parse(new String(m.getPayload(), StandardCharsets.UTF_8))));
        return c;
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
