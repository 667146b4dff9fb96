package dev.cor.ngsild.conformance;

import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;

/** A clock the test moves: throttling and expiry without sleeping. Starts at the real time. */
final class TestClock implements InstantSource {
    private final AtomicLong millis = new AtomicLong(System.currentTimeMillis());

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public long millis() {
        return millis.get();
    }

    void advance(long ms) {
        millis.addAndGet(ms);
    }
}
