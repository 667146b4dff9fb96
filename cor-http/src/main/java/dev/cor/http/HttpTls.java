package dev.cor.http;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

import dev.cor.base.CorCoLoop;

/**
 * TLS under one server connection: an {@link SSLEngine} between the socket and the HTTP parser,
 * driven by readiness like the plain socket (nothing here blocks). The handshake runs as bytes
 * arrive; delegated tasks (NEED_TASK) run off the loop on the server's bounded task pool and the
 * connection is resumed through its loop's inbox - a pool that refuses them ends the connection.
 * BUFFER_OVERFLOW grows the buffer (up to {@link #MAX_BUFFER}), BUFFER_UNDERFLOW reads more,
 * CLOSED ends the stream. Its connection's loop thread only.
 */
final class HttpTls {
    /**
     * The most any of the three buffers may grow to: several times the largest record an engine
     * asks room for (16 KiB of plaintext, ~33 KiB for a packet with large fragments). An engine
     * that asks for more is treated as a broken stream, not obeyed.
     */
    static final int MAX_BUFFER = 256 * 1024;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final SSLEngine engine;
    private final SocketChannel ch;
    private final java.util.concurrent.Executor tasks;
    private ByteBuffer netIn;  // write mode: bytes read from the socket, not yet unwrapped
    private ByteBuffer netOut; // write mode: records wrapped, not yet written
    private ByteBuffer appIn;  // write mode: plaintext unwrapped, not yet handed over
    private boolean handshakeDone;
    private boolean taskRunning;
    private boolean inboundClosed;

    /** The only protocols a server engine speaks: TLS 1.0 and 1.1 are deprecated (RFC 8996). */
    static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    /**
     * A server-side engine of {@code context} that speaks TLS 1.3 and 1.2 alone, whatever the
     * context or the JVM's security properties would allow; fails when the context can do neither.
     */
    static SSLEngine serverEngine(javax.net.ssl.SSLContext context) {
        SSLEngine engine = context.createSSLEngine();
        engine.setUseClientMode(false);
        java.util.List<String> supported = java.util.List.of(engine.getSupportedProtocols());
        String[] enabled = java.util.Arrays.stream(PROTOCOLS).filter(supported::contains).toArray(String[]::new);
        if (enabled.length == 0) {
            throw new IllegalArgumentException("this SSLContext supports neither TLS 1.3 nor TLS 1.2");
        }
        engine.setEnabledProtocols(enabled);
        return engine;
    }

    HttpTls(SSLEngine engine, SocketChannel ch, java.util.concurrent.Executor tasks) {
        this.engine = engine;
        this.ch = ch;
        this.tasks = tasks;
        int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocate(packet);
        this.netOut = ByteBuffer.allocate(packet);
        this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
    }

    boolean handshakeDone() {
        return handshakeDone;
    }

    /** Plaintext or undecrypted bytes held here that a read would hand over without the socket. */
    boolean hasBufferedInput() {
        return appIn.position() > 0 || (handshakeDone && netIn.position() > 0);
    }

    /** Records wrapped and not yet on the socket: the connection waits for OP_WRITE. */
    boolean hasPendingOutput() {
        return netOut.position() > 0;
    }

    /**
     * Reads plaintext into {@code dst}, driving the handshake first.
     *
     * @return bytes handed over (0: wait for readiness, or a delegated task is running), -1 at the end
     */
    int read(ByteBuffer dst, CorCoLoop loop, Runnable resume) throws IOException {
        while (true) {
            if (appIn.position() > 0) {
                return transfer(dst);
            }
            if (inboundClosed) {
                return -1;
            }
            if (!handshakeDone && !handshakeOrAlert(loop, resume)) {
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
     * Wraps and writes as much of {@code srcs} as the socket takes now.
     *
     * @return whether everything - plaintext and records - is on the socket
     */
    boolean write(ByteBuffer[] srcs) throws IOException {
        if (!flush()) {
            return false;
        }
        while (remaining(srcs)) {
            SSLEngineResult r = engine.wrap(srcs, netOut);
            switch (r.getStatus()) {
                case OK -> {
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

    /** Writes the wrapped records held here; whether none is left. */
    boolean flush() throws IOException {
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

    /** Sends close_notify as far as the socket takes it now. */
    void closeOutbound() {
        try {
            engine.closeOutbound();
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

    /**
     * {@link #handshake}, and when it fails, the alert the engine holds for the peer (protocol_version
     * to a TLS 1.1 client, unexpected_message to plain HTTP) sent as far as the socket takes it now:
     * the client learns why before the connection closes.
     */
    private boolean handshakeOrAlert(CorCoLoop loop, Runnable resume) throws IOException {
        try {
            return handshake(loop, resume);
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

    /** Drives the handshake as far as the bytes at hand allow; true once it is done. */
    private boolean handshake(CorCoLoop loop, Runnable resume) throws IOException {
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
                    taskRunning = true;
                    Runnable task;
                    java.util.List<Runnable> tasks = new java.util.ArrayList<>();
                    while ((task = engine.getDelegatedTask()) != null) {
                        tasks.add(task);
                    }
                    // Certificate checks and key generation can take milliseconds: never on the loop.
                    try {
                        this.tasks.execute(() -> {
                            for (Runnable t : tasks) {
                                t.run();
                            }
                            try {
                                loop.execute(() -> {
                                    taskRunning = false;
                                    resume.run();
                                });
                            } catch (java.util.concurrent.RejectedExecutionException e) {
                                // the loop has ended: so has the connection
                            }
                        });
                    } catch (java.util.concurrent.RejectedExecutionException e) {
                        taskRunning = false;
                        throw new SSLException("TLS handshake tasks are queued to their bound (or the server is stopping): "
                                + "closing rather than waiting");
                    }
                    return false;
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
        appIn.flip();
        int n = Math.min(appIn.remaining(), dst.remaining());
        int limit = appIn.limit();
        appIn.limit(appIn.position() + n);
        dst.put(appIn);
        appIn.limit(limit);
        appIn.compact();
        return n;
    }

    /** A copy of {@code b} (write mode) with room for {@code atLeast} more: doubled, never past {@link #MAX_BUFFER}. */
    static ByteBuffer grow(ByteBuffer b, int atLeast) throws SSLException {
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
