package dev.cor.http;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import dev.cor.base.CorCoAcceptBackoff;
import dev.cor.base.CorCoLogLimiter;
import dev.cor.base.CorCoLoop;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestCoroutineHook;
import dev.cor.rest.CorRestDispatcher;
import dev.cor.rest.CorRestFinishCoroutineHook;
import dev.cor.rest.CorRestService;
import dev.cor.rest.CorRestWorkers;

/**
 * The built-in HTTP/1.1 server on cor's loops.
 * <p>
 * One accepting loop takes every new connection and deals them to the loops in turn, through
 * each loop's inbox (left to the kernel's {@code SO_REUSEPORT} hash, 16 connections split as
 * unevenly as 11 and 5). Each request is dispatched as {@link CorRestDispatcher} decides: inline
 * on its loop, as a coroutine of it that answers from inside itself, or on a worker. Limits are
 * enforced on every input, with the status RFC 9110/9112 asks for.
 * <p>
 * Build it with {@link #builder()}, then {@link #start()}; {@link #stop()} from any thread (from
 * one of its own loops or workers it returns at once and the stop goes on by itself).
 */
public final class CorHttpServer {
    private static final System.Logger LOG = System.getLogger(CorHttpServer.class.getName());

    /** Default cap of open connections. */
    public static final int DEFAULT_MAX_CONNECTIONS = 10_000;

    private final String host;
    private final int requestedPort;
    private final HttpLimits limits;
    private final long stopGraceMs;
    /** What was mounted with {@code Builder.service}, told of the start and the stop; or {@code null}. */
    private final CorRestService service;
    private final javax.net.ssl.SSLContext sslContext;
    private final int maxConnections;
    /** TLS handshakes' delegated tasks, off the loops, on a bounded queue; null without TLS. */
    private final java.util.concurrent.ThreadPoolExecutor tlsTasks;
    private final CorRestDispatcher dispatcher;
    /** Told of each answer written, or null (then no time stamp is taken for it). */
    private final CorHttpAccessLog accessLog;
    private final CorRestWorkers workers;
    private final boolean ownWorkers;
    private final List<HttpLoop> loops = new ArrayList<>();
    private ServerSocketChannel listener;
    private int port;
    private int nextLoop;
    private HttpRefusal.Acceptor refusals; // the acceptor loop's
    private final CorCoAcceptBackoff acceptBackoff = new CorCoAcceptBackoff("cor-http"); // the acceptor loop's
    private volatile boolean started;
    private volatile boolean stopped;

    private final AtomicInteger open = new AtomicInteger();
    private final LongAdder accepted = new LongAdder();
    private final LongAdder requests = new LongAdder();
    private final LongAdder answered = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder refused = new LongAdder();
    /** Answers that could not be written (each became a 500): one stack trace per 10 s. */
    private final CorCoLogLimiter answerFailures = new CorCoLogLimiter(HttpConnection.LOG, 10_000);

    private CorHttpServer(Builder b) {
        this.host = b.host;
        this.requestedPort = b.port;
        this.limits = new HttpLimits(b.maxRequestTargetBytes + 64, b.maxRequestTargetBytes, b.maxHeaderBytes,
                b.maxHeaderCount, b.maxBodyBytes, b.headerTimeoutMs, b.idleTimeoutMs, b.writeTimeoutMs);
        this.stopGraceMs = b.stopGraceMs;
        this.service = b.service;
        this.sslContext = b.sslContext;
        this.maxConnections = b.maxConnections;
        this.accessLog = b.accessLog;
        this.tlsTasks = b.sslContext == null ? null : dev.cor.rest.tls.LoopTls.taskPool("cor-http-tls", b.tlsTaskThreads, b.tlsTaskQueue);
        if (sslContext != null) {
            // The context's first engine initialises the provider's session machinery (tens of
            // milliseconds): here, on the caller's thread, not on the loop of the first connection.
            // It is also where a context that can speak neither TLS 1.3 nor 1.2 is refused.
            javax.net.ssl.SSLEngine warm = dev.cor.rest.tls.LoopTls.serverEngine(sslContext);
            warm.getSession().getPacketBufferSize();
        }
        this.ownWorkers = b.workers == null;
        this.workers = b.workers != null ? b.workers : CorRestWorkers.create(b.workerThreads);
        CorRestDispatcher.Builder d = CorRestDispatcher.builder().application(b.application).workers(workers)
                .coroutineHook(b.coroutineHook).finishCoroutineHook(b.finishHook);
        if (b.discoverHooks) {
            d.discoverHooks();
        }
        this.dispatcher = d.build();
        for (int i = 0; i < b.loops; i++) {
            CorCoLoop loop = CorCoLoop.builder().name("cor-http-" + i).coroutineCap(b.coroutineCap)
                    .stackSize(b.stackSize).build();
            loops.add(new HttpLoop(this, loop, i));
        }
    }

    /** A builder with the defaults {@link Builder} lists; an application (or a service) is required. */
    public static Builder builder() {
        return new Builder();
    }

    /** Binds the port and starts the loops. */
    public synchronized CorHttpServer start() {
        if (started) {
            throw new IllegalStateException("already started");
        }
        try {
            listener = ServerSocketChannel.open();
            listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            listener.bind(new InetSocketAddress(host, requestedPort), 1024);
            listener.configureBlocking(false);
            port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + host + ":" + requestedPort, e);
        }
        for (HttpLoop l : loops) {
            l.loop.start();
            l.start();
        }
        CorCoLoop acceptor = loops.get(0).loop;
        refusals = new HttpRefusal.Acceptor(acceptor);
        acceptor.execute(() -> {
            try {
                acceptor.register(listener, SelectionKey.OP_ACCEPT, this::accept);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.ERROR, "cor-http: cannot accept on port " + port, e);
            }
        });
        started = true;
        LOG.log(System.Logger.Level.INFO, "cor-http: listening on " + host + ":" + port + " with " + loops.size() + " loop(s)");
        if (service != null) {
            service.started(loops());
        }
        return this;
    }

    /** On the accepting loop: takes every waiting connection and deals them out in turn. */
    private void accept(SelectionKey key) {
        for (int i = 0; i < 256; i++) {
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
            try {
                ch.configureBlocking(false);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            } catch (IOException e) {
                HttpConnection.closeQuietly(ch);
                continue;
            }
            accepted.increment();
            // Counted from here, not from its adoption: connections in transit to their loops count against the cap.
            if (open.get() >= maxConnections) {
                refused.increment();
                HttpRefusal.refuse(refusals, ch, sslContext != null);
                continue;
            }
            open.incrementAndGet();
            HttpLoop target = loops.get(nextLoop);
            nextLoop = (nextLoop + 1) % loops.size();
            try {
                target.loop.execute(() -> target.adopt(ch));
            } catch (java.util.concurrent.RejectedExecutionException e) {
                HttpConnection.closeQuietly(ch);
                open.decrementAndGet();
            }
        }
    }

    /** {@link #stop(long)} with the builder's grace period (default 5 s). */
    public void stop() {
        stop(stopGraceMs);
    }

    /**
     * Stops: no new connections; idle connections close at once; requests in flight may finish
     * within {@code graceMs}, after which each still unanswered gets a 503. Returns when the loops
     * have ended - promptly when nothing was in flight. Idempotent.
     * <p>
     * Any thread. On a thread the stop would wait for - one of the server's loops (a request
     * inline or in a coroutine), or one of its workers (a request on the hop) - it starts the
     * stop on a thread of its own and returns at once: that request then finishes and is
     * answered like any other in flight, and the loops end after it.
     */
    public void stop(long graceMs) {
        synchronized (this) {
            if (!started || stopped) {
                return;
            }
            stopped = true;
        }
        if (CorCoLoop.current() != null || workers.isWorker(Thread.currentThread())) {
            Thread.ofPlatform().name("cor-http-stop").daemon(false).start(() -> stopNow(graceMs));
            return;
        }
        stopNow(graceMs);
    }

    private void stopNow(long graceMs) {
        // The acceptor first, so no connection arrives after its loop drained.
        runOnEach(List.of(loops.get(0)), l -> {
            try {
                listener.close();
            } catch (IOException e) {
                // closing: nothing more to do
            }
            refusals.closeAll();
        });
        runOnEach(loops, HttpLoop::drain);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(graceMs);
        while (open.get() > 0 && System.nanoTime() < deadline) {
            sleepQuietly(2);
        }
        if (open.get() > 0) {
            for (HttpLoop l : loops) {
                try {
                    l.loop.execute(l::forceClose);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    // ended already
                }
            }
        }
        for (HttpLoop l : loops) {
            l.loop.stop();
        }
        for (HttpLoop l : loops) {
            try {
                if (!l.loop.awaitTermination(10, TimeUnit.SECONDS)) {
                    LOG.log(System.Logger.Level.WARNING, "cor-http: loop " + l.loop.name() + " did not end in 10 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (ownWorkers) {
            workers.close();
        }
        if (tlsTasks != null) {
            tlsTasks.shutdownNow();
        }
        if (service != null) {
            service.stopped(); // no request runs any more
        }
    }

    /** Runs {@code action} on each of {@code targets}' loops and waits (up to 5 s) until each has run it. */
    private static void runOnEach(List<HttpLoop> targets, java.util.function.Consumer<HttpLoop> action) {
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(targets.size());
        for (HttpLoop l : targets) {
            try {
                l.loop.execute(() -> {
                    try {
                        action.accept(l);
                    } finally {
                        done.countDown();
                    }
                });
            } catch (java.util.concurrent.RejectedExecutionException e) {
                done.countDown();
            }
        }
        try {
            done.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- for the connections

    /** The per-loop state, for tests that look inside on the loops. */
    List<HttpLoop> httpLoops() {
        return loops;
    }

    javax.net.ssl.SSLContext sslContext() {
        return sslContext;
    }

    /** The access log, or null. */
    CorHttpAccessLog accessLog() {
        return accessLog;
    }

    CorCoLogLimiter answerFailures() {
        return answerFailures;
    }

    /** Where the connections' TLS handshakes run their delegated tasks; null without TLS. */
    java.util.concurrent.ThreadPoolExecutor tlsTasks() {
        return tlsTasks;
    }

    HttpLimits limits() {
        return limits;
    }

    /** A connection counted at its accept has closed, or was never adopted. */
    void connectionClosed() {
        open.decrementAndGet();
    }

    void requestRead() {
        requests.increment();
    }

    void requestAnswered() {
        answered.increment();
    }

    void requestRejected() {
        rejected.increment();
    }

    // ---------------------------------------------------------------- what an operator reads

    /** The bound port (the real one when 0 was asked for). */
    public int port() {
        return port;
    }

    /** How many loops serve the connections. */
    public int loopCount() {
        return loops.size();
    }

    /**
     * The server's loops, started by {@link #start()}: another server of the same process (the
     * {@code cor://} server) can serve its connections on them too. They end with {@link #stop()}.
     */
    public List<CorCoLoop> loops() {
        return loops.stream().map(l -> l.loop).toList();
    }

    /** The dispatcher the server's requests go through (shared with another server on the same loops). */
    public CorRestDispatcher dispatcher() {
        return dispatcher;
    }

    /** Connections open now. */
    public int connectionsOpen() {
        return open.get();
    }

    /** Connections accepted since start. */
    public long connectionsAccepted() {
        return accepted.sum();
    }

    /**
     * Connections refused since start because {@link Builder#maxConnections} were open: each got
     * a 503 with {@code Connection: close} (over TLS: closed at once), and is counted in
     * {@link #connectionsAccepted()} too.
     */
    public long connectionsRefused() {
        return refused.sum();
    }

    /** Requests read and dispatched since start. */
    public long requests() {
        return requests.sum();
    }

    /** Requests refused before dispatch (malformed, over a limit, timed out). */
    public long requestsRejected() {
        return rejected.sum();
    }

    /** Answers written in full. */
    public long answersWritten() {
        return answered.sum();
    }

    /** Requests run inline on their loop so far. */
    public long inlineCount() {
        return dispatcher.inlineCount();
    }

    /** Requests run as coroutines of their loop so far. */
    public long coroutineCount() {
        return dispatcher.coroutineCount();
    }

    /** Requests run on a worker so far (the hop). */
    public long hopCount() {
        return dispatcher.hopCount();
    }

    /** Live coroutines on each loop (a recent value). */
    public int[] liveCoroutines() {
        int[] live = new int[loops.size()];
        for (int i = 0; i < live.length; i++) {
            live[i] = loops.get(i).loop.liveCoroutines();
        }
        return live;
    }

    /** Connections on each loop (a recent value): how evenly the acceptor dealt them. */
    public int[] connectionsPerLoop() {
        int[] n = new int[loops.size()];
        for (int i = 0; i < n.length; i++) {
            n[i] = loops.get(i).connectionCount();
        }
        return n;
    }

    /**
     * Builds a {@link CorHttpServer}. Defaults: 0.0.0.0, port 8080, one loop per core, 1024
     * coroutines per loop, 32 workers, header section 8 KiB (431), request target 8 KiB (414),
     * body 1 MiB (413), 100 header fields, header-read timeout 10 s (408), idle timeout 60 s,
     * write timeout 30 s, stop grace 5 s, 10 000 connections, plain HTTP (TLS with {@code tls(SSLContext)}: the
     * handshakes' delegated tasks run on one thread per core of the server's own, at most 1024 waiting - past
     * that a new handshake is closed rather than queued). The application is required; with no coroutine hook
     * every request that can wait takes the worker hop.
     */
    public static final class Builder {
        private String host = "0.0.0.0";
        private int port = 8080;
        private int loops = Runtime.getRuntime().availableProcessors();
        private int coroutineCap = CorCoLoop.DEFAULT_COROUTINE_CAP;
        private long stackSize;
        private int workerThreads = CorRestWorkers.DEFAULT_THREADS;
        private CorRestWorkers workers;
        private CorRestApplication application;
        private CorRestService service;
        private CorRestCoroutineHook coroutineHook;
        private CorRestFinishCoroutineHook finishHook;
        private boolean discoverHooks;
        private int maxHeaderBytes = 8 * 1024;
        private int maxRequestTargetBytes = 8 * 1024;
        private int maxHeaderCount = 100;
        private int maxBodyBytes = 1024 * 1024;
        private long headerTimeoutMs = 10_000;
        private long idleTimeoutMs = 60_000;
        private long writeTimeoutMs = 30_000;
        private long stopGraceMs = 5_000;
        private int maxConnections = DEFAULT_MAX_CONNECTIONS;
        private int tlsTaskThreads = Runtime.getRuntime().availableProcessors();
        private int tlsTaskQueue = 1024;
        private javax.net.ssl.SSLContext sslContext;
        private CorHttpAccessLog accessLog;

        private Builder() {
        }

        /**
         * Serves HTTPS with this context (its key managers hold the server's certificate), TLS 1.3
         * and 1.2 only, whatever else the context would allow.
         */
        public Builder tls(javax.net.ssl.SSLContext context) {
            this.sslContext = Objects.requireNonNull(context, "context");
            return this;
        }

        /** The address to listen on (default {@code 0.0.0.0}: every one). */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** The port; 0 takes any free one ({@link CorHttpServer#port()} tells which). */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port out of range: " + port);
            }
            this.port = port;
            return this;
        }

        /** Number of loops (default: one per core). */
        public Builder loops(int loops) {
            if (loops < 1) {
                throw new IllegalArgumentException("loops must be >= 1: " + loops);
            }
            this.loops = loops;
            return this;
        }

        /** Live coroutines per loop; 0 turns coroutines off (every request that can wait takes the hop). */
        public Builder coroutineCap(int cap) {
            if (cap < 0) {
                throw new IllegalArgumentException("coroutine cap must be >= 0: " + cap);
            }
            this.coroutineCap = cap;
            return this;
        }

        /** The loop threads' stack size in bytes (0: the JVM's default): a mounted coroutine runs on it. */
        public Builder stackSize(long bytes) {
            this.stackSize = bytes;
            return this;
        }

        /** Worker threads of a pool the server creates and closes (default 32). */
        public Builder workerThreads(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("workers must be >= 1: " + n);
            }
            this.workerThreads = n;
            return this;
        }

        /** A worker pool the caller owns (the server does not close it). */
        public Builder workers(CorRestWorkers workers) {
            this.workers = workers;
            return this;
        }

        /**
         * Mounts {@code service}: its application and coroutine hooks are the server's, and it is
         * told when the server's loops run ({@link CorRestService#started}) and when the server
         * has stopped ({@link CorRestService#stopped}). An {@link #application} or hook set after
         * this call replaces the service's (a host that wraps the service's application).
         */
        public Builder service(CorRestService service) {
            this.service = Objects.requireNonNull(service, "service");
            this.application = service.application();
            this.coroutineHook = service.coroutineHook();
            this.finishHook = service.finishCoroutineHook();
            return this;
        }

        /** The application: its request handler and its "can this wait?" answer. Required (or a {@link #service}). */
        public Builder application(CorRestApplication application) {
            this.application = application;
            return this;
        }

        /** Which requests may wait as coroutines of their loop (default: none; see {@link CorRestCoroutineHook}). */
        public Builder coroutineHook(CorRestCoroutineHook hook) {
            this.coroutineHook = hook;
            return this;
        }

        /** Which post-response phases may wait as coroutines of their loop (default: none). */
        public Builder finishCoroutineHook(CorRestFinishCoroutineHook hook) {
            this.finishHook = hook;
            return this;
        }

        /** Tells {@code log} of every answer written in full, on the answer's loop (default: none). */
        public Builder accessLog(CorHttpAccessLog log) {
            this.accessLog = log;
            return this;
        }

        /** Looks the hooks not set here up through {@link java.util.ServiceLoader}. */
        public Builder discoverHooks() {
            this.discoverHooks = true;
            return this;
        }

        /** The largest header section (default 8 KiB): past it, 431. */
        public Builder maxHeaderBytes(int bytes) {
            this.maxHeaderBytes = positive(bytes, "max header bytes");
            return this;
        }

        /** The longest request target (default 8 KiB): past it, 414. */
        public Builder maxRequestTargetBytes(int bytes) {
            this.maxRequestTargetBytes = positive(bytes, "max request target bytes");
            return this;
        }

        /** The most header fields a request may have (default 100): past it, 431. */
        public Builder maxHeaderCount(int n) {
            this.maxHeaderCount = positive(n, "max header fields");
            return this;
        }

        /** The largest request body (default 1 MiB): past it, 413. */
        public Builder maxBodyBytes(int bytes) {
            this.maxBodyBytes = positive(bytes, "max body bytes");
            return this;
        }

        /** Time allowed to read a request's header section and body once it has begun (408 past it). */
        public Builder headerTimeoutMs(long ms) {
            this.headerTimeoutMs = positive(ms, "header timeout");
            return this;
        }

        /** Time a keep-alive connection may sit idle before it is closed. */
        public Builder idleTimeoutMs(long ms) {
            this.idleTimeoutMs = positive(ms, "idle timeout");
            return this;
        }

        /** Time an answer may wait for a peer that does not read before the connection is closed. */
        public Builder writeTimeoutMs(long ms) {
            this.writeTimeoutMs = positive(ms, "write timeout");
            return this;
        }

        /**
         * Connections open at once (default {@value CorHttpServer#DEFAULT_MAX_CONNECTIONS}); past it a
         * new one is answered 503 with {@code Connection: close} and closed (over TLS, closed), and
         * counted in {@link CorHttpServer#connectionsRefused()}.
         */
        public Builder maxConnections(int n) {
            this.maxConnections = positive(n, "max connections");
            return this;
        }

        /** The threads and the queue bound of the TLS handshake tasks (tests shrink them). */
        Builder tlsTaskPool(int threads, int queue) {
            this.tlsTaskThreads = positive(threads, "TLS task threads");
            this.tlsTaskQueue = positive(queue, "TLS task queue");
            return this;
        }

        /** How long {@link CorHttpServer#stop()} lets requests in flight finish (default 5 000 ms; 0: none). */
        public Builder stopGraceMs(long ms) {
            if (ms < 0) {
                throw new IllegalArgumentException("stop grace must be >= 0: " + ms);
            }
            this.stopGraceMs = ms;
            return this;
        }

        /** The server, not started yet ({@link CorHttpServer#start()}). */
        public CorHttpServer build() {
            Objects.requireNonNull(application, "application");
            return new CorHttpServer(this);
        }

        private static int positive(int v, String what) {
            if (v < 1) {
                throw new IllegalArgumentException(what + " must be >= 1: " + v);
            }
            return v;
        }

        private static long positive(long v, String what) {
            if (v < 1) {
                throw new IllegalArgumentException(what + " must be >= 1: " + v);
            }
            return v;
        }
    }
}
