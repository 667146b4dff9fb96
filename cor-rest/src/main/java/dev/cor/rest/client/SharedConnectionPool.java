package dev.cor.rest.client;

import java.util.concurrent.locks.ReentrantLock;

/**
 * The one keep-alive pool of all the virtual threads that call a {@link CorRestClient}: a
 * virtual thread usually makes a call or a few and ends, so a pool of its own would reuse
 * nothing and leave a connection per thread behind. Each operation of {@link ConnectionPool}
 * under one lock; the lock is never held across a wait (taking a connection only picks or makes
 * one - the connect and the request happen after, on the caller's busy connection alone). A
 * {@link ReentrantLock}, not {@code synchronized}: nothing here may pin a carrier.
 * <p>
 * Any virtual thread; a busy connection is its caller's alone, as in every pool.
 */
final class SharedConnectionPool extends ConnectionPool {
    private final ReentrantLock lock = new ReentrantLock();

    SharedConnectionPool(CorRestClient client) {
        super(client, null);
    }

    @Override
    Connection acquire(Origin origin, boolean fresh, boolean once) {
        lock.lock();
        try {
            return super.acquire(origin, fresh, once);
        } finally {
            lock.unlock();
        }
    }

    @Override
    void release(Connection c, boolean reusable) {
        lock.lock();
        try {
            super.release(c, reusable);
        } finally {
            lock.unlock();
        }
    }

    @Override
    void discard(Connection c) {
        lock.lock();
        try {
            super.discard(c);
        } finally {
            lock.unlock();
        }
    }

    @Override
    void closeIdle() {
        lock.lock();
        try {
            super.closeIdle();
        } finally {
            lock.unlock();
        }
    }

    @Override
    int open() {
        lock.lock();
        try {
            return super.open();
        } finally {
            lock.unlock();
        }
    }

    @Override
    int idle() {
        lock.lock();
        try {
            return super.idle();
        } finally {
            lock.unlock();
        }
    }
}
