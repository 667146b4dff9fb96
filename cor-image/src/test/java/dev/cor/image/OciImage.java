package dev.cor.image;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.GZIPInputStream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * An OCI image tarball read the way a loader reads it: the tarball's OCI image layout unpacked
 * into a directory, {@code index.json} to the one image manifest, the manifest to its config and
 * its layers, every blob checked against its digest and every layer's content against the
 * config's {@code diff_ids} (what {@code docker load} checks); {@link #unpackInto} applies the
 * layers in order, whiteouts respected, as a container runtime builds the root it starts in.
 * The tar work is GNU tar's (as root it keeps owners and modes). One test thread.
 */
final class OciImage {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The image layout's directory. */
    final Path layout;
    final JsonNode index;
    final JsonNode manifest;
    final JsonNode config;

    private OciImage(Path layout, JsonNode index, JsonNode manifest, JsonNode config) {
        this.layout = layout;
        this.index = index;
        this.manifest = manifest;
        this.config = config;
    }

    /** Unpacks {@code tarball} into {@code layout} (a new directory) and reads it; fails on any blob not its digest. */
    static OciImage read(Path tarball, Path layout) throws Exception {
        Files.createDirectories(layout);
        Commands.run("tar", "-xf", tarball.toString(), "-C", layout.toString());
        assertTrue(Files.readString(layout.resolve("oci-layout")).contains("\"imageLayoutVersion\""), "an OCI image layout");
        JsonNode index = JSON.readTree(layout.resolve("index.json").toFile());
        assertTrue(index.path("manifests").size() == 1, "one image in the index: " + index);
        JsonNode manifest = JSON.readTree(blob(layout, index.path("manifests").get(0)).toFile());
        JsonNode config = JSON.readTree(blob(layout, manifest.path("config")).toFile());
        OciImage image = new OciImage(layout, index, manifest, config);
        List<String> diffIds = new ArrayList<>();
        config.path("rootfs").path("diff_ids").forEach(d -> diffIds.add(d.asText()));
        assertTrue(diffIds.size() == manifest.path("layers").size(), "a diff_id for each layer: " + config);
        for (int i = 0; i < diffIds.size(); i++) {
            JsonNode layer = manifest.path("layers").get(i);
            try (InputStream in = image.uncompressed(layer)) {
                String diffId = "sha256:" + sha256(in);
                assertTrue(diffId.equals(diffIds.get(i)), "layer " + i + "'s content is its diff_id: " + diffId + " vs " + diffIds.get(i));
            }
        }
        return image;
    }

    /** The blob a descriptor names, after checking its size and digest. */
    static Path blob(Path layout, JsonNode descriptor) throws IOException {
        String digest = descriptor.path("digest").asText();
        assertTrue(digest.startsWith("sha256:"), "a sha256 digest: " + descriptor);
        Path file = layout.resolve("blobs/sha256").resolve(digest.substring("sha256:".length()));
        assertTrue(Files.isRegularFile(file), "the blob of " + descriptor + " is in the layout");
        assertTrue(Files.size(file) == descriptor.path("size").asLong(), "the size of " + descriptor);
        try (InputStream in = Files.newInputStream(file)) {
            assertTrue(digest.equals("sha256:" + sha256(in)), "the content of " + file.getFileName() + " is its digest");
        }
        return file;
    }

    private InputStream uncompressed(JsonNode layer) throws IOException {
        InputStream in = Files.newInputStream(blob(layout, layer));
        return switch (compression(layer)) {
            case "gzip" -> new GZIPInputStream(in, 1 << 16);
            case "none" -> in;
            default -> throw new AssertionError("a layer this test does not read: " + layer);
        };
    }

    private static String compression(JsonNode layer) {
        String type = layer.path("mediaType").asText();
        return switch (type) {
            case "application/vnd.oci.image.layer.v1.tar+gzip", "application/vnd.docker.image.rootfs.diff.tar.gzip" -> "gzip";
            case "application/vnd.oci.image.layer.v1.tar", "application/vnd.docker.image.rootfs.diff.tar" -> "none";
            default -> type;
        };
    }

    /** The config's {@code config} object: User, Entrypoint, Cmd, Env, ExposedPorts, Volumes, WorkingDir. */
    JsonNode runConfig() {
        return config.path("config");
    }

    List<String> strings(String field) {
        List<String> out = new ArrayList<>();
        runConfig().path(field).forEach(v -> out.add(v.asText()));
        return out;
    }

    /** Applies the layers in order to {@code root} (a new directory), each one's whiteouts first. */
    void unpackInto(Path root) throws Exception {
        Files.createDirectories(root);
        for (JsonNode layer : manifest.path("layers")) {
            Path file = blob(layout, layer);
            String z = compression(layer).equals("gzip") ? "-z" : "--no-auto-compress";
            applyLayer(root, file, z);
        }
    }

    /**
     * One layer onto {@code root}: its whiteouts ({@code .wh.NAME}: NAME of the layers below is
     * gone; {@code .wh..wh..opq}: what the layers below had in that directory is gone) applied to
     * what is there, then its other entries extracted with their owners and modes.
     */
    static void applyLayer(Path root, Path layerTar, String compression) throws Exception {
        Path realRoot = root.toRealPath();
        for (String entry : Commands.run("tar", "-t", compression, "-f", layerTar.toString()).lines().toList()) {
            String name = entry.endsWith("/") ? entry.substring(0, entry.length() - 1) : entry;
            int slash = name.lastIndexOf('/');
            String base = name.substring(slash + 1);
            if (!base.startsWith(".wh.")) {
                continue;
            }
            Path parent = inside(realRoot, slash < 0 ? "" : name.substring(0, slash));
            if (parent == null || !Files.isDirectory(parent, LinkOption.NOFOLLOW_LINKS)) {
                continue; // nothing below to hide
            }
            if (base.equals(".wh..wh..opq")) {
                try (var children = Files.list(parent)) {
                    for (Path child : children.toList()) {
                        deleteTree(child);
                    }
                }
            } else {
                deleteTree(parent.resolve(base.substring(".wh.".length())));
            }
        }
        Commands.run("tar", "-x", compression, "-f", layerTar.toString(), "-C", root.toString(), "--numeric-owner",
                "--same-permissions", "--same-owner", "--exclude=.wh.*");
    }

    /** {@code relative} under {@code realRoot} with no symbolic link on the way out of it; null when it is not there. */
    private static Path inside(Path realRoot, String relative) throws IOException {
        String r = relative.startsWith("./") ? relative.substring(2) : relative;
        assertTrue(!r.startsWith("/") && !List.of(r.split("/")).contains(".."), "a layer entry inside the root: " + relative);
        Path p = r.isEmpty() || r.equals(".") ? realRoot : realRoot.resolve(r);
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return null;
        }
        Path real = p.toRealPath();
        assertTrue(real.startsWith(realRoot), "a whiteout's directory inside the root: " + relative);
        return real;
    }

    /** Deletes {@code p} and what is under it, never following a link out of it. */
    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(p, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    static String sha256(InputStream in) throws IOException {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        try (DigestInputStream d = new DigestInputStream(in, sha)) {
            d.transferTo(java.io.OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    static JsonNode json(Path file) {
        try {
            return JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void assertTrue(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
