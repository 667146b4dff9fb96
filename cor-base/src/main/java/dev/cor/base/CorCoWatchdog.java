package dev.cor.base;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * One daemon thread that looks at every watched loop every 50 ms and reports, once per stall and
 * with the loop thread's stack trace, a loop that has not come back to {@code select} for longer
 * than its threshold (design rule 8, as Vert.x does). Loops add and remove themselves; the
 * watchdog thread only reads their {@code busySinceNanos}.
 */
final class CorCoWatchdog {
    private static final System.Logger LOG = System.getLogger(CorCoLoop.class.getName());
    private static final long PERIOD_MS = 50;
    private static final CopyOnWriteArrayList<CorCoLoop> LOOPS = new CopyOnWriteArrayList<>();
    private static Thread thread;

    private CorCoWatchdog() {
    }

    static synchronized void watch(CorCoLoop loop) {
        if (loop.watchdogNanos() <= 0) {
            return;
        }
        LOOPS.add(loop);
        if (thread == null) {
            thread = new Thread(CorCoWatchdog::run, "cor-watchdog");
            thread.setDaemon(true);
            thread.start();
        }
    }

    static void unwatch(CorCoLoop loop) {
        LOOPS.remove(loop);
    }

    private static void run() {
        while (true) {
            try {
                Thread.sleep(PERIOD_MS);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            for (CorCoLoop loop : LOOPS) {
                check(loop, now);
            }
        }
    }

    private static void check(CorCoLoop loop, long now) {
        long since = loop.busySinceNanos;
        if (since == 0 || now - since <= loop.watchdogNanos() || loop.stallReported == since) {
            return;
        }
        loop.stallReported = since;
        Thread t = loop.thread();
        StringBuilder sb = new StringBuilder(1024);
        sb.append("cor: loop ").append(loop.name()).append(" has not come back to select for ")
                .append(TimeUnit.NANOSECONDS.toMillis(now - since))
                .append(" ms - something blocks it (a loop must never block); its thread is at:");
        if (t != null) {
            for (StackTraceElement e : t.getStackTrace()) {
                sb.append("\n\tat ").append(e);
            }
        }
        LOG.log(System.Logger.Level.WARNING, sb.toString());
        LoopStallEvent e = new LoopStallEvent();
        if (e.isEnabled()) {
            e.loop = loop.name();
            e.awayMs = TimeUnit.NANOSECONDS.toMillis(now - since);
            e.thresholdMs = TimeUnit.NANOSECONDS.toMillis(loop.watchdogNanos());
            int at = sb.indexOf("\n\tat ");
            e.where = at < 0 ? "" : sb.substring(at + 1, Math.min(sb.length(), at + 1 + 2000));
            e.commit();
        }
    }
}
