package dev.cor.bench.load;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * One keep-alive HTTP/1.1 connection of {@link HttpTarget} and the callers that take turns on it:
 * one request at a time (no pipelining), the others waiting in order. A connection lost under a
 * request fails that request and is opened again at once; a connection that cannot be opened
 * fails every waiting request and is tried again after {@link #RETRY_NANOS}, so a server that is
 * down costs errors, not a busy loop. Lives on the generator's loop thread only.
 */
final class HttpConnection {
    /** Pause before connecting again after a refused or timed-out connect. */
    static final long RETRY_NANOS = 100_000_000L;

    enum State { DOWN, CONNECTING, IDLE, WRITING, READING }

    private final HttpTarget target;
    private final Selector selector;
    private final InetSocketAddress address;
    private final HttpRequestBytes encoded;
    private final ByteBuffer request;
    private final boolean head;
    private final long timeoutNanos;
    private final TargetListener listener;
    private final IntQueue waiting;
    private final HttpResponseParser parser = new HttpResponseParser();

    private SocketChannel channel;
    private SelectionKey key;
    private State state = State.DOWN;
    private int current = -1;
    private long deadline;
    private long retryAt;
    private boolean everConnected;

    HttpConnection(HttpTarget target, Selector selector, InetSocketAddress address, HttpRequestBytes request, boolean head, long timeoutNanos,
            int callers, TargetListener listener) {
        this.target = target;
        this.selector = selector;
        this.address = address;
        this.encoded = request;
        // a request that takes a number each time is this connection's own copy; the others share the bytes
        this.request = !request.numbered() ? request.bytes().duplicate()
                : ByteBuffer.allocateDirect(request.bytes().capacity()).put(request.bytes().duplicate()).flip();
        this.head = head;
        this.timeoutNanos = timeoutNanos;
        this.listener = listener;
        this.waiting = new IntQueue(callers);
    }

    State state() {
        return state;
    }

    /** Queues a caller's request; sends it now if the connection is free. */
    void enqueue(int caller) {
        waiting.add(caller);
        sendNext();
    }

    /** Starts a connect: at once, or when a DOWN connection's pause is over. */
    void connect(long now) {
        if (everConnected) {
            target.countReconnect();
        }
        try {
            channel = SocketChannel.open();
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            state = State.CONNECTING;
            deadline = now + timeoutNanos;
            if (channel.connect(address)) {
                key = channel.register(selector, 0, this);
                connected();
            } else {
                key = channel.register(selector, SelectionKey.OP_CONNECT, this);
            }
        } catch (IOException e) {
            connectFailed("cannot connect to " + address + ": " + e.getMessage(), now);
        }
    }

    boolean retryDue(long now) {
        return state == State.DOWN && now - retryAt >= 0;
    }

    /** The selector says this connection can go on. */
    void ready(SelectionKey readyKey, ByteBuffer readBuffer) {
        if (readyKey != key || !readyKey.isValid()) {
            return; // the key of a channel closed earlier in this round
        }
        try {
            if (state == State.CONNECTING && readyKey.isConnectable()) {
                channel.finishConnect();
                connected();
            } else if (state == State.WRITING && readyKey.isWritable()) {
                write();
            } else if (readyKey.isReadable()) {
                read(readBuffer);
            }
        } catch (IOException e) {
            if (state == State.CONNECTING) {
                connectFailed("cannot connect to " + address + ": " + e.getMessage(), System.nanoTime());
            } else {
                lost("connection lost: " + e.getMessage());
            }
        } catch (HttpResponseParser.ProtocolException e) {
            lost("bad answer: " + e.getMessage());
        }
    }

    /** Fails what has waited past its deadline: a connect, or the request in flight. */
    void checkDeadline(long now) {
        if ((state == State.CONNECTING || state == State.WRITING || state == State.READING) && now - deadline >= 0) {
            if (state == State.CONNECTING) {
                connectFailed("connect timed out", now);
            } else {
                lost("no answer within " + timeoutNanos / 1_000_000 + " ms");
            }
        }
    }

    private void connected() {
        everConnected = true;
        state = State.IDLE;
        key.interestOps(SelectionKey.OP_READ); // an idle read tells us the server closed it
        sendNext();
    }

    private void sendNext() {
        if (state != State.IDLE || waiting.isEmpty()) {
            return;
        }
        current = waiting.poll();
        request.rewind();
        if (encoded.numbered()) {
            encoded.putSeq(request, target.nextSeq());
        }
        parser.reset(head);
        deadline = System.nanoTime() + timeoutNanos;
        state = State.WRITING;
        try {
            write();
        } catch (IOException e) {
            lost("connection lost: " + e.getMessage());
        }
    }

    private void write() throws IOException {
        channel.write(request);
        if (request.hasRemaining()) {
            key.interestOps(SelectionKey.OP_WRITE);
        } else {
            state = State.READING;
            key.interestOps(SelectionKey.OP_READ);
        }
    }

    private void read(ByteBuffer buf) throws IOException, HttpResponseParser.ProtocolException {
        // A few reads per wake-up: enough for any benchmark answer, fair to the other connections.
        for (int i = 0; i < 8 && (state == State.READING || state == State.IDLE); i++) {
            buf.clear();
            int n = channel.read(buf);
            if (n < 0) {
                endOfStream();
                return;
            }
            if (n == 0) {
                return;
            }
            buf.flip();
            if (state == State.IDLE) {
                lost("the server sent bytes nobody asked for");
                return;
            }
            if (parser.feed(buf)) {
                if (buf.hasRemaining()) {
                    lost("the server sent bytes after the answer");
                    return;
                }
                answered();
                return;
            }
            if (n < buf.capacity()) {
                return;
            }
        }
    }

    private void endOfStream() {
        if (state == State.READING && parser.endOfStream()) {
            answered();
        } else if (state == State.IDLE) {
            reopen(); // the server closed an idle keep-alive connection: not an error
        } else {
            lost("the server closed the connection" + (parser.started() ? " in the middle of an answer" : ""));
        }
    }

    private void answered() {
        int caller = current;
        int status = parser.status();
        current = -1;
        if (parser.keepAlive()) {
            state = State.IDLE;
            key.interestOps(SelectionKey.OP_READ);
        } else {
            reopen();
        }
        listener.answered(caller, status);
        sendNext();
    }

    /** The connection broke under a request (or misbehaved): fail it, connect again at once. */
    private void lost(String reason) {
        int caller = current;
        current = -1;
        reopen();
        if (caller >= 0) {
            listener.failed(caller, reason);
        }
        sendNext();
    }

    private void reopen() {
        closeChannel();
        state = State.DOWN;
        connect(System.nanoTime());
    }

    private void connectFailed(String reason, long now) {
        closeChannel();
        state = State.DOWN;
        retryAt = now + RETRY_NANOS;
        // Only those waiting now: a listener that sends again from failed() waits for the retry.
        for (int n = waiting.size(); n > 0; n--) {
            listener.failed(waiting.poll(), reason);
        }
    }

    void close() {
        closeChannel();
        state = State.DOWN;
    }

    private void closeChannel() {
        if (channel != null) {
            try {
                channel.close(); // also cancels its key
            } catch (IOException e) {
                // closing anyway: nothing more to do
            }
        }
    }
}
