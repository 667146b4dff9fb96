package dev.cor.server;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

import dev.cor.ngsild.store.durable.DataCheck;
import dev.cor.ngsild.store.durable.DataFiles;
import sun.misc.Signal;

/**
 * {@code java -jar cor-server.jar [flags]}: runs the NGSI-LD broker until SIGTERM or SIGINT, then
 * stops it cleanly (requests in flight are answered within the server's grace, the durable store
 * takes its last snapshot) and exits 0. SIGTERM first drains for {@code --drainMs}:
 * {@code /health/ready} answers 503 while connections are still taken, so that a load balancer
 * sends elsewhere before the listener closes; SIGINT, or a second SIGTERM, skips the drain. A flag it cannot use: one line on stderr and exit 2; a
 * port it cannot bind, a data directory damaged or in use: one line and exit 1.
 * {@code --check-data DIR} verifies a data directory and exits: 0 when a broker would start on it,
 * 1 when not. {@code --import DIR} and {@code --export DIR} copy a data directory into the database
 * {@code --db} and back ({@link DataTransfer}), and exit: 0 when copied, 1 when not.
 */
public final class CorServerMain {
    /**
     * The parent of every logger of the runtime, the broker and the launcher: held here, since
     * java.util.logging keeps its loggers only weakly and a collected one forgets its level.
     */
    private static final Logger COR_LOGGERS = Logger.getLogger("dev.cor");

    /** Exit status for a command line that cannot be used. */
    static final int USAGE_ERROR = 2;
    /** Exit status when the server cannot start (a port taken, its data directory damaged or in use). */
    static final int START_ERROR = 1;
    /** Exit status of {@code --check-data} for a directory a broker would not start on. */
    static final int DAMAGED_DATA = 1;

    private CorServerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        ServerOptions o;
        try {
            o = ServerOptions.parse(EnvironmentFlags.prepend(System.getenv(), args));
        } catch (IllegalArgumentException e) {
            System.err.println("cor-server: " + e.getMessage() + " (--help lists the flags)");
            System.exit(USAGE_ERROR);
            return;
        }
        if (o.help()) {
            System.out.println(ServerOptions.USAGE);
            return;
        }
        if (o.checkData() != null) {
            DataCheck.Report r = DataCheck.run(Path.of(o.checkData()));
            for (String line : r.lines()) {
                (r.ok() ? System.out : System.err).println(line);
            }
            System.exit(r.ok() ? 0 : DAMAGED_DATA);
            return;
        }
        if (o.transfer().asked()) {
            System.exit(o.transfer().run(o.db(), System.out, System.err));
            return;
        }
        JsonLogFormatter json = o.logs().json() ? new JsonLogFormatter() : null;
        configureLogging(o.julLevel(), json);
        Console console = new Console(json);
        BuildInfo build = BuildInfo.load();
        CorServer server;
        try {
            server = CorServer.start(o, build, DataFiles.system(), started -> announce(console, build, o, started));
        } catch (IllegalStateException e) {
            console.err("cor-server: " + e.getMessage());
            System.exit(START_ERROR);
            return;
        } catch (IllegalArgumentException e) {
            // a file a flag names that cannot be used (--tokens, --jwtKey, --corSecret, --accessLog)
            console.err("cor-server: " + e.getMessage());
            System.exit(USAGE_ERROR);
            return;
        }
        // SIGTERM and SIGINT end the waits below, and the stop runs on this thread: the JVM's own
        // handling would run it in a shutdown hook and then exit 143 (130), which service
        // managers read as a failure. The hook stays for every other way out (SIGHUP, exit).
        // sun.misc.Signal is a critical internal API kept open on purpose (jdk.unsupported,
        // JEP 260): no flag needed; javac warns about it, and that warning cannot be suppressed.
        StopSignals signals = new StopSignals();
        onSignal("TERM", signals::term);
        onSignal("INT", signals::now);
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "cor-server-stop"));
        signals.awaitFirst();
        if (o.drainMs() > 0 && !signals.stopNow()) {
            server.markStopping();
            console.out("cor-server: draining for " + o.drainMs() + " ms (/health/ready answers 503)");
            signals.awaitSecond(o.drainMs());
        }
        console.out("cor-server: stopping");
        server.stop();
        console.out("cor-server: stopped");
        System.exit(0);
    }

    /**
     * SIGTERM and SIGINT as they arrive (on the JVM's signal thread), for the main thread to wait
     * on: the first asks for the stop, a second SIGTERM or any SIGINT asks for it without the drain.
     */
    private static final class StopSignals {
        private final CountDownLatch first = new CountDownLatch(1);
        private final CountDownLatch second = new CountDownLatch(1);
        private volatile boolean now;

        void term() {
            if (first.getCount() > 0) {
                first.countDown();
            } else {
                second.countDown();
            }
        }

        void now() {
            now = true;
            first.countDown();
            second.countDown();
        }

        void awaitFirst() throws InterruptedException {
            first.await();
        }

        boolean stopNow() {
            return now;
        }

        /** Waits until {@code ms} have passed or a second signal came. */
        void awaitSecond(long ms) throws InterruptedException {
            second.await(ms, TimeUnit.MILLISECONDS);
        }
    }

    /** The start line (and the recovery's summary): before the access log's first line and the server's readiness. */
    private static void announce(Console console, BuildInfo build, ServerOptions o, CorServer s) {
        console.out("cor-server " + build.version() + " (" + build.build() + "): NGSI-LD broker on "
                + (o.tls() != null ? "https://" : "http://") + o.host() + ":" + s.port() + "/ngsi-ld/v1/"
                + (o.corsOrigin() != null ? " (CORS for " + o.corsOrigin() + ")" : "")
                + (s.corPort() >= 0 ? " and " + (o.tls() != null ? "cors://" : "cor://") + o.host() + ":" + s.corPort() : "")
                + ", " + o.httpLoops() + " loop(s), coroutines "
                + (o.coroutines() == 0 ? "off" : "up to " + o.coroutines() + " per loop") + ", " + o.workers() + " workers, "
                + (o.durable() ? "store durable in " + s.durableStore().dataDir().toAbsolutePath().normalize()
                        + " (fsync " + o.fsync() + ")" : o.postgres() ? "store " + s.postgresStore() : "store in memory"));
        if (s.durableStore() != null) {
            console.out("cor-server: " + s.durableStore().recoverySummary());
        }
    }

    private static void onSignal(String name, Runnable action) {
        try {
            Signal.handle(new Signal(name), s -> action.run());
        } catch (IllegalArgumentException e) {
            // the JVM keeps this signal (e.g. -Xrs): the shutdown hook still stops the server
            System.getLogger(CorServerMain.class.getName()).log(System.Logger.Level.DEBUG,
                    "cor-server: cannot handle SIG" + name + ": " + e.getMessage());
        }
    }

    /**
     * The runtime logs through {@code System.Logger}, which without a provider of its own is
     * {@code java.util.logging}: the level goes on its root logger and handlers, and the format
     * becomes one line per record unless the operator set one - or, with {@code json}, one JSON
     * object per record ({@link JsonLogFormatter}) whatever was set. Below INFO, the level opens
     * cor's own loggers ({@code dev.cor.*}) only: the JDK's stay at INFO ({@code jdk.event.security}
     * alone prints a line per trusted CA at FINE).
     */
    static void configureLogging(Level level, JsonLogFormatter json) {
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tF %1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
        }
        Logger root = Logger.getLogger("");
        root.setLevel(level.intValue() < Level.INFO.intValue() ? Level.INFO : level);
        COR_LOGGERS.setLevel(level);
        for (Handler h : root.getHandlers()) {
            h.setLevel(level);
            if (json != null) {
                h.setFormatter(json);
            }
        }
    }

    /**
     * The lines the launcher prints itself - its start, drain and stop on stdout, a failure to
     * start on stderr - as text, or with {@code --logFormat json} as records of this class at
     * INFO (ERROR on stderr), so that a collector reading JSON reads every line. Main thread.
     */
    private record Console(JsonLogFormatter json) {
        void out(String line) {
            print(System.out, Level.INFO, line);
        }

        void err(String line) {
            print(System.err, Level.SEVERE, line);
        }

        private void print(java.io.PrintStream to, Level level, String line) {
            if (json == null) {
                to.println(line);
            } else {
                to.print(json.line(level, CorServerMain.class.getName(), line));
                to.flush();
            }
        }
    }
}
