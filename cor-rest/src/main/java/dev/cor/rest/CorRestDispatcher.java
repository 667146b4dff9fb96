package dev.cor.rest;

import java.util.Objects;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.LongAdder;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoCancelledException;
import dev.cor.base.CorCoListener;
import dev.cor.base.CorCoLogLimiter;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTask;

/**
 * The dispatch decision, made on the loop L that read a request:
 * <ol>
 * <li>can it wait at all ({@link CorRestApplication#canWait})? no: inline on L;</li>
 * <li>may it be a coroutine ({@link CorRestCoroutineHook}) and is L under its cap? yes: a
 * coroutine of L, which answers from inside itself when done;</li>
 * <li>otherwise the worker hop, its answer handed back to L.</li>
 * </ol>
 * Then, after the answer, the post-response phase ({@link CorRest#defer}) decided the same way
 * through {@link CorRestFinishCoroutineHook}.
 * <p>
 * Shared by every loop of a server (cor-http, {@code cor://}): {@link #dispatch} is called on a
 * loop thread; the counters are safe to read from any thread.
 */
public final class CorRestDispatcher {
    private static final System.Logger LOG = System.getLogger(CorRestDispatcher.class.getName());

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

    // One task and one listener for every request coroutine: the request travels as the coroutine's context.
    private final CorCoTask requestTask = this::runRequestCoroutine;
    private final CorCoListener requestDone = this::requestCoroutineDone;
    private final CorCoTask finishTask = this::runFinishCoroutine;

    private CorRestDispatcher(Builder b) {
        this.app = Objects.requireNonNull(b.app, "application");
        this.workers = Objects.requireNonNull(b.workers, "workers");
        this.coroutineHook = b.coroutineHook;
        this.finishHook = b.finishHook;
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
            runInline(request);
            return Path.INLINE;
        }
        if (coroutineHook != null && coroutineHook.mayBeCoroutine(request)) {
            CorCo co = CorCo.create(requestTask, requestDone);
            if (co != null) {
                coroutines.increment();
                co.context(request);
                co.resume();
                return Path.COROUTINE;
            }
        }
        hops.increment();
        hop(loop, request);
        return Path.HOP;
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
        answer((CorRest) co.context());
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
        if (!workers.submit(() -> runDeferredOnThread(request))) {
            // Nothing lost: try again shortly rather than drop the notifications or block the loop.
            loop.schedule(10, () -> finishOnWorker(loop, request));
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
            request.fail(new CorRestException(503, "Service Unavailable", "the server is stopping"));
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

    public CorRestWorkers workers() {
        return workers;
    }

    /** Builds a dispatcher: the application and the workers are required, the hooks optional. */
    public static final class Builder {
        private CorRestApplication app;
        private CorRestCoroutineHook coroutineHook;
        private CorRestFinishCoroutineHook finishHook;
        private CorRestWorkers workers;

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

        public CorRestDispatcher build() {
            CorRestJson.mapper(); // built now, at wiring time, not by the first request on a loop
            return new CorRestDispatcher(this);
        }
    }
}
