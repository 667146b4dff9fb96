package dev.cor.rest.tls;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;

import dev.cor.base.CorCoLoop;

/**
 * <b>Internal to cor's modules - not an API.</b> It is public only because the connections that
 * use it live in other packages (cor-http's server, the {@code cor://} server and client); its
 * shape may change with them.
 * <p>
 * TLS under one connection: an {@link SSLEngine} between the socket and the protocol's own
 * buffers, driven by readiness like the plain socket (nothing here blocks, nothing waits). As a
 * {@link ByteChannel} it stands where the socket would: {@link #read} hands over plaintext (0:
 * wait for readiness), {@link #write} wraps what the socket takes now. The handshake runs as bytes
 * arrive; delegated tasks (NEED_TASK) run on the executor given (off the loop: a bounded pool of
 * {@link #taskPool}) and the connection is resumed through its loop's inbox - an executor that
 * refuses them ends the connection. BUFFER_OVERFLOW grows a buffer (up to {@link #MAX_BUFFER}),
 * BUFFER_UNDERFLOW reads more, CLOSED ends the stream. Engines speak TLS 1.3 and 1.2 alone
 * ({@link #serverEngine}, {@link #clientEngine}); a handshake that fails sends the engine's alert
 * before it throws, so the peer learns why.
 * <p>
 * What readiness cannot announce is the caller's to watch: plaintext already decrypted
 * ({@link #hasBufferedInput}) and records not yet on the socket ({@link #hasPendingOutput}, which
 * wants OP_WRITE). One connection's loop thread only - or the one thread that owns the
 * connection, with an executor that runs the tasks right there and no loop.
 */
public final class LoopTls implements ByteChannel {
    /**
     * The most any of the three buffers may grow to: several times the largest record an engine
     * asks room for (16 KiB of plaintext, ~33 KiB for a packet with large fragments). An engine
     * that asks for more is treated as a broken stream, not obeyed.
     */
    public static final int MAX_BUFFER = 256 * 1024;
    /** The only protocols an engine speaks: TLS 1.0 and 1.1 are deprecated (RFC 8996). */
    static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};
    /** Wraps in a row that consume and produce nothing: an engine that does this is stuck, not busy. */
    private static final int MAX_IDLE_WRAPS = 16;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final SSLEngine engine;
    private final SocketChannel ch;
    private final Executor tasks;
    private final CorCoLoop home;
    private final Runnable resume;
    private ByteBuffer netIn;  // write mode: bytes read from the socket, not yet unwrapped
    private ByteBuffer netOut; // write mode: records wrapped, not yet written
    private ByteBuffer appIn;  // write mode: plaintext unwrapped, not yet handed over
    private boolean handshakeDone;
    private volatile boolean taskRunning; // volatile: a task run without a home loop clears it on its thread
    private boolean inboundClosed;
    /** Whether the peer has sent a byte yet: a client that never spoke is closed without alerts. */
    private boolean peerSpoke;

    /**
     * A server-side engine of {@code context} that speaks TLS 1.3 and 1.2 alone, whatever the
     * context or the JVM's security properties would allow; fails when the context can do neither.
     */
    public static SSLEngine serverEngine(SSLContext context) {
        SSLEngine engine = context.createSSLEngine();
        engine.setUseClientMode(false);
        onlyModernProtocols(engine);
        return engine;
    }

    /**
     * A client-side engine of {@code context} for {@code host:port}: TLS 1.3 and 1.2 alone, the
     * server's certificate checked against {@code host} (endpoint identification "HTTPS", always),
     * and the host name sent as SNI when it is a name ({@code localhost} included), not an address.
     */
    public static SSLEngine clientEngine(SSLContext context, String host, int port) {
        SSLEngine engine = context.createSSLEngine(host, port);
        engine.setUseClientMode(true);
        onlyModernProtocols(engine);
        SSLParameters params = engine.getSSLParameters();
        params.setEndpointIdentificationAlgorithm("HTTPS");
        if (!isAddressLiteral(host) || host.equalsIgnoreCase("localhost")) {
            params.setServerNames(List.of(new SNIHostName(host)));
        }
        engine.setSSLParameters(params);
        return engine;
    }

    private static void onlyModernProtocols(SSLEngine engine) {
        List<String> supported = List.of(engine.getSupportedProtocols());
        String[] enabled = Arrays.stream(PROTOCOLS).filter(supported::contains).toArray(String[]::new);
        if (enabled.length == 0) {
            throw new IllegalArgumentException("this SSLContext supports neither TLS 1.3 nor TLS 1.2");
        }
        engine.setEnabledProtocols(enabled);
    }

    /** Whether {@code host} is an IPv4 or IPv6 address literal (SNI carries names only, RFC 6066 § 3). */
    static boolean isAddressLiteral(String host) {
        try {
            java.net.InetAddress.ofLiteral(host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * A bounded pool for handshakes' delegated tasks (certificate checks, key agreement - milliseconds
     * each): {@code threads} daemon threads named {@code name-N}, at most {@code queue} batches
     * waiting; past that it refuses, and the connection that asked closes rather than waits. The
     * caller shuts it down.
     */
    public static ThreadPoolExecutor taskPool(String name, int threads, int queue) {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(queue), r -> {
                    Thread t = new Thread(r, name + "-" + n.getAndIncrement());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /**
     * @param engine an engine of {@link #serverEngine} or {@link #clientEngine}; the handshake begins here
     * @param ch     the connection's non-blocking socket
     * @param tasks  where delegated tasks run: a bounded pool off the loop; or, for a connection
     *               owned by a plain thread, {@code Runnable::run}
     * @param home   the connection's loop, where {@code resume} runs once a task is done; {@code null}
     *               for a thread's own connection (then {@code tasks} must run them in place)
     * @param resume what goes on with the connection after a delegated task: read again
     */
    public LoopTls(SSLEngine engine, SocketChannel ch, Executor tasks, CorCoLoop home, Runnable resume) throws SSLException {
        this.engine = engine;
        this.ch = ch;
        this.tasks = tasks;
        this.home = home;
        this.resume = resume;
        int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocate(packet);
        this.netOut = ByteBuffer.allocate(packet);
        this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
        engine.beginHandshake(); // a client's first step is its hello; a server's, the peer's
    }

    public boolean handshakeDone() {
        return handshakeDone;
    }

    /** A delegated task runs off the loop: the connection waits for {@code resume}. */
    public boolean taskRunning() {
        return taskRunning;
    }

    /** The peer ended the stream (close_notify, or the socket's end). */
    public boolean inboundDone() {
        return inboundClosed;
    }

    /**
     * Plaintext, or a whole record not yet decrypted, held here: a read would hand bytes over
     * without the socket, and no readiness will say so. A record cut short is not counted - only
     * the socket can finish it - so a caller that reads again on this never spins.
     */
    public boolean hasBufferedInput() {
        return appIn.position() > 0 || (handshakeDone && wholeRecordIn());
    }

    /** Whether netIn holds at least one whole TLS record: a 5-byte header and the length it gives. */
    private boolean wholeRecordIn() {
        int held = netIn.position();
        return held >= 5 && held >= 5 + (((netIn.get(3) & 0xFF) << 8) | (netIn.get(4) & 0xFF));
    }

    /** Records wrapped and not yet on the socket: the connection waits for OP_WRITE. */
    public boolean hasPendingOutput() {
        return netOut.position() > 0;
    }

    /** How many bytes of records are held for the socket. */
    public int pendingOutputBytes() {
        return netOut.position();
    }

    /**
     * Reads plaintext into {@code dst}, driving the handshake first.
     *
     * @return bytes handed over (0: wait for readiness, or a delegated task is running), -1 at the end
     */
    @Override
    public int read(ByteBuffer dst) throws IOException {
        while (true) {
            if (appIn.position() > 0) {
                return transfer(dst);
            }
            if (inboundClosed) {
                return -1;
            }
            if (!handshakeDone && !handshake()) {
                return inboundClosed ? -1 : 0;
            }
            SSLEngineResult r = unwrap();
            switch (r.getStatus()) {
                case OK -> {
                    if (r.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING
                            && r.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.FINISHED) {
                        handshakeDone = false; // a post-handshake message (key update): drive it
                    }
                }
                case BUFFER_UNDERFLOW -> {
                    if (!fill()) {
                        return inboundClosed ? -1 : 0;
                    }
                }
                case BUFFER_OVERFLOW -> appIn = grow(appIn, engine.getSession().getApplicationBufferSize());
                case CLOSED -> {
                    inboundClosed = true;
                    return appIn.position() > 0 ? transfer(dst) : -1;
                }
                default -> throw new IllegalStateException(r.getStatus().name());
            }
        }
    }

    /**
     * Wraps as much of {@code src} as the socket takes now.
     *
     * @return the plaintext bytes taken (records of them may still wait in {@link #hasPendingOutput})
     */
    @Override
    public int write(ByteBuffer src) throws IOException {
        int before = src.remaining();
        write(new ByteBuffer[] {src});
        return before - src.remaining();
    }

    /**
     * Wraps and writes as much of {@code srcs} as the socket takes now.
     *
     * @return whether everything - plaintext and records - is on the socket
     */
    public boolean write(ByteBuffer[] srcs) throws IOException {
        if (!flush()) {
            return false;
        }
        int idleWraps = 0;
        while (remaining(srcs)) {
            SSLEngineResult r = engine.wrap(srcs, netOut);
            switch (r.getStatus()) {
                case OK -> {
                    idleWraps = r.bytesConsumed() + r.bytesProduced() > 0 ? 0 : idleWrap(idleWraps);
                    if (!flush()) {
                        return false;
                    }
                }
                case BUFFER_OVERFLOW -> {
                    if (netOut.position() > 0) {
                        if (!flush()) {
                            return false;
                        }
                    } else {
                        netOut = grow(netOut, engine.getSession().getPacketBufferSize());
                    }
                }
                case CLOSED -> throw new SSLException("the TLS session is closed");
                default -> throw new IllegalStateException(r.getStatus().name());
            }
        }
        return true;
    }

    /**
     * One more wrap in a row that neither took plaintext nor made a record (the engine wants a
     * peer's message first - a renegotiation - that only a read can bring): past a few, the
     * stream is broken rather than the loop spinning on it.
     */
    private int idleWrap(int idleWraps) throws SSLException {
        if (++idleWraps >= MAX_IDLE_WRAPS) {
            throw new SSLException("TLS made no progress: " + idleWraps + " wraps in a row took and made nothing"
                    + " (handshake status " + engine.getHandshakeStatus() + ")");
        }
        return idleWraps;
    }

    /** Writes the wrapped records held here; whether none is left. */
    public boolean flush() throws IOException {
        if (netOut.position() == 0) {
            return true;
        }
        netOut.flip();
        try {
            ch.write(netOut);
        } finally {
            netOut.compact();
        }
        return netOut.position() == 0;
    }

    /**
     * Sends close_notify as far as the socket takes it now - not to a client that never sent a
     * byte: it has begun no TLS, and gets the plain end of the stream.
     */
    public void closeOutbound() {
        try {
            engine.closeOutbound();
            if (!peerSpoke && !engine.getUseClientMode()) {
                return;
            }
            while (!engine.isOutboundDone()) {
                SSLEngineResult r = engine.wrap(EMPTY, netOut);
                if (r.getStatus() != SSLEngineResult.Status.OK || !flush()) {
                    break;
                }
            }
        } catch (IOException e) {
            // closing: best effort
        }
    }

    @Override
    public boolean isOpen() {
        return ch.isOpen();
    }

    /** close_notify as far as the socket takes it now, then the socket closes. */
    @Override
    public void close() throws IOException {
        closeOutbound();
        ch.close();
    }

    /**
     * Drives the handshake as far as the bytes at hand allow; true once it is done. When it fails,
     * the alert the engine holds for the peer (protocol_version to a TLS 1.1 client,
     * unexpected_message to plain text, bad_certificate to a server not trusted) is sent as far
     * as the socket takes it now - the peer learns why before the connection closes - and the
     * failure is thrown.
     * <p>
     * False: wait for readiness ({@link #hasPendingOutput}: OP_WRITE, else OP_READ), for a
     * delegated task ({@link #taskRunning}), or the peer has ended ({@link #inboundDone}).
     */
    public boolean handshake() throws IOException {
        try {
            return driveHandshake();
        } catch (SSLException e) {
            try {
                for (int i = 0; i < 4; i++) {
                    SSLEngineResult r = engine.wrap(EMPTY, netOut);
                    if (r.getStatus() != SSLEngineResult.Status.OK || r.bytesProduced() == 0) {
                        break;
                    }
                }
                flush();
            } catch (IOException | RuntimeException ignored) {
                // the alert is a courtesy: the connection closes either way
            }
            throw e;
        }
    }

    private boolean driveHandshake() throws IOException {
        int idleWraps = 0;
        while (true) {
            if (taskRunning) {
                return false;
            }
            switch (engine.getHandshakeStatus()) {
                case NOT_HANDSHAKING, FINISHED -> {
                    handshakeDone = true;
                    return true;
                }
                case NEED_TASK -> {
                    runTasks();
                    if (taskRunning) {
                        return false; // resumed through the loop when they are done
                    }
                }
                case NEED_WRAP -> {
                    SSLEngineResult r = engine.wrap(EMPTY, netOut);
                    if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
                        if (netOut.position() == 0) {
                            netOut = grow(netOut, engine.getSession().getPacketBufferSize());
                        } else if (!flush()) {
                            return false;
                        }
                        continue;
                    }
                    if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                        flush();
                        inboundClosed = true;
                        return false;
                    }
                    idleWraps = r.bytesProduced() > 0 ? 0 : idleWrap(idleWraps);
                    if (!flush()) {
                        return false; // OP_WRITE, then on
                    }
                }
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                    SSLEngineResult r = unwrap();
                    switch (r.getStatus()) {
                        case BUFFER_UNDERFLOW -> {
                            if (!fill()) {
                                return false;
                            }
                        }
                        case BUFFER_OVERFLOW -> appIn = grow(appIn, engine.getSession().getApplicationBufferSize());
                        case CLOSED -> {
                            inboundClosed = true;
                            return false;
                        }
                        default -> {
                            // OK: on to the next step
                        }
                    }
                }
                default -> throw new IllegalStateException(engine.getHandshakeStatus().name());
            }
        }
    }

    /**
     * The engine's delegated tasks, on {@link #tasks}: certificate checks and key generation can
     * take milliseconds, never on the loop. With a home loop the connection is resumed there;
     * without one the executor ran them in place and the handshake goes straight on.
     */
    private void runTasks() throws SSLException {
        taskRunning = true;
        List<Runnable> batch = new ArrayList<>();
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            batch.add(task);
        }
        try {
            tasks.execute(() -> {
                for (Runnable t : batch) {
                    t.run();
                }
                if (home == null) {
                    taskRunning = false;
                    return;
                }
                try {
                    home.execute(() -> {
                        taskRunning = false;
                        resume.run();
                    });
                } catch (RejectedExecutionException e) {
                    // the loop has ended: so has the connection
                }
            });
        } catch (RejectedExecutionException e) {
            taskRunning = false;
            throw new SSLException("TLS handshake tasks are queued to their bound (or the server is stopping): "
                    + "closing rather than waiting");
        }
    }

    /** Unwraps what netIn holds into appIn; both stay in write mode. */
    private SSLEngineResult unwrap() throws SSLException {
        netIn.flip();
        try {
            return engine.unwrap(netIn, appIn);
        } finally {
            netIn.compact();
        }
    }

    /** Reads more of the socket into netIn; false when nothing came (or the peer ended). */
    private boolean fill() throws IOException {
        if (!netIn.hasRemaining()) {
            netIn = grow(netIn, engine.getSession().getPacketBufferSize());
        }
        int n = ch.read(netIn);
        if (n > 0) {
            peerSpoke = true;
        }
        if (n < 0) {
            inboundClosed = true;
            try {
                engine.closeInbound();
            } catch (SSLException e) {
                // the peer ended without close_notify: the stream ends here all the same
            }
            return false;
        }
        return n > 0;
    }

    private int transfer(ByteBuffer dst) {
        return transfer(appIn, dst);
    }

    /**
     * Moves as much of {@code src} (a buffer kept in write mode: decrypted bytes not yet handed out)
     * as {@code dst} has room for, leaving {@code src} in write mode; the bytes moved. Shared with the
     * HTTP client's TLS conduit, which keeps its buffers the same way.
     */
    public static int transfer(ByteBuffer src, ByteBuffer dst) {
        src.flip();
        int n = Math.min(src.remaining(), dst.remaining());
        int limit = src.limit();
        src.limit(src.position() + n);
        dst.put(src);
        src.limit(limit);
        src.compact();
        return n;
    }

    /** A copy of {@code b} (write mode) with room for {@code atLeast} more: doubled, never past {@link #MAX_BUFFER}. */
    public static ByteBuffer grow(ByteBuffer b, int atLeast) throws SSLException {
        long need = (long) b.position() + atLeast;
        if (need > MAX_BUFFER) {
            throw new SSLException("a TLS buffer would grow past " + MAX_BUFFER + " bytes (to " + need + ")");
        }
        ByteBuffer bigger = ByteBuffer.allocate((int) Math.min(MAX_BUFFER, Math.max(2L * b.capacity(), need)));
        b.flip();
        bigger.put(b);
        return bigger;
    }

    private static boolean remaining(ByteBuffer[] bufs) {
        for (ByteBuffer b : bufs) {
            if (b.hasRemaining()) {
                return true;
            }
        }
        return false;
    }
}
