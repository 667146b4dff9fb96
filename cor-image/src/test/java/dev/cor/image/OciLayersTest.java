package dev.cor.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link OciImage#applyLayer}: a layer's whiteouts hide what the layers below it had, and only that. */
class OciLayersTest {
    @TempDir
    Path tmp;

    private Path layer(String name, String... files) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve(name));
        for (String f : files) {
            Path p = dir.resolve(f);
            Files.createDirectories(p.getParent());
            Files.writeString(p, name + ":" + f);
        }
        Path tar = tmp.resolve(name + ".tar.gz");
        Commands.run("tar", "-czf", tar.toString(), "-C", dir.toString(), ".");
        return tar;
    }

    @Test
    void aWhiteoutRemovesAFileOrTreeBelowAndAnOpaqueDirectoryHidesAllItHadBelowButNotItsNewEntries() throws Exception {
        Path lower = layer("lower", "a/x", "a/y", "b/z", "b/sub/deep", "c/1", "c/2", "d/keep");
        Path upper = layer("upper", "a/.wh.x", "b/.wh.sub", "c/.wh..wh..opq", "c/3", "e/.wh.nothing", "d/new");
        Path root = Files.createDirectory(tmp.resolve("root"));
        OciImage.applyLayer(root, lower, "-z");
        OciImage.applyLayer(root, upper, "-z");

        assertFalse(Files.exists(root.resolve("a/x")), "a whiteout removes the file below");
        assertEquals("lower:a/y", Files.readString(root.resolve("a/y")), "and nothing else");
        assertFalse(Files.exists(root.resolve("b/sub")), "a whiteout of a directory removes its tree");
        assertEquals("lower:b/z", Files.readString(root.resolve("b/z")));
        assertFalse(Files.exists(root.resolve("c/1")), "an opaque directory hides what it had below");
        assertFalse(Files.exists(root.resolve("c/2")));
        assertEquals("upper:c/3", Files.readString(root.resolve("c/3")), "but not what its own layer puts in it");
        assertEquals("lower:d/keep", Files.readString(root.resolve("d/keep")));
        assertEquals("upper:d/new", Files.readString(root.resolve("d/new")));
        try (var all = Files.walk(root)) {
            assertTrue(all.noneMatch(p -> p.getFileName().toString().startsWith(".wh.")), "no whiteout file itself in the root");
        }
    }
}
