package dev.cor.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Prometheus' own checker, {@code promtool} (Debian's {@code prometheus} package; {@code .ci/run}
 * installs it): a scrape read by the tool Prometheus users trust, not by a parser of ours only.
 */
final class Promtool {
    private static final String[] PLACES = {"/usr/bin/promtool", "/usr/local/bin/promtool"};

    private Promtool() {
    }

    /** What {@code promtool check metrics} said: its exit status and everything it printed. */
    record Result(int exit, String output) {
    }

    /** The installed promtool; fails (never skips) when there is none. */
    static Path find() {
        for (String p : PLACES) {
            if (Files.isExecutable(Path.of(p))) {
                return Path.of(p);
            }
        }
        throw new AssertionError("no promtool (apt-get install -y --no-install-recommends prometheus; ./cor test installs it)");
    }

    /** Runs {@code promtool check metrics} on {@code scrape} (its standard input). */
    static Result checkMetrics(Path promtool, String scrape) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(promtool.toString(), "check", "metrics").redirectErrorStream(true).start();
        try {
            try (var in = p.getOutputStream()) {
                in.write(scrape.getBytes(StandardCharsets.UTF_8));
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                throw new AssertionError("promtool did not finish in 60 s");
            }
            return new Result(p.exitValue(), out);
        } finally {
            p.destroyForcibly();
        }
    }
}
