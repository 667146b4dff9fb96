package dev.cor.base;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The project's lock helper: a {@link ReentrantLock} that counts the locks a loop thread holds.
 * <p>
 * A coroutine must never yield holding a lock (design rule 1): the next coroutine of the same
 * loop that takes the lock either deadlocks the loop or - the lock being reentrant and the
 * thread the same - walks straight into the critical section. With {@code -Dcor.debug=true}
 * every yield checks the count of its loop thread and fails loudly with a {@link CorCoException}
 * when it is not zero. Without debug nothing is counted.
 * <p>
 * Any thread may use it. Use {@code try { lock.lock(); ... } finally { lock.unlock(); }}.
 */
public final class CorCoLock {
    private final ReentrantLock lock = new ReentrantLock();

    public void lock() {
        lock.lock();
        held(+1);
    }

    public boolean tryLock(long timeout, TimeUnit unit) throws InterruptedException {
        if (lock.tryLock(timeout, unit)) {
            held(+1);
            return true;
        }
        return false;
    }

    public void unlock() {
        lock.unlock();
        held(-1);
    }

    public boolean isHeldByCurrentThread() {
        return lock.isHeldByCurrentThread();
    }

    private static void held(int delta) {
        if (CorCo.DEBUG) {
            CorCoLoop loop = CorCoLoop.current();
            if (loop != null) {
                loop.locksHeld += delta;
            }
        }
    }
}
