package dev.cor.rest.client;

import java.nio.channels.SocketChannel;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import javax.net.ssl.SSLContext;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.rest.OutboundPolicy;
import dev.cor.rest.proto.CorProtoClient;

/**
 * The HTTP/1.1 client ({@code http://}, and {@code https://} with an {@link SSLContext}): one
 * request, or a concurrent fan-out, with keep-alive connections.
 * <p>
 * The same code runs everywhere: inside a coroutine every wait yields to the loop, on a worker
 * or a plain thread it blocks that thread, and on a loop thread outside a coroutine it is refused
 * ({@link IllegalStateException}) - every wait goes through {@link dev.cor.rest.CorRest#waitFd}.
 * Sockets are non-blocking throughout; names are resolved off the loop ({@link CorRestResolver}).
 * <p>
 * Connections are pooled per loop (shared by that loop's coroutines, one request on a connection at
 * a time), per other platform thread, and once for all virtual threads, per origin. One client serves any number of threads and loops;
 * any thread may call it.
 */
public final class CorRestClient implements AutoCloseable {
    /** Default connect deadline. */
    public static final long DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
    /** Default deadline of a response: from the request's first byte out to the response's last byte in. */
    public static final long DEFAULT_RESPONSE_TIMEOUT_MS = 30_000;
    /** Default TLS handshake deadline. */
    public static final long DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
    /** Default limit of a response body. */
    public static final int DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
    /** Default limit of a response's header section (status line and interim responses included). */
    public static final int DEFAULT_MAX_HEADER_BYTES = 64 * 1024;
    /** Default number of idle connections kept per origin in each pool. */
    public static final int DEFAULT_MAX_IDLE_PER_ORIGIN = 16;
    /** Default time an idle connection is kept. */
    public static final long DEFAULT_IDLE_TIMEOUT_MS = 30_000;

    final long connectTimeoutMs;
    final long responseTimeoutMs;
    final long handshakeTimeoutMs;
    final SSLContext sslContext;
    final int maxResponseBytes;
    final int maxHeaderBytes;
    final int maxIdlePerOrigin;
    final long idleTimeoutNanos;
    final CorRestResolver resolver;
    final OutboundPolicy outboundPolicy;

    /** The pools: a loop's (key: the loop) or another thread's (key: the thread). */
    private final Map<Object, ConnectionPool> pools = new ConcurrentHashMap<>();
    /** The pool of every virtual thread (one each would reuse nothing: a virtual thread is short-lived). */
    private final SharedConnectionPool virtualPool = new SharedConnectionPool(this);
    /** The cor:// connections, made on the first cor:// request. */
    private volatile CorProtoClient proto;
    private volatile CorProtoClient protoTls;
    private volatile boolean closed;

    /** Test hook: sees every channel the client opens, once it is configured. */
    volatile Consumer<SocketChannel> onChannelOpened;

    private CorRestClient(Builder b) {
        this.connectTimeoutMs = b.connectTimeoutMs;
        this.responseTimeoutMs = b.responseTimeoutMs;
        this.handshakeTimeoutMs = b.handshakeTimeoutMs;
        this.sslContext = b.sslContext;
        this.maxResponseBytes = b.maxResponseBytes;
        this.maxHeaderBytes = b.maxHeaderBytes;
        this.maxIdlePerOrigin = b.maxIdlePerOrigin;
        this.idleTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(b.idleTimeoutMs);
        this.resolver = b.resolver != null ? b.resolver : CorRestResolver.system();
        this.outboundPolicy = b.outboundPolicy;
    }

    public static Builder builder() {
        return new Builder();
    }

    // ---------------------------------------------------------------- one request

    /**
     * Sends {@code request} and reads the whole response. Inside a coroutine it yields wherever it
     * waits; elsewhere it blocks the calling thread (never a loop's: there it is refused).
     *
     * @throws CorRestClientException why there is no response, as a {@link CorRestClientException.Kind}
     * @throws IllegalStateException  on a loop thread outside a coroutine, or once the client is closed
     */
    public CorRestClientResponse send(CorRestClientRequest request) throws CorRestClientException {
        Objects.requireNonNull(request, "request");
        if (closed) {
            throw new IllegalStateException("the client is closed");
        }
        return Transports.forScheme(this, request).exchange(this, request);
    }

    // ---------------------------------------------------------------- fan-out

    /**
     * Starts {@code request} and returns at once. Inside a coroutine the request runs as a child
     * coroutine of the same loop (inheriting the caller's context), started right away: it runs
     * until its first wait, then the caller goes on. If the loop refuses the child (its cap), the
     * call runs here in the caller. Outside a coroutine it runs here, to its end: correct, not
     * concurrent.
     */
    public CorRestCall start(CorRestClientRequest request) {
        Objects.requireNonNull(request, "request");
        CorCo caller = CorCo.current();
        if (caller != null) {
            CorRestCall call = new CorRestCall(request, caller.loop());
            CorCo child = CorCo.start(() -> {
                call.run(this);
                return null;
            }, co -> call.finish(co.error()));
            if (child != null) {
                return call;
            }
        }
        CorRestCall call = new CorRestCall(request, null);
        call.run(this);
        call.finish(null);
        return call;
    }

    /** {@link #awaitAll(Collection)} of an array. */
    public static void awaitAll(CorRestCall... calls) {
        awaitAll(List.of(calls));
    }

    /**
     * Waits until every call is done. Inside a coroutine it parks until the calls' child
     * coroutines wake it (its loop serves everyone meanwhile); no separate deadline is needed, as
     * every call has its own. Then each call has its {@link CorRestCall#response()} or
     * {@link CorRestCall#error()}.
     *
     * @throws IllegalStateException if a call still running belongs to another loop than the
     *                               calling coroutine's, or the caller is not a coroutine
     */
    public static void awaitAll(Collection<CorRestCall> calls) {
        CorCo me = null;
        for (CorRestCall call : calls) {
            if (call.isDone()) {
                continue;
            }
            if (me == null) {
                me = CorCo.current();
            }
            if (me == null || me.loop() != call.loop) {
                throw new IllegalStateException(call.request() + " runs on loop " + call.loop.name()
                        + ": only a coroutine of that loop may await it, not "
                        + (me == null ? "thread " + Thread.currentThread().getName() : me.name()));
            }
            call.waiter = me;
        }
        if (me == null) {
            return;
        }
        try {
            // a park may return with calls still running (another wake, a spurious return): check again
            while (!allDone(calls)) {
                CorCo.park(-1);
            }
        } finally {
            for (CorRestCall call : calls) {
                if (call.waiter == me) {
                    call.waiter = null;
                }
            }
        }
    }

    private static boolean allDone(Collection<CorRestCall> calls) {
        for (CorRestCall call : calls) {
            if (!call.isDone()) {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- pools

    /** The client's cor:// side, built once on first use with this client's timeouts. */
    CorProtoClient proto() {
        CorProtoClient p = proto;
        if (p == null) {
            synchronized (this) {
                p = proto;
                if (p == null) {
                    p = CorProtoClient.builder().connectTimeoutMs(connectTimeoutMs).requestTimeoutMs(responseTimeoutMs)
                            .outboundPolicy(outboundPolicy).build();
                    proto = p;
                }
            }
        }
        return p;
    }

    /** The client's cors:// side (its SSLContext), built once on first use with this client's timeouts. */
    CorProtoClient protoTls() {
        CorProtoClient p = protoTls;
        if (p == null) {
            synchronized (this) {
                p = protoTls;
                if (p == null) {
                    p = CorProtoClient.builder().connectTimeoutMs(connectTimeoutMs).requestTimeoutMs(responseTimeoutMs)
                            .tls(sslContext).outboundPolicy(outboundPolicy).build();
                    protoTls = p;
                }
            }
        }
        return p;
    }

    /** The calling loop's or thread's pool; the virtual threads' shared one. */
    ConnectionPool pool() {
        CorCoLoop loop = CorCoLoop.current();
        if (loop == null && Thread.currentThread().isVirtual()) {
            return virtualPool;
        }
        Object owner = loop != null ? loop : Thread.currentThread();
        ConnectionPool p = pools.get(owner);
        if (p == null) {
            dropDeadPools();
            p = new ConnectionPool(this, loop);
            pools.put(owner, p);
        }
        return p;
    }

    /** The pools of loops that ended and threads that died: nobody else will touch them. */
    private void dropDeadPools() {
        pools.entrySet().removeIf(e -> {
            boolean dead = e.getKey() instanceof CorCoLoop l ? l.isTerminated() : !((Thread) e.getKey()).isAlive();
            if (dead) {
                e.getValue().closeIdle();
            }
            return dead;
        });
    }

    /**
     * Connections of the calling loop's (or thread's) pool, busy and idle - on a virtual thread,
     * of the virtual threads' shared pool; what a test checks for leaks. Exact on that loop's thread.
     */
    public int openConnections() {
        ConnectionPool p = existingPool();
        return p == null ? 0 : p.open();
    }

    /** Idle keep-alive connections of the calling loop's (or thread's) pool. */
    public int idleConnections() {
        ConnectionPool p = existingPool();
        return p == null ? 0 : p.idle();
    }

    private ConnectionPool existingPool() {
        CorCoLoop loop = CorCoLoop.current();
        if (loop == null && Thread.currentThread().isVirtual()) {
            return virtualPool;
        }
        return pools.get(loop != null ? loop : Thread.currentThread());
    }

    void channelOpened(SocketChannel ch) {
        Consumer<SocketChannel> hook = onChannelOpened;
        if (hook != null) {
            hook.accept(ch);
        }
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * Closes the client: no new request; requests running finish, and their connections close
     * after them. Idle connections close now in the caller's pool and in every loop's (through its
     * inbox); another live thread's close on that thread's next use of the client.
     */
    @Override
    public void close() {
        closed = true;
        Thread me = Thread.currentThread();
        for (Map.Entry<Object, ConnectionPool> e : pools.entrySet()) {
            ConnectionPool p = e.getValue();
            p.closeRequested = true;
            if (e.getKey() instanceof CorCoLoop l) {
                if (l.inLoop() || l.isTerminated()) {
                    p.closeIdle();
                } else {
                    try {
                        l.execute(p::closeIdle);
                    } catch (RejectedExecutionException ended) {
                        p.closeIdle();
                    }
                }
            } else if (e.getKey() == me || !((Thread) e.getKey()).isAlive()) {
                p.closeIdle();
            }
        }
        virtualPool.closeRequested = true;
        virtualPool.closeIdle(); // it locks: any thread may
        CorProtoClient p = proto;
        if (p != null) {
            p.close();
        }
        CorProtoClient t = protoTls;
        if (t != null) {
            t.close();
        }
    }

    /** Builds a {@link CorRestClient}; defaults as the constants of {@link CorRestClient}. Not thread-safe. */
    public static final class Builder {
        private long connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS;
        private long responseTimeoutMs = DEFAULT_RESPONSE_TIMEOUT_MS;
        private long handshakeTimeoutMs = DEFAULT_HANDSHAKE_TIMEOUT_MS;
        private SSLContext sslContext;
        private int maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES;
        private int maxHeaderBytes = DEFAULT_MAX_HEADER_BYTES;
        private int maxIdlePerOrigin = DEFAULT_MAX_IDLE_PER_ORIGIN;
        private long idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS;
        private CorRestResolver resolver;
        private OutboundPolicy outboundPolicy = OutboundPolicy.ALLOW_ALL;

        private Builder() {
        }

        public Builder connectTimeoutMs(long ms) {
            this.connectTimeoutMs = positive(ms, "connect timeout");
            return this;
        }

        /** The deadline from the request's first byte out to the response's last byte in. */
        public Builder responseTimeoutMs(long ms) {
            this.responseTimeoutMs = positive(ms, "response timeout");
            return this;
        }

        public Builder handshakeTimeoutMs(long ms) {
            this.handshakeTimeoutMs = positive(ms, "handshake timeout");
            return this;
        }

        /** TLS for {@code https://} (none by default: an https request is refused). */
        public Builder sslContext(SSLContext context) {
            this.sslContext = context;
            return this;
        }

        /** The largest response body accepted. */
        public Builder maxResponseBytes(int bytes) {
            if (bytes < 0 || bytes > Integer.MAX_VALUE - 64) {
                throw new IllegalArgumentException("max response bytes out of range: " + bytes);
            }
            this.maxResponseBytes = bytes;
            return this;
        }

        /** The largest response header section accepted (status line, fields, interim responses). */
        public Builder maxHeaderBytes(int bytes) {
            if (bytes < 64 || bytes > 1 << 24) {
                throw new IllegalArgumentException("max header bytes out of range: " + bytes);
            }
            this.maxHeaderBytes = bytes;
            return this;
        }

        /** Idle keep-alive connections kept per origin in each pool (0: none, every connection closes). */
        public Builder maxIdlePerOrigin(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("max idle per origin must be >= 0: " + n);
            }
            this.maxIdlePerOrigin = n;
            return this;
        }

        /** How long an idle connection is kept before it is closed instead of reused. */
        public Builder idleTimeoutMs(long ms) {
            this.idleTimeoutMs = positive(ms, "idle timeout");
            return this;
        }

        /** How names become addresses (default: {@link CorRestResolver#system()}). */
        public Builder resolver(CorRestResolver resolver) {
            this.resolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /**
         * Which addresses the client may connect to (default: all), asked with each new
         * connection's address once its name has resolved - {@code http}, {@code https} and
         * {@code cor}; a refusal is {@link CorRestClientException.Kind#DENIED} and sends nothing.
         */
        public Builder outboundPolicy(OutboundPolicy policy) {
            this.outboundPolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        public CorRestClient build() {
            return new CorRestClient(this);
        }

        private static long positive(long ms, String what) {
            if (ms <= 0) {
                throw new IllegalArgumentException(what + " must be > 0 ms: " + ms);
            }
            return ms;
        }
    }
}
