package dev.cor.bench.load;

import java.io.IOException;
import java.io.PrintStream;
import java.util.Locale;

/**
 * One run of the load generator: its schedule, its clock and its counts, on one thread.
 * <p>
 * N callers each have at most one request out. In a closed loop a caller sends again as soon as
 * its answer is in, and latency counts from the send. In an open loop request {@code i} (of all
 * callers) is due at {@code t0 + i / rate} and belongs to caller {@code i % N}; a caller still
 * waiting when its next request falls due sends it the moment it is free, and latency counts
 * from the due time - so a server that stalls is charged for every request that came due during
 * the stall, not just the one it sat on (coordinated omission corrected, as in wrk2).
 * <p>
 * Time runs: connect, warmup (answers shown, not counted), the measured seconds, then a short
 * drain for answers still out. Only requests that start (fall due) in the measured seconds are
 * counted. With {@code requests} set (closed loop) the callers stop sending once that many went out,
 * and the measured time ends when the last of them is answered (or at its usual end, if sooner).
 * A progress line per second goes to {@code progress}. {@link #run()} on the thread
 * that is to be the generator's loop; {@link #stop()} from any thread.
 */
public final class LoadRun implements TargetListener {
    private static final long SECOND = 1_000_000_000L;
    /** Longest wait for answers still out once the measured seconds are over. */
    private static final long MAX_DRAIN_NANOS = 2 * SECOND;

    private final LoadOptions options;
    private final Target target;
    private final PrintStream progress;
    private final int callers;
    private final int sockets;
    private final boolean openLoop;
    private final double intervalNanos;
    /** Closed loop: requests to send in all (0 = no limit), and how many went out so far. */
    private final long limit;
    private long sent;

    private final long[] startedAt;
    private final boolean[] busy;
    private final boolean[] measured;
    /** Open loop: the index of each caller's next request. */
    private final long[] nextIndex;
    /** Open loop: the next request index whose due time has not been looked at. */
    private long nextDue;

    private long t0;
    private long warmupEnd;
    private long measureEnd;
    private int inFlight;
    private final LatencyWindow total = new LatencyWindow();
    private final LatencyWindow thisSecond = new LatencyWindow();
    /** Open loop: how late the generator itself sent requests whose caller was free when they fell due. */
    private final LatencyWindow sendLag = new LatencyWindow();
    private String firstError;
    private volatile boolean stopRequested;

    public LoadRun(LoadOptions options, Target target, PrintStream progress) {
        this.options = options;
        this.target = target;
        this.progress = progress;
        this.callers = options.connections();
        this.sockets = options.sockets();
        this.openLoop = options.openLoop();
        this.intervalNanos = openLoop ? 1e9 / options.rate() : 0;
        this.limit = options.requests();
        this.startedAt = new long[callers];
        this.busy = new boolean[callers];
        this.measured = new boolean[callers];
        this.nextIndex = new long[callers];
        for (int c = 0; c < callers; c++) {
            nextIndex[c] = c;
        }
    }

    /** Makes a running {@link #run()} end its measured time now, drain and return. Any thread. */
    public void stop() {
        stopRequested = true;
        target.wakeup();
    }

    /**
     * Runs the whole schedule on this thread and closes the target.
     *
     * @throws IOException when no connection at all could be opened, or the selector fails
     */
    public LoadResult run() throws IOException {
        try (target) {
            target.open(sockets, callers, this);
            awaitConnections();
            t0 = System.nanoTime();
            warmupEnd = t0 + options.warmupS() * SECOND;
            measureEnd = warmupEnd + options.durationS() * SECOND;
            if (!openLoop) {
                for (int c = 0; c < callers && mayStart(); c++) {
                    start(c, t0);
                }
            }
            schedule();
            drain();
            return result();
        }
    }

    private void awaitConnections() throws IOException {
        long deadline = System.nanoTime() + options.timeoutMs() * 1_000_000L;
        while (target.connecting() > 0 && System.nanoTime() - deadline < 0 && !stopRequested) {
            target.poll(10_000_000L);
        }
        if (target.connected() == 0) {
            throw new IOException("cannot connect to " + options.url().scheme() + "://" + options.url().authority());
        }
    }

    private void schedule() throws IOException {
        long nextTick = t0 + SECOND;
        int second = 1;
        while (true) {
            long now = System.nanoTime();
            if (stopRequested && now - measureEnd < 0) {
                measureEnd = now;
            }
            if (openLoop) {
                releaseDue(now);
            }
            if (now - nextTick >= 0) {
                printSecond(second++, nextTick);
                nextTick += SECOND;
            }
            if (limit > 0 && sent == limit && inFlight == 0 && now - measureEnd < 0) {
                measureEnd = now; // every request of the run is answered
            }
            if (now - measureEnd >= 0) {
                return;
            }
            long wake = Math.min(nextTick, measureEnd);
            if (openLoop) {
                wake = Math.min(wake, due(nextDue));
            }
            target.poll(wake - now);
        }
    }

    private void drain() throws IOException {
        long end = System.nanoTime() + Math.min(MAX_DRAIN_NANOS, options.timeoutMs() * 1_000_000L);
        long now;
        while (inFlight > 0 && (now = System.nanoTime()) - end < 0) {
            target.poll(Math.min(end - now, 10_000_000L));
        }
    }

    // ---------------------------------------------------------------- sending

    private long due(long index) {
        return t0 + (long) (index * intervalNanos);
    }

    /** Open loop: every request now due goes out, unless its caller is still waiting (it sends when free). */
    private void releaseDue(long now) {
        long due;
        while ((due = due(nextDue)) - now <= 0 && due - measureEnd < 0) {
            int c = (int) (nextDue % callers);
            if (!busy[c] && sendIfDue(c, now) && measured[c]) {
                sendLag.record(now - due);
            }
            nextDue++;
        }
    }

    private boolean sendIfDue(int c, long now) {
        long due = due(nextIndex[c]);
        if (due - now <= 0 && due - measureEnd < 0) {
            nextIndex[c] += callers;
            start(c, due);
            return true;
        }
        return false;
    }

    private void start(int c, long at) {
        busy[c] = true;
        startedAt[c] = at;
        measured[c] = at - warmupEnd >= 0 && at - measureEnd < 0;
        inFlight++;
        sent++;
        target.send(c % sockets, c);
    }

    private void next(int c, long now) {
        if (openLoop) {
            sendIfDue(c, now);
        } else if (now - measureEnd < 0 && mayStart()) {
            start(c, now);
        }
    }

    private boolean mayStart() {
        return limit == 0 || sent < limit;
    }

    // ---------------------------------------------------------------- outcomes

    @Override
    public void answered(int caller, int status) {
        long now = System.nanoTime();
        done(caller);
        long latency = now - startedAt[caller];
        thisSecond.answered(latency, status);
        if (measured[caller]) {
            total.answered(latency, status);
        }
        next(caller, now);
    }

    @Override
    public void failed(int caller, String reason) {
        long now = System.nanoTime();
        done(caller);
        thisSecond.failed();
        if (measured[caller]) {
            total.failed();
        }
        if (firstError == null) {
            firstError = reason;
        }
        next(caller, now);
    }

    private void done(int caller) {
        if (!busy[caller]) {
            throw new IllegalStateException("an outcome for caller " + caller + " that had no request out");
        }
        busy[caller] = false;
        inFlight--;
    }

    // ---------------------------------------------------------------- reporting

    private void printSecond(int second, long tickAt) {
        String phase = tickAt - warmupEnd <= 0 ? " warmup" : "";
        progress.printf(Locale.ROOT, "t=%ds%s req/s=%d errors=%d%s p50=%.0fus p99=%.0fus%n", second, phase,
                thisSecond.answers(), thisSecond.failures(),
                thisSecond.notOk() > 0 ? " non-2xx/3xx=" + thisSecond.notOk() : "",
                thisSecond.micros(50), thisSecond.micros(99));
        thisSecond.reset();
    }

    private LoadResult result() {
        double seconds = Math.max(0, measureEnd - warmupEnd) / 1e9;
        long unfinished = 0;
        for (int c = 0; c < callers; c++) {
            if (busy[c] && measured[c]) {
                unfinished++;
            }
        }
        if (openLoop) {
            unfinished += dueButUnsent();
        }
        return new LoadResult(options.url().toString(), openLoop, openLoop ? options.rate() : Double.NaN, callers,
                sockets, options.warmupS(), seconds, total.answers(), total.failures(), total.notOk(), unfinished,
                target.reconnects(), total.micros(50), total.micros(90), total.micros(99), total.micros(99.9),
                total.maxMicros(), openLoop ? new LoadResult.Lag(sendLag.micros(50), sendLag.micros(99), sendLag.maxMicros())
                        : null, firstError);
    }

    /** Open loop: measured requests that fell due but never went out (their caller was still waiting). */
    private long dueButUnsent() {
        long first = firstIndexAtOrAfter(warmupEnd);
        long end = firstIndexAtOrAfter(measureEnd);
        long n = 0;
        for (int c = 0; c < callers; c++) {
            long from = Math.max(nextIndex[c], first);
            from += Math.floorMod(c - from, (long) callers); // the caller's own next index from there
            if (from < end) {
                n += (end - 1 - from) / callers + 1;
            }
        }
        return n;
    }

    private long firstIndexAtOrAfter(long time) {
        long i = Math.max(0, (long) Math.ceil((time - t0) / intervalNanos) - 1);
        while (due(i) - time < 0) {
            i++;
        }
        return i;
    }
}
