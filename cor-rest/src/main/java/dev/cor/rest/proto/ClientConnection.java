package dev.cor.rest.proto;

import java.util.Iterator;

import org.agrona.collections.Hashing;
import org.agrona.collections.Int2ObjectHashMap;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.channels.ByteChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLException;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoLoopHandler;
import dev.cor.base.CorCoTimer;
import dev.cor.base.CorCoTimeoutException;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.OutboundPolicy;
import dev.cor.rest.tls.LoopTls;

/**
 * One multiplexed client connection to one peer (spec § 9.2), owned either by a loop - shared by
 * all of its coroutines - or by one plain thread.
 * <p>
 * <b>On a loop</b> it is registered once with a handler, the connection's reader: it reads
 * whatever arrives, decodes each RESPONSE and wakes the coroutine parked for that stream. Writers
 * take turns: one coroutine encodes at a time, and the others park in the turn queue - also while
 * every stream is in flight. The requests of one loop round go out together in one write, before
 * the loop selects again; a writer that finds more than {@link #BATCH_LIMIT} unsent writes at
 * once and, if the socket buffer is full, parks until the handler sees OP_WRITE (reading on
 * meanwhile). Coroutines wanting the connection while it opens park until
 * it is open.
 * <p>
 * <b>On a thread</b> the thread drives it itself: it writes, then reads until its answer is in,
 * every wait through {@link CorRest#waitFd} (a blocking wait there).
 * <p>
 * Either way, a dead connection fails every call and every waiter at once and leaves its table.
 * <p>
 * <b>TLS</b> ({@code cors://}, spec § 4.4): after the connect, the TLS handshake runs to its end
 * within the connect deadline, before HELLO; from then on the codec reads and writes through the
 * connection's {@link LoopTls}. A loop's connection runs the handshake's delegated tasks on the
 * client's bounded pool (the opening coroutine parks meanwhile), a thread's connection runs them
 * itself. Plaintext already decrypted, which no readiness announces, is read from the loop's
 * inbox (a thread reads it before it waits).
 * <p>
 * <b>Liveness</b> (spec § 9.2). A peer can stop answering and keep its TCP connection open. A
 * connection silent for the ping idle time is PINGed - while calls wait on it (a loop
 * connection's watch timer; a thread's own wait), and before a call reuses it - and one whose
 * PONG does not come within the ping timeout dies. A call that passes its deadline cancels its
 * stream (CANCEL, spec § 5.5): the number is free at once, and a late answer on it is dropped.
 * <p>
 * Touched only by its owner: the loop's thread, or the thread.
 */
final class ClientConnection implements CorCoLoopHandler {
    private static final System.Logger LOG = System.getLogger(ClientConnection.class.getName());

    static final int CONNECTING = 0;
    static final int READY = 1;
    static final int DEAD = 2;

    private static final int READS_PER_WAKE = 8;
    /** {@link #send}: the call went out, or failed here. */
    static final boolean TAKEN = true;
    /** {@link #send}: the connection died before the call was written: try a fresh one. */
    static final boolean ELSEWHERE = false;
    /** Unsent output up to which a request waits for the round's one write rather than writing itself. */
    static final int BATCH_LIMIT = 64 * 1024;

    final CorProtoClient client;
    /** The owning loop, or {@code null} for a thread's own connection. */
    final CorCoLoop loop;
    final String host;
    final int port;
    /** Where this connection sits in its table, so that it can leave it. */
    private final ClientConnection[] slots;
    private final int slot;

    private volatile SocketChannel channel; // volatile: the client may close it from another thread
    /** The connection's TLS ({@code cors://}), or {@code null}. */
    private LoopTls tls;
    /** What the codec reads and writes: the socket, or the TLS over it. */
    private ByteChannel io;
    /** The coroutine opening the connection, parked while a TLS delegated task runs. */
    private CorCo tlsWaiter;
    private boolean tlsReadQueued;
    private final CorProtoCodec codec = new CorProtoCodec();
    int state = CONNECTING;
    private CorProtoException failure;
    private String peerName = "?";
    private int maxStreams = 1;

    private final Int2ObjectHashMap<CorProtoCall> streams = new Int2ObjectHashMap<>(16, Hashing.DEFAULT_LOAD_FACTOR);
    private int nextStream = 1;
    /**
     * The streams cancelled most recently (spec § 5.5), a ring: an answer on one of them crossed
     * the CANCEL and is dropped, and after a wrap of the numbers they are not reused.
     */
    private int[] cancelledRing = new int[0];
    private int cancelledNext;
    /** Whether the stream numbers have wrapped: only then must a new number be checked against the ring. */
    private boolean wrapped;

    // Liveness (spec § 9.2).
    private long lastReadNanos;
    private boolean pingOutstanding;
    private long pingSentNanos;
    private long pingData;
    /** Loop connections: armed while calls wait for answers or a PING waits for its PONG. */
    private CorCoTimer watch;
    private long watchDueNanos;
    private final Runnable watchCheck = this::watchCheck;
    private final ArrayDeque<CorCo> pongWaiters = new ArrayDeque<>(2);

    // Loop connections: who waits for what. Loop thread only.
    private final ArrayDeque<CorCo> openWaiters = new ArrayDeque<>(2);
    private final ArrayDeque<CorCo> turnQueue = new ArrayDeque<>(4);
    private CorCo writer;
    private CorCo drainWaiter;
    private int interest;
    private boolean flushQueued;
    private final Runnable queuedFlush = this::queuedFlush;

    ClientConnection(CorProtoClient client, CorCoLoop loop, String host, int port, ClientConnection[] slots, int slot) {
        this.client = client;
        this.loop = loop;
        this.host = host;
        this.port = port;
        this.slots = slots;
        this.slot = slot;
    }

    // ================================================================ opening

    /**
     * Opens the connection: non-blocking connect, HELLO, HELLO-ACK. Run by whoever claimed it in
     * its table (before calling this: busy before the connect, spec § 9.2); it yields in a
     * coroutine. Ends READY or DEAD, and wakes whoever waited for it either way.
     */
    void open(long deadlineNanos) {
        try {
            InetAddress address = resolve(deadlineNanos);
            // the address connected to, after the lookup: a name cannot point the client past the policy
            if (!client.outboundPolicy.permits(address)) {
                throw new CorProtoException(CorProtoException.Kind.DENIED, null, "cannot connect to " + client.scheme + host + ": "
                        + OutboundPolicy.REFUSAL, false, null);
            }
            channel = SocketChannel.open();
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            if (!channel.connect(new InetSocketAddress(address, port))) {
                while (!channel.finishConnect()) {
                    waitDuringOpen(SelectionKey.OP_CONNECT, deadlineNanos, "connect");
                }
            }
            io = channel;
            if (client.tls != null) {
                tlsHandshake(deadlineNanos);
            }
            codec.writeHello(client.maxFrame, client.maxStreams, client.nameTable, client.name, client.token);
            while (flushOut() > 0) {
                waitDuringOpen(SelectionKey.OP_WRITE, deadlineNanos, "HELLO");
            }
            helloAck(deadlineNanos);
            if (loop != null) {
                interest = SelectionKey.OP_READ;
                loop.register(channel, interest, this);
            }
            state = READY;
            lastReadNanos = System.nanoTime();
            client.opened(this);
            ProtoConnectionEvent.emit("client", host + ":" + port + " (" + peerName + ")", ProtoConnectionEvent.OPENED, null, null);
            LOG.log(System.Logger.Level.DEBUG, () -> "cor:// connected to " + peerName + " at " + host + ":" + port);
        } catch (CorProtoException e) {
            if (e.kind() == CorProtoException.Kind.PROTOCOL) {
                goAway(e); // the peer broke the handshake: tell it why (spec § 4.2)
            } else {
                die(e, -1);
            }
        } catch (ConnectException | UnknownHostException e) {
            die(new CorProtoException(CorProtoException.Kind.CONNECT, null,
                    "cannot connect to " + client.scheme + host + ":" + port + ": " + e.getMessage(), true, e), -1);
        } catch (IOException e) {
            die(new CorProtoException(CorProtoException.Kind.CONNECT, null,
                    "cannot open " + client.scheme + host + ":" + port + ": " + e, true, e), -1);
        } catch (RuntimeException | Error e) {
            die(new CorProtoException(CorProtoException.Kind.CONNECT, null,
                    "cannot open " + client.scheme + host + ":" + port + ": " + e, false, e), -1);
            throw e; // the loop stopping (CorCoCancelledException), or a bug: not ours to swallow
        } finally {
            wakeAll(openWaiters);
        }
        if (state == READY && codec.bufferedInput() > 0) {
            decode(); // frames that came right behind the HELLO-ACK
        }
        if (state == READY && tls != null && loop != null) {
            queueTlsRead(); // and plaintext the TLS decrypted with it
        }
    }

    /**
     * The TLS handshake (spec § 4.4), to its end or failed, within the connect deadline: waits
     * for the socket as the handshake asks, and for delegated tasks off the loop.
     */
    private void tlsHandshake(long deadlineNanos) throws IOException {
        tls = new LoopTls(LoopTls.clientEngine(client.tls, host, port), channel,
                loop == null ? Runnable::run : client.tlsTasks(), loop, this::tlsResumed);
        io = tls;
        try {
            while (!tls.handshake()) {
                if (tls.inboundDone()) {
                    throw new CorProtoException(CorProtoException.Kind.CONNECT, null,
                            client.scheme + host + ":" + port + " closed the connection during the TLS handshake", true, null);
                }
                if (tls.taskRunning()) {
                    awaitTlsTask(deadlineNanos);
                } else {
                    waitDuringOpen(tls.hasPendingOutput() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ, deadlineNanos,
                            "TLS handshake");
                }
            }
        } catch (SSLException e) {
            // what failed, in the JDK's words: a certificate not trusted, a name it does not cover, a version refused
            throw new CorProtoException(CorProtoException.Kind.CONNECT, null,
                    "TLS handshake with " + client.scheme + host + ":" + port + " failed: " + e.getMessage(), false, e);
        }
    }

    /** The opening coroutine parks while a delegated task runs on the client's pool; {@link #tlsResumed} wakes it. */
    private void awaitTlsTask(long deadlineNanos) throws CorProtoTimeoutException {
        CorCo me = CorCo.current();
        try {
            while (tls.taskRunning()) {
                long ms = CorRest.remainingMs(deadlineNanos);
                if (ms == 0) {
                    throw new CorProtoTimeoutException(client.scheme + host + ":" + port
                            + ": no TLS handshake within the connect timeout", true);
                }
                tlsWaiter = me;
                CorCo.park(ms);
            }
        } finally {
            tlsWaiter = null;
        }
    }

    /** On the loop, after a TLS delegated task or for plaintext the TLS holds: go on. */
    private void tlsResumed() {
        if (state == CONNECTING) {
            CorCo w = tlsWaiter;
            if (w != null) {
                w.wake();
            }
        } else if (state == READY) {
            try {
                read();
            } catch (IOException e) {
                die(closed("reading from", e), -1);
            }
        }
    }

    /** Plaintext the TLS holds that no readiness will announce: read it from the loop's inbox, once. */
    private void queueTlsRead() {
        if (!tlsReadQueued && state == READY && tls.hasBufferedInput()) {
            tlsReadQueued = true;
            loop.execute(() -> {
                tlsReadQueued = false;
                tlsResumed();
            });
        }
    }

    private void helloAck(long deadlineNanos) throws IOException {
        while (true) {
            int t = codec.nextFrame();
            if (t == CorProtoCodec.NEED_MORE) {
                if (tls == null || !tls.hasBufferedInput()) { // decrypted already: no readiness would say so
                    waitDuringOpen(SelectionKey.OP_READ, deadlineNanos, "HELLO-ACK");
                }
                int n = codec.readFrom(io);
                if (n < 0) {
                    throw new CorProtoException(CorProtoException.Kind.CONNECT, null,
                            client.scheme + host + ":" + port + " closed the connection before HELLO-ACK", true, null);
                }
                client.received(n);
                continue;
            }
            if (t == CorProtoCodec.GOAWAY) {
                CorProtoCodec.Problem p = codec.readGoAway();
                throw new CorProtoException(CorProtoException.Kind.REFUSED, p.code(),
                        client.scheme + host + ":" + port + " refused the connection: " + p.describe(), p.code() == CorProtoError.REFUSED, null);
            }
            if (t != CorProtoCodec.HELLO_ACK) {
                throw protocolError(CorProtoError.PROTOCOL_ERROR, "expected HELLO-ACK, got " + CorProtoCodec.typeName(t));
            }
            CorProtoCodec.Hello ack = codec.readHelloAck();
            long frame = ack.maxFrame() & 0xFFFF_FFFFL;
            if (frame > client.maxFrame || frame < CorProtoCodec.MIN_MAX_FRAME || ack.maxStreams() > client.maxStreams
                    || ack.maxStreams() < 1 || ack.nameTable() > client.nameTable) {
                throw protocolError(CorProtoError.PROTOCOL_ERROR, "HELLO-ACK agreed limits out of range: " + ack);
            }
            codec.agree((int) frame, ack.nameTable());
            maxStreams = ack.maxStreams();
            peerName = ack.name();
            return;
        }
    }

    private void waitDuringOpen(int ops, long deadlineNanos, String what) throws IOException {
        long ms = CorRest.remainingMs(deadlineNanos);
        if (ms == 0 || CorRest.waitFd(channel, ops, ms) == 0) {
            throw new CorProtoTimeoutException(client.scheme + host + ":" + port + ": no " + what + " within the connect timeout", true);
        }
    }

    private InetAddress resolve(long deadlineNanos) throws IOException {
        try {
            return InetAddress.ofLiteral(host);
        } catch (IllegalArgumentException notALiteral) {
            // A name lookup blocks, and a loop never does: it runs on the blocking pool, within the connect deadline.
            try {
                return CorCo.blocking(() -> InetAddress.getByName(host), CorRest.remainingMs(deadlineNanos));
            } catch (CorCoTimeoutException e) {
                throw new CorProtoTimeoutException(client.scheme + host + ":" + port + ": no name lookup within the connect timeout", true);
            } catch (IOException | RuntimeException | Error e) {
                throw e;
            } catch (Exception e) {
                throw new IOException(e);
            }
        }
    }

    /** A coroutine of the loop waits for a connection another one is opening (loop only). */
    void awaitOpen(long deadlineNanos) throws CorProtoException {
        CorCo me = CorCo.current();
        try {
            while (state == CONNECTING) {
                long ms = CorRest.remainingMs(deadlineNanos);
                if (ms == 0) {
                    throw new CorProtoTimeoutException(client.scheme + host + ":" + port + " still opening at the deadline", true);
                }
                if (!openWaiters.contains(me)) {
                    openWaiters.addLast(me);
                }
                CorCo.park(ms);
            }
        } finally {
            openWaiters.remove(me);
        }
    }

    // ================================================================ sending

    /**
     * Sends a request: waits for the write turn and a free stream, encodes it, writes it out.
     * Never throws what the network does: the call fails instead.
     *
     * @return {@link #TAKEN} with the call sent, or done; {@link #ELSEWHERE} if the connection
     *         died before the call was written - it is untouched, send it on a fresh one
     */
    boolean send(CorProtoCall call, String method, String path, String query, CorRestHeaders headers, JsonNode json, byte[] body) {
        if (loop == null) {
            return sendFromThread(call, method, path, query, headers, json, body);
        }
        CorCo me = CorCo.current();
        boolean turn = false;
        try {
            int t = takeTurn(me, call);
            if (t != TURN) {
                return t == NO_TURN_ELSEWHERE ? ELSEWHERE : TAKEN;
            }
            turn = true;
            if (!encode(call, method, path, query, headers, json, body)) {
                return TAKEN;
            }
            if (codec.pendingOutput() <= BATCH_LIMIT) {
                queueFlush();
                return TAKEN;
            }
            int left = flushOut();
            while (left > 0 && state == READY) {
                long ms = CorRest.remainingMs(call.deadlineNanos);
                if (ms == 0) {
                    die(new CorProtoTimeoutException(client.scheme + host + ":" + port + ": the request could not be written before its deadline"
                            + " (the peer reads nothing)", false), -1);
                    break;
                }
                setInterest(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                drainWaiter = me;
                CorCo.park(ms);
                drainWaiter = null;
                left = pendingOut();
            }
        } catch (IOException e) {
            die(closed("writing to", e), -1);
        } finally {
            if (turn) {
                writer = null;
                drainWaiter = null;
                wakeNextWriter();
            } else {
                boolean wasNext = turnQueue.peekFirst() == me;
                turnQueue.remove(me);
                if (wasNext && writer == null) {
                    wakeNextWriter(); // it left on its deadline: the one behind it may be able to go
                }
            }
        }
        return TAKEN;
    }

    private static final int TURN = 0;
    private static final int NO_TURN_FAILED = 1;
    private static final int NO_TURN_ELSEWHERE = 2;

    /**
     * Waits for the write turn and a free stream: {@link #TURN}; {@link #NO_TURN_FAILED} with
     * the call failed (its deadline); {@link #NO_TURN_ELSEWHERE} when the connection died
     * meanwhile.
     */
    private int takeTurn(CorCo me, CorProtoCall call) {
        while (true) {
            if (state != READY) {
                return NO_TURN_ELSEWHERE;
            }
            // The deadline first: a request already late is not sent at all (and stays retryable).
            long ms = CorRest.remainingMs(call.deadlineNanos);
            if (ms == 0) {
                call.fail(new CorProtoTimeoutException(client.scheme + host + ":" + port + ": no free stream or write turn before the deadline ("
                        + streams.size() + " of " + maxStreams + " streams in flight)", true));
                return NO_TURN_FAILED;
            }
            if (writer == null && streams.size() < maxStreams && (turnQueue.isEmpty() || turnQueue.peekFirst() == me)) {
                turnQueue.remove(me);
                writer = me;
                return TURN;
            }
            long wakeBy = call.deadlineNanos;
            if (streams.size() >= maxStreams) {
                wakeBy = abandonOverdue(wakeBy);
                if (state != READY) {
                    return NO_TURN_ELSEWHERE;
                }
            }
            if (!turnQueue.contains(me)) {
                turnQueue.addLast(me);
            }
            CorCo.park(CorRest.remainingMs(wakeBy));
        }
    }

    private void wakeNextWriter() {
        CorCo next = turnQueue.peekFirst();
        if (next != null) {
            next.wake();
        }
    }

    private boolean sendFromThread(CorProtoCall call, String method, String path, String query, CorRestHeaders headers,
            JsonNode json, byte[] body) {
        try {
            while (state == READY && streams.size() >= maxStreams) {
                long wakeBy = abandonOverdue(call.deadlineNanos);
                if (state != READY) {
                    break;
                }
                if (!pump(wakeBy) && call.remainingMs() == 0) {
                    call.fail(new CorProtoTimeoutException(client.scheme + host + ":" + port + ": no free stream before the deadline", true));
                    return TAKEN;
                }
            }
            if (state != READY) {
                return ELSEWHERE;
            }
            if (!encode(call, method, path, query, headers, json, body)) {
                return TAKEN;
            }
            while (flushOut() > 0 && state == READY) {
                if (!pump(call.deadlineNanos)) {
                    die(new CorProtoTimeoutException(client.scheme + host + ":" + port
                            + ": the request could not be written before its deadline", false), -1);
                }
            }
        } catch (IOException e) {
            die(closed("writing to", e), -1);
        }
        return TAKEN;
    }

    /** Numbers the request and encodes it; {@code false} with the call failed if it does not fit. */
    private boolean encode(CorProtoCall call, String method, String path, String query, CorRestHeaders headers,
            JsonNode json, byte[] body) {
        int id;
        do {
            id = nextStream++;
            if (nextStream == 0) {
                nextStream = 1;
                wrapped = true;
            }
        } while (id == 0 || streams.containsKey(id) || (wrapped && recentlyCancelled(id) >= 0));
        try {
            codec.writeRequest(id, method, path, query, headers, json, body);
        } catch (CorProtoException tooLarge) {
            call.fail(tooLarge);
            return false;
        }
        call.stream = id;
        streams.put(id, call);
        if (loop != null && watch == null) {
            armWatch(client.pingIdleNanos);
        }
        return true;
    }

    /** The round's requests go out together, once, before the loop selects again. */
    private void queueFlush() {
        if (!flushQueued) {
            flushQueued = true;
            loop.beforeNextSelect(queuedFlush);
        }
    }

    private void queuedFlush() {
        flushQueued = false;
        if (state != READY || (interest & SelectionKey.OP_WRITE) != 0) {
            return; // dead, or the socket is full and the handler writes when it is writable again
        }
        try {
            if (flushOut() > 0) {
                setInterest(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            }
        } catch (IOException e) {
            die(closed("writing to", e), -1);
        }
    }

    private int flushOut() throws IOException {
        int before = codec.pendingOutput();
        if (before == 0 && (tls == null || !tls.hasPendingOutput())) {
            return 0;
        }
        int left = codec.writeTo(io);
        client.wrote(before - left);
        if (tls != null && !tls.flush()) {
            left += tls.pendingOutputBytes(); // records of what the codec handed over, not on the socket yet
        }
        return left;
    }

    /** Output not on the socket yet: the codec's, and the TLS records of it. */
    private int pendingOut() {
        return codec.pendingOutput() + (tls == null ? 0 : tls.pendingOutputBytes());
    }

    // ================================================================ waiting for the answer

    /** Waits until {@code call} is done or its deadline passes (then its stream is cancelled, spec § 5.5). */
    void await(CorProtoCall call) throws CorProtoException {
        if (loop != null) {
            CorCo me = CorCo.current();
            if (me == null || me.loop() != loop) {
                throw new IllegalStateException("a cor:// call of loop " + loop.name() + " awaited from "
                        + (me == null ? "thread " + Thread.currentThread().getName() : me.name()) + ": await it in a coroutine of its loop");
            }
            try {
                while (!call.isDone()) {
                    long ms = call.remainingMs();
                    if (ms == 0) {
                        abandon(call);
                        break;
                    }
                    call.waiter = me;
                    CorCo.park(ms);
                }
            } finally {
                if (call.waiter == me) {
                    call.waiter = null;
                }
            }
            return;
        }
        try {
            while (!call.isDone()) {
                // A thread's own connection has no watch: its wait pings a silent peer itself.
                long until = call.deadlineNanos;
                if (state == READY) {
                    long now = System.nanoTime();
                    if (pingOutstanding && now - pingSentNanos >= client.pingTimeoutNanos) {
                        die(noPong(now), -1);
                        continue;
                    }
                    if (!pingOutstanding && now - lastReadNanos >= client.pingIdleNanos) {
                        sendPing(now);
                    }
                    long next = pingOutstanding ? pingSentNanos + client.pingTimeoutNanos : lastReadNanos + client.pingIdleNanos;
                    if (next - until < 0) {
                        until = next;
                    }
                }
                if (!pump(until) && call.remainingMs() == 0) {
                    abandon(call);
                }
            }
        } catch (IOException e) {
            die(closed("reading from", e), -1);
        }
    }

    /**
     * Every stream is taken: the calls past their deadlines give them up now, awaited or not
     * (a call started and not awaited yet must not hold a stream past its deadline), cancelling
     * their streams.
     *
     * @return the earlier of {@code wakeBy} and the next deadline of a call still waiting
     */
    private long abandonOverdue(long wakeBy) {
        long now = System.nanoTime();
        for (Iterator<CorProtoCall> it = streams.values().iterator(); it.hasNext() && state == READY;) {
            CorProtoCall c = it.next();
            if (c.deadlineNanos - now <= 0) {
                it.remove();
                cancel(c);
            } else if (c.deadlineNanos - wakeBy < 0) {
                wakeBy = c.deadlineNanos;
            }
        }
        return wakeBy;
    }

    /**
     * The caller stops waiting: CANCEL (spec § 5.5) frees its stream at once, here and at the
     * server; the number goes into the ring so that an answer that crossed the CANCEL is
     * dropped. A PING asks whether the peer is there at all.
     */
    private void abandon(CorProtoCall call) {
        if (state != READY || call.stream == 0 || streams.get(call.stream) != call) {
            failLate(call);
            return;
        }
        streams.remove(call.stream);
        cancel(call);
    }

    private void failLate(CorProtoCall call) {
        call.fail(new CorProtoTimeoutException(client.scheme + host + ":" + port + ": no answer on stream "
                + Integer.toUnsignedString(call.stream) + " before the deadline", false));
    }

    /** {@code call}, already out of {@link #streams}, fails and its stream is cancelled. */
    private void cancel(CorProtoCall call) {
        failLate(call);
        if (cancelledRing.length != maxStreams) {
            cancelledRing = new int[maxStreams]; // once, after HELLO-ACK set maxStreams
        }
        cancelledRing[cancelledNext] = call.stream;
        cancelledNext = (cancelledNext + 1) % cancelledRing.length;
        codec.writeCancel(call.stream);
        client.cancelled();
        if (!pingOutstanding) {
            sendPing(System.nanoTime()); // written with the CANCEL
        } else if (loop != null) {
            queueFlush();
        } else {
            try {
                flushOut(); // a thread's connection: now, not with its next request
            } catch (IOException e) {
                die(closed("writing to", e), -1);
            }
        }
        if (loop != null && writer == null) {
            wakeNextWriter();
        }
    }

    /** Where {@code stream} sits in the ring of recently cancelled streams, or -1. A rare path: a linear scan. */
    private int recentlyCancelled(int stream) {
        int[] ring = cancelledRing;
        for (int i = 0; i < ring.length; i++) {
            if (ring[i] == stream) {
                return i;
            }
        }
        return -1;
    }

    /**
     * A thread's connection: waits once for the socket (read, and write when output is pending)
     * until the deadline, and does what it is ready for.
     *
     * @return {@code false} if the deadline passed with nothing ready
     */
    private boolean pump(long deadlineNanos) throws IOException {
        if (state != READY) {
            return true;
        }
        long ms = CorRest.remainingMs(deadlineNanos);
        if (ms == 0) {
            return false;
        }
        if (tls != null && tls.hasBufferedInput()) {
            read(); // decrypted already: the socket would not say so
            return true;
        }
        int ops = SelectionKey.OP_READ | (pendingOut() > 0 ? SelectionKey.OP_WRITE : 0);
        int ready = CorRest.waitFd(channel, ops, ms);
        if (ready == 0) {
            return false;
        }
        if ((ready & SelectionKey.OP_WRITE) != 0) {
            flushOut();
        }
        if ((ready & SelectionKey.OP_READ) != 0) {
            read();
        }
        return true;
    }

    // ================================================================ the reader

    /** The loop's handler: the connection's one reader, and the one who sees OP_WRITE. */
    @Override
    public void onReady(SelectionKey key) {
        if (state != READY || !key.isValid()) {
            return;
        }
        try {
            if (key.isWritable()) {
                if (flushOut() == 0) {
                    setInterest(SelectionKey.OP_READ);
                    CorCo w = drainWaiter;
                    if (w != null) {
                        w.wake();
                    }
                }
            }
            if (key.isValid() && key.isReadable()) {
                read();
            }
        } catch (IOException e) {
            die(closed("reading from", e), -1);
        }
    }

    private void read() throws IOException {
        for (int i = 0; i < READS_PER_WAKE && state == READY; i++) {
            int n = codec.readFrom(io);
            if (n < 0) {
                die(new CorProtoException(CorProtoException.Kind.CLOSED, null,
                        client.scheme + host + ":" + port + " (" + peerName + ") closed the connection", false, null), -1);
                return;
            }
            if (n == 0) {
                return;
            }
            client.received(n);
            lastReadNanos = System.nanoTime();
            decode();
        }
        if (tls != null && loop != null) {
            queueTlsRead(); // the reads per wake ran out with plaintext still in the TLS
        }
    }

    private void decode() {
        try {
            int t;
            while (state == READY && (t = codec.nextFrame()) != CorProtoCodec.NEED_MORE) {
                onFrame(t);
            }
        } catch (CorProtoException e) {
            goAway(e);
        }
    }

    private void onFrame(int type) throws CorProtoException {
        switch (type) {
            case CorProtoCodec.RESPONSE -> {
                CorProtoCall call = inFlight(codec.stream());
                CorProtoResponse r = codec.readResponse();
                if (call != null) {
                    finished(call).complete(r);
                }
            }
            case CorProtoCodec.ERROR -> {
                CorProtoCall call = inFlight(codec.stream());
                CorProtoCodec.Problem p = codec.readError();
                if (call != null) {
                    finished(call).fail(new CorProtoException(CorProtoException.Kind.STREAM, p.code(), client.scheme + host + ":" + port
                        + " answered the request with ERROR " + p.describe(), p.code() == CorProtoError.REFUSED, null));
                }
            }
            case CorProtoCodec.PING -> {
                codec.writePing(CorProtoCodec.PONG, codec.readPing());
                try {
                    if (flushOut() > 0 && loop != null) {
                        setInterest(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                    }
                } catch (IOException e) {
                    die(closed("writing to", e), -1);
                }
            }
            case CorProtoCodec.PONG -> pong(codec.readPing());
            case CorProtoCodec.GOAWAY -> {
                CorProtoCodec.Problem p = codec.readGoAway();
                ProtoConnectionEvent.emit("client", host + ":" + port, ProtoConnectionEvent.GOAWAY_RECEIVED, p.code(), p.reason());
                die(new CorProtoException(CorProtoException.Kind.CLOSED, p.code(),
                        client.scheme + host + ":" + port + " (" + peerName + ") went away: " + p.describe(), false, null), p.lastStream());
            }
            default -> throw CorProtoException.violation(CorProtoError.PROTOCOL_ERROR,
                    "a client does not receive " + CorProtoCodec.typeName(type));
        }
    }

    /** The call an answer is for; {@code null} for a stream cancelled and answered meanwhile (spec § 5.5): drop it. */
    private CorProtoCall inFlight(int stream) throws CorProtoException {
        CorProtoCall call = streams.get(stream);
        if (call == null) {
            int at = recentlyCancelled(stream);
            if (at >= 0) {
                cancelledRing[at] = 0; // its one late answer is in: the number may come round again
                return null;
            }
            throw CorProtoException.violation(CorProtoError.PROTOCOL_ERROR,
                    "an answer on stream " + Integer.toUnsignedString(stream) + ", which is not in flight");
        }
        return call;
    }

    /** The stream is answered: it leaves the table, and a writer waiting for a free one may go. */
    private CorProtoCall finished(CorProtoCall call) {
        streams.remove(call.stream);
        if (loop != null && writer == null) {
            wakeNextWriter();
        }
        return call;
    }

    // ================================================================ liveness

    /** Sends PING (spec § 7) with fresh bytes; its PONG must carry them back. */
    private void sendPing(long now) {
        pingOutstanding = true;
        pingSentNanos = now;
        pingData++;
        codec.writePing(CorProtoCodec.PING, pingData);
        if (loop != null) {
            queueFlush();
            armWatch(client.pingTimeoutNanos);
            return;
        }
        try {
            flushOut(); // the rest, if the socket is full, when the thread next waits on it
        } catch (IOException e) {
            die(closed("writing to", e), -1);
        }
    }

    private void pong(long data) {
        if (pingOutstanding && data == pingData) {
            pingOutstanding = false;
            wakeAll(pongWaiters);
        }
        // else: a PONG nobody asked for, or for an older PING - ignored (spec § 7)
    }

    private CorProtoTimeoutException noPong(long now) {
        return new CorProtoTimeoutException(client.scheme + host + ":" + port + " (" + peerName + ") sent no PONG within "
                + TimeUnit.NANOSECONDS.toMillis(now - pingSentNanos) + " ms: the peer is not answering", false);
    }

    /** Arms the watch to look again in {@code delayNanos}, or sooner if it is armed for sooner. */
    private void armWatch(long delayNanos) {
        if (state != READY) {
            return;
        }
        long due = System.nanoTime() + delayNanos;
        if (watch != null) {
            if (watchDueNanos - due <= 0) {
                return;
            }
            watch.cancel(); // a PING sent meanwhile: its timeout comes before the look armed
        }
        watchDueNanos = due;
        watch = loop.schedule(Math.max(1, TimeUnit.NANOSECONDS.toMillis(delayNanos + 999_999)), watchCheck);
    }

    /**
     * A loop connection's watch: a PING past its timeout kills the connection; calls waiting on
     * a connection silent for the ping idle time send one. Idle with no PING out, it disarms:
     * the probe before reuse takes over.
     */
    private void watchCheck() {
        watch = null;
        if (state != READY) {
            return;
        }
        long now = System.nanoTime();
        if (pingOutstanding) {
            long waited = now - pingSentNanos;
            if (waited >= client.pingTimeoutNanos) {
                die(noPong(now), -1);
            } else {
                armWatch(client.pingTimeoutNanos - waited);
            }
            return;
        }
        if (streams.size() == 0) {
            return; // nobody waits for an answer
        }
        long silent = now - lastReadNanos;
        if (silent >= client.pingIdleNanos) {
            sendPing(now);
        } else {
            armWatch(client.pingIdleNanos - silent);
        }
    }

    /** Whether a call should make sure the peer is there before it reuses this connection. */
    boolean needsProbe(long now) {
        return state == READY && (pingOutstanding || now - lastReadNanos >= client.pingIdleNanos);
    }

    /**
     * Before a call reuses a connection silent for the ping idle time: PING, and wait for the
     * PONG until {@code deadlineNanos} or the ping timeout. No PONG in time: the connection dies.
     *
     * @return {@code false} if the deadline passed first, the PONG still awaited
     */
    boolean probe(long deadlineNanos) {
        if (state != READY) {
            return true;
        }
        if (!pingOutstanding) {
            sendPing(System.nanoTime());
        }
        CorCo me = loop == null ? null : CorCo.current();
        try {
            while (state == READY && pingOutstanding) {
                long pongBy = pingSentNanos + client.pingTimeoutNanos;
                long now = System.nanoTime();
                if (now - pongBy >= 0) {
                    die(noPong(now), -1);
                    return true;
                }
                if (now - deadlineNanos >= 0) {
                    return false;
                }
                long until = deadlineNanos - pongBy < 0 ? deadlineNanos : pongBy;
                if (me == null) {
                    pump(until);
                } else {
                    if (!pongWaiters.contains(me)) {
                        pongWaiters.addLast(me);
                    }
                    CorCo.park(CorRest.remainingMs(until));
                }
            }
        } catch (IOException e) {
            die(closed("reading from", e), -1);
        } finally {
            if (me != null) {
                pongWaiters.remove(me);
            }
        }
        return true;
    }

    /** A thread's connection before reuse: reads what came while it was idle (a GOAWAY, a late answer). */
    void readIdle() {
        if (loop == null && state == READY) {
            try {
                read();
            } catch (IOException e) {
                die(closed("reading from", e), -1);
            }
        }
    }

    private void setInterest(int ops) {
        if (ops != interest && loop != null) {
            SelectionKey key = loop.keyFor(channel); // the current key: the loop may have rebuilt its selector
            if (key != null && key.isValid()) {
                key.interestOps(ops);
                interest = ops;
            }
        }
    }

    // ================================================================ ending

    /** The peer broke the protocol: GOAWAY with the code (one attempt), then the connection dies. */
    private CorProtoException protocolError(CorProtoError code, String reason) {
        return CorProtoException.violation(code, client.scheme + host + ":" + port + ": " + reason);
    }

    private void goAway(CorProtoException e) {
        CorProtoError code = e.code() != null ? e.code() : CorProtoError.PROTOCOL_ERROR;
        try {
            // Appended behind whatever is still queued: the output is a byte queue, so a frame
            // half-written stays whole on the wire.
            ProtoConnectionEvent.emit("client", host + ":" + port, ProtoConnectionEvent.GOAWAY_SENT, code, e.getMessage());
            codec.writeGoAway(0, code, e.getMessage());
            codec.writeTo(io);
        } catch (IOException | RuntimeException ignored) {
            // it dies anyway
        }
        die(new CorProtoException(CorProtoException.Kind.PROTOCOL, code,
                client.scheme + host + ":" + port + " broke the protocol: " + e.getMessage(), false, e), -1);
    }

    private CorProtoException closed(String doing, IOException e) {
        return new CorProtoException(CorProtoException.Kind.CLOSED, null,
                client.scheme + host + ":" + port + ": " + doing + " the connection failed: " + e, false, e);
    }

    /** The client closes: GOAWAY {@code NO_ERROR}, one write, and every call fails. Owner's thread. */
    void shutdown() {
        shutdown("client " + client.name + " closing");
    }

    /** GOAWAY {@code NO_ERROR} with {@code reason}, one write, and every call still on it fails. */
    private void shutdown(String reason) {
        if (state == READY) {
            try {
                ProtoConnectionEvent.emit("client", host + ":" + port, ProtoConnectionEvent.GOAWAY_SENT, CorProtoError.NO_ERROR, reason);
                codec.writeGoAway(0, CorProtoError.NO_ERROR, reason);
                codec.writeTo(io);
            } catch (IOException | RuntimeException ignored) {
                // closing anyway
            }
        }
        die(new CorProtoException(CorProtoException.Kind.CLOSED, CorProtoError.NO_ERROR,
                client.scheme + host + ":" + port + ": " + reason, false, null), -1);
    }

    /** The connection's channel ({@code null} before the connect). */
    SocketChannel channel() {
        return channel;
    }

    /**
     * A failure out of {@link #onReady} other than the socket's own: the connection dies through
     * {@link #die}, so that it leaves its slot and every call on it fails instead of waiting.
     */
    @Override
    public void failed(SelectionKey key, Throwable failure) {
        die(new CorProtoException(CorProtoException.Kind.CLOSED, null, client.scheme + host + ":" + port
                + ": the connection's reader failed: " + failure, false, failure), -1);
    }

    /**
     * The connection is over: it leaves its table, its channel closes, and every call on it and
     * every coroutine waiting for it fails at once. {@code lastProcessed}: a GOAWAY's last stream
     * (calls sent after it are retryable), or -1.
     */
    void die(CorProtoException cause, int lastProcessed) {
        if (state == DEAD) {
            return;
        }
        boolean wasReady = state == READY;
        state = DEAD;
        ProtoConnectionEvent.emit("client", host + ":" + port, ProtoConnectionEvent.CLOSED, cause.code(), cause.getMessage());
        failure = cause;
        if (slots[slot] == this) {
            slots[slot] = null;
        }
        if (tls != null && tls.handshakeDone()) {
            tls.closeOutbound(); // close_notify, as far as the socket takes it now
        }
        ProtoChecks.closeQuietly(channel);
        codec.clearOutput();
        codec.clearInput();
        client.closed(this);
        LOG.log(System.Logger.Level.DEBUG, () -> "cor:// connection to " + host + ":" + port + " ended: " + cause.getMessage());
        for (Iterator<CorProtoCall> it = streams.values().iterator(); it.hasNext();) {
            CorProtoCall call = it.next();
            it.remove();
            call.fail(failureFor(lastProcessed > 0 && Integer.compareUnsigned(call.stream, lastProcessed) > 0));
        }
        if (watch != null) {
            watch.cancel();
            watch = null;
        }
        if (wasReady || loop != null) {
            wakeAll(openWaiters);
            wakeAll(turnQueue);
            wakeAll(pongWaiters);
            if (drainWaiter != null) {
                drainWaiter.wake();
            }
        }
    }

    /** Closes the socket from another thread (the client closes): its owner finds it closed and dies. */
    void closeChannel() {
        ProtoChecks.closeQuietly(channel);
    }

    /** A fresh exception for one call or waiter, the connection's failure as its cause. */
    private CorProtoException failureFor(boolean retryable) {
        CorProtoException f = failure;
        if (f == null) {
            f = new CorProtoException(CorProtoException.Kind.CLOSED, client.scheme + host + ":" + port + " is not connected");
        }
        if (f instanceof CorProtoTimeoutException) {
            return new CorProtoTimeoutException(f.getMessage(), retryable || f.retryable());
        }
        return new CorProtoException(f.kind(), f.code(), f.getMessage(), retryable || f.retryable(), f);
    }

    /** Why a call cannot use this connection (it died, or never opened). */
    CorProtoException failure() {
        return failureFor(true);
    }

    private static void wakeAll(ArrayDeque<CorCo> waiters) {
        for (CorCo co : waiters) {
            co.wake();
        }
    }

    @Override
    public String toString() {
        return client.scheme + host + ":" + port + " (" + peerName + ", " + (state == READY ? "ready" : state == DEAD ? "dead" : "opening") + ")";
    }
}
