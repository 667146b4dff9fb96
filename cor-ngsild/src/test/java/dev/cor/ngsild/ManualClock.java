package dev.cor.ngsild;

import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock a test moves by hand: the broker's TTLs, throttling and expiry without sleeping. Any
 * thread reads it; the test moves it.
 */
public final class ManualClock implements InstantSource {
    private final AtomicLong millis;

    public ManualClock(long startMillis) {
        this.millis = new AtomicLong(startMillis);
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public long millis() {
        return millis.get();
    }

    public void advance(long ms) {
        millis.addAndGet(ms);
    }
}
