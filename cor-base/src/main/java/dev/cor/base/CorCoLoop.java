package dev.cor.base;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.jctools.queues.MessagePassingQueue;
import org.jctools.queues.atomic.MpscUnboundedAtomicArrayQueue;

/**
 * One event loop and the scheduler of its coroutines: a platform thread over one
 * {@link Selector}.
 * <p>
 * Each round the loop selects (its timeout the next deadline), then handles the ready channels -
 * a channel a coroutine waits on resumes that coroutine; any other goes to the
 * {@link CorCoLoopHandler} its owner registered - then runs its inbox, expires its deadlines and
 * resumes the coroutines woken meanwhile. Before it selects again it runs the tasks queued with
 * {@link #beforeNextSelect}: what is cheaper done once per round than once per event.
 * <p>
 * <b>Threading.</b> Everything the loop owns - its selector, its coroutines, their pool, its
 * deadlines - is touched by its own thread only (single writer); the methods that say "loop
 * thread only" check it. Any other thread reaches the loop only through {@link #execute}
 * (a multi-producer, single-consumer inbox and one {@link Selector#wakeup()}), {@link #stop()}
 * and {@link CorCo#wake()}.
 * <p>
 * A watchdog reports, once per stall and with its stack trace, a loop that has not come back to
 * {@code select} for longer than a threshold (default 2 s): a loop must never block.
 */
public final class CorCoLoop implements Executor {
    private static final System.Logger LOG = System.getLogger(CorCoLoop.class.getName());
    private static final ThreadLocal<CorCoLoop> CURRENT = new ThreadLocal<>();
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    /** Default cap of live coroutines per loop. */
    public static final int DEFAULT_COROUTINE_CAP = 1024;
    /** Default watchdog threshold, in milliseconds. */
    public static final long DEFAULT_WATCHDOG_MS = 2000;
    /** Default number of premature empty selects in a row before the selector is rebuilt. */
    public static final int DEFAULT_SPIN_THRESHOLD = 512;

    // Wake protocol (design rule 7): the loop announces it may sleep, producers wake it at most once.
    private static final int AWAKE = 0;
    private static final int MAY_SLEEP = 1;
    private static final int WAKEUP_SENT = 2;
    private static final VarHandle WAKE_STATE;
    // The inbox gate: other threads inside execute, and this bit once the loop's final drain has begun.
    private static final int INBOX_CLOSED = Integer.MIN_VALUE;
    private static final VarHandle PRODUCERS;

    static {
        try {
            WAKE_STATE = MethodHandles.lookup().findVarHandle(CorCoLoop.class, "wakeState", int.class);
            PRODUCERS = MethodHandles.lookup().findVarHandle(CorCoLoop.class, "producers", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String name;
    private final int coroutineCap;
    private final int poolMax;
    private final long stackSize;
    private final long watchdogNanos;
    private final int spinThreshold;
    private final Executor blockingExecutor;

    private Selector selector;
    private final MpscUnboundedAtomicArrayQueue<Runnable> inbox = new MpscUnboundedAtomicArrayQueue<>(1024);
    private final MessagePassingQueue.Consumer<Runnable> runInboxTask = this::runInboxTask;
    private final Consumer<SelectionKey> collectKey = this::collectKey;
    private SelectionKey[] readyKeys = new SelectionKey[256];
    private int readyKeyCount;
    private final DeadlineHeap deadlines = new DeadlineHeap();
    private final ArrayDeque<CorCo> ready = new ArrayDeque<>();
    private final ArrayDeque<CorCo> pool = new ArrayDeque<>();
    private Runnable[] beforeSelect = new Runnable[16];
    private int beforeSelectCount;

    @SuppressWarnings("unused") // through WAKE_STATE
    private volatile int wakeState;
    @SuppressWarnings("unused") // through PRODUCERS
    private volatile int producers;
    private Thread thread; // set before the loop runs; another thread that sees it late is not the loop either
    private volatile boolean stopping;
    private final CountDownLatch terminated = new CountDownLatch(1);

    /** The coroutine mounted on the loop's thread now, or null. */
    CorCo current;
    /** CorCoLocks held by the loop's thread (counted with -Dcor.debug=true only). */
    int locksHeld;

    private CorCo liveHead;
    private int live;
    private long taskSequence;
    private long startedCount;
    private long refusedCount;
    private int prematureSelects;
    private volatile int selectorRebuilds;

    // Watchdog: when the loop last came back from select (0 = inside select), and the stall reported.
    volatile long busySinceNanos;
    long stallReported;

    private CorCoLoop(Builder b) throws IOException {
        this.name = b.name != null ? b.name : "cor-loop-" + SEQUENCE.getAndIncrement();
        this.coroutineCap = CorCoSupport.available() ? b.coroutineCap : 0;
        this.poolMax = Math.min(b.poolMax, Math.max(coroutineCap, 0));
        this.stackSize = b.stackSize;
        this.watchdogNanos = TimeUnit.MILLISECONDS.toNanos(b.watchdogMs);
        this.spinThreshold = b.spinThreshold;
        this.blockingExecutor = b.blockingExecutor != null ? b.blockingExecutor : BlockingPool.shared();
        this.selector = Selector.open();
    }

    /** A builder of a loop; {@code build()} opens its selector, {@link #start()} its thread. */
    public static Builder builder() {
        return new Builder();
    }

    /** The loop whose thread this is, or {@code null}. */
    public static CorCoLoop current() {
        return CURRENT.get();
    }

    // ---------------------------------------------------------------- life

    /** Starts the loop's own thread. */
    public CorCoLoop start() {
        Thread t = new Thread(null, this::run, name, stackSize);
        t.setDaemon(false);
        bind(t);
        t.start();
        return this;
    }

    /**
     * Makes the calling thread this loop's thread without starting one: the caller then drives
     * the loop with {@link #runOnce(long)} (an embedding host with a thread of its own, a test,
     * a benchmark). Ends with {@link #stop()} followed by one more {@code runOnce}.
     */
    public CorCoLoop attach() {
        bind(Thread.currentThread());
        CURRENT.set(this);
        return this;
    }

    private synchronized void bind(Thread t) {
        if (thread != null) {
            throw new IllegalStateException(name + " already has its thread " + thread.getName());
        }
        thread = t;
        CorCoWatchdog.watch(this);
    }

    private void run() {
        CURRENT.set(this);
        try {
            while (!stopping) {
                runRound(-1);
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "cor: loop " + name + " failed", t);
        } finally {
            shutdown();
        }
    }

    /**
     * One round of an {@link #attach() attached} loop: waits at most {@code maxWaitMs} (0: do not
     * wait) for channels, inbox or deadlines, then handles what is ready. After {@link #stop()} it
     * cancels every coroutine, closes the selector and returns {@code false}.
     *
     * @return whether the loop goes on
     */
    public boolean runOnce(long maxWaitMs) {
        checkInLoop("run a round");
        if (isTerminated()) {
            return false;
        }
        if (!stopping) {
            try {
                runRound(Math.max(0, maxWaitMs));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        if (stopping) {
            shutdown();
            return false;
        }
        return true;
    }

    /**
     * Stops the loop: wakes it at once; it resumes every suspended coroutine with a
     * {@link CorCoCancelledException}, closes its selector and ends. Any thread; returns at once
     * ({@link #awaitTermination} waits). Channels registered by handlers stay open: their owners close them.
     */
    public void stop() {
        stopping = true;
        if (!inLoop()) {
            selector.wakeup();
        }
    }

    /** Waits until the loop has ended; {@code true} if it has. */
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return terminated.await(timeout, unit);
    }

    public boolean isStopping() {
        return stopping;
    }

    public boolean isTerminated() {
        return terminated.getCount() == 0;
    }

    // ---------------------------------------------------------------- the round

    private void runRound(long maxWaitMs) throws IOException {
        runBeforeSelect(); // what the host of an attached loop queued between rounds
        busySinceNanos = 0;
        long now = System.nanoTime();
        long timeoutMs = selectTimeoutMs(now, maxWaitMs);
        WAKE_STATE.setVolatile(this, MAY_SLEEP);
        int keys;
        boolean waited = timeoutMs != 0 && inbox.isEmpty() && !stopping;
        if (!waited) {
            keys = selector.selectNow(collectKey);
        } else if (timeoutMs < 0) {
            keys = selector.select(collectKey);
        } else {
            keys = selector.select(collectKey, timeoutMs);
        }
        int wake = (int) WAKE_STATE.getAndSet(this, AWAKE);
        now = System.nanoTime();
        busySinceNanos = now;
        // Only a select that was to wait and came back empty, unwoken, is the epoll spin: one that
        // did not wait because tasks were already in (they came without a wakeup) is not.
        if (keys == 0 && waited && wake != WAKEUP_SENT && !stopping) {
            checkSpin(now, timeoutMs);
        } else {
            prematureSelects = 0;
        }

        handleReadyKeys();
        inbox.drain(runInboxTask, 4096);
        expireDeadlines();
        runReady();
        runBeforeSelect();
    }

    /** The tasks queued for this point, in order; those they queue in turn run in the same pass. */
    private void runBeforeSelect() {
        for (int i = 0; i < beforeSelectCount; i++) {
            // the field each time: a task that queues another may have grown the array
            Runnable task = beforeSelect[i];
            beforeSelect[i] = null;
            runTask(task, "a task run before select");
        }
        beforeSelectCount = 0;
    }

    private long selectTimeoutMs(long now, long maxWaitMs) {
        if (!ready.isEmpty()) {
            return 0;
        }
        long next = deadlines.nextWhen();
        long ms;
        if (next == Long.MAX_VALUE) {
            ms = -1;
        } else {
            long nanos = next - now;
            ms = nanos <= 0 ? 0 : (nanos + 999_999) / 1_000_000;
        }
        if (maxWaitMs >= 0 && (ms < 0 || ms > maxWaitMs)) {
            ms = maxWaitMs;
        }
        return ms;
    }

    private long spinStartNanos;

    /** An empty select that returned long before its timeout and nobody woke: the epoll spin. */
    private void checkSpin(long now, long timeoutMs) {
        if (prematureSelects == 0) {
            spinStartNanos = now;
        }
        long elapsedMs = (now - spinStartNanos) / 1_000_000;
        if (timeoutMs > 0 && elapsedMs >= timeoutMs) {
            prematureSelects = 0;
            return;
        }
        if (++prematureSelects >= spinThreshold) {
            LOG.log(System.Logger.Level.WARNING, "cor: loop " + name + ": " + prematureSelects
                    + " empty selects returned early in a row - rebuilding the selector");
            rebuildSelector();
        }
    }

    /**
     * Moves every registration to a new selector (interest and attachment kept) and closes the
     * old one: the remedy for a selector that keeps returning at once with nothing ready.
     */
    void rebuildSelector() {
        checkInLoop("rebuild its selector");
        Selector old = selector;
        Selector fresh;
        try {
            fresh = Selector.open();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cor: loop " + name + ": cannot open a new selector", e);
            return;
        }
        for (SelectionKey k : old.keys()) {
            if (!k.isValid()) {
                continue;
            }
            try {
                Object a = k.attachment();
                SelectionKey nk = k.channel().register(fresh, k.interestOps(), a);
                if (a instanceof CorCo co && co.waitKey == k) {
                    co.waitKey = nk;
                }
                k.cancel();
            } catch (ClosedChannelException | CancelledKeyException e) {
                // closed meanwhile: nothing to move
            }
        }
        selector = fresh;
        prematureSelects = 0;
        selectorRebuilds++;
        try {
            old.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "cor: loop " + name + ": closing the old selector", e);
        }
    }

    private void collectKey(SelectionKey key) {
        if (readyKeyCount == readyKeys.length) {
            readyKeys = Arrays.copyOf(readyKeys, readyKeyCount * 2);
        }
        readyKeys[readyKeyCount++] = key;
    }

    private void handleReadyKeys() {
        SelectionKey[] keys = readyKeys;
        int n = readyKeyCount;
        readyKeyCount = 0;
        for (int i = 0; i < n; i++) {
            SelectionKey key = keys[i];
            keys[i] = null;
            Object a = key.attachment();
            if (a instanceof CorCo co) {
                channelReady(co, key);
            } else if (a instanceof CorCoLoopHandler h) {
                runHandler(h, key);
            }
        }
    }

    private void runHandler(CorCoLoopHandler h, SelectionKey key) {
        try {
            if (key.isValid()) {
                h.onReady(key);
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.WARNING, "cor: loop " + name + ": a channel handler failed; its owner closes the channel", t);
            handlerFailed(h, key, t);
        }
    }

    /** {@code h.onReady} threw {@code t}: the owner closes through its own path, or the loop closes the channel. */
    private void handlerFailed(CorCoLoopHandler h, SelectionKey key, Throwable t) {
        try {
            h.failed(key, t);
        } catch (Throwable again) {
            LOG.log(System.Logger.Level.WARNING, "cor: loop " + name + ": a channel handler's failed() threw; closing its channel", again);
            try {
                key.channel().close();
            } catch (IOException e) {
                // closing after a failure: nothing more to do
            }
        }
    }

    private void runInboxTask(Runnable task) {
        runTask(task, "a task handed to the loop");
    }

    private void runTask(Runnable task, String what) {
        try {
            task.run();
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.WARNING, "cor: loop " + name + ": " + what + " failed", t);
        }
    }

    private void expireDeadlines() {
        if (deadlines.size() == 0) {
            return;
        }
        long now = System.nanoTime();
        Deadline d;
        while ((d = deadlines.pollDue(now)) != null) {
            try {
                d.expire();
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.WARNING, "cor: loop " + name + ": a timer failed", t);
            }
        }
    }

    /** Resumes the coroutines woken before this round; those woken meanwhile wait for the next. */
    private void runReady() {
        for (int n = ready.size(); n > 0; n--) {
            CorCo co = ready.poll();
            co.queued = false;
            if (co.state == CorCo.State.SUSPENDED) {
                co.mount();
            }
        }
    }

    // ---------------------------------------------------------------- the inbox

    /**
     * Hands {@code task} to the loop: it runs on the loop's thread, in order with the other
     * tasks handed over. Any thread; wakes the loop at most once however many hand it work.
     * A task accepted always runs - a stopping loop runs what it accepted before it ends - and a
     * task refused is the caller's to deal with (close the channel it carried, answer for it).
     *
     * @throws RejectedExecutionException once the loop has begun its last drain of the inbox
     */
    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        if (inLoop()) {
            // The loop's own thread cannot race its last drain: it runs it, and drains until empty.
            if (isTerminated()) {
                throw rejected();
            }
            inbox.offer(task);
            return;
        }
        // Entering the gate before the offer lets the last drain wait for every offer under way:
        // a task is either refused here or in the queue before that drain begins.
        if ((int) PRODUCERS.getAndAdd(this, 1) < 0) {
            PRODUCERS.getAndAdd(this, -1);
            throw rejected();
        }
        inbox.offer(task);
        PRODUCERS.getAndAdd(this, -1);
        if ((int) WAKE_STATE.getVolatile(this) == MAY_SLEEP && WAKE_STATE.compareAndSet(this, MAY_SLEEP, WAKEUP_SENT)) {
            selector.wakeup();
        }
    }

    private RejectedExecutionException rejected() {
        return new RejectedExecutionException("loop " + name + " has ended");
    }

    /** Closes the gate to other threads and waits out the offers under way: the inbox is then the loop's alone. */
    private void closeInbox() {
        PRODUCERS.getAndBitwiseOr(this, INBOX_CLOSED);
        while (((int) PRODUCERS.getVolatile(this) & ~INBOX_CLOSED) != 0) {
            Thread.yield(); // a producer between its two steps: it is about to leave
        }
    }

    // ---------------------------------------------------------------- channels and timers

    /**
     * Registers a channel whose readiness {@code handler} deals with (a server's connection).
     * Loop thread only.
     */
    public SelectionKey register(SelectableChannel channel, int ops, CorCoLoopHandler handler) throws ClosedChannelException {
        checkInLoop("register a channel");
        return channel.register(selector, ops, Objects.requireNonNull(handler, "handler"));
    }

    /** The channel's key on this loop's selector, or {@code null}. Loop thread only. */
    public SelectionKey keyFor(SelectableChannel channel) {
        checkInLoop("look up a key");
        return channel.keyFor(selector);
    }

    /**
     * Runs {@code task} once, on this thread, before the loop next waits in {@code select}: after
     * the channels, tasks and coroutines of this round - or at once when the loop next runs, if
     * queued between rounds. For work worth doing once per round rather than once per event: a
     * connection that many coroutines wrote to this round flushes them in one system call.
     * Queuing allocates nothing; the caller keeps from queuing one task twice (a flag of its own).
     * Loop thread only.
     */
    public void beforeNextSelect(Runnable task) {
        checkInLoop("queue a task before select");
        Objects.requireNonNull(task, "task");
        if (beforeSelectCount == beforeSelect.length) {
            beforeSelect = Arrays.copyOf(beforeSelect, beforeSelectCount * 2);
        }
        beforeSelect[beforeSelectCount++] = task;
    }

    /**
     * Runs {@code action} on the loop's thread after {@code delayMs}; if the loop stops first, it
     * never runs. Loop thread only.
     */
    public CorCoTimer schedule(long delayMs, Runnable action) {
        return schedule(delayMs, action, null);
    }

    /**
     * {@link #schedule(long, Runnable)}, and if the loop stops before {@code delayMs} has passed,
     * {@code onStop} runs instead, on the loop's thread as it stops: for a timer that holds work
     * which must be accounted for rather than vanish with the loop. Loop thread only.
     */
    public CorCoTimer schedule(long delayMs, Runnable action, Runnable onStop) {
        checkInLoop("schedule a timer");
        CorCoTimer t = new CorCoTimer(this, Objects.requireNonNull(action, "action"), onStop);
        deadlines.add(t, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, delayMs)));
        return t;
    }

    DeadlineHeap deadlines() {
        return deadlines;
    }

    // ---------------------------------------------------------------- coroutines

    CorCo create(CorCoTask task, CorCoListener listener) {
        Objects.requireNonNull(task, "task");
        checkInLoop("create a coroutine");
        if (live >= coroutineCap || stopping) {
            refusedCount++;
            return null;
        }
        CorCo co = pool.pollLast();
        if (co == null) {
            co = new CorCo(this);
        }
        co.prepare(task, listener, ++taskSequence, current != null ? current.context() : null);
        co.nextLive = liveHead;
        co.prevLive = null;
        if (liveHead != null) {
            liveHead.prevLive = co;
        }
        liveHead = co;
        live++;
        startedCount++;
        return co;
    }

    /** A task has finished on {@code co}: it leaves the live list. */
    void finished(CorCo co) {
        if (co.prevLive != null) {
            co.prevLive.nextLive = co.nextLive;
        } else {
            liveHead = co.nextLive;
        }
        if (co.nextLive != null) {
            co.nextLive.prevLive = co.prevLive;
        }
        co.prevLive = null;
        co.nextLive = null;
        live--;
    }

    /**
     * Inside {@code co}'s continuation, after its task: parks the continuation in the pool until
     * the next task. {@code false} ends the continuation instead (pool full, stack overflowed,
     * loop stopping).
     */
    boolean recycle(CorCo co) {
        if (co.overflowed() || stopping || pool.size() >= poolMax) {
            return false;
        }
        pool.addLast(co);
        co.waitKind = CorCo.WAIT_POOL;
        CoContinuation.suspend();
        co.waitKind = CorCo.WAIT_NONE;
        return true;
    }

    int waitFd(CorCo co, SelectableChannel channel, int ops, long timeoutMs) throws IOException {
        if (co.cancelled) {
            throw co.cancelledException();
        }
        if (channel.isBlocking()) {
            throw new IllegalArgumentException("waitFd needs a channel in non-blocking mode");
        }
        SelectionKey key = channel.keyFor(selector);
        if (key == null) {
            key = channel.register(selector, ops, co);
            co.savedAttachment = null;
            co.savedOps = 0;
        } else {
            Object owner = key.attachment();
            if (owner instanceof CorCo other && other.waitKey == key) {
                throw new IllegalStateException(co.name() + " cannot wait on a channel " + other.name() + " waits on");
            }
            co.savedAttachment = owner;
            co.savedOps = key.interestOps();
            key.attach(co);
            key.interestOps(ops);
        }
        co.waitKey = key;
        co.readyOps = 0;
        if (timeoutMs >= 0) {
            deadlines.add(co.deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
        }
        try {
            co.suspend(CorCo.WAIT_FD);
        } finally {
            disarm(co);
        }
        return co.readyOps;
    }

    void sleep(CorCo co, long ms) {
        deadlines.add(co.deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, ms)));
        try {
            co.suspend(CorCo.WAIT_SLEEP);
        } finally {
            disarm(co);
        }
    }

    boolean park(CorCo co, long timeoutMs) {
        co.readyOps = 0;
        if (timeoutMs >= 0) {
            deadlines.add(co.deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
        }
        try {
            co.suspend(CorCo.WAIT_PARK);
        } finally {
            disarm(co);
        }
        return co.readyOps != 0;
    }

    <T> T blocking(CorCo co, Callable<T> call, long timeoutMs) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        BlockingCall<T> b = BlockingCall.forCoroutine(call, co);
        blockingExecutor.execute(b);
        try {
            while (!b.done) {
                if (timeoutMs < 0) {
                    park(co, -1);
                    continue;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    b.abandon();
                    throw BlockingCall.timedOut(co.name(), timeoutMs);
                }
                park(co, (left + 999_999) / 1_000_000);
            }
        } catch (CorCoCancelledException e) {
            b.abandon();
            throw e;
        }
        return b.result();
    }

    /** A channel a coroutine waits on is ready: resume it now. */
    private void channelReady(CorCo co, SelectionKey key) {
        if (co.state != CorCo.State.SUSPENDED || co.waitKind != CorCo.WAIT_FD || co.waitKey != key || co.queued) {
            return;
        }
        co.readyOps = key.readyOps();
        disarm(co);
        co.mount();
    }

    /** A wait's deadline has passed: resume the coroutine in this round's ready pass. */
    void waitExpired(CorCo co) {
        if (co.state != CorCo.State.SUSPENDED || co.queued) {
            return;
        }
        disarm(co);
        co.readyOps = 0;
        co.queued = true;
        ready.addLast(co);
    }

    /**
     * {@code co} was cancelled: a loop wait it is suspended in (channel, deadline, park) ends in
     * this round's ready pass, where its suspend throws. A plain {@link CorCo#yield} is resumed
     * by hand and throws then; a running one throws at its next wait.
     */
    void cancelWait(CorCo co) {
        if (co.state != CorCo.State.SUSPENDED || co.queued) {
            return;
        }
        int k = co.waitKind;
        if (k == CorCo.WAIT_FD || k == CorCo.WAIT_SLEEP || k == CorCo.WAIT_PARK) {
            disarm(co);
            co.readyOps = 0;
            co.queued = true;
            ready.addLast(co);
        }
    }

    void wakeParked(CorCo co) {
        if (co.state == CorCo.State.SUSPENDED && co.waitKind == CorCo.WAIT_PARK) {
            if (!co.queued) {
                disarm(co);
                co.readyOps = 1;
                co.queued = true;
                ready.addLast(co);
            }
        } else if (co.state != CorCo.State.DONE) {
            co.permit = true;
        }
    }

    /** Ends {@code co}'s wait: its key back to how it was, its deadline removed. Idempotent. */
    private void disarm(CorCo co) {
        SelectionKey key = co.waitKey;
        if (key != null) {
            co.waitKey = null;
            if (key.isValid()) {
                try {
                    key.interestOps(co.savedOps);
                    key.attach(co.savedAttachment);
                } catch (CancelledKeyException e) {
                    // the channel was closed meanwhile
                }
            }
            co.savedAttachment = null;
        }
        if (co.deadline.armed()) {
            deadlines.remove(co.deadline);
        }
    }

    // ---------------------------------------------------------------- stop

    private void shutdown() {
        stopping = true;
        try {
            for (int pass = 0; pass < 8 && live > 0; pass++) {
                for (CorCo co : liveSnapshot()) {
                    boolean waiting = co.state == CorCo.State.SUSPENDED;
                    if (waiting || co.state == CorCo.State.NEW) {
                        co.cancelled = true;
                        if (waiting) {
                            disarm(co);
                            co.queued = false;
                        }
                        co.mount();
                    }
                }
                inbox.drain(runInboxTask);
                runBeforeSelect();
            }
            if (live > 0) {
                LOG.log(System.Logger.Level.WARNING, "cor: loop " + name + " ended with " + live
                        + " coroutine(s) that would not finish after cancellation");
            }
        } finally {
            try {
                lastDrain();
            } finally {
                pool.clear();
                ready.clear();
                try {
                    selector.close();
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.DEBUG, "cor: loop " + name + ": closing its selector", e);
                }
                CorCoWatchdog.unwatch(this);
                busySinceNanos = 0;
                CURRENT.remove();
                terminated.countDown();
            }
        }
    }

    /**
     * Whatever the inbox accepted runs, and what it hands this loop in turn; the timers that will
     * never fire run their stop actions; then nothing more gets in.
     */
    private void lastDrain() {
        closeInbox();
        do {
            inbox.drain(runInboxTask);
            runBeforeSelect();
            stopTimers();
        } while (!inbox.isEmpty());
    }

    private void stopTimers() {
        Deadline d;
        while ((d = deadlines.pollAny()) != null) {
            if (d instanceof CorCoTimer t) {
                try {
                    t.loopStopped();
                } catch (Throwable e) {
                    LOG.log(System.Logger.Level.WARNING, "cor: loop " + name + ": a timer's stop action failed", e);
                }
            }
        }
    }

    private CorCo[] liveSnapshot() {
        CorCo[] all = new CorCo[live];
        int i = 0;
        for (CorCo co = liveHead; co != null && i < all.length; co = co.nextLive) {
            all[i++] = co;
        }
        return i == all.length ? all : Arrays.copyOf(all, i);
    }

    // ---------------------------------------------------------------- looking

    public String name() {
        return name;
    }

    /** Whether the calling thread is this loop's thread. */
    public boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    void checkInLoop(String what) {
        if (!inLoop()) {
            throw new IllegalStateException("cannot " + what + " of loop " + name + " from thread "
                    + Thread.currentThread().getName() + ": loop thread only (hand it over with execute)");
        }
    }

    /** The loop's thread, or {@code null} before {@link #start()} / {@link #attach()}. */
    public Thread thread() {
        return thread;
    }

    /** The cap of live coroutines (0: coroutines are off). */
    public int coroutineCap() {
        return coroutineCap;
    }

    /** Coroutines started and not yet finished. Exact on the loop's thread; a recent value elsewhere. */
    public int liveCoroutines() {
        return live;
    }

    /** Tasks started as coroutines since the loop began. */
    public long startedCoroutines() {
        return startedCount;
    }

    /** Starts refused (the cap, coroutines off, stopping). */
    public long refusedCoroutines() {
        return refusedCount;
    }

    /** Finished coroutines waiting in the pool for their next task. */
    public int pooledCoroutines() {
        return pool.size();
    }

    /** How often the selector was rebuilt (the epoll spin). */
    public int selectorRebuilds() {
        return selectorRebuilds;
    }

    /**
     * Where calls that block run for this loop ({@link CorCo#blocking} uses it): for work a loop
     * handler must hand off outside any coroutine, such as an SSLEngine's delegated tasks.
     */
    public Executor blockingExecutor() {
        return blockingExecutor;
    }

    long watchdogNanos() {
        return watchdogNanos;
    }

    /**
     * How long this loop has been away from {@code select}, in milliseconds, when that is longer
     * than its watchdog threshold (a stall, design rule 8); 0 while it is not stalled, or when it
     * has no watchdog. Any thread (a recent value): what a liveness check reads.
     */
    public long stalledMs() {
        long since = busySinceNanos;
        if (since == 0 || watchdogNanos <= 0) {
            return 0;
        }
        long away = System.nanoTime() - since;
        return away > watchdogNanos ? TimeUnit.NANOSECONDS.toMillis(away) : 0;
    }

    String stackSizeText() {
        return stackSize == 0 ? "the JVM's default (-Xss)" : stackSize / 1024 + " KiB";
    }

    void logListenerFailure(CorCo co, Throwable t) {
        LOG.log(System.Logger.Level.WARNING, "cor: the listener of " + co.name() + " failed", t);
    }

    void logUnobservedFailure(CorCo co, Throwable t) {
        LOG.log(System.Logger.Level.WARNING, "cor: " + co.name() + " failed and nobody listened for it", t);
    }

    @Override
    public String toString() {
        return "CorCoLoop[" + name + ", live " + live + "/" + coroutineCap + "]";
    }

    /**
     * Builds a {@link CorCoLoop}. Defaults: cap 1024 coroutines, up to 256 pooled, the JVM's
     * default stack, watchdog 2 s, selector rebuilt after 512 premature empty selects, the
     * shared blocking pool.
     */
    public static final class Builder {
        private String name;
        private int coroutineCap = DEFAULT_COROUTINE_CAP;
        private int poolMax = 256;
        private long stackSize;
        private long watchdogMs = DEFAULT_WATCHDOG_MS;
        private int spinThreshold = DEFAULT_SPIN_THRESHOLD;
        private Executor blockingExecutor;

        private Builder() {
        }

        /** The loop thread's name (default {@code cor-loop-N}). */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /** The most coroutines alive at once; past it a start is refused. 0 turns coroutines off. */
        public Builder coroutineCap(int cap) {
            if (cap < 0) {
                throw new IllegalArgumentException("coroutine cap must be >= 0: " + cap);
            }
            this.coroutineCap = cap;
            return this;
        }

        /** The most finished coroutines kept for reuse (bounded by the cap). */
        public Builder poolMax(int max) {
            if (max < 0) {
                throw new IllegalArgumentException("pool size must be >= 0: " + max);
            }
            this.poolMax = max;
            return this;
        }

        /** The loop thread's stack size in bytes (0: the JVM's default); a mounted coroutine runs on it. */
        public Builder stackSize(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("stack size must be >= 0: " + bytes);
            }
            this.stackSize = bytes;
            return this;
        }

        /** Report the loop if it stays away from select longer than this (0: never). */
        public Builder watchdogMs(long ms) {
            if (ms < 0) {
                throw new IllegalArgumentException("watchdog threshold must be >= 0: " + ms);
            }
            this.watchdogMs = ms;
            return this;
        }

        /** Premature empty selects in a row before the selector is rebuilt. */
        public Builder selectorSpinThreshold(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("spin threshold must be >= 1: " + n);
            }
            this.spinThreshold = n;
            return this;
        }

        /** Where {@link CorCo#blocking} runs its calls (default: a shared pool of daemon threads). */
        public Builder blockingExecutor(Executor executor) {
            this.blockingExecutor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        public CorCoLoop build() {
            try {
                return new CorCoLoop(this);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open a selector", e);
            }
        }
    }
}
