package dev.cor.rest.proto;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import javax.net.ssl.SSLContext;

import dev.cor.base.CorCoAcceptBackoff;
import dev.cor.base.CorCoLoop;
import dev.cor.rest.CorRestDispatcher;
import dev.cor.rest.tls.LoopTls;

/**
 * A {@code cor://} server (doc/cor-protocol.md § 9.1): listens on its own port, deals each new
 * connection to one of its loops in turn (one acceptor, on the first loop), and serves every
 * REQUEST through the {@link CorRestDispatcher} - the same inline / coroutine / hop decision as
 * HTTP - with many in flight on one connection and each answer written as it finishes. With
 * {@link Builder#tls} it serves {@code cors://}: the same protocol inside TLS 1.3 or 1.2 (spec
 * § 4.4), the handshakes' delegated tasks on a bounded pool of its own.
 * <p>
 * It owns its listening socket and its connections; the loops and the dispatcher are the
 * caller's, started before and stopped after it. {@link #start()} and {@link #stop()} may be
 * called from any thread; the counters may be read from any thread. Everything else runs on the
 * loops.
 */
public final class CorProtoServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CorProtoServer.class.getName());

    /** Default handshake and frame timeouts (spec § 3.6, § 4). */
    public static final long DEFAULT_TIMEOUT_MS = 10_000;
    /** Default cap of open connections. */
    public static final int DEFAULT_MAX_CONNECTIONS = 10_000;
    /** Default idle timeout: a connection with nothing in flight that receives nothing this long is closed (spec § 9.1). */
    public static final long DEFAULT_IDLE_TIMEOUT_MS = 120_000;
    /** Default write timeout: answers the peer does not read for this long close its connection (spec § 9.1). */
    public static final long DEFAULT_WRITE_TIMEOUT_MS = 30_000;

    final String host;
    private final int requestedPort;
    final List<CorCoLoop> loops;
    final CorRestDispatcher dispatcher;
    final String name;
    final byte[] token;
    final int maxFrame;
    final int maxStreams;
    final int nameTable;
    final long handshakeTimeoutMs;
    final long frameTimeoutMs;
    final long idleTimeoutMs;
    final long writeTimeoutMs;
    final int maxConnections;
    /** The TLS of {@code cors://}, or {@code null}: plain {@code cor://}. */
    final SSLContext tls;
    /** TLS handshakes' delegated tasks, off the loops, on a bounded queue; null without TLS. */
    private final ThreadPoolExecutor tlsTasks;

    private ServerSocketChannel listener;
    private volatile int port = -1;
    private int nextLoop; // the acceptor loop's only
    private final CorCoAcceptBackoff acceptBackoff = new CorCoAcceptBackoff("cor:// server"); // the acceptor loop's only
    private volatile boolean started;
    private volatile boolean stopping;

    final Set<ServerConnection> connections = ConcurrentHashMap.newKeySet();
    private final LongAdder accepted = new LongAdder();
    final LongAdder requests = new LongAdder();
    final LongAdder responses = new LongAdder();
    final LongAdder cancelled = new LongAdder();
    final LongAdder violations = new LongAdder();
    final LongAdder timedOut = new LongAdder();
    final LongAdder bytesRead = new LongAdder();
    final LongAdder bytesWritten = new LongAdder();
    final LongAdder writes = new LongAdder();

    private CorProtoServer(Builder b) {
        ProtoConnectionEvent.prepare(); // loaded here, not on a loop at its first connection
        this.host = b.host;
        this.requestedPort = b.port;
        this.loops = List.copyOf(b.loops);
        this.dispatcher = Objects.requireNonNull(b.dispatcher, "dispatcher");
        this.name = b.name;
        this.token = b.token == null ? null : b.token.getBytes(StandardCharsets.UTF_8);
        this.maxFrame = b.maxFrame;
        this.maxStreams = b.maxStreams;
        this.nameTable = b.nameTable;
        this.handshakeTimeoutMs = b.handshakeTimeoutMs;
        this.frameTimeoutMs = b.frameTimeoutMs;
        this.idleTimeoutMs = b.idleTimeoutMs;
        this.writeTimeoutMs = b.writeTimeoutMs;
        this.maxConnections = b.maxConnections;
        if (loops.isEmpty()) {
            throw new IllegalArgumentException("a cor:// server needs at least one loop");
        }
        this.tls = b.tls;
        if (tls != null) {
            // The context's first engine initialises the provider's session machinery (tens of
            // milliseconds): here, on the caller's thread, not on the loop of the first connection.
            // It is also where a context that can speak neither TLS 1.3 nor 1.2 is refused.
            LoopTls.serverEngine(tls).getSession().getPacketBufferSize();
            this.tlsTasks = LoopTls.taskPool("cor-proto-tls", b.tlsTaskThreads, b.tlsTaskQueue);
        } else {
            this.tlsTasks = null;
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    // ---------------------------------------------------------------- life

    /**
     * Binds the port and starts accepting on the first loop. Any thread: from a thread that is no
     * loop's it returns once the acceptor loop has taken the listener; on the acceptor loop
     * itself it registers the listener at once; on another loop it does not wait - a loop never
     * blocks - and connections wait in the listen backlog until the acceptor loop takes it.
     */
    public CorProtoServer start() throws IOException {
        synchronized (this) {
            if (started) {
                throw new IllegalStateException("cor:// server " + name + " already started");
            }
            started = true;
        }
        ServerSocketChannel ch = ServerSocketChannel.open();
        try {
            ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            ch.bind(new InetSocketAddress(host, requestedPort), 1024);
            ch.configureBlocking(false);
            listener = ch;
            port = ((InetSocketAddress) ch.getLocalAddress()).getPort();
            CorCoLoop acceptor = loops.get(0);
            CountDownLatch registered = new CountDownLatch(1);
            IOException[] failure = new IOException[1];
            // A loop thread never waits: not for itself (it would wait for ever), not for another.
            boolean inline = acceptor.inLoop();
            boolean reported = inline || CorCoLoop.current() == null;
            Runnable register = () -> {
                try {
                    acceptor.register(ch, SelectionKey.OP_ACCEPT, this::onAcceptable);
                } catch (IOException e) {
                    failure[0] = e;
                    if (!reported) { // nobody is there to throw it to
                        LOG.log(System.Logger.Level.ERROR, "cor:// server " + name + " cannot accept on " + acceptor.name(), e);
                        ProtoChecks.closeQuietly(ch);
                    }
                } finally {
                    registered.countDown();
                }
            };
            if (inline) {
                register.run();
            } else {
                acceptor.execute(register);
                if (reported && !registered.await(10, TimeUnit.SECONDS)) {
                    throw new IOException("loop " + acceptor.name() + " did not take the listener within 10 s");
                }
            }
            if (registered.getCount() == 0 && failure[0] != null) {
                throw failure[0];
            }
        } catch (IOException | RuntimeException e) {
            ProtoChecks.closeQuietly(ch);
            throw e;
        } catch (InterruptedException e) {
            ProtoChecks.closeQuietly(ch);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting", e);
        }
        LOG.log(System.Logger.Level.DEBUG, () -> "cor:// server " + name + " listening on " + host + ":" + port);
        return this;
    }

    /** The port bound (the ephemeral one when 0 was asked for); -1 before {@link #start()}. */
    public int port() {
        return port;
    }

    public String name() {
        return name;
    }

    /** The acceptor: loop 0's handler of the listening socket. Deals connections out in turn. */
    private void onAcceptable(SelectionKey key) {
        for (int i = 0; i < 64 && !stopping; i++) {
            SocketChannel ch;
            try {
                ch = listener.accept();
            } catch (IOException e) {
                acceptBackoff.failed(key, e); // out of descriptors, say: pause rather than spin
                return;
            }
            if (ch == null) {
                return;
            }
            acceptBackoff.accepted();
            accepted.increment();
            try {
                ch.configureBlocking(false);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            } catch (IOException e) {
                ProtoChecks.closeQuietly(ch);
                continue;
            }
            CorCoLoop target = loops.get(nextLoop);
            nextLoop = (nextLoop + 1) % loops.size();
            if (target.inLoop()) {
                adopt(target, ch);
            } else {
                try {
                    target.execute(() -> adopt(target, ch));
                } catch (RejectedExecutionException e) {
                    ProtoChecks.closeQuietly(ch);
                }
            }
        }
    }

    /** On the connection's loop: the connection is registered once, for good. */
    private void adopt(CorCoLoop loop, SocketChannel ch) {
        if (stopping) {
            ProtoChecks.closeQuietly(ch);
            return;
        }
        ServerConnection c;
        try {
            c = new ServerConnection(this, loop, ch);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "cor:// server " + name + ": cannot begin TLS on a connection", e);
            ProtoChecks.closeQuietly(ch);
            return;
        }
        try {
            c.open(connections.size() >= maxConnections);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "cor:// server " + name + ": cannot register a connection", e);
            c.close();
        }
    }

    /**
     * Stops: closes the listener, then every connection (GOAWAY {@code NO_ERROR} first, spec
     * § 8.4). Requests still running lose their answers. Any thread; from a thread that is not
     * one of the loops it returns once the connections are closed and the port is free again.
     */
    public void stop() {
        if (!started || stopping) {
            if (!started && tlsTasks != null) {
                tlsTasks.shutdownNow();
            }
            return;
        }
        stopping = true;
        CountDownLatch done = new CountDownLatch(loops.size());
        for (int i = 0; i < loops.size(); i++) {
            CorCoLoop loop = loops.get(i);
            boolean acceptor = i == 0;
            Runnable onLoop = () -> {
                try {
                    if (acceptor) {
                        ProtoChecks.closeQuietly(listener);
                    }
                    for (ServerConnection c : connections) {
                        if (c.loop == loop) {
                            c.shutdown();
                        }
                    }
                } finally {
                    // A closed channel's descriptor is released at the loop's next select: count
                    // down after it, so that a caller can bind the port again at once.
                    try {
                        loop.schedule(1, done::countDown);
                    } catch (RuntimeException e) {
                        done.countDown();
                    }
                }
            };
            try {
                if (loop.inLoop()) {
                    onLoop.run();
                } else {
                    loop.execute(onLoop);
                }
            } catch (RejectedExecutionException ended) {
                // The loop has ended: nobody will ever read these again.
                if (acceptor) {
                    ProtoChecks.closeQuietly(listener);
                }
                for (ServerConnection c : connections) {
                    if (c.loop == loop) {
                        ProtoChecks.closeQuietly(c.channel);
                        connections.remove(c);
                    }
                }
                done.countDown();
            }
        }
        if (CorCoLoop.current() == null) {
            try {
                if (!done.await(10, TimeUnit.SECONDS)) {
                    LOG.log(System.Logger.Level.WARNING, "cor:// server " + name + ": a loop did not close its connections within 10 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (tlsTasks != null) {
            tlsTasks.shutdownNow();
        }
        LOG.log(System.Logger.Level.DEBUG, () -> "cor:// server " + name + " stopped");
    }

    @Override
    public void close() {
        stop();
    }

    boolean isStopping() {
        return stopping;
    }

    /** Where the connections' TLS handshakes run their delegated tasks; null without TLS. */
    ThreadPoolExecutor tlsTasks() {
        return tlsTasks;
    }

    /** Whether it serves {@code cors://} (TLS) rather than plain {@code cor://}. */
    public boolean isTls() {
        return tls != null;
    }

    // ---------------------------------------------------------------- counters

    /** Connections accepted since the start. */
    public long connectionsAccepted() {
        return accepted.sum();
    }

    /** Connections open now. */
    public int connectionsOpen() {
        return connections.size();
    }

    /** REQUEST frames accepted (dispatched). */
    public long requests() {
        return requests.sum();
    }

    /** RESPONSE frames sent. */
    public long responses() {
        return responses.sum();
    }

    /** Streams the clients cancelled while their requests were in flight (spec § 5.5). */
    public long cancelled() {
        return cancelled.sum();
    }

    /** Connections ended with GOAWAY for a protocol violation (spec § 8.3). */
    public long violations() {
        return violations.sum();
    }

    /**
     * Connections closed because the peer was idle past the idle timeout, or left its answers
     * unread past the write timeout (spec § 9.1).
     */
    public long connectionsTimedOut() {
        return timedOut.sum();
    }

    public long bytesRead() {
        return bytesRead.sum();
    }

    public long bytesWritten() {
        return bytesWritten.sum();
    }

    /**
     * Writes to the sockets (system calls): the answers of one read, and those finished in one
     * loop round, go out in one, so under load there are fewer writes than answers.
     */
    public long writes() {
        return writes.sum();
    }

    @Override
    public String toString() {
        return "CorProtoServer[" + name + " " + host + ":" + port + ", " + connections.size() + " connection(s)]";
    }

    /**
     * Builds a server. Required: the loops (started) and the dispatcher. Defaults: 127.0.0.1,
     * an ephemeral port, the name "cor", no token, frames of 1 MiB, 256 streams, a name table of
     * 4 096, handshake and frame timeouts of 10 s, an idle timeout of 120 s, a write timeout of
     * 30 s, 10 000 connections, plain {@code cor://} (TLS with {@link #tls}).
     */
    public static final class Builder {
        private String host = "127.0.0.1";
        private int port;
        private List<CorCoLoop> loops = List.of();
        private CorRestDispatcher dispatcher;
        private String name = "cor";
        private String token;
        private int maxFrame = CorProtoCodec.DEFAULT_MAX_FRAME;
        private int maxStreams = CorProtoCodec.DEFAULT_MAX_STREAMS;
        private int nameTable = CorProtoCodec.DEFAULT_NAME_TABLE;
        private long handshakeTimeoutMs = DEFAULT_TIMEOUT_MS;
        private long frameTimeoutMs = DEFAULT_TIMEOUT_MS;
        private long idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS;
        private long writeTimeoutMs = DEFAULT_WRITE_TIMEOUT_MS;
        private int maxConnections = DEFAULT_MAX_CONNECTIONS;
        private SSLContext tls;
        private int tlsTaskThreads = Runtime.getRuntime().availableProcessors();
        private int tlsTaskQueue = 1024;

        private Builder() {
        }

        /**
         * Serves {@code cors://} (spec § 4.4): TLS 1.3 or 1.2 with {@code context}'s key and
         * certificate, before HELLO; {@code null} (the default) serves plain {@code cor://}.
         * Fails at {@link #build} when the context speaks neither version.
         */
        public Builder tls(SSLContext context) {
            this.tls = context;
            return this;
        }

        /**
         * The pool of the TLS handshakes' delegated tasks (certificate and key work, off the
         * loops): its threads, and how many batches may wait; past that a new handshake is
         * closed rather than queued. Defaults: one thread per processor, 1 024.
         */
        public Builder tlsTaskPool(int threads, int queue) {
            this.tlsTaskThreads = ProtoChecks.range(threads, 1, 1024, "TLS task threads");
            this.tlsTaskQueue = ProtoChecks.range(queue, 1, 1 << 20, "TLS task queue");
            return this;
        }

        /** The address to bind (a literal address: it is resolved on the caller's thread). */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** The port; 0 (the default) binds an ephemeral one, read back with {@link CorProtoServer#port()}. */
        public Builder port(int port) {
            if (port < 0 || port > 65_535) {
                throw new IllegalArgumentException("port out of 0..65535: " + port);
            }
            this.port = port;
            return this;
        }

        /** The started loops to serve on; the first one also accepts. */
        public Builder loops(List<CorCoLoop> loops) {
            this.loops = List.copyOf(loops);
            return this;
        }

        public Builder loops(CorCoLoop... loops) {
            return loops(List.of(loops));
        }

        public Builder dispatcher(CorRestDispatcher dispatcher) {
            this.dispatcher = dispatcher;
            return this;
        }

        /** The name sent in HELLO-ACK (at most 255 bytes). */
        public Builder name(String name) {
            this.name = ProtoChecks.text(name, CorProtoCodec.MAX_PEER_NAME_BYTES, "name");
            return this;
        }

        /** A shared secret every HELLO must carry (spec § 4.3); {@code null}: none required. */
        public Builder token(String token) {
            this.token = token == null ? null : ProtoChecks.text(token, CorProtoCodec.MAX_TOKEN_BYTES, "token");
            return this;
        }

        /** The largest frame payload accepted (spec § 3.5). */
        public Builder maxFrameBytes(int bytes) {
            this.maxFrame = ProtoChecks.range(bytes, CorProtoCodec.MIN_MAX_FRAME, CorProtoCodec.HARD_MAX_FRAME, "max frame");
            return this;
        }

        /** Streams in flight per connection (spec § 5.3). */
        public Builder maxStreams(int streams) {
            this.maxStreams = ProtoChecks.range(streams, 1, CorProtoCodec.HARD_MAX_STREAMS, "max streams");
            return this;
        }

        /** Name table entries per direction (spec § 6.4). */
        public Builder nameTable(int entries) {
            this.nameTable = ProtoChecks.range(entries, 0, CorProtoCodec.HARD_MAX_NAME_TABLE, "name table");
            return this;
        }

        /** How long a new connection has to send HELLO (spec § 4). */
        public Builder handshakeTimeoutMs(long ms) {
            this.handshakeTimeoutMs = ProtoChecks.range(ms, 1, Long.MAX_VALUE, "handshake timeout");
            return this;
        }

        /** How long a frame begun may stay unfinished (spec § 3.6). */
        public Builder frameTimeoutMs(long ms) {
            this.frameTimeoutMs = ProtoChecks.range(ms, 1, Long.MAX_VALUE, "frame timeout");
            return this;
        }

        /**
         * How long a connection past HELLO may stay idle - nothing in flight, nothing unsent, nothing
         * received - before it is closed with GOAWAY {@code NO_ERROR} (spec § 9.1). A peer that
         * wants to keep an idle connection sends PING.
         */
        public Builder idleTimeoutMs(long ms) {
            this.idleTimeoutMs = ProtoChecks.range(ms, 1, Long.MAX_VALUE, "idle timeout");
            return this;
        }

        /**
         * How long answers may wait unsent while the peer reads none of them before the
         * connection is closed and they are dropped (spec § 9.1).
         */
        public Builder writeTimeoutMs(long ms) {
            this.writeTimeoutMs = ProtoChecks.range(ms, 1, Long.MAX_VALUE, "write timeout");
            return this;
        }

        /** Open connections past which a new one is refused with GOAWAY {@code REFUSED}. */
        public Builder maxConnections(int connections) {
            this.maxConnections = ProtoChecks.range(connections, 1, Integer.MAX_VALUE, "max connections");
            return this;
        }

        public CorProtoServer build() {
            return new CorProtoServer(this);
        }
    }
}
