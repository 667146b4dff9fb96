package dev.cor.ngsild;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.cor.ngsild.store.TemporalStore;

/**
 * Has the history's retention applied: a thread of its own, {@code cor-history-expiry} (never a
 * loop: a durable store deletes files), calls {@link TemporalStore#expire} every
 * {@link TemporalStore#expireEveryMs()}. A failure is logged and tried again at the next turn.
 * Started and closed by the broker.
 */
final class HistoryExpiry implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(HistoryExpiry.class.getName());

    private final ScheduledExecutorService thread;

    HistoryExpiry(TemporalStore store, java.time.InstantSource clock) {
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cor-history-expiry");
            t.setDaemon(true);
            return t;
        });
        long every = store.expireEveryMs();
        thread.scheduleWithFixedDelay(() -> {
            try {
                long dropped = store.expire(clock.millis());
                if (dropped > 0) {
                    LOG.log(System.Logger.Level.DEBUG, "cor-ngsild: the history's retention dropped " + dropped + " instances");
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "cor-ngsild: applying the history's retention failed", e);
            }
        }, every, every, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
