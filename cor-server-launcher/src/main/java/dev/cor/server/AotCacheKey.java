package dev.cor.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * What ties an AOT cache ({@code cor-server.aot}, made by {@code ./cor aot-train}) to the jar it
 * was trained on: a SHA-256 over the name, CRC-32 and size of every class in the jar, and the
 * JDK that runs it. The JVM itself does not check this: JDK 25 maps a cache whose jar has been
 * rebuilt and runs the classes of the old build (seen on 25.0.3 with {@code -XX:AOTMode=on}), so
 * the {@code ./cor} wrapper compares this key with the one saved beside the cache and uses the
 * cache only when they match. Resources are left out on purpose: the build stamps its time into
 * one on every package, and no resource is in the cache. Run by the wrapper:
 * <pre>java -cp cor-server.jar dev.cor.server.AotCacheKey cor-server.jar</pre>
 * prints the key on one line; exit 2 when the jar cannot be read.
 */
public final class AotCacheKey {
    private AotCacheKey() {
    }

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: java -cp cor-server.jar dev.cor.server.AotCacheKey JAR");
            System.exit(2);
        }
        try {
            System.out.println(of(args[0]));
        } catch (IOException e) {
            System.err.println("cor-server: cannot read " + args[0] + ": " + e);
            System.exit(2);
        }
    }

    /** The key of the jar at {@code path} on this JDK. */
    static String of(String path) throws IOException {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        sha.update((System.getProperty("java.home") + "\n" + Runtime.version() + "\n").getBytes(StandardCharsets.UTF_8));
        try (ZipFile jar = new ZipFile(path)) {
            // by name, not in the jar's order: the same classes give the same key however packed
            for (ZipEntry e : jar.stream().filter(e -> e.getName().endsWith(".class"))
                    .sorted(java.util.Comparator.comparing(ZipEntry::getName)).toList()) {
                sha.update((e.getName() + "\0" + e.getCrc() + "\0" + e.getSize() + "\n").getBytes(StandardCharsets.UTF_8));
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }
}
