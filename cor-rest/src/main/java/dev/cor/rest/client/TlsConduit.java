package dev.cor.rest.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoTimeoutException;
import dev.cor.rest.CorRest;

/**
 * A connection's bytes through an {@link SSLEngine}: {@code https://}. The handshake and every
 * record go through {@link Waits}, so TLS yields inside a coroutine like any other wait. Delegated
 * tasks (certificate checks) run on a helper thread ({@link CorCo#blocking}) within the deadline
 * of the phase they hold up.
 * <p>
 * Buffers are kept in write mode between calls: {@code netIn} holds bytes read and not yet
 * unwrapped, {@code appIn} bytes decrypted and not yet handed out - both are used up before the
 * next wait, or a wait would stall on data already here.
 * <p>
 * Every wrap must make progress - consume or produce bytes - or the conduit does what the engine
 * asks for instead (a task, the peer's bytes, through a wait with the deadline); a few wraps in a
 * row that do neither fail the call rather than spin on the loop.
 */
final class TlsConduit extends Conduit {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    // A record is at most ~16.7 KiB (~33 KiB if the peer allows large ones): past this, it is garbage.
    private static final int MAX_NET_BUFFER = 1 << 17;
    // Wraps in a row that consume and produce nothing: an engine that does this is stuck.
    private static final int MAX_IDLE_WRAPS = 16;

    private final SSLEngine engine;
    private ByteBuffer netIn;
    private ByteBuffer netOut;
    private ByteBuffer appIn;
    private boolean inboundDone;
    /** Bytes the last wrap consumed and produced: 0 is a wrap that made no progress. */
    private int wrapped;

    TlsConduit(SocketChannel channel, SSLEngine engine) {
        super(channel);
        this.engine = engine;
        int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocate(packet);
        this.netOut = ByteBuffer.allocate(packet);
        this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
    }

    /** Runs the handshake to its end, or fails by the deadline. */
    void handshake(long deadlineNanos, Waits.Phase phase) throws IOException {
        engine.beginHandshake();
        HandshakeStatus hs = engine.getHandshakeStatus();
        int idleWraps = 0;
        while (true) {
            switch (hs) {
                case NEED_WRAP -> {
                    hs = wrap(EMPTY, deadlineNanos, phase);
                    idleWraps = wrapped > 0 || hs != HandshakeStatus.NEED_WRAP ? 0 : idleWrap(idleWraps, deadlineNanos, phase);
                }
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> hs = unwrapForHandshake(deadlineNanos, phase);
                case NEED_TASK -> {
                    runDelegatedTasks(deadlineNanos, phase);
                    hs = engine.getHandshakeStatus();
                }
                case FINISHED, NOT_HANDSHAKING -> {
                    return;
                }
            }
        }
    }

    private HandshakeStatus unwrapForHandshake(long deadlineNanos, Waits.Phase phase) throws IOException {
        while (true) {
            SSLEngineResult r = unwrap();
            switch (r.getStatus()) {
                case OK -> {
                    if (r.bytesConsumed() > 0 || r.getHandshakeStatus() != HandshakeStatus.NEED_UNWRAP) {
                        return r.getHandshakeStatus();
                    }
                    readMore(deadlineNanos, phase, true);
                }
                case BUFFER_UNDERFLOW -> readMore(deadlineNanos, phase, true);
                case BUFFER_OVERFLOW -> growAppIn();
                case CLOSED -> throw new CorRestClientException(CorRestClientException.Kind.TLS, TlsFailure.CLOSED_BY_PEER,
                        "the peer closed TLS during the handshake", null);
            }
        }
    }

    /**
     * Reads raw bytes into {@code netIn}, waiting if there are none yet.
     *
     * @return {@code false} at the end of the stream (during the handshake: a TLS failure)
     */
    private boolean readMore(long deadlineNanos, Waits.Phase phase, boolean handshaking) throws IOException {
        if (!netIn.hasRemaining()) {
            growNetIn();
        }
        while (true) {
            int n = channel.read(netIn);
            if (n > 0) {
                return true;
            }
            if (n < 0) {
                if (handshaking) {
                    throw new CorRestClientException(CorRestClientException.Kind.TLS, TlsFailure.CLOSED_BY_PEER,
                            "the peer closed the connection during the TLS handshake", null);
                }
                return false;
            }
            Waits.await(channel, SelectionKey.OP_READ, deadlineNanos, phase);
        }
    }

    @Override
    int read(ByteBuffer dst, long deadlineNanos, Waits.Phase phase) throws IOException {
        while (true) {
            if (appIn.position() > 0) {
                return dev.cor.rest.tls.LoopTls.transfer(appIn, dst);
            }
            if (inboundDone) {
                return -1;
            }
            if (netIn.position() > 0) {
                SSLEngineResult r = unwrap();
                switch (r.getStatus()) {
                    case OK -> {
                        afterHandshakeMessage(r.getHandshakeStatus(), deadlineNanos, phase);
                        if (r.bytesProduced() > 0 || r.bytesConsumed() > 0) {
                            continue;
                        }
                    }
                    case BUFFER_OVERFLOW -> {
                        growAppIn();
                        continue;
                    }
                    case BUFFER_UNDERFLOW -> {
                        // a partial record: read the rest below
                    }
                    case CLOSED -> {
                        // close_notify: what came before it is still handed out above
                        inboundDone = true;
                        continue;
                    }
                }
            }
            if (!readMore(deadlineNanos, phase, false)) {
                inboundDone = true;
                try {
                    engine.closeInbound();
                } catch (SSLException truncated) {
                    // closed without close_notify: the HTTP framing tells whether anything is missing
                }
            }
        }
    }

    /** After the handshake the peer may still send handshake messages (tickets, key updates). */
    private void afterHandshakeMessage(HandshakeStatus hs, long deadlineNanos, Waits.Phase phase) throws IOException {
        int idleWraps = 0;
        while (hs == HandshakeStatus.NEED_TASK || hs == HandshakeStatus.NEED_WRAP) {
            if (hs == HandshakeStatus.NEED_TASK) {
                runDelegatedTasks(deadlineNanos, phase);
                hs = engine.getHandshakeStatus();
            } else {
                hs = wrap(EMPTY, deadlineNanos, phase);
                idleWraps = wrapped > 0 || hs != HandshakeStatus.NEED_WRAP ? 0 : idleWrap(idleWraps, deadlineNanos, phase);
            }
        }
    }

    @Override
    void write(ByteBuffer src, long deadlineNanos, Waits.Phase phase) throws IOException {
        int idleWraps = 0;
        while (src.hasRemaining()) {
            HandshakeStatus hs = wrap(src, deadlineNanos, phase);
            if (hs == HandshakeStatus.NEED_TASK) {
                runDelegatedTasks(deadlineNanos, phase);
            } else if (hs == HandshakeStatus.NEED_UNWRAP || hs == HandshakeStatus.NEED_UNWRAP_AGAIN) {
                // The peer's handshake messages first (a renegotiation, a key update): read them
                // through the wait, under the deadline, instead of wrapping on in vain.
                unwrapForHandshake(deadlineNanos, phase);
            }
            idleWraps = wrapped > 0 ? 0 : idleWrap(idleWraps, deadlineNanos, phase);
        }
    }

    /**
     * One more wrap in a row that made no progress: past the deadline a timeout, past a few a
     * TLS failure - never a spin.
     *
     * @return the wraps without progress so far
     */
    private int idleWrap(int idleWraps, long deadlineNanos, Waits.Phase phase) throws CorRestClientException {
        if (deadlineNanos - System.nanoTime() <= 0) {
            throw new CorRestClientException(CorRestClientException.Kind.TIMEOUT, phase.timeoutMessage());
        }
        if (++idleWraps >= MAX_IDLE_WRAPS) {
            throw new CorRestClientException(CorRestClientException.Kind.TLS, "TLS made no progress: " + idleWraps
                    + " wraps in a row consumed and produced nothing (handshake status " + engine.getHandshakeStatus() + ")");
        }
        return idleWraps;
    }

    /** Wraps once from {@code src} and sends the record(s) it made. */
    private HandshakeStatus wrap(ByteBuffer src, long deadlineNanos, Waits.Phase phase) throws IOException {
        while (true) {
            SSLEngineResult r = engine.wrap(src, netOut);
            wrapped = r.bytesConsumed() + r.bytesProduced();
            switch (r.getStatus()) {
                case OK -> {
                    flush(deadlineNanos, phase);
                    return r.getHandshakeStatus();
                }
                case BUFFER_OVERFLOW -> {
                    if (netOut.position() > 0) {
                        flush(deadlineNanos, phase);
                    } else {
                        netOut = grow(netOut, engine.getSession().getPacketBufferSize());
                    }
                }
                case CLOSED -> throw new CorRestClientException(CorRestClientException.Kind.CLOSED,
                        "TLS was closed before the request was sent");
                case BUFFER_UNDERFLOW -> throw new CorRestClientException(CorRestClientException.Kind.TLS,
                        "TLS wrap reported an underflow");
            }
        }
    }

    private void flush(long deadlineNanos, Waits.Phase phase) throws IOException {
        netOut.flip();
        try {
            while (netOut.hasRemaining()) {
                if (channel.write(netOut) == 0) {
                    Waits.await(channel, SelectionKey.OP_WRITE, deadlineNanos, phase);
                }
            }
        } finally {
            netOut.compact();
        }
    }

    private SSLEngineResult unwrap() throws SSLException {
        netIn.flip();
        try {
            return engine.unwrap(netIn, appIn);
        } finally {
            netIn.compact();
        }
    }

    private void runDelegatedTasks(long deadlineNanos, Waits.Phase phase) throws IOException {
        try {
            // Certificate checks can be slow: on a helper thread, within the deadline of the phase they hold up.
            CorCo.blocking(() -> {
                Runnable task;
                while ((task = engine.getDelegatedTask()) != null) {
                    task.run();
                }
                return null;
            }, CorRest.remainingMs(deadlineNanos));
        } catch (CorCoTimeoutException e) {
            throw new CorRestClientException(CorRestClientException.Kind.TIMEOUT, phase.timeoutMessage(), e);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CorRestClientException(CorRestClientException.Kind.TLS, "interrupted in a TLS task", e);
        } catch (Exception e) {
            throw new CorRestClientException(CorRestClientException.Kind.TLS, "a TLS task failed: " + e, e);
        }
    }

    private void growAppIn() throws CorRestClientException {
        appIn = grow(appIn, engine.getSession().getApplicationBufferSize());
    }

    private void growNetIn() throws CorRestClientException {
        netIn = grow(netIn, engine.getSession().getPacketBufferSize());
    }

    private static ByteBuffer grow(ByteBuffer b, int sessionSize) throws CorRestClientException {
        int size = Math.max(b.capacity() * 2, b.position() + sessionSize);
        if (size > MAX_NET_BUFFER) {
            throw new CorRestClientException(CorRestClientException.Kind.TLS, "a TLS record over " + MAX_NET_BUFFER + " bytes");
        }
        ByteBuffer bigger = ByteBuffer.allocate(size);
        b.flip();
        bigger.put(b);
        return bigger;
    }

    @Override
    boolean anyIdleInputIsFatal() {
        return false;
    }

    @Override
    boolean usableAfterIdle() {
        if (!channel.isOpen() || inboundDone) {
            return false;
        }
        try {
            if (channel.read(netIn) < 0) {
                return false;
            }
            // a ticket or key update is fine; a close_notify or data nobody asked for is not
            while (netIn.position() > 0) {
                SSLEngineResult r = unwrap();
                if (r.getStatus() != SSLEngineResult.Status.OK || appIn.position() > 0) {
                    return r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW && appIn.position() == 0;
                }
                if (r.getHandshakeStatus() != HandshakeStatus.NOT_HANDSHAKING && r.getHandshakeStatus() != HandshakeStatus.FINISHED) {
                    return false;
                }
                if (r.bytesConsumed() == 0) {
                    break;
                }
            }
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    @Override
    void close() {
        try {
            if (channel.isOpen() && channel.isConnected()) {
                // close_notify, best effort: one non-blocking write, no wait
                engine.closeOutbound();
                netOut.clear();
                engine.wrap(EMPTY, netOut);
                netOut.flip();
                channel.write(netOut);
            }
        } catch (IOException | RuntimeException e) {
            // the connection is going anyway
        } finally {
            try {
                channel.close();
            } catch (IOException e) {
                // closing: nothing more to do
            }
        }
    }
}
