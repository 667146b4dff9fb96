package dev.cor.base;

import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A stackful coroutine of one {@link CorCoLoop}: the switch.
 * <p>
 * A coroutine runs a {@link CorCoTask} on its loop's thread. Where the task would block it
 * waits instead - on a channel ({@link #waitFd}), a deadline ({@link #sleep}), another coroutine
 * ({@link #park}/{@link #wake}), a blocking call run elsewhere ({@link #blocking}) or a result
 * another thread completes ({@link #await}) - and its
 * loop serves everything else until the wait is over, then resumes it on the same thread. It
 * never migrates: only its loop's thread runs it.
 * <p>
 * Coroutines are pooled per loop: a finished coroutine's continuation goes back to its loop's
 * pool and runs the next task, so the steady state allocates no continuation. A handle is
 * therefore valid for one task: from {@link #start} until its {@link CorCoListener} returns
 * (its {@link #taskId()} tells one task from the next).
 * <p>
 * The static waits may be called only inside a coroutine; {@link #current()} says whether
 * there is one. Every wait throws {@link CorCoCancelledException} once the loop stops.
 */
public final class CorCo {
    /** {@code -Dcor.debug=true}: a yield with a {@link CorCoLock} held fails loudly. */
    static final boolean DEBUG = Boolean.getBoolean("cor.debug");

    /** The life of one task on a coroutine. */
    public enum State {
        /** Created, not yet run: {@link #resume()} starts it. */
        NEW,
        /** Mounted on its loop's thread (running, or the starter of a running child). */
        RUNNING,
        /** Waiting: its frames are off the thread until its loop resumes it. */
        SUSPENDED,
        /** Its task has finished; the handle may be reused for another task. */
        DONE
    }

    // What a suspended coroutine waits for; decides who may resume it.
    static final int WAIT_NONE = 0;
    static final int WAIT_YIELD = 1;
    static final int WAIT_FD = 2;
    static final int WAIT_SLEEP = 3;
    static final int WAIT_PARK = 4;
    static final int WAIT_POOL = 5;

    final CorCoLoop loop;
    private final Runnable body = this::body;
    private CoContinuation cont;

    State state = State.DONE;
    int waitKind;
    private CorCoTask task;
    private CorCoListener listener;
    private long taskId;
    private Object result;
    private Throwable error;
    private boolean overflowed;
    private Object context;

    // The current wait. Loop thread only.
    int readyOps;
    boolean cancelled;
    /** Why it was cancelled, when not by its loop's stop. */
    String cancelReason;
    boolean permit;
    boolean queued;
    SelectionKey waitKey;
    Object savedAttachment;
    int savedOps;
    final Deadline deadline = new Deadline() {
        @Override
        void expire() {
            loop.waitExpired(CorCo.this);
        }
    };

    // The loop's intrusive list of live coroutines.
    CorCo prevLive;
    CorCo nextLive;

    CorCo(CorCoLoop loop) {
        this.loop = loop;
    }

    // ---------------------------------------------------------------- starting

    /**
     * Starts {@code task} as a coroutine of the current thread's loop and runs it until it
     * first waits or finishes.
     *
     * @return the coroutine (already {@link State#DONE} if the task never waited), or
     *         {@code null} when the loop refuses: its cap of live coroutines is reached,
     *         coroutines are off, or it is stopping - run the task another way (the hop)
     * @throws IllegalStateException outside a loop thread
     */
    public static CorCo start(CorCoTask task, CorCoListener listener) {
        CorCo co = requireLoop("start a coroutine").create(task, listener);
        if (co != null) {
            co.mount();
        }
        return co;
    }

    /** {@link #start(CorCoTask, CorCoListener)} with no listener. */
    public static CorCo start(CorCoTask task) {
        return start(task, null);
    }

    /**
     * Creates {@code task} as a coroutine of the current thread's loop without running it:
     * it is {@link State#NEW} until {@link #resume()}. Counts against the cap from now on.
     *
     * @return the coroutine, or {@code null} when the loop refuses (see {@link #start})
     */
    public static CorCo create(CorCoTask task, CorCoListener listener) {
        return requireLoop("create a coroutine").create(task, listener);
    }

    void prepare(CorCoTask task, CorCoListener listener, long taskId, Object context) {
        this.context = context;
        this.task = task;
        this.listener = listener;
        this.taskId = taskId;
        this.result = null;
        this.error = null;
        this.cancelled = false;
        this.cancelReason = null;
        this.permit = false;
        this.readyOps = 0;
        this.state = State.NEW;
    }

    // ---------------------------------------------------------------- the switch

    /**
     * Runs a coroutine that is {@link State#NEW}, or one suspended in {@link #yield()}, until it
     * next waits or finishes. Its loop's thread only. A coroutine waiting in one of the loop's
     * waits (channel, deadline, park, blocking) is resumed by its loop, not by hand.
     */
    public void resume() {
        if (!loop.inLoop()) {
            throw new IllegalStateException("resume of " + name() + " from thread " + Thread.currentThread().getName()
                    + " refused: only its loop's thread " + loop.name() + " may resume it");
        }
        if (!(state == State.NEW || (state == State.SUSPENDED && waitKind == WAIT_YIELD))) {
            throw new IllegalStateException("resume of " + name() + " refused: it is " + describeState());
        }
        mount();
    }

    /** Mounts the coroutine on the loop's thread; returns when it next suspends or finishes. */
    void mount() {
        CorCoLoop l = loop;
        CorCo starter = l.current;
        l.current = this;
        state = State.RUNNING;
        try {
            if (cont == null) {
                cont = new CoContinuation(this, body);
            }
            cont.run();
        } finally {
            l.current = starter;
        }
        if (cont.isDone()) {
            cont = null;
        }
    }

    /**
     * Suspends the running coroutine until {@link #resume()} is called on it (by its loop's
     * thread). The plain switch: the loop's own waits are built on it.
     *
     * @throws CorCoCancelledException if the loop is stopping
     */
    public static void yield() {
        requireCurrent("yield").suspend(WAIT_YIELD);
    }

    void suspend(int kind) {
        if (cancelled) {
            throw cancelledException();
        }
        if (DEBUG && loop.locksHeld != 0) {
            throw new CorCoException(name() + " yields holding " + loop.locksHeld
                    + " CorCoLock(s): the next coroutine of " + loop.name()
                    + " to take one would deadlock the loop or enter its critical section");
        }
        waitKind = kind;
        state = State.SUSPENDED;
        try {
            CoContinuation.suspend();
        } catch (RuntimeException | Error pinned) {
            state = State.RUNNING;
            throw pinned;
        } finally {
            waitKind = WAIT_NONE;
        }
        if (cancelled) {
            throw cancelledException();
        }
    }

    CorCoCancelledException cancelledException() {
        String why = cancelReason;
        return why == null ? new CorCoCancelledException(name()) : new CorCoCancelledException(name(), why);
    }

    /**
     * Cancels this coroutine's task ({@code taskId}: the task meant, so that a pooled handle
     * already running the next task is left alone): a wait it is suspended in ends at once, in
     * the loop's next round, by throwing {@link CorCoCancelledException}, and so does every
     * later wait - the task can only unwind. A task that does not wait again runs to its end.
     * Its loop's thread only; a task already done is left alone.
     *
     * @return whether the task was still live and is now cancelled
     */
    public boolean cancel(long taskId, String why) {
        loop.checkInLoop("cancel a coroutine");
        if (this.taskId != taskId || state == State.DONE || cancelled) {
            return false;
        }
        cancelled = true;
        cancelReason = why;
        loop.cancelWait(this);
        return true;
    }

    private void body() {
        do {
            runTask();
        } while (loop.recycle(this));
    }

    private void runTask() {
        Object r = null;
        Throwable err = null;
        if (cancelled) {
            err = cancelledException();
        } else {
            try {
                r = task.run();
            } catch (StackOverflowError e) {
                overflowed = true;
                err = new CorCoException(name() + ": stack overflow inside the coroutine (the loop thread's stack is "
                        + loop.stackSizeText() + "; raise it with the loop's stackSize)", e);
            } catch (Throwable t) {
                err = t;
            }
        }
        result = r;
        error = err;
        CorCoListener l = listener;
        if (l != null) {
            try {
                l.onDone(this);
            } catch (StackOverflowError e) {
                overflowed = true;
                loop.logListenerFailure(this, e);
            } catch (Throwable t) {
                loop.logListenerFailure(this, t);
            }
        } else if (err != null && !(err instanceof CorCoCancelledException)) {
            loop.logUnobservedFailure(this, err);
        }
        task = null;
        listener = null;
        context = null;
        state = State.DONE;
        loop.finished(this);
    }

    /** Whether the continuation died with its task (a stack overflow): the pool must not take it back. */
    boolean overflowed() {
        return overflowed;
    }

    // ---------------------------------------------------------------- the waits

    /**
     * Waits until {@code channel} is ready for {@code ops} ({@link SelectionKey} bits) or
     * {@code timeoutMs} has passed - {@code poll()} on one channel, inside a coroutine. The
     * channel is registered with the loop's selector the first time and stays registered, its
     * interest disarmed, between waits. One coroutine waits on a channel at a time.
     *
     * @param channel   a channel in non-blocking mode
     * @param timeoutMs the deadline, in milliseconds; negative for none
     * @return the ready operations, or 0 when the timeout passed first
     * @throws CorCoCancelledException if the loop is stopping
     * @throws IllegalStateException   outside a coroutine, or if another coroutine waits on the channel
     */
    public static int waitFd(SelectableChannel channel, int ops, long timeoutMs) throws IOException {
        CorCo co = requireCurrent("waitFd");
        return co.loop.waitFd(co, channel, ops, timeoutMs);
    }

    /**
     * Suspends the running coroutine for {@code ms} milliseconds: a deadline wait, the loop
     * serving everyone else meanwhile. {@code sleep(0)} lets the loop run one round.
     */
    public static void sleep(long ms) {
        CorCo co = requireCurrent("sleep");
        co.loop.sleep(co, ms);
    }

    /**
     * Suspends the running coroutine until another wakes it ({@link #wake()}) or
     * {@code timeoutMs} passes (negative: no timeout). Like {@code LockSupport.park}, a wake
     * that came first is not lost, and a return may be spurious: re-check the condition.
     *
     * @return {@code true} if woken, {@code false} on timeout
     */
    public static boolean park(long timeoutMs) {
        CorCo co = requireCurrent("park");
        if (co.permit) {
            co.permit = false;
            return true;
        }
        return co.loop.park(co, timeoutMs);
    }

    /**
     * Wakes this coroutine if it is parked, or lets its next {@link #park} return at once. Any
     * thread may call it; from another thread it goes through the loop's inbox.
     */
    public void wake() {
        if (loop.inLoop()) {
            loop.wakeParked(this);
        } else {
            loop.execute(() -> loop.wakeParked(this));
        }
    }

    /**
     * {@link #blocking(Callable, long)}'s "no deadline": for a call that ends by itself (it has
     * a timeout of its own). Every other wait has a deadline (design rule 6).
     */
    public static final long NO_DEADLINE = -1;

    /**
     * Runs a call that blocks inside code that knows nothing of the loop (a library's client,
     * name resolution) on a helper thread, and waits for it until {@code timeoutMs} has passed:
     * inside a coroutine the coroutine waits (the loop serves everyone else and is woken through
     * its inbox when the call is done), on a plain thread (a worker) the thread waits. Past the
     * deadline the waiter goes on with a {@link CorCoTimeoutException} and the helper thread is
     * interrupted; a call that ignores interrupts keeps its helper thread until it returns, but
     * no longer its caller.
     * <p>
     * With {@link #NO_DEADLINE} a plain thread runs the call itself, right here.
     *
     * @param timeoutMs the deadline in milliseconds: 0 has passed already (the call never runs),
     *                  {@link #NO_DEADLINE} (any negative) is none
     * @return what the call returned
     * @throws Exception               what the call threw
     * @throws CorCoTimeoutException   past the deadline
     * @throws CorCoCancelledException if the loop stops meanwhile (the call is interrupted, or never begins)
     * @throws InterruptedException    a plain thread interrupted while it waits (the call is interrupted too)
     * @throws IllegalStateException   on a loop thread outside a coroutine: a loop never blocks
     */
    public static <T> T blocking(Callable<T> call, long timeoutMs) throws Exception {
        Objects.requireNonNull(call, "call");
        CorCo co = current();
        if (co == null) {
            CorCoLoop loop = CorCoLoop.current();
            if (loop != null) {
                throw new IllegalStateException("a blocking call on loop thread " + loop.name()
                        + " outside a coroutine: a loop never blocks (run it in a coroutine or on another thread)");
            }
        }
        String who = co != null ? co.name() : Thread.currentThread().getName();
        if (timeoutMs == 0) {
            throw BlockingCall.timedOut(who, 0);
        }
        if (co != null) {
            return co.loop.blocking(co, call, timeoutMs);
        }
        return timeoutMs < 0 ? call.call() : BlockingCall.onHelper(call, timeoutMs, who);
    }

    /**
     * Waits until {@code future} is complete or {@code timeoutMs} has passed: inside a coroutine
     * the coroutine parks (whichever thread completes the future wakes it, through the loop's
     * inbox) and its loop serves everyone else; on a plain thread (a worker) the thread waits.
     * For a result produced in its own time by someone else - one connection that several
     * waiters share, an acknowledgement a library reports on its own thread - with no helper
     * thread per waiter. A waiter that gives up leaves the future as it is: it is not cancelled,
     * and its completion later wakes nobody (a pooled handle's next task is left alone).
     *
     * @param timeoutMs the deadline in milliseconds: 0 has passed already (only a future done by
     *                  now gives its outcome); every wait has one
     * @return its value
     * @throws Exception               what it completed with exceptionally (the cause itself), or a
     *                                 {@link java.util.concurrent.CancellationException} if it was cancelled
     * @throws CorCoTimeoutException   past the deadline
     * @throws CorCoCancelledException if the loop stops meanwhile
     * @throws InterruptedException    a plain thread interrupted while it waits
     * @throws IllegalStateException   on a loop thread outside a coroutine: a loop never blocks
     * @throws IllegalArgumentException for a negative deadline
     */
    public static <T> T await(CompletableFuture<T> future, long timeoutMs) throws Exception {
        Objects.requireNonNull(future, "future");
        if (timeoutMs < 0) {
            throw new IllegalArgumentException("every wait has a deadline: " + timeoutMs + " ms");
        }
        if (!future.isDone()) {
            CorCo co = current();
            if (co != null) {
                co.awaitParked(future, timeoutMs);
            } else {
                CorCoLoop loop = CorCoLoop.current();
                if (loop != null) {
                    throw new IllegalStateException("an await on loop thread " + loop.name()
                            + " outside a coroutine: a loop never blocks (await in a coroutine or on another thread)");
                }
                try {
                    future.get(timeoutMs, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    throw awaitTimedOut(Thread.currentThread().getName(), timeoutMs);
                } catch (ExecutionException e) {
                    // its outcome, below
                }
            }
        }
        try {
            return future.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception x) {
                throw x;
            }
            if (cause instanceof Error x) {
                throw x;
            }
            throw e;
        }
    }

    private void awaitParked(CompletableFuture<?> future, long timeoutMs) throws CorCoTimeoutException {
        long task = taskId;
        future.whenComplete((v, e) -> wakeTask(task));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!future.isDone()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw awaitTimedOut(name(), timeoutMs);
            }
            park((left + 999_999) / 1_000_000); // a wake for another reason: look again
        }
    }

    private static CorCoTimeoutException awaitTimedOut(String who, long timeoutMs) {
        return new CorCoTimeoutException(who + ": what it awaited was not done within its " + timeoutMs + " ms deadline");
    }

    /** Wakes this coroutine if it still runs task {@code task} (a pooled handle runs the next task later). Any thread. */
    private void wakeTask(long task) {
        Runnable r = () -> {
            if (taskId == task) {
                loop.wakeParked(this);
            }
        };
        if (loop.inLoop()) {
            r.run();
        } else {
            try {
                loop.execute(r);
            } catch (RejectedExecutionException e) {
                // the loop has ended: its coroutines were cancelled
            }
        }
    }

    // ---------------------------------------------------------------- looking

    /** The coroutine running on this thread, or {@code null} outside one. */
    public static CorCo current() {
        // The mounted continuation knows its coroutine: no thread-local look-up on the yield path.
        return CorCoSupport.available() ? CoContinuation.currentOwner() : null;
    }

    public State state() {
        return state;
    }

    /** The task's return value, once it is {@link State#DONE} (and until the handle is reused). */
    public Object result() {
        return result;
    }

    /** What the task threw, or {@code null}; once it is {@link State#DONE}. */
    public Throwable error() {
        return error;
    }

    /**
     * What this coroutine works for - a server puts the request it runs here, so that "the
     * current request" follows the coroutine across its yields with no thread-local. A coroutine
     * started from inside another inherits its starter's context.
     */
    public Object context() {
        return context;
    }

    /** Sets {@link #context()}. Its loop's thread only. */
    public void context(Object context) {
        this.context = context;
    }

    /** Whether this coroutine's task was cancelled: its loop is stopping, or {@link #cancel} was called. */
    public boolean isCancelled() {
        return cancelled;
    }

    /** The task's number on its loop: tells one use of a pooled handle from the next. */
    public long taskId() {
        return taskId;
    }

    public CorCoLoop loop() {
        return loop;
    }

    /** {@code co-<task id>@<loop name>}: how errors and logs name it. */
    public String name() {
        return "co-" + taskId + "@" + loop.name();
    }

    @Override
    public String toString() {
        return name() + "[" + describeState() + "]";
    }

    private String describeState() {
        if (state != State.SUSPENDED) {
            return state.name().toLowerCase(java.util.Locale.ROOT);
        }
        return switch (waitKind) {
            case WAIT_YIELD -> "suspended in yield";
            case WAIT_FD -> "waiting on a channel";
            case WAIT_SLEEP -> "sleeping";
            case WAIT_PARK -> "parked";
            default -> "suspended";
        };
    }

    private static CorCoLoop requireLoop(String what) {
        CorCoLoop loop = CorCoLoop.current();
        if (loop == null) {
            throw new IllegalStateException("cannot " + what + " on thread " + Thread.currentThread().getName()
                    + ": not a loop thread (hand the work to a loop with CorCoLoop.execute)");
        }
        return loop;
    }

    private static CorCo requireCurrent(String what) {
        CorCo co = current();
        if (co == null) {
            throw new IllegalStateException(what + " called outside a coroutine (thread "
                    + Thread.currentThread().getName() + ")");
        }
        return co;
    }
}
