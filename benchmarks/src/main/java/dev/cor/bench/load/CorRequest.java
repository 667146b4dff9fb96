package dev.cor.bench.load;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.cor.bench.cli.Cli;

/**
 * {@code corRequest}, the project's load generator: {@code java -cp benchmarks.jar
 * dev.cor.bench.load.CorRequest --url http://127.0.0.1:PORT/path [flags]} (see
 * {@link LoadOptions#USAGE}). All its I/O runs on one thread of its own, so it takes little of a
 * machine the servers share. Progress to stderr each second, the result to stdout (and
 * {@code --json FILE}); exits 0 when it ran, 1 when every request failed, 2 on a bad command
 * line. SIGTERM ends the measured time early and still reports. {@link #measure} runs it in
 * process (tests).
 */
public final class CorRequest {
    private static final String TOOL = "corRequest";

    private CorRequest() {
    }

    public static void main(String[] args) throws InterruptedException {
        LoadOptions options = Cli.parseOrExit(TOOL, LoadOptions.USAGE, args, LoadOptions::parse);
        if (options == null) {
            return;
        }
        Target target;
        try {
            target = Targets.create(options);
        } catch (TargetUnavailableException e) {
            Cli.fail(TOOL, e.getMessage(), null);
            return;
        } catch (IllegalArgumentException e) {
            Cli.fail(TOOL, e.getMessage(), null);
            return;
        }
        LoadRun run = new LoadRun(options, target, System.err);
        CountDownLatch reported = new CountDownLatch(1);
        Thread stopper = new Thread(() -> {
            run.stop();
            awaitQuietly(reported);
        }, "corRequest-stop");
        Runtime.getRuntime().addShutdownHook(stopper);
        int exit;
        try {
            LoadResult result = onLoopThread(run);
            System.out.print(result.text());
            System.out.flush();
            exit = writeJson(options, result) ? result.exitCode() : 1;
        } catch (IOException e) {
            System.err.println(TOOL + ": " + e.getMessage());
            exit = 1;
        } finally {
            reported.countDown();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(stopper);
        } catch (IllegalStateException e) {
            return; // already shutting down on a signal: the JVM ends with the signal's status
        }
        System.exit(exit);
    }

    /**
     * Runs one measurement in this JVM, on a loop thread of its own, and returns its result.
     *
     * @throws TargetUnavailableException for a protocol this build cannot drive
     * @throws IOException                when nothing could be connected
     */
    public static LoadResult measure(LoadOptions options, PrintStream progress)
            throws IOException, TargetUnavailableException, InterruptedException {
        return onLoopThread(new LoadRun(options, Targets.create(options), progress));
    }

    private static LoadResult onLoopThread(LoadRun run) throws IOException, InterruptedException {
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread loop = Thread.ofPlatform().name("corRequest-loop").start(() -> {
            try {
                outcome.set(run.run());
            } catch (IOException | RuntimeException e) {
                outcome.set(e);
            }
        });
        loop.join();
        return switch (outcome.get()) {
            case LoadResult r -> r;
            case IOException e -> throw e;
            case RuntimeException e -> throw e;
            default -> throw new IllegalStateException("the loop ended without a result");
        };
    }

    private static boolean writeJson(LoadOptions options, LoadResult result) {
        if (options.json() == null) {
            return true;
        }
        try {
            Files.writeString(options.json(), result.json() + System.lineSeparator(), StandardCharsets.UTF_8);
            return true;
        } catch (IOException e) {
            System.err.println(TOOL + ": cannot write " + options.json() + ": " + e);
            return false;
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
