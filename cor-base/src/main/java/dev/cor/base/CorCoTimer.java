package dev.cor.base;

/**
 * A callback scheduled on a loop with {@link CorCoLoop#schedule(long, Runnable)}: it runs once,
 * on the loop's thread, when its delay has passed, unless cancelled first. A timer still pending
 * when its loop stops never runs; its stop action, if it has one
 * ({@link CorCoLoop#schedule(long, Runnable, Runnable)}), runs instead. Loop thread only.
 */
public final class CorCoTimer extends Deadline {
    private final CorCoLoop loop;
    private final Runnable action;
    private final Runnable onStop;

    CorCoTimer(CorCoLoop loop, Runnable action, Runnable onStop) {
        this.loop = loop;
        this.action = action;
        this.onStop = onStop;
    }

    /** Cancels the callback if it has not run yet. Loop thread only. */
    public void cancel() {
        loop.checkInLoop("cancel a timer");
        loop.deadlines().remove(this);
    }

    /** Whether the callback is still due to run. */
    public boolean pending() {
        return armed();
    }

    @Override
    void expire() {
        action.run();
    }

    /** Its loop stops before it fired; it is out of the heap already. */
    void loopStopped() {
        if (onStop != null) {
            onStop.run();
        }
    }
}
