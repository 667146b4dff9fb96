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

    private Mosquitto(Process process, int port, Path dir) {
        this.process = process;
        this.port = port;
        this.dir = dir;
    }

    public static Mosquitto start() {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return start(port);
    }

    /** On {@code port} of 127.0.0.1: where something else listened before (a test's dead broker). */
    static Mosquitto start(int port) {
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

    /** A subscriber to {@code topic} on this broker (QoS 1); each message's payload, parsed, lands in {@code into}. */
    MqttClient listen(String topic, LinkedBlockingQueue<JsonNode> into) throws MqttException {
        MqttClient c = new MqttClient("tcp://127.0.0.1:" + port, "test-" + topic.hashCode() + System.nanoTime(),
                new MemoryPersistence());
        MqttConnectOptions o = new MqttConnectOptions();
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
