package dev.cor.rest;

import java.util.ArrayDeque;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoCancelledException;
import dev.cor.base.CorCoListener;
import dev.cor.base.CorCoLogLimiter;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTask;
import dev.cor.base.CorCoTimer;

/**
 * The dispatch decision, made on the loop L that read a request:
 * <ol>
 * <li>can it wait at all ({@link CorRestApplication#canWait})? no: inline on L;</li>
 * <li>may it be a coroutine ({@link CorRestCoroutineHook}) and is L under its cap? yes: a
 * coroutine of L, which answers from inside itself when done;</li>
 * <li>otherwise the worker hop, its answer handed back to L.</li>
 * </ol>
 * Then, after the answer, the post-response phase ({@link CorRest#defer}) decided the same way
 * through {@link CorRestFinishCoroutineHook}. Post-response work bound for the workers that finds
 * them all busy waits for one in a bounded backlog per loop ({@link Builder#finishBacklog}); what
 * it cannot hold, or holds too long, is dropped and counted ({@link #finishRefusedCount()}).
 * <p>
 * Shared by every loop of a server (cor-http, {@code cor://}): {@link #dispatch} is called on a
 * loop thread; the counters are safe to read from any thread.
 */
public final class CorRestDispatcher {
    private static final System.Logger LOG = System.getLogger(CorRestDispatcher.class.getName());
    /** How often post-response work that found every worker busy tries again. */
    static final long FINISH_RETRY_MS = 10;
    private static final long FINISH_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** Default bound of post-response phases waiting for a worker, per loop. */
    public static final int DEFAULT_FINISH_MAX_WAITING = 1024;
    /** Default time a post-response phase waits for a worker before it is dropped. */
    public static final long DEFAULT_FINISH_MAX_WAIT_MS = 10_000;

    /** Where a request ran. */
    public enum Path { INLINE, COROUTINE, HOP }

    private final CorRestApplication app;
    private final CorRestCoroutineHook coroutineHook;
    private final CorRestFinishCoroutineHook finishHook;
    private final CorRestWorkers workers;

    private final LongAdder inline = new LongAdder();
    private final LongAdder coroutines = new LongAdder();
    private final LongAdder hops = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final LongAdder finishInline = new LongAdder();
    private final LongAdder finishCoroutines = new LongAdder();
    private final LongAdder finishHops = new LongAdder();
    private final LongAdder finishRefused = new LongAdder();
    private final AtomicInteger finishWaiting = new AtomicInteger();
    private final AtomicLong lastFinishRefusalLog = new AtomicLong(System.nanoTime() - FINISH_LOG_INTERVAL_NANOS);
    // The post-response phases waiting for a worker, per loop: each backlog is its loop's alone.
    private final ConcurrentHashMap<CorCoLoop, FinishBacklog> finishBacklogs = new ConcurrentHashMap<>();
    private final int finishMaxWaiting;
    private final long finishMaxWaitNanos;
    /**
     * Whether each request's path is logged (TRACE: every one; DEBUG: the hops, with their
     * reason), decided once when the dispatcher is built: with neither, the cost is a field read.
     */
    private final boolean traceRoutes;
    private final boolean debugHops;

    // One task and one listener for every request coroutine: the request travels as the coroutine's context.
    private final CorCoTask requestTask = this::runRequestCoroutine;
    private final CorCoListener requestDone = this::requestCoroutineDone;
    private final CorCoTask finishTask = this::runFinishCoroutine;

    private CorRestDispatcher(Builder b) {
        this.app = Objects.requireNonNull(b.app, "application");
        this.workers = Objects.requireNonNull(b.workers, "workers");
        this.coroutineHook = b.coroutineHook;
        this.finishHook = b.finishHook;
        this.finishMaxWaiting = b.finishMaxWaiting;
        this.finishMaxWaitNanos = TimeUnit.MILLISECONDS.toNanos(b.finishMaxWaitMs);
        this.traceRoutes = LOG.isLoggable(System.Logger.Level.TRACE);
        this.debugHops = LOG.isLoggable(System.Logger.Level.DEBUG);
        // The JFR event classes load, and JFR takes them in, on the thread that wires the server -
        // not on a loop at its first coroutine or hop: a class initialisation blocks its thread.
        LongCoroutineEvent.prepare();
        HopEvent.prepare();
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Runs {@code request} on the path the decision picks; {@code responder} is called exactly
     * once with its answer. Loop thread only.
     */
    public Path dispatch(CorRest request, CorRestResponder responder) {
        CorCoLoop loop = CorCoLoop.current();
        if (loop == null) {
            throw new IllegalStateException("dispatch on thread " + Thread.currentThread().getName() + ": loop threads only");
        }
        request.responder = Objects.requireNonNull(responder, "responder");
        boolean canWait;
        try {
            canWait = app.canWait(request);
        } catch (RuntimeException e) {
            failRequest(request, e);
            inline.increment();
            answer(request);
            return Path.INLINE;
        }
        if (!canWait) {
            inline.increment();
            if (traceRoutes) {
                logRoute(loop, request, "inline (it cannot wait)");
            }
            runInline(request);
            return Path.INLINE;
        }
        String why;
        if (coroutineHook == null) {
            why = HopEvent.NO_HOOK;
        } else if (!coroutineHook.mayBeCoroutine(request)) {
            why = HopEvent.HOOK_SAID_NO;
        } else {
            CorCo co = CorCo.create(requestTask, requestDone);
            if (co != null) {
                coroutines.increment();
                if (traceRoutes) {
                    logRoute(loop, request, "a coroutine");
                }
                co.context(request);
                request.runsAs(co);
                request.longCoroutine = LongCoroutineEvent.beginIfEnabled();
                co.resume();
                return Path.COROUTINE;
            }
            why = loop.coroutineCap() > 0 ? HopEvent.CAP_REACHED : HopEvent.UNAVAILABLE;
        }
        hops.increment();
        if (debugHops) {
            LOG.log(System.Logger.Level.DEBUG, "cor: " + request.method() + " " + request.path() + " on " + loop.name()
                    + ": the worker hop (" + why + ")");
        }
        HopEvent e = new HopEvent();
        if (e.isEnabled()) {
            e.method = request.method();
            e.path = request.path();
            e.reason = why;
            e.loop = loop.name();
            e.commit();
        }
        hop(loop, request);
        return Path.HOP;
    }

    private static void logRoute(CorCoLoop loop, CorRest request, String where) {
        LOG.log(System.Logger.Level.TRACE, "cor: " + request.method() + " " + request.path() + " on " + loop.name() + ": " + where);
    }

    private void runInline(CorRest request) {
        try {
            CorRest.runOnThread(request, () -> app.handle(request));
        } catch (Throwable t) {
            failRequest(request, t);
        }
        answer(request);
    }

    private Object runRequestCoroutine() {
        CorRest request = (CorRest) CorCo.current().context();
        try {
            app.handle(request);
        } catch (Throwable t) {
            failRequest(request, t);
        }
        return null;
    }

    /** Inside the request's coroutine, as it ends: the answer goes out from here (no inbox round trip). */
    private void requestCoroutineDone(CorCo co) {
        CorRest request = (CorRest) co.context();
        request.runsAs(null);
        LongCoroutineEvent e = request.longCoroutine;
        if (e != null) {
            request.longCoroutine = null;
            e.end(request, co.loop().name());
        }
        answer(request);
    }

    private void hop(CorCoLoop loop, CorRest request) {
        boolean taken = workers.submit(() -> {
            try {
                CorRest.runOnThread(request, () -> app.handle(request));
            } catch (Throwable t) {
                failRequest(request, t);
            }
            handBack(loop, () -> answer(request));
        });
        if (!taken) {
            refused.increment();
            request.fail(new CorRestException(503, "Service Unavailable", "every worker is busy and the queue is full"));
            answer(request);
        }
    }

    private static void handBack(CorCoLoop loop, Runnable onLoop) {
        try {
            loop.execute(onLoop);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.log(System.Logger.Level.DEBUG, "cor: an answer came back after its loop " + loop.name() + " ended");
        }
    }

    /** Sends the answer, then starts the post-response phase. On the request's loop. */
    private void answer(CorRest request) {
        CorRestResponder r = request.responder;
        request.responder = null;
        if (r == null) {
            throw new IllegalStateException("a second answer to " + request);
        }
        try {
            r.respond(request);
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.WARNING, "cor: sending the answer to " + request + " failed", t);
        }
        if (request.hasDeferred()) {
            finish(request);
        }
    }

    private void finish(CorRest request) {
        if (!app.finishCanWait(request)) {
            finishInline.increment();
            runDeferredOnThread(request);
            return;
        }
        if (finishHook != null && finishHook.mayBeCoroutine(request)) {
            // Inside the request's coroutine this is a child of it: a wait yields back here, and the loop resumes it later.
            CorCo co = CorCo.create(finishTask, null);
            if (co != null) {
                finishCoroutines.increment();
                co.context(request);
                co.resume();
                return;
            }
        }
        finishHops.increment();
        finishOnWorker(CorCoLoop.current(), request);
    }

    private Object runFinishCoroutine() {
        ((CorRest) CorCo.current().context()).runDeferred();
        return null;
    }

    private void finishOnWorker(CorCoLoop loop, CorRest request) {
        FinishBacklog backlog = finishBacklogs.get(loop);
        // behind the ones already waiting, if any: they go first
        if ((backlog == null || backlog.isEmpty()) && submitFinish(request)) {
            return;
        }
        if (backlog == null) {
            backlog = finishBacklogs.computeIfAbsent(loop, FinishBacklog::new);
        }
        backlog.add(request);
    }

    private boolean submitFinish(CorRest request) {
        return workers.submit(() -> runDeferredOnThread(request));
    }

    /** Post-response work that will never run: counted, and logged at most once per interval. */
    private void refuseFinish(CorRest request, String why) {
        finishRefused.increment();
        long now = System.nanoTime();
        long last = lastFinishRefusalLog.get();
        if (now - last >= FINISH_LOG_INTERVAL_NANOS && lastFinishRefusalLog.compareAndSet(last, now)) {
            LOG.log(System.Logger.Level.WARNING, "cor: the post-response work of " + request + " was dropped: " + why
                    + " (" + finishRefused.sum() + " dropped since the start; this is logged at most every "
                    + TimeUnit.NANOSECONDS.toSeconds(FINISH_LOG_INTERVAL_NANOS) + " s)");
        }
    }

    /**
     * The post-response phases of one loop that found every worker busy, in order, each waiting
     * for a worker until its deadline. Bounded in number; retried every
     * {@link #FINISH_RETRY_MS} by one timer; refused (counted, logged) past either bound; and
     * accounted for when the loop stops with some still waiting. Its loop's thread only.
     */
    private final class FinishBacklog {
        private final CorCoLoop loop;
        private final ArrayDeque<CorRest> waiting = new ArrayDeque<>();
        private final ArrayDeque<Long> deadlines = new ArrayDeque<>();
        private CorCoTimer timer;

        FinishBacklog(CorCoLoop loop) {
            this.loop = loop;
        }

        boolean isEmpty() {
            return waiting.isEmpty();
        }

        void add(CorRest request) {
            if (waiting.size() >= finishMaxWaiting) {
                refuseFinish(request, "every worker is busy and " + waiting.size() + " post-response phases already wait on "
                        + loop.name());
                return;
            }
            waiting.addLast(request);
            deadlines.addLast(System.nanoTime() + finishMaxWaitNanos);
            finishWaiting.incrementAndGet();
            if (timer == null || !timer.pending()) {
                timer = loop.schedule(FINISH_RETRY_MS, this::retry, this::loopStopped);
            }
        }

        private CorRest poll() {
            deadlines.pollFirst();
            finishWaiting.decrementAndGet();
            return waiting.pollFirst();
        }

        private void retry() {
            while (!waiting.isEmpty() && submitFinish(waiting.peekFirst())) {
                poll();
            }
            long now = System.nanoTime();
            while (!waiting.isEmpty() && now - deadlines.peekFirst() >= 0) {
                refuseFinish(poll(), "no worker was free for " + TimeUnit.NANOSECONDS.toMillis(finishMaxWaitNanos) + " ms");
            }
            if (!waiting.isEmpty()) {
                timer = loop.schedule(FINISH_RETRY_MS, this::retry, this::loopStopped);
            } else {
                finishBacklogs.remove(loop, this); // the next one that waits starts afresh
            }
        }

        /** The loop stops with work still waiting: one last try each, and say how many there were. */
        private void loopStopped() {
            finishBacklogs.remove(loop, this);
            int pending = waiting.size();
            int handed = 0;
            while (!waiting.isEmpty()) {
                CorRest r = poll();
                if (submitFinish(r)) {
                    handed++;
                } else {
                    finishRefused.increment();
                }
            }
            LOG.log(System.Logger.Level.WARNING, "cor: loop " + loop.name() + " stopped with " + pending
                    + " post-response phase(s) waiting for a worker: " + handed + " handed to a worker at last, "
                    + (pending - handed) + " dropped");
        }
    }

    private static void runDeferredOnThread(CorRest request) {
        try {
            CorRest.runOnThread(request, request::runDeferred);
        } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, "cor: post-response work of " + request + " failed", e);
        }
    }

    /** How often a handler's failure (a 500) is logged with its stack trace, per dispatcher, i.e. per server. */
    static final long ERROR_LOG_INTERVAL_MS = 10_000;

    /** Handlers' failures answered 500: one stack trace per interval, the others counted into the next line. */
    private final CorCoLogLimiter errorLog = new CorCoLogLimiter(LOG, ERROR_LOG_INTERVAL_MS);

    private void failRequest(CorRest request, Throwable t) {
        if (t instanceof CorRestException e) {
            request.fail(e);
        } else if (t instanceof CorCoCancelledException) {
            request.fail(request.isCancelled()
                    ? new CorRestException(499, "Client Closed Request", "the caller gave up")
                    : new CorRestException(503, "Service Unavailable", "the server is stopping"));
        } else {
            // On the loop, synchronously: a storm of 500s must not become a storm of stack traces.
            errorLog.log(System.Logger.Level.WARNING, () -> "cor: " + request + " failed", t);
            request.fail(new CorRestException(500, "Internal Server Error", t.getClass().getSimpleName()
                    + (t.getMessage() != null ? ": " + t.getMessage() : "")));
        }
    }

    // ---------------------------------------------------------------- counters

    public long inlineCount() {
        return inline.sum();
    }

    public long coroutineCount() {
        return coroutines.sum();
    }

    public long hopCount() {
        return hops.sum();
    }

    /** Requests answered 503 because the workers were full. */
    public long refusedCount() {
        return refused.sum();
    }

    public long finishInlineCount() {
        return finishInline.sum();
    }

    public long finishCoroutineCount() {
        return finishCoroutines.sum();
    }

    public long finishHopCount() {
        return finishHops.sum();
    }

    /**
     * Post-response phases dropped: every worker was busy and the loop's backlog was full, or no
     * worker came free within the wait allowed, or the loop stopped and no worker took them.
     */
    public long finishRefusedCount() {
        return finishRefused.sum();
    }

    /** Post-response phases waiting for a worker now, on every loop. */
    public int finishWaitingCount() {
        return finishWaiting.get();
    }

    public CorRestWorkers workers() {
        return workers;
    }

    /** Builds a dispatcher: the application and the workers are required, the hooks optional. */
    public static final class Builder {
        private CorRestApplication app;
        private CorRestCoroutineHook coroutineHook;
        private CorRestFinishCoroutineHook finishHook;
        private CorRestWorkers workers;
        private int finishMaxWaiting = DEFAULT_FINISH_MAX_WAITING;
        private long finishMaxWaitMs = DEFAULT_FINISH_MAX_WAIT_MS;

        private Builder() {
        }

        public Builder application(CorRestApplication app) {
            this.app = app;
            return this;
        }

        public Builder coroutineHook(CorRestCoroutineHook hook) {
            this.coroutineHook = hook;
            return this;
        }

        public Builder finishCoroutineHook(CorRestFinishCoroutineHook hook) {
            this.finishHook = hook;
            return this;
        }

        /** Takes the first {@link ServiceLoader} provider of each hook not set explicitly. */
        public Builder discoverHooks() {
            if (coroutineHook == null) {
                coroutineHook = ServiceLoader.load(CorRestCoroutineHook.class).findFirst().orElse(null);
            }
            if (finishHook == null) {
                finishHook = ServiceLoader.load(CorRestFinishCoroutineHook.class).findFirst().orElse(null);
            }
            return this;
        }

        public Builder workers(CorRestWorkers workers) {
            this.workers = workers;
            return this;
        }

        /**
         * How much post-response work that finds every worker busy may wait for one: at most
         * {@code maxWaitingPerLoop} phases per loop (default 1024), each for at most
         * {@code maxWaitMs} (default 10 s). Past either, a phase is dropped, counted
         * ({@link CorRestDispatcher#finishRefusedCount()}) and logged.
         */
        public Builder finishBacklog(int maxWaitingPerLoop, long maxWaitMs) {
            if (maxWaitingPerLoop < 0) {
                throw new IllegalArgumentException("post-response backlog must be >= 0: " + maxWaitingPerLoop);
            }
            if (maxWaitMs < 0) {
                throw new IllegalArgumentException("post-response wait must be >= 0: " + maxWaitMs);
            }
            this.finishMaxWaiting = maxWaitingPerLoop;
            this.finishMaxWaitMs = maxWaitMs;
            return this;
        }

        public CorRestDispatcher build() {
            CorRestJson.mapper(); // built now, at wiring time, not by the first request on a loop
            return new CorRestDispatcher(this);
        }
    }
}
