package dev.cor.base;

/**
 * A callback scheduled on a loop with {@link CorCoLoop#schedule(long, Runnable)}: it runs once,
 * on the loop's thread, when its delay has passed, unless cancelled first. Loop thread only.
 */
public final class CorCoTimer extends Deadline {
    private final CorCoLoop loop;
    private final Runnable action;

    CorCoTimer(CorCoLoop loop, Runnable action) {
        this.loop = loop;
        this.action = action;
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
}
