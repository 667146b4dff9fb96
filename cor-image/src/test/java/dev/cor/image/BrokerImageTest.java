package dev.cor.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image {@code ./cor image} built ({@code cor.image.tar}, made at package) read as a loader
 * reads it and run as a runtime runs it: its layers applied in order into a root, its entrypoint
 * and cmd started there with chroot as its user, a host directory on its volume. It must serve
 * ({@code /health/ready} 200), run from the AOT cache it ships, keep what it acknowledged in the
 * volume across a restart, and leave no process and no mount behind.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class BrokerImageTest {
    private static final Duration READY_DEADLINE = Duration.ofSeconds(120);
    private static final String ID = "urn:ngsi-ld:Vehicle:image";

    @TempDir
    Path tmp;

    private static Path tarball() {
        String tar = System.getProperty("cor.image.tar");
        assertTrue(tar != null && Files.isRegularFile(Path.of(tar)), "no image at cor.image.tar=" + tar + " (built at package)");
        return Path.of(tar);
    }

    @Test
    void theImageIsOneManifestOfVerifiedBlobsThatDockerLoadReadsToo() throws Exception {
        OciImage image = OciImage.read(tarball(), tmp.resolve("layout"));
        // the legacy docker load reads manifest.json: the same config and layers, and a name
        JsonNode legacy = OciImage.json(image.layout.resolve("manifest.json"));
        assertEquals(1, legacy.size(), legacy.toString());
        assertEquals("blobs/sha256/" + image.manifest.path("config").path("digest").asText().substring(7),
                legacy.get(0).path("Config").asText());
        assertEquals(image.manifest.path("layers").size(), legacy.get(0).path("Layers").size());
        for (int i = 0; i < legacy.get(0).path("Layers").size(); i++) {
            assertEquals("blobs/sha256/" + image.manifest.path("layers").get(i).path("digest").asText().substring(7),
                    legacy.get(0).path("Layers").get(i).asText());
        }
        assertEquals("cor-server:latest", legacy.get(0).path("RepoTags").get(0).asText());
        assertEquals("docker.io/library/cor-server:latest",
                image.index.path("manifests").get(0).path("annotations").path("io.containerd.image.name").asText());

        JsonNode run = image.runConfig();
        assertEquals("linux", image.config.path("os").asText());
        assertEquals("amd64", image.config.path("architecture").asText());
        String user = run.path("User").asText();
        assertTrue(user.matches("[1-9][0-9]*:[1-9][0-9]*"), "a numeric user that is not root: " + user);
        assertTrue(run.path("ExposedPorts").has("1026/tcp"), run.toString());
        assertTrue(run.path("Volumes").has("/data"), run.toString());
        List<String> entrypoint = image.strings("Entrypoint");
        assertTrue(entrypoint.contains("-XX:AOTCache=/opt/cor/cor-server.aot"), run.toString());
        // the container's flags last, so that docker run's arguments come after them and win
        assertEquals(List.of("--host", "0.0.0.0", "--dataDir", "/data"), entrypoint.subList(entrypoint.size() - 4, entrypoint.size()));
        assertEquals(List.of(), image.strings("Cmd"), "no cmd for docker run's arguments to replace");
    }

    @Test
    void theEntrypointServesFromTheUnpackedRootAsTheImagesUserFromItsAotCacheAndKeepsAnEntityInTheVolumeAcrossARestart()
            throws Exception {
        assertEquals("root", System.getProperty("user.name"), "chroot and mount need root (as in CI)");
        OciImage image = OciImage.read(tarball(), tmp.resolve("layout"));
        Path root = tmp.resolve("root");
        image.unpackInto(root);
        String user = image.runConfig().path("User").asText();
        int uid = Integer.parseInt(user.split(":")[0]);
        int gid = Integer.parseInt(user.split(":")[1]);
        assertNotEquals(0, uid, "the image's user is not root");
        // the volume: a host directory the image's user owns (as a named volume would be)
        Path volume = Files.createDirectory(tmp.resolve("volume"));
        Files.setAttribute(volume, "unix:uid", uid);
        Files.setAttribute(volume, "unix:gid", gid);
        // which classes came from the cache: the JVM's class+load log, through the environment
        // (JAVA_TOOL_OPTIONS, as docker run -e would give it), in the image's /tmp
        Map<String, String> env = Map.of("JAVA_TOOL_OPTIONS", "-Xlog:class+load=info:file=/tmp/class-load.log");
        int port = freePort();
        try (ChrootBroker b = ChrootBroker.start(image, root, volume, port, env, tmp.resolve("first.log"))) {
            b.awaitReady(READY_DEADLINE);
            assertEquals(uid + ":" + gid, b.uidGid(), "the broker runs as the image's user");
            HttpResponse<String> r = b.send("POST", "/ngsi-ld/v1/entities", "{\"id\": \"" + ID + "\", \"type\": \"Vehicle\","
                    + " \"speed\": {\"type\": \"Property\", \"value\": 55}}");
            assertEquals(201, r.statusCode(), r.body());
            assertEquals(0, b.stop(), b.output());
        }
        assertNoMountUnder(root);
        String loaded = Files.readString(root.resolve("tmp/class-load.log"));
        assertTrue(loaded.contains("dev.cor.base.CorCo source: shared objects file"), "the coroutines' class from the AOT cache");
        assertTrue(loaded.contains("dev.cor.ngsild.store.durable.DurableEntityStore source: shared objects file"),
                "the durable store's class from the AOT cache");
        try (var files = Files.list(volume)) {
            assertNotEquals(0, files.count(), "the store wrote into the volume");
        }
        try (var files = Files.list(root.resolve("data"))) {
            assertEquals(0, files.count(), "nothing written into the image's own /data under the volume");
        }

        try (ChrootBroker b = ChrootBroker.start(image, root, volume, port, Map.of(), tmp.resolve("second.log"))) {
            b.awaitReady(READY_DEADLINE);
            HttpResponse<String> r = b.send("GET", "/ngsi-ld/v1/entities/" + ID + "?options=keyValues", null);
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(r.body().contains("\"speed\":55"), r.body());
            assertEquals(0, b.stop(), b.output());
            assertFalse(b.process.isAlive());
        }
        assertNoMountUnder(root);
    }

    private static void assertNoMountUnder(Path root) throws Exception {
        String real = root.toRealPath().toString();
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            String mountPoint = line.split(" ")[4];
            assertFalse(mountPoint.startsWith(real), "left mounted: " + line);
        }
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
