package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/**
 * The barrier a snapshot passes before it reads the store: it returns only once every write
 * that took a sequence number up to the one it read has left its critical section - and writes
 * that begin after it do not hold it up.
 */
class WriteGateTest {
    @Test
    void theBarrierWaitsForAWriteInsideItsCriticalSectionAndNotForLaterOnes() throws Exception {
        WriteGate gate = new WriteGate();
        AtomicLong seq = new AtomicLong();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean applied = new AtomicBoolean();
        Thread writer = Thread.ofPlatform().start(() -> {
            int e = gate.enter();
            seq.incrementAndGet(); // its record's number
            inside.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                return;
            }
            applied.set(true); // its change
            gate.exit(e);
        });
        assertTrue(inside.await(10, TimeUnit.SECONDS));
        long[] got = {-1};
        AtomicBoolean sawApplied = new AtomicBoolean();
        Thread snapshot = Thread.ofPlatform().start(() -> {
            got[0] = gate.barrier(seq::get, 10_000);
            sawApplied.set(applied.get());
        });
        // the barrier parks between its checks: a snapshot thread parked or ended has passed the barrier's first check
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (snapshot.getState() != Thread.State.TIMED_WAITING && snapshot.getState() != Thread.State.TERMINATED) {
            assertTrue(System.nanoTime() < deadline, "the snapshot thread neither parked nor ended");
            Thread.onSpinWait();
        }
        assertTrue(snapshot.isAlive(), "the barrier waits while the write is inside");
        // a write that begins now, in the new epoch, comes and goes without the barrier's leave
        int later = gate.enter();
        gate.exit(later);
        assertTrue(snapshot.isAlive());
        release.countDown();
        snapshot.join(10_000);
        writer.join(10_000);
        assertFalse(snapshot.isAlive());
        assertEquals(1, got[0]);
        assertTrue(sawApplied.get(), "the change of every record up to the number read is applied when it returns");
    }

    @Test
    void aWriteThatNeverLeavesFailsTheBarrierAtItsDeadline() {
        WriteGate gate = new WriteGate();
        gate.enter();
        assertThrows(IllegalStateException.class, () -> gate.barrier(() -> 0, 200));
        // the next barrier waits on the other epoch's writes: none
        assertEquals(7, gate.barrier(() -> 7, 200));
    }
}
