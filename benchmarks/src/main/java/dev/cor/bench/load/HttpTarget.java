package dev.cor.bench.load;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.function.IntFunction;

/**
 * HTTP/1.1 over plain non-blocking {@code SocketChannel}s on one {@link Selector}: the target for
 * {@code http://} URLs. Keep-alive connections ({@link HttpConnection}) each carry one request at
 * a time; callers that share one take turns on it. Runs on the generator's loop thread only
 * (but {@link #wakeup()}).
 */
final class HttpTarget implements Target {
    /** How often requests and connects in flight are checked against their deadline. */
    private static final long DEADLINE_CHECK_NANOS = 5_000_000L;
    /**
     * Below this a wait is too short for {@link Selector#select(long)}, whose unit is the
     * millisecond: an open-loop request would leave up to a millisecond late and the lateness
     * would count as the server's. Shorter waits block in select until the {@link SelectorAlarm}.
     */
    private static final long FINE_WAIT_NANOS = 2_000_000L;

    private final InetSocketAddress address;
    /** The request of each socket (one for all of them, but for a URL with {@link HttpRequestBytes#SOCKET}). */
    private final IntFunction<HttpRequestBytes> requests;
    /** The last request number given out (one NIO thread runs every connection of a target). */
    private long seq;
    private final boolean head;
    private final long timeoutNanos;
    private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(64 * 1024);
    private volatile Selector selector;
    private SelectorAlarm alarm;
    private HttpConnection[] connections = new HttpConnection[0];
    private long nextDeadlineCheck;
    private long reconnects;

    HttpTarget(InetSocketAddress address, IntFunction<HttpRequestBytes> requests, boolean head, long timeoutMs) {
        this.address = address;
        this.requests = requests;
        this.head = head;
        this.timeoutNanos = timeoutMs * 1_000_000L;
    }

    /** A new request number, for a body that asks for one. */
    long nextSeq() {
        return ++seq;
    }

    @Override
    public void open(int sockets, int callers, TargetListener listener) throws IOException {
        selector = Selector.open();
        alarm = new SelectorAlarm(selector);
        connections = new HttpConnection[sockets];
        long now = System.nanoTime();
        for (int i = 0; i < sockets; i++) {
            int mine = callers / sockets + (i < callers % sockets ? 1 : 0);
            connections[i] = new HttpConnection(this, selector, address, requests.apply(i), head, timeoutNanos, mine, listener);
        }
        for (HttpConnection c : connections) {
            c.connect(now);
        }
        nextDeadlineCheck = now + DEADLINE_CHECK_NANOS;
    }

    @Override
    public int connected() {
        int n = 0;
        for (HttpConnection c : connections) {
            HttpConnection.State s = c.state();
            n += s == HttpConnection.State.IDLE || s == HttpConnection.State.WRITING
                    || s == HttpConnection.State.READING ? 1 : 0;
        }
        return n;
    }

    @Override
    public int connecting() {
        int n = 0;
        for (HttpConnection c : connections) {
            n += c.state() == HttpConnection.State.CONNECTING ? 1 : 0;
        }
        return n;
    }

    @Override
    public void send(int socket, int caller) {
        connections[socket].enqueue(caller);
    }

    @Override
    public void poll(long maxWaitNanos) throws IOException {
        long now = System.nanoTime();
        boolean anyDown = false;
        for (HttpConnection c : connections) {
            if (c.retryDue(now)) {
                c.connect(now);
            }
            anyDown |= c.state() == HttpConnection.State.DOWN;
        }
        if (now - nextDeadlineCheck >= 0) {
            for (HttpConnection c : connections) {
                c.checkDeadline(now);
            }
            nextDeadlineCheck = now + DEADLINE_CHECK_NANOS;
        }
        long wait = Math.min(maxWaitNanos, nextDeadlineCheck - now);
        if (anyDown) {
            wait = Math.min(wait, HttpConnection.RETRY_NANOS / 10);
        }
        if (wait <= 0) {
            selector.selectNow(this::ready);
        } else if (wait >= FINE_WAIT_NANOS) {
            // Wake a millisecond early: the rest of the wait is the alarm's, which is exact.
            selector.select(this::ready, wait / 1_000_000L - 1);
        } else {
            alarm.wakeAt(now + wait);
            selector.select(this::ready, FINE_WAIT_NANOS / 1_000_000L); // the bound, should the alarm be late
        }
    }

    private void ready(SelectionKey key) {
        ((HttpConnection) key.attachment()).ready(key, readBuffer);
    }

    void countReconnect() {
        reconnects++;
    }

    @Override
    public long reconnects() {
        return reconnects;
    }

    @Override
    public void wakeup() {
        Selector s = selector;
        if (s != null) {
            s.wakeup();
        }
    }

    @Override
    public void close() {
        for (HttpConnection c : connections) {
            c.close();
        }
        if (alarm != null) {
            alarm.close();
        }
        if (selector != null) {
            try {
                selector.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    @Override
    public String toString() {
        return "http://" + address.getHostString() + ":" + address.getPort();
    }
}
