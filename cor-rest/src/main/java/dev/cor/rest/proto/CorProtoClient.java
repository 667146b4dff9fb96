package dev.cor.rest.proto;

import java.util.HashMap;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import javax.net.ssl.SSLContext;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.OutboundPolicy;
import dev.cor.rest.tls.LoopTls;

/**
 * The {@code cor://} client (doc/cor-protocol.md § 9.2): sends a request to a peer broker and
 * returns its answer, over connections shared and multiplexed per loop and per peer.
 * <p>
 * <b>Who may call it.</b> Any coroutine of any loop: the request yields where it waits (connect,
 * HELLO, a full socket, the answer) and its loop serves everyone else meanwhile; the loop's
 * connections to a peer are shared by all its coroutines. Any plain or worker thread: it blocks,
 * on a connection of that thread's own. Not a loop thread outside a coroutine: a loop never
 * blocks ({@link IllegalStateException}). The client itself is thread-safe; each connection is
 * touched only by its loop or its thread.
 * <p>
 * Failures are {@link CorProtoException}s typed by {@link CorProtoException#kind() kind}:
 * {@link CorProtoTimeoutException} for a deadline (a gateway's 504), the others 502. Every wait
 * has a deadline: the connect timeout for connect and HELLO, the request timeout for the rest.
 * A peer that stops answering without closing is found by PING, and a call past its deadline
 * cancels its stream (CANCEL, spec § 5.5), which frees it at once (spec § 9.2).
 * <p>
 * With {@link Builder#tls} every connection is {@code cors://} (spec § 4.4): TLS 1.3 or 1.2 before
 * HELLO, the server's certificate checked against the context's trust and the peer's host name;
 * a client speaks one or the other, so a peer's plain and TLS ports are two clients' affair.
 */
public final class CorProtoClient implements AutoCloseable {
    /** Default connect (and HELLO) timeout. */
    public static final long DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
    /** Default time a request may take, answer included. */
    public static final long DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
    /** Default silence after which a connection is PINGed (spec § 9.2). */
    public static final long DEFAULT_PING_IDLE_MS = 15_000;
    /** Default time a PING may go unanswered before the peer is taken for dead (spec § 9.2). */
    public static final long DEFAULT_PING_TIMEOUT_MS = 5_000;

    final String name;
    final String token;
    final long connectTimeoutMs;
    final OutboundPolicy outboundPolicy;
    final long requestTimeoutMs;
    final long pingIdleNanos;
    final long pingTimeoutNanos;
    final int maxFrame;
    final int maxStreams;
    final int nameTable;
    private final int connectionsPerPeer;
    /** The TLS of {@code cors://}, or {@code null}: plain {@code cor://}. */
    final SSLContext tls;
    /** {@code "cors://"} or {@code "cor://"}: how the connections name their peer in what they report. */
    final String scheme;
    /** The loop connections' TLS delegated tasks, on a bounded queue; null without TLS. */
    private final ThreadPoolExecutor tlsTasks;

    private final ConcurrentHashMap<CorCoLoop, Table> loopTables = new ConcurrentHashMap<>();
    private final ThreadLocal<Table> threadTables = new ThreadLocal<>();
    /** Every connection not dead yet (package-private: the tests reach a connection through it). */
    final Set<ClientConnection> live = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private final LongAdder opened = new LongAdder();
    private final LongAdder requests = new LongAdder();
    private final LongAdder bytesSent = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder bytesReceived = new LongAdder();
    private final LongAdder openWaits = new LongAdder();
    private final LongAdder cancelled = new LongAdder();

    private CorProtoClient(Builder b) {
        ProtoConnectionEvent.prepare(); // loaded here, not on a loop at its first connection
        this.name = b.name;
        this.token = b.token;
        this.connectTimeoutMs = b.connectTimeoutMs;
        this.outboundPolicy = b.outboundPolicy;
        this.requestTimeoutMs = b.requestTimeoutMs;
        this.pingIdleNanos = TimeUnit.MILLISECONDS.toNanos(b.pingIdleMs);
        this.pingTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(b.pingTimeoutMs);
        this.maxFrame = b.maxFrame;
        this.maxStreams = b.maxStreams;
        this.nameTable = b.nameTable;
        this.connectionsPerPeer = b.connectionsPerPeer;
        this.tls = b.tls;
        this.scheme = tls == null ? "cor://" : "cors://";
        if (tls != null) {
            // The context's first engine initialises the provider (tens of milliseconds): here, on the
            // caller's thread, not on a loop at the first connection; a context that speaks neither TLS
            // 1.3 nor 1.2 is refused here too.
            LoopTls.clientEngine(tls, "localhost", 0).getSession().getPacketBufferSize();
            this.tlsTasks = LoopTls.taskPool("cor-proto-client-tls", Math.max(2, Runtime.getRuntime().availableProcessors()), 1024);
        } else {
            this.tlsTasks = null;
        }
    }

    /** Where a loop connection's TLS handshake runs its delegated tasks; null without TLS. */
    ThreadPoolExecutor tlsTasks() {
        return tlsTasks;
    }

    /** Whether its connections are {@code cors://} (TLS) rather than plain {@code cor://}. */
    public boolean isTls() {
        return tls != null;
    }

    public static Builder builder() {
        return new Builder();
    }

    // ---------------------------------------------------------------- sending

    /**
     * Sends one request and returns its answer, within the request timeout.
     *
     * @param query   the query string without {@code ?}, or {@code null}
     * @param headers request headers, or {@code null}
     * @param json    the body as a JSON tree (it travels as one, spec § 6), or {@code null}
     * @param body    the body as bytes when there is no tree, or {@code null}
     * @throws CorProtoException     what failed, typed; {@link CorProtoTimeoutException} past the deadline
     * @throws IllegalStateException on a loop thread outside a coroutine, or once closed
     */
    public CorProtoResponse send(String method, String host, int port, String path, String query,
            CorRestHeaders headers, JsonNode json, byte[] body) throws CorProtoException {
        return start(method, host, port, path, query, headers, json, body, requestTimeoutMs).await();
    }

    /** {@link #send(String, String, int, String, String, CorRestHeaders, JsonNode, byte[])} with its own timeout. */
    public CorProtoResponse send(String method, String host, int port, String path, String query,
            CorRestHeaders headers, JsonNode json, byte[] body, long timeoutMs) throws CorProtoException {
        return start(method, host, port, path, query, headers, json, body, timeoutMs).await();
    }

    /**
     * Forwards {@code request} (method, path, query, headers and body - its JSON tree when it is
     * JSON, so that it travels parsed) to {@code host:port}.
     */
    public CorProtoResponse send(String host, int port, CorRest request) throws CorProtoException {
        JsonNode json = request.isJson() ? request.json() : null;
        return send(request.method(), host, port, request.path(), request.query(), request.headers(), json,
                json == null ? request.body() : null);
    }

    /**
     * Starts a request without waiting for its answer - the fan-out: start one per peer, then
     * {@link CorProtoCall#awaitAll} them, and the whole takes as long as the slowest. It may
     * still wait to connect or to write. Network failures do not throw here: they are the call's.
     *
     * @param timeoutMs the call's deadline from now
     * @throws IllegalStateException on a loop thread outside a coroutine, or once closed
     */
    public CorProtoCall start(String method, String host, int port, String path, String query,
            CorRestHeaders headers, JsonNode json, byte[] body, long timeoutMs) {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(path, "path");
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("port out of 1..65535: " + port);
        }
        if (closed) {
            throw new IllegalStateException("the " + scheme + " client " + name + " is closed");
        }
        long now = System.nanoTime();
        CorProtoCall call = new CorProtoCall(now + TimeUnit.MILLISECONDS.toNanos(Math.max(0, timeoutMs)));
        Table table = table();
        long openDeadline = Math.min(call.deadlineNanos, now + TimeUnit.MILLISECONDS.toNanos(connectTimeoutMs));
        requests.increment();
        // A connection dead before the call was written on it: once more on a fresh one.
        for (int attempt = 0; ; attempt++) {
            ClientConnection c;
            try {
                c = table.acquire(host, port, openDeadline, call.deadlineNanos);
            } catch (CorProtoException e) {
                call.fail(e);
                return call;
            }
            if (c.state != ClientConnection.READY) {
                call.fail(c.failure());
                return call;
            }
            call.connection = c;
            if (c.send(call, method, path, query, headers, json, body) == ClientConnection.TAKEN) {
                return call;
            }
            if (attempt > 0) {
                call.fail(c.failure());
                return call;
            }
        }
    }

    /** {@link #start(String, String, int, String, String, CorRestHeaders, JsonNode, byte[], long)} with the request timeout. */
    public CorProtoCall start(String method, String host, int port, String path, String query,
            CorRestHeaders headers, JsonNode json, byte[] body) {
        return start(method, host, port, path, query, headers, json, body, requestTimeoutMs);
    }

    /** The connections of the caller: its loop's, shared; or its thread's own. */
    private Table table() {
        CorCo co = CorCo.current();
        if (co != null) {
            CorCoLoop loop = co.loop();
            Table t = loopTables.get(loop);
            return t != null ? t : loopTables.computeIfAbsent(loop, l -> new Table(l));
        }
        CorCoLoop loop = CorCoLoop.current();
        if (loop != null) {
            throw new IllegalStateException("a cor:// request on loop thread " + loop.name()
                    + " outside a coroutine: a loop never blocks (send it from a coroutine, or from a worker)");
        }
        Table t = threadTables.get();
        if (t == null) {
            t = new Table(null);
            threadTables.set(t);
        }
        return t;
    }

    /**
     * One owner's connections, per peer: a loop's (its thread only) or a thread's. A connection
     * is put in its slot before it opens, so that whoever comes meanwhile waits for it instead of
     * opening another (spec § 9.2, busy before the connect).
     */
    private final class Table {
        private final CorCoLoop loop;
        private final HashMap<Peer, ClientConnection[]> peers = new HashMap<>();
        private final Peer probe = new Peer(null, 0);
        private int turn;

        Table(CorCoLoop loop) {
            this.loop = loop;
        }

        /**
         * The connection to use, open - its peer probed with PING first if it has been silent
         * for the ping idle time (spec § 9.2); a dead one is replaced here.
         */
        ClientConnection acquire(String host, int port, long openDeadline, long callDeadline) throws CorProtoException {
            probe.host = host;
            probe.port = port;
            ClientConnection[] slots = peers.get(probe);
            if (slots == null) {
                slots = new ClientConnection[connectionsPerPeer];
                peers.put(new Peer(host, port), slots);
            }
            int i = slots.length == 1 ? 0 : Math.floorMod(turn++, slots.length);
            ClientConnection c = slots[i];
            if (c != null && c.state == ClientConnection.READY) {
                c.readIdle();
                if (c.needsProbe(System.nanoTime()) && !c.probe(callDeadline)) {
                    throw new CorProtoTimeoutException(scheme + host + ":" + port
                            + ": no PONG from the silent connection before the deadline", true);
                }
                c = slots[i]; // null if it died meanwhile
            }
            if (c == null || c.state == ClientConnection.DEAD) {
                c = new ClientConnection(CorProtoClient.this, loop, host, port, slots, i);
                slots[i] = c; // claimed before the connect
                live.add(c);
                c.open(openDeadline);
            } else if (c.state == ClientConnection.CONNECTING) {
                openWaits.increment();
                c.awaitOpen(openDeadline);
            }
            return c;
        }

        /** Closes every connection of the owner; on the owner's thread. */
        void closeAll() {
            for (ClientConnection c : live) {
                if (c.loop == loop) {
                    c.shutdown();
                }
            }
            peers.clear();
        }
    }

    /** A peer, host and port; the table's probe is mutated in place, so a look-up allocates nothing. */
    private static final class Peer {
        String host;
        int port;

        Peer(String host, int port) {
            this.host = host;
            this.port = port;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Peer p && p.port == port && p.host.equals(host);
        }

        @Override
        public int hashCode() {
            return host.hashCode() * 31 + port;
        }
    }

    // ---------------------------------------------------------------- life

    /**
     * Closes every connection (GOAWAY {@code NO_ERROR}; the calls in flight fail) and refuses
     * new requests. Any thread: a loop's connections are closed on their loop; a thread's own,
     * whose thread may be blocked on them, have their sockets closed from here.
     */
    @Override
    public void close() {
        closed = true;
        for (var e : loopTables.entrySet()) {
            CorCoLoop loop = e.getKey();
            Table t = e.getValue();
            if (loop.inLoop()) {
                t.closeAll();
            } else {
                try {
                    loop.execute(t::closeAll);
                } catch (RejectedExecutionException ended) {
                    // the loop has ended: close the sockets from here
                    for (ClientConnection c : live) {
                        if (c.loop == loop) {
                            c.closeChannel();
                        }
                    }
                }
            }
        }
        for (ClientConnection c : live) {
            if (c.loop == null) {
                c.closeChannel();
            }
        }
        if (tlsTasks != null) {
            tlsTasks.shutdown(); // tasks queued finish (a handshake going on fails on its closed socket)
        }
    }

    // ---------------------------------------------------------------- counters

    void opened(ClientConnection c) {
        opened.increment();
    }

    void closed(ClientConnection c) {
        live.remove(c);
    }

    /** One write to a socket, of {@code n} bytes. */
    void wrote(int n) {
        bytesSent.add(n);
        writes.increment();
    }

    void received(int n) {
        bytesReceived.add(n);
    }

    /** How often a request waited for a connection another one was opening (tests). */
    long openWaits() {
        return openWaits.sum();
    }

    /** Connections opened (HELLO-ACK received) since the start. */
    public long connectionsOpened() {
        return opened.sum();
    }

    /** Calls whose streams were cancelled at their deadlines (CANCEL, spec § 5.5). */
    public long callsCancelled() {
        return cancelled.sum();
    }

    void cancelled() {
        cancelled.increment();
    }

    /** Connections open or opening now. */
    public int connectionsLive() {
        return live.size();
    }

    /** Requests handed to a connection. */
    public long requests() {
        return requests.sum();
    }

    /** Bytes written to the sockets. */
    public long bytesSent() {
        return bytesSent.sum();
    }

    /**
     * Writes to the sockets (system calls, the handshakes' included): the requests one loop round
     * sends on a connection go out in one, so under load there are fewer writes than requests.
     */
    public long writes() {
        return writes.sum();
    }

    /** Bytes read from the sockets. */
    public long bytesReceived() {
        return bytesReceived.sum();
    }

    @Override
    public String toString() {
        return "CorProtoClient[" + name + ", " + live.size() + " connection(s)]";
    }

    /**
     * Builds a client. Defaults: the name "cor", no token, connect timeout 5 s, request timeout
     * 30 s, a PING after 15 s of silence answered within 5 s, frames of 1 MiB, 256 streams, a name
     * table of 4 096, one connection per loop and peer, plain {@code cor://} (TLS with {@link #tls}).
     */
    public static final class Builder {
        private String name = "cor";
        private String token;
        private long connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS;
        private long requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS;
        private long pingIdleMs = DEFAULT_PING_IDLE_MS;
        private long pingTimeoutMs = DEFAULT_PING_TIMEOUT_MS;
        private int maxFrame = CorProtoCodec.DEFAULT_MAX_FRAME;
        private int maxStreams = CorProtoCodec.DEFAULT_MAX_STREAMS;
        private int nameTable = CorProtoCodec.DEFAULT_NAME_TABLE;
        private int connectionsPerPeer = 1;
        private SSLContext tls;
        private OutboundPolicy outboundPolicy = OutboundPolicy.ALLOW_ALL;

        private Builder() {
        }

        /**
         * Speaks {@code cors://} (spec § 4.4): TLS 1.3 or 1.2 with {@code context} before HELLO,
         * the server's certificate checked against its trust and the host's name (endpoint
         * identification "HTTPS", always); {@code null} (the default) speaks plain {@code cor://}.
         */
        public Builder tls(SSLContext context) {
            this.tls = context;
            return this;
        }

        /** The name sent in HELLO (at most 255 bytes). */
        public Builder name(String name) {
            this.name = ProtoChecks.text(name, CorProtoCodec.MAX_PEER_NAME_BYTES, "name");
            return this;
        }

        /** The shared secret sent in HELLO (spec § 4.3), or {@code null}. */
        public Builder token(String token) {
            this.token = token == null ? null : ProtoChecks.text(token, CorProtoCodec.MAX_TOKEN_BYTES, "token");
            return this;
        }

        /** Deadline of the connect and the HELLO exchange. */
        public Builder connectTimeoutMs(long ms) {
            this.connectTimeoutMs = ProtoChecks.range(ms, 1, Long.MAX_VALUE, "connect timeout");
            return this;
        }

        /** Deadline of a request, from its start to its answer. */
        public Builder requestTimeoutMs(long ms) {
            this.requestTimeoutMs = ProtoChecks.range(ms, 1, Long.MAX_VALUE, "request timeout");
            return this;
        }

        /**
         * Silence after which a connection is PINGed (spec § 9.2): one with requests waiting for
         * their answers, to find a peer that died without closing it; an idle one before a
         * request reuses it.
         */
        public Builder pingIdleMs(long ms) {
            this.pingIdleMs = ProtoChecks.range(ms, 1, Long.MAX_VALUE, "ping idle time");
            return this;
        }

        /**
         * How long a PING may go unanswered: then the peer is taken for dead, the connection
         * closes and every request on it fails ({@link CorProtoTimeoutException}).
         */
        public Builder pingTimeoutMs(long ms) {
            this.pingTimeoutMs = ProtoChecks.range(ms, 1, Long.MAX_VALUE, "ping timeout");
            return this;
        }

        /** The largest frame payload offered in HELLO (spec § 3.5). */
        public Builder maxFrameBytes(int bytes) {
            this.maxFrame = ProtoChecks.range(bytes, CorProtoCodec.MIN_MAX_FRAME, CorProtoCodec.HARD_MAX_FRAME, "max frame");
            return this;
        }

        /** Streams in flight offered in HELLO (spec § 5.3). */
        public Builder maxStreams(int streams) {
            this.maxStreams = ProtoChecks.range(streams, 1, CorProtoCodec.HARD_MAX_STREAMS, "max streams");
            return this;
        }

        /** Name table entries offered in HELLO (spec § 6.4). */
        public Builder nameTable(int entries) {
            this.nameTable = ProtoChecks.range(entries, 0, CorProtoCodec.HARD_MAX_NAME_TABLE, "name table");
            return this;
        }

        /** Connections per loop and peer, used in turn (default 1: one multiplexed connection). */
        public Builder connectionsPerPeer(int n) {
            this.connectionsPerPeer = ProtoChecks.range(n, 1, 64, "connections per peer");
            return this;
        }

        /**
         * Which addresses the client may connect to (default: all), asked with a peer's address
         * once its name has resolved; a refusal is {@link CorProtoException.Kind#DENIED}.
         */
        public Builder outboundPolicy(OutboundPolicy policy) {
            this.outboundPolicy = java.util.Objects.requireNonNull(policy, "policy");
            return this;
        }

        public CorProtoClient build() {
            return new CorProtoClient(this);
        }
    }
}
