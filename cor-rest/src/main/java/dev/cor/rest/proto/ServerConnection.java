package dev.cor.rest.proto;

import org.agrona.collections.Hashing;
import org.agrona.collections.Int2ObjectHashMap;
import java.io.IOException;
import java.nio.channels.ByteChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoLoopHandler;
import dev.cor.base.CorCoTimer;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestResponder;
import dev.cor.rest.tls.LoopTls;

/**
 * One connection of a {@link CorProtoServer}, on the loop it was dealt to (spec § 9.1).
 * Registered once with OP_READ and read continuously while its requests run: each REQUEST goes
 * to the dispatcher at once, each answer is encoded when it is ready; the answers of one read go
 * out together at its end, those of one loop round (coroutines woken by their own forwards)
 * together before the loop selects again, as far as the socket takes them. The rest waits in the
 * codec's output - the connection's own state - for OP_WRITE. Past one maximum frame of unsent
 * output it stops reading until it drains.
 * <p>
 * A peer cannot hold it for ever: past HELLO, a connection idle for the idle timeout (nothing in
 * flight, nothing unsent, nothing received) gets GOAWAY {@code NO_ERROR} and closes; one whose
 * unsent answers make no progress for the write timeout (the peer reads nothing) closes at once,
 * its answers dropped. One timer each, armed when it can matter and re-armed from the time kept.
 * <p>
 * On a TLS server ({@code cors://}, spec § 4.4) the codec reads and writes through the
 * connection's {@link LoopTls}: the handshake runs as the first bytes arrive, under the HELLO's
 * handshake timeout, its delegated tasks on the server's bounded pool; plaintext already
 * decrypted, which no readiness announces, is read from the loop's inbox.
 * <p>
 * Loop thread only: the handler, the responders (called by the dispatcher on this loop, possibly
 * from inside a request's coroutine - nothing here waits) and the timers.
 */
final class ServerConnection implements CorCoLoopHandler {
    private static final System.Logger LOG = System.getLogger(ServerConnection.class.getName());

    private static final int HELLO_WAIT = 0;
    private static final int OPEN = 1;
    private static final int CLOSING = 2;
    private static final int CLOSED = 3;

    /** How long a connection ended by GOAWAY keeps discarding input before it closes (spec § 8.4). */
    static final long LINGER_MS = 1000;
    /** Reads per readiness before the loop is handed back to the other connections. */
    private static final int READS_PER_WAKE = 8;

    final CorProtoServer server;
    final CorCoLoop loop;
    final SocketChannel channel;
    /** The connection's TLS, or {@code null} on a plain server. */
    private final LoopTls tls;
    /** What the codec reads and writes: the socket, or the TLS over it. */
    private final ByteChannel io;
    /** A read of plaintext the TLS holds is queued on the loop. */
    private boolean tlsReadQueued;
    private final CorProtoCodec codec = new CorProtoCodec();
    private int state = HELLO_WAIT;
    private String peer = "?";

    private final Int2ObjectHashMap<Stream> inFlight = new Int2ObjectHashMap<>(16, Hashing.DEFAULT_LOAD_FACTOR);
    private final ArrayDeque<Stream> spare = new ArrayDeque<>();
    private int maxStreams;
    private int lastAccepted;

    private int interest;
    /** Inside {@link #decode()}: answers made meanwhile are written together at its end. */
    private boolean decoding;
    private boolean readPaused;
    private boolean outputShut;
    private boolean flushQueued;
    private final Runnable queuedFlush = this::queuedFlush;
    private long unfinishedSinceNanos;
    private CorCoTimer handshakeTimer;
    private CorCoTimer frameTimer;
    private CorCoTimer lingerTimer;
    /** When the peer last sent bytes, or the idle check last found the connection busy. */
    private long lastActiveNanos;
    private CorCoTimer idleTimer;
    /** Unsent output the socket would not take: since when it has made no progress. */
    private boolean writeStalled;
    private long writeProgressNanos;
    private CorCoTimer writeTimer;

    ServerConnection(CorProtoServer server, CorCoLoop loop, SocketChannel channel) throws IOException {
        this.server = server;
        this.loop = loop;
        this.channel = channel;
        if (server.tls != null) {
            this.tls = new LoopTls(LoopTls.serverEngine(server.tls), channel, server.tlsTasks(), loop, this::tlsResumed);
            this.io = tls;
        } else {
            this.tls = null;
            this.io = channel;
        }
    }

    /** Registers the connection for good; {@code refuse}: past the cap, GOAWAY {@code REFUSED} at once. */
    void open(boolean refuse) throws IOException {
        server.connections.add(this);
        interest = SelectionKey.OP_READ;
        loop.register(channel, interest, this);
        if (refuse) {
            if (tls != null) {
                // No handshake spent on a connection that is refused: closed before it, as cor-http does.
                server.violations.increment();
                close();
                return;
            }
            violation(CorProtoError.REFUSED, "too many connections (" + server.maxConnections + ")");
            return;
        }
        handshakeTimer = loop.schedule(server.handshakeTimeoutMs, this::handshakeExpired);
    }

    // ---------------------------------------------------------------- readiness

    @Override
    public void onReady(SelectionKey key) {
        try {
            if (key.isValid() && key.isWritable()) {
                flush();
            }
            boolean handshaking = tls != null && !tls.handshakeDone() && state == HELLO_WAIT;
            if (key.isValid() && (key.isReadable() || handshaking) && state != CLOSED) {
                if (state == CLOSING) {
                    discard();
                } else {
                    read();
                }
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "cor:// " + this + ": " + e);
            close();
        }
    }

    private void read() throws IOException {
        for (int i = 0; i < READS_PER_WAKE && state <= OPEN && !readPaused; i++) {
            int n = codec.readFrom(io);
            if (n < 0) {
                endOfStream();
                return;
            }
            if (n == 0) {
                break;
            }
            server.bytesRead.add(n);
            lastActiveNanos = System.nanoTime();
            decode();
        }
        if (state <= OPEN) {
            if (tls != null) {
                afterTlsRead();
            }
            watchUnfinishedFrame();
        }
    }

    /**
     * What readiness will not announce after a TLS read: handshake records the socket did not
     * take (OP_WRITE), and plaintext already decrypted (a read from the loop's inbox, once).
     */
    private void afterTlsRead() {
        if (tls.hasPendingOutput() && (interest & SelectionKey.OP_WRITE) == 0) {
            setInterest(interest | SelectionKey.OP_WRITE);
        }
        queueTlsRead();
    }

    private void queueTlsRead() {
        if (!tlsReadQueued && !readPaused && state <= OPEN && tls.hasBufferedInput()) {
            tlsReadQueued = true;
            loop.execute(() -> {
                tlsReadQueued = false;
                tlsResumed();
            });
        }
    }

    /** On the loop, after a TLS delegated task or for plaintext the TLS holds: read on. */
    private void tlsResumed() {
        if (state > OPEN) {
            return;
        }
        try {
            read();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "cor:// " + this + ": " + e);
            close();
        }
    }

    /**
     * Every whole frame read so far, in order; a violation ends the connection. The answers made
     * meanwhile (inline requests, coroutines that never waited) go out in one write at the end.
     */
    private void decode() {
        decoding = true;
        try {
            int t;
            while (state <= OPEN && (t = codec.nextFrame()) != CorProtoCodec.NEED_MORE) {
                unfinishedSinceNanos = 0;
                onFrame(t);
            }
        } catch (CorProtoException e) {
            violation(e.code() != null ? e.code() : CorProtoError.PROTOCOL_ERROR, e.getMessage());
        } finally {
            decoding = false;
        }
        if (state <= OPEN && codec.pendingOutput() > 0) {
            flushQuietly();
        }
    }

    private void onFrame(int type) throws CorProtoException {
        if (type == CorProtoCodec.HELLO) {
            if (state != HELLO_WAIT) {
                throw CorProtoException.violation(CorProtoError.PROTOCOL_ERROR, "a second HELLO");
            }
            hello(codec.readHello());
            return;
        }
        if (state == HELLO_WAIT) {
            throw CorProtoException.violation(CorProtoError.HELLO_EXPECTED,
                    "a " + CorProtoCodec.typeName(type) + " frame before HELLO");
        }
        switch (type) {
            case CorProtoCodec.REQUEST -> request();
            case CorProtoCodec.CANCEL -> cancel();
            case CorProtoCodec.PING -> codec.writePing(CorProtoCodec.PONG, codec.readPing());
            case CorProtoCodec.PONG -> codec.readPing();
            case CorProtoCodec.GOAWAY -> {
                CorProtoCodec.Problem p = codec.readGoAway();
                LOG.log(System.Logger.Level.DEBUG, () -> "cor:// " + this + ": the client goes away, " + p.describe());
                ProtoConnectionEvent.emit("server", peer, ProtoConnectionEvent.GOAWAY_RECEIVED, p.code(), p.reason());
                close();
            }
            default -> throw CorProtoException.violation(CorProtoError.PROTOCOL_ERROR,
                    "a server does not receive " + CorProtoCodec.typeName(type));
        }
    }

    private void hello(CorProtoCodec.Hello h) throws CorProtoException {
        if (server.token != null && !MessageDigest.isEqual(server.token, h.token().getBytes(StandardCharsets.UTF_8))) {
            throw CorProtoException.violation(CorProtoError.UNAUTHORIZED,
                    h.token().isEmpty() ? "this server requires a token" : "wrong token");
        }
        int frame = (int) Math.min(h.maxFrame() & 0xFFFF_FFFFL, server.maxFrame);
        int streams = Math.min(h.maxStreams(), server.maxStreams);
        int names = Math.min(h.nameTable(), server.nameTable);
        if (frame < CorProtoCodec.MIN_MAX_FRAME || streams < 1) {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "HELLO limits out of range: max frame "
                    + Integer.toUnsignedString(h.maxFrame()) + ", max streams " + h.maxStreams());
        }
        if (handshakeTimer != null) {
            handshakeTimer.cancel();
            handshakeTimer = null;
        }
        peer = h.name();
        maxStreams = streams;
        codec.writeHelloAck(frame, streams, names, server.name);
        codec.agree(frame, names);
        state = OPEN;
        idleTimer = loop.schedule(server.idleTimeoutMs, this::idleCheck);
        ProtoConnectionEvent.emit("server", peer, ProtoConnectionEvent.OPENED, null, null);
    }

    private void request() throws CorProtoException {
        int id = codec.stream();
        CorRest request = codec.readRequest();
        if (inFlight.containsKey(id)) {
            throw CorProtoException.violation(CorProtoError.STREAM_IN_USE,
                    "stream " + Integer.toUnsignedString(id) + " is still in flight");
        }
        if (inFlight.size() >= maxStreams) {
            codec.writeError(id, CorProtoError.REFUSED, "too many streams in flight (" + maxStreams + ")");
            return;
        }
        Stream s = spare.poll();
        if (s == null) {
            s = new Stream();
        }
        s.id = id;
        s.request = request;
        inFlight.put(id, s);
        lastAccepted = id;
        server.requests.increment();
        try {
            // May answer before it returns (inline, or a coroutine that never waited): respond() copes.
            server.dispatcher.dispatch(request, s);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cor:// " + this + ": dispatching " + request + " failed", e);
            if (state == OPEN && inFlight.get(id) == s) {
                inFlight.remove(id);
                codec.writeError(id, CorProtoError.INTERNAL, "the server could not dispatch the request");
            }
        }
    }

    /**
     * The caller gave up (spec § 5.5): the stream is free at once and nothing more is sent on
     * it; its request is cancelled at its next wait. A stream not in flight (its answer crossed
     * the CANCEL) is ignored.
     */
    private void cancel() throws CorProtoException {
        int id = codec.stream();
        codec.readCancel();
        Stream s = inFlight.remove(id);
        if (s == null) {
            return;
        }
        server.cancelled.increment();
        CorRest request = s.request;
        s.request = null; // the Stream is not reused: respond() finds it gone and drops the answer
        if (request != null) {
            request.cancel("cor:// CANCEL from " + peer + " on stream " + Integer.toUnsignedString(id));
        }
    }

    /** A request's answer, on this loop: encoded now, written with the others of its read or round. */
    private void respond(Stream s, CorRest request) {
        if (state != OPEN || inFlight.get(s.id) != s) {
            return; // the connection ended meanwhile: the answer has nowhere to go
        }
        inFlight.remove(s.id);
        s.request = null;
        try {
            codec.writeResponse(s.id, request.status(), request.responseHeaders(), null, request.responseBody());
            server.responses.increment();
        } catch (CorProtoException tooLarge) {
            codec.writeError(s.id, CorProtoError.TOO_LARGE, tooLarge.getMessage());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cor:// " + this + ": cannot encode the answer to " + request, e);
            codec.writeError(s.id, CorProtoError.INTERNAL, e.getClass().getSimpleName());
        }
        spare.push(s);
        if (decoding) {
            return; // decode() writes at its end
        }
        if (codec.pendingOutput() > codec.maxFrame()) {
            flushQuietly();
        } else if (!flushQueued) {
            flushQueued = true;
            loop.beforeNextSelect(queuedFlush);
        }
    }

    private void queuedFlush() {
        flushQueued = false;
        if (state != CLOSED && (interest & SelectionKey.OP_WRITE) == 0) {
            flushQuietly(); // else the socket is full, and onReady writes when it is writable again
        }
    }

    // ---------------------------------------------------------------- writing

    private void flushQuietly() {
        try {
            flush();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "cor:// " + this + ": write failed: " + e);
            close();
        }
    }

    /** Writes what the socket takes; arms OP_WRITE for the rest and pauses reading past a frame's worth. */
    private void flush() throws IOException {
        if (state == CLOSED) {
            return;
        }
        int codecBefore = codec.pendingOutput();
        int left = codecBefore + tlsPending();
        if (left > 0) {
            int before = left;
            left = codec.writeTo(io);
            server.bytesWritten.add(codecBefore - left);
            if (tls != null && !tls.flush()) {
                left += tls.pendingOutputBytes(); // records of what the codec handed over, not on the socket yet
            }
            server.writes.increment();
            watchWrite(left, left < before);
        }
        if (state == CLOSING) {
            if (left == 0 && !outputShut) {
                outputShut = true;
                if (tls != null && tls.handshakeDone()) {
                    tls.closeOutbound();
                }
                channel.shutdownOutput();
            }
            setInterest(SelectionKey.OP_READ | (left > 0 ? SelectionKey.OP_WRITE : 0));
            return;
        }
        if (left > codec.maxFrame()) {
            readPaused = true;
        } else if (left == 0 && readPaused) {
            readPaused = false;
            if (tls != null) {
                queueTlsRead(); // what the TLS holds was read before the pause: no readiness announces it
            }
        }
        setInterest((readPaused ? 0 : SelectionKey.OP_READ) | (left > 0 ? SelectionKey.OP_WRITE : 0));
    }

    /** Bytes of TLS records held for the socket (0 on a plain connection). */
    private int tlsPending() {
        return tls == null ? 0 : tls.pendingOutputBytes();
    }

    private void setInterest(int ops) {
        if (ops != interest) {
            SelectionKey key = loop.keyFor(channel); // the current key: the loop may have rebuilt its selector
            if (key != null && key.isValid()) {
                key.interestOps(ops);
                interest = ops;
            }
        }
    }

    // ---------------------------------------------------------------- time

    private void handshakeExpired() {
        handshakeTimer = null;
        if (state == HELLO_WAIT) {
            violation(CorProtoError.TIMEOUT, "no HELLO within " + server.handshakeTimeoutMs + " ms");
        }
    }

    /** A frame begun must be finished within the frame timeout (spec § 3.6): one timer at a time. */
    private void watchUnfinishedFrame() {
        if (codec.bufferedInput() == 0) {
            unfinishedSinceNanos = 0;
            return;
        }
        if (unfinishedSinceNanos == 0) {
            unfinishedSinceNanos = System.nanoTime();
        }
        if (frameTimer == null) {
            frameTimer = loop.schedule(server.frameTimeoutMs, this::frameExpired);
        }
    }

    private void frameExpired() {
        frameTimer = null;
        if (state > OPEN || unfinishedSinceNanos == 0) {
            return;
        }
        long waitedMs = (System.nanoTime() - unfinishedSinceNanos) / 1_000_000;
        if (readPaused || waitedMs < server.frameTimeoutMs) {
            // Progress since, or we are the ones not reading: look again later.
            frameTimer = loop.schedule(readPaused ? server.frameTimeoutMs : server.frameTimeoutMs - waitedMs, this::frameExpired);
            return;
        }
        violation(CorProtoError.TIMEOUT, "a frame left unfinished for " + waitedMs + " ms (" + codec.bufferedInput()
                + " of " + codec.expectedFrameBytes() + " bytes)");
    }

    /**
     * Idle: nothing in flight, nothing unsent, nothing half-received, and no byte from the peer
     * for the idle timeout. A busy connection counts as active when seen busy, so the clock
     * starts again when its last request is answered.
     */
    private void idleCheck() {
        idleTimer = null;
        if (state != OPEN) {
            return;
        }
        long now = System.nanoTime();
        if (inFlight.size() > 0 || codec.pendingOutput() > 0 || codec.bufferedInput() > 0) {
            lastActiveNanos = now;
        }
        long idleMs = TimeUnit.NANOSECONDS.toMillis(now - lastActiveNanos);
        if (idleMs < server.idleTimeoutMs) {
            idleTimer = loop.schedule(server.idleTimeoutMs - idleMs, this::idleCheck);
            return;
        }
        server.timedOut.increment();
        goAway(CorProtoError.NO_ERROR, "idle for " + idleMs + " ms (idle timeout " + server.idleTimeoutMs + " ms)");
    }

    /**
     * After a write: output the socket would not take starts (or, on progress, restarts) the
     * write clock; none left stops it. Cheap on the common path: a write that empties the
     * output only clears a flag.
     */
    private void watchWrite(int left, boolean progress) {
        if (left == 0) {
            writeStalled = false;
            return;
        }
        if (!writeStalled || progress) {
            writeStalled = true;
            writeProgressNanos = System.nanoTime();
        }
        if (writeTimer == null) {
            writeTimer = loop.schedule(server.writeTimeoutMs, this::writeCheck);
        }
    }

    /**
     * Answers unread for the write timeout: the peer reads nothing, so a GOAWAY behind them
     * would never reach it either - close at once and drop them.
     */
    private void writeCheck() {
        writeTimer = null;
        if (state == CLOSED || !writeStalled || codec.pendingOutput() == 0) {
            return;
        }
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - writeProgressNanos);
        if (waitedMs < server.writeTimeoutMs) {
            writeTimer = loop.schedule(server.writeTimeoutMs - waitedMs, this::writeCheck);
            return;
        }
        server.timedOut.increment();
        LOG.log(System.Logger.Level.DEBUG, () -> "cor:// " + this + ": " + codec.pendingOutput()
                + " bytes unread for " + waitedMs + " ms (write timeout " + server.writeTimeoutMs + " ms): closing");
        close();
    }

    // ---------------------------------------------------------------- ending

    private void endOfStream() {
        int buffered = codec.bufferedInput();
        if (buffered > 0) {
            int expected = codec.expectedFrameBytes();
            violation(CorProtoError.INVALID_PAYLOAD, "connection closed in the middle of a frame ("
                    + buffered + " of " + (expected > 0 ? expected + " bytes" : "its 10-byte header") + ")");
        } else {
            close();
        }
    }

    /**
     * A protocol violation (spec § 8.3): GOAWAY with its code and reason, stop reading requests,
     * close the sending side once flushed, discard input until the peer closes or the linger ends.
     */
    void violation(CorProtoError code, String reason) {
        if (state >= CLOSING) {
            return;
        }
        server.violations.increment();
        goAway(code, reason);
    }

    /**
     * GOAWAY with its code and reason, then the closing of spec § 8.4: stop reading requests,
     * close the sending side once flushed, discard input until the peer closes or the linger
     * ends - so that the GOAWAY reaches a peer still sending.
     */
    private void goAway(CorProtoError code, String reason) {
        if (state >= CLOSING) {
            return;
        }
        LOG.log(System.Logger.Level.DEBUG, () -> "cor:// " + this + ": " + code + ": " + reason);
        if (tls != null && !tls.handshakeDone()) {
            close(); // no TLS session yet to carry a GOAWAY (a handshake that did not finish in time)
            return;
        }
        ProtoConnectionEvent.emit("server", peer, ProtoConnectionEvent.GOAWAY_SENT, code, reason);
        state = CLOSING;
        cancelTimers();
        inFlight.clear();
        codec.clearInput();
        codec.writeGoAway(lastAccepted, code, reason);
        lingerTimer = loop.schedule(LINGER_MS, this::close);
        flushQuietly();
    }

    private void discard() throws IOException {
        for (int i = 0; i < READS_PER_WAKE; i++) {
            codec.clearInput();
            int n = codec.readFrom(channel);
            if (n < 0) {
                close();
                return;
            }
            if (n == 0) {
                return;
            }
        }
    }

    /** The server stops (spec § 8.4): GOAWAY {@code NO_ERROR}, one write, close. */
    void shutdown() {
        if (state <= OPEN && (tls == null || tls.handshakeDone())) {
            ProtoConnectionEvent.emit("server", peer, ProtoConnectionEvent.GOAWAY_SENT, CorProtoError.NO_ERROR, "stopping");
            codec.writeGoAway(lastAccepted, CorProtoError.NO_ERROR, "server " + server.name + " stopping");
            try {
                codec.writeTo(io);
                if (tls != null) {
                    tls.closeOutbound();
                }
            } catch (IOException e) {
                // closing anyway
            }
        }
        close();
    }

    /**
     * A failure out of {@link #onReady} (a throwing hook, a bug - not the peer's doing): the
     * connection ends through its own close, so that it leaves the server's table and count.
     */
    @Override
    public void failed(SelectionKey key, Throwable failure) {
        close();
    }

    void close() {
        if (state == CLOSED) {
            return;
        }
        state = CLOSED;
        ProtoConnectionEvent.emit("server", peer, ProtoConnectionEvent.CLOSED, null, null);
        cancelTimers();
        if (lingerTimer != null) {
            lingerTimer.cancel();
            lingerTimer = null;
        }
        if (writeTimer != null) {
            writeTimer.cancel();
            writeTimer = null;
        }
        inFlight.clear();
        spare.clear();
        codec.clearInput();
        codec.clearOutput();
        if (tls != null && !outputShut && tls.handshakeDone()) {
            tls.closeOutbound(); // close_notify, as far as the socket takes it now
        }
        ProtoChecks.closeQuietly(channel);
        server.connections.remove(this);
    }

    /** The timers of an open connection; the linger and the write timers outlive them into CLOSING. */
    private void cancelTimers() {
        if (handshakeTimer != null) {
            handshakeTimer.cancel();
            handshakeTimer = null;
        }
        if (frameTimer != null) {
            frameTimer.cancel();
            frameTimer = null;
        }
        if (idleTimer != null) {
            idleTimer.cancel();
            idleTimer = null;
        }
    }

    @Override
    public String toString() {
        return "connection of " + server.name + " from " + peer + " on " + loop.name();
    }

    /** A request in flight: its number, and where the dispatcher sends its answer. Reused. */
    private final class Stream implements CorRestResponder {
        int id;
        /** Its request while in flight, so that a CANCEL can reach it. */
        CorRest request;

        @Override
        public void respond(CorRest request) {
            ServerConnection.this.respond(this, request);
        }
    }
}
