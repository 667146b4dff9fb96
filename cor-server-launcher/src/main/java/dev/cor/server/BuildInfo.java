package dev.cor.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * What the build wrote into {@code build.properties} (resource filtering): the version, the git
 * commit when the build knew it ({@code ./cor} passes it), and the build time. Read once.
 *
 * @param name    the program's name
 * @param version the project version
 * @param build   the git commit, or the build time when the build did not know the commit
 * @param time    when it was built (UTC)
 */
record BuildInfo(String name, String version, String build, String time) {
    private static final String RESOURCE = "build.properties";

    static BuildInfo load() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the jar has no " + RESOURCE + ": it was not built by Maven");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String time = filtered(p.getProperty("time"));
        String commit = filtered(p.getProperty("commit"));
        return new BuildInfo(p.getProperty("name", "cor-server"), filtered(p.getProperty("version")),
                commit.isEmpty() ? time : commit, time);
    }

    /** A value the filtering filled, or "" when it left the placeholder or nothing. */
    private static String filtered(String v) {
        return v == null || v.contains("${") ? "" : v.trim();
    }
}
