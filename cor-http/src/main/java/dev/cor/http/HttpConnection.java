package dev.cor.http;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoopHandler;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestException;
import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.CorRestResponder;
import dev.cor.rest.tls.LoopTls;

/**
 * One HTTP/1.1 connection on its loop: reads and parses requests, hands each to the dispatcher,
 * writes each answer, in order - a request in flight holds the connection's later requests
 * back (once one arrives, reading stops until the answer is out). Touched by its loop's thread only: as the key's
 * handler, and as the responder called by the dispatcher (inline, from inside the request's
 * coroutine, or after the hop through the loop's inbox).
 */
final class HttpConnection implements CorCoLoopHandler, CorRestResponder {
    static final System.Logger LOG = System.getLogger(HttpConnection.class.getName());
    private static final byte[] CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final int INITIAL_BUFFER = 4096;

    private final HttpLoop owner;
    private final HttpLimits limits;
    private final SocketChannel ch;
    private final LoopTls tls;
    private final long openedNanos = System.nanoTime();
    /** The key last seen valid: a rebuilt selector cancels it, {@link #key()} then looks the new one up. */
    private SelectionKey key;
    private ByteBuffer in = ByteBuffer.allocate(INITIAL_BUFFER); // write mode between reads
    private final HttpRequestParser parser;
    int index = -1;

    private boolean closed;
    private boolean busy;
    private boolean dispatching;
    private boolean headRequest;
    private boolean closeAfterAnswer;
    private boolean writingFallback;
    private boolean answerStarted;
    private boolean continueSent;
    private boolean draining;
    private boolean peerClosed;
    private CorRest inFlight;
    private ByteBuffer[] pending;

    private long requestStartNanos;
    /** For the access log only (0 without one): when the request in flight began, and its body bytes on the wire. */
    private long accessStartNanos;
    private long accessBodyBytes;
    private long idleSinceNanos = System.nanoTime();
    private long writeStartNanos;

    HttpConnection(HttpLoop owner, SocketChannel ch) throws IOException {
        this.owner = owner;
        this.limits = owner.server.limits();
        this.ch = ch;
        this.parser = new HttpRequestParser(limits);
        javax.net.ssl.SSLContext ssl = owner.server.sslContext();
        if (ssl != null) {
            this.tls = new LoopTls(LoopTls.serverEngine(ssl), ch, owner.server.tlsTasks(), owner.loop, this::resumeTls);
        } else {
            this.tls = null;
        }
    }

    void open() throws IOException {
        key = owner.loop.register(ch, SelectionKey.OP_READ, this);
    }

    // ---------------------------------------------------------------- reading

    @Override
    public void onReady(SelectionKey k) throws IOException {
        key = k;
        if (closed) {
            return;
        }
        if (pending != null && k.isWritable()) {
            if (!flush()) {
                return;
            }
            answered();
            return;
        }
        if (tls != null && tls.hasPendingOutput() && k.isWritable()) {
            if (!tls.flush()) {
                return; // still more handshake records to send
            }
            interest(SelectionKey.OP_READ);
        }
        if (k.isReadable() || (tls != null && !tls.handshakeDone())) {
            read();
        }
    }

    /**
     * {@link #onReady} threw (a coroutine hook that failed inside the dispatch, an I/O error of a
     * TLS flush) and the loop logged it: close the way every other end does, so that the
     * connection leaves its loop's table and the open count.
     */
    @Override
    public void failed(SelectionKey k, Throwable failure) {
        close();
    }

    /** After a TLS delegated task ran off the loop: go on where the handshake stopped. */
    private void resumeTls() {
        if (closed) {
            return;
        }
        try {
            read();
        } catch (IOException | RuntimeException e) {
            failedOffReady(e);
        }
    }

    /** Pipelined requests picked up from the loop's inbox, after a coroutine's answer. */
    private void resumeInput() {
        try {
            processInput();
        } catch (RuntimeException e) {
            failedOffReady(e);
        }
    }

    /**
     * What {@link #failed} is for onReady, for work the connection runs from its loop's inbox: the
     * loop would only log it, leaving the connection busy and counted for ever.
     */
    private void failedOffReady(Exception e) {
        if (!(e instanceof IOException)) {
            LOG.log(System.Logger.Level.WARNING, "cor-http: a connection failed; closing it", e);
        }
        close();
    }

    private void read() throws IOException {
        if (lingering) {
            discard();
            return;
        }
        if (!in.hasRemaining()) {
            growInput();
        }
        int n;
        try {
            n = tls == null ? ch.read(in) : tls.read(in);
        } catch (IOException e) {
            close();
            return;
        }
        if (tls != null && tls.hasPendingOutput()) {
            interest(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        }
        if (busy) {
            interest(0); // later requests wait for this one's answer, in the buffer
        }
        if (n < 0) {
            // The peer is done sending: answer what it sent in full (a request, then shutdownOutput), then close.
            peerClosed = true;
            if (!busy) {
                processInput();
                if (!busy) {
                    close();
                }
            }
            return;
        }
        if (n > 0 && !parser.inRequest() && requestStartNanos == 0) {
            requestStartNanos = System.nanoTime();
        }
        processInput();
        if (n > 0 && tls != null && !busy && !closed && tls.hasBufferedInput()) {
            read(); // plaintext already decrypted: no readiness will announce it
        }
    }

    private void growInput() {
        int max = limits.maxHeaderBytes() + limits.maxRequestLineBytes() + 1024;
        if (in.capacity() >= max) {
            return; // the parser reports the limit
        }
        ByteBuffer bigger = ByteBuffer.allocate(Math.min(in.capacity() * 2, max));
        in.flip();
        bigger.put(in);
        in = bigger;
    }

    /** Parses and dispatches buffered requests until one is in flight or more bytes are needed. */
    void processInput() {
        while (!busy && !closed) {
            in.flip();
            HttpRequestParser.Result r = parser.parse(in);
            in.compact();
            switch (r) {
                case NEED_MORE -> {
                    if (parser.expectsContinue() && parser.bodyPending() && !continueSent) {
                        continueSent = true;
                        writeSmall(CONTINUE);
                    }
                    if (!in.hasRemaining()) {
                        growInput();
                    }
                    if (parser.inRequest() && requestStartNanos == 0) {
                        requestStartNanos = System.nanoTime();
                    }
                    interest(SelectionKey.OP_READ);
                    return;
                }
                case ERROR -> {
                    rejectRequest(parser.errorStatus, parser.errorReason);
                    return;
                }
                case REQUEST -> dispatch();
                default -> throw new IllegalStateException();
            }
        }
    }

    private boolean keepAlive10;

    private void dispatch() {
        CorRest req = CorRest.builder(parser.method, parser.path).query(parser.query).headers(parser.headers)
                .body(parser.body()).build();
        if (owner.server.accessLog() != null) {
            accessStarted(); // before the reset: a pipelined request read with the one before it begins now
        }
        headRequest = parser.method.equals("HEAD");
        closeAfterAnswer = !parser.keepAlive() || draining || peerClosed;
        boolean http10 = parser.minorVersion == 0;
        parser.reset();
        continueSent = false;
        requestStartNanos = 0;
        busy = true;
        answerStarted = false;
        inFlight = req;
        keepAlive10 = http10 && !closeAfterAnswer;
        // Reading goes on while it is in flight - an interest change is a system call each way, and
        // a client that waits for its answer sends nothing meanwhile; read() stops it once a
        // pipelined request (or the end of the stream) does come.
        owner.server.requestRead();
        if (owner.draining()) {
            closeAfterAnswer = true;
            req.fail(new CorRestException(503, "Service Unavailable", "the server is stopping"));
            respond(req);
            return;
        }
        dispatching = true;
        try {
            owner.server.dispatcher().dispatch(req, this);
        } finally {
            dispatching = false;
        }
    }

    private void rejectRequest(int status, String reason) {
        // what was read of it, for the access log; the answer itself does not depend on it
        CorRest req = CorRest.builder(parser.method != null ? parser.method : "-", parser.path != null ? parser.path : "-")
                .query(parser.query).headers(parser.headers).build();
        if (owner.server.accessLog() != null) {
            accessStarted();
        }
        req.fail(new CorRestException(status, reasonPhrase(status), reason));
        headRequest = false;
        closeAfterAnswer = true; // the stream cannot be trusted past a bad request
        busy = true;
        answerStarted = false;
        inFlight = req;
        interest(0);
        owner.server.requestRejected();
        respond(req);
    }

    // ---------------------------------------------------------------- writing

    /** The dispatcher's answer: always on this connection's loop, exactly once per request. */
    @Override
    public void respond(CorRest req) {
        if (closed || req != inFlight) {
            return;
        }
        answerStarted = true;
        ByteBuffer[] out;
        try {
            ByteBuffer head = head(req);
            byte[] body = req.responseBody();
            boolean noBody = headRequest || !bodyAllowed(req.status()) || body.length == 0;
            out = noBody ? new ByteBuffer[] {head} : new ByteBuffer[] {head, ByteBuffer.wrap(body)};
            accessBodyBytes = noBody ? 0 : body.length;
        } catch (RuntimeException e) {
            answerFailed(req, e);
            return;
        }
        boolean done;
        try {
            done = writeSome(out);
        } catch (IOException | RuntimeException e) {
            close(); // some of it may be out: only a close ends the answer cleanly now
            return;
        }
        if (!done) {
            if (CorCo.current() != null) {
                if (!writeThroughTheWait(out)) {
                    return;
                }
            } else {
                pending = out;
                writeStartNanos = System.nanoTime();
                interest(SelectionKey.OP_WRITE);
                return;
            }
        }
        answered();
    }

    /**
     * The answer's head could not be written (a header without a value, a status HTTP cannot
     * send as a final answer): nothing of it is out, so a 500 goes in its place, and the
     * connection closes after it - the application's state for it is in doubt. If even that
     * fails, the connection closes: never an answer left pending.
     */
    private void answerFailed(CorRest req, RuntimeException e) {
        owner.server.answerFailures().log(System.Logger.Level.WARNING,
                () -> "cor-http: the answer to " + req + " cannot be written; answering 500", e);
        if (writingFallback) {
            close();
            return;
        }
        CorRest fallback = CorRest.builder(req.method(), req.path()).build();
        fallback.fail(new CorRestException(500, "Internal Server Error", "the answer could not be written: " + e.getMessage()));
        closeAfterAnswer = true;
        inFlight = fallback;
        writingFallback = true;
        try {
            respond(fallback);
        } finally {
            writingFallback = false;
        }
    }

    /** In a coroutine: a full send buffer waits for OP_WRITE through the loop's wait. */
    private boolean writeThroughTheWait(ByteBuffer[] out) {
        try {
            boolean done = false;
            while (!done) {
                if (CorRest.waitFd(ch, SelectionKey.OP_WRITE, limits.writeTimeoutMs()) == 0) {
                    close(); // the peer stopped reading
                    return false;
                }
                done = writeSome(out);
            }
            return true;
        } catch (IOException | RuntimeException e) {
            close();
            return false;
        }
    }

    /** Inline: continues a pending answer on OP_WRITE. */
    private boolean flush() {
        try {
            if (!writeSome(pending)) {
                return false;
            }
        } catch (IOException e) {
            close();
            return false;
        }
        pending = null;
        return true;
    }

    /** Writes what the socket takes now; whether all of it is out. */
    private boolean writeSome(ByteBuffer[] out) throws IOException {
        if (tls != null) {
            return tls.write(out);
        }
        ch.write(out);
        return !remaining(out);
    }

    /** The answer is out: close, or go on with the next request. */
    private void answered() {
        long now = System.nanoTime();
        CorHttpAccessLog log = owner.server.accessLog();
        if (log != null && inFlight != null) {
            try {
                log.answered(owner.index, inFlight, accessBodyBytes, now - accessStartNanos);
            } catch (RuntimeException e) {
                owner.server.answerFailures().log(System.Logger.Level.WARNING, () -> "cor-http: the access log failed", e);
            }
        }
        busy = false;
        inFlight = null;
        idleSinceNanos = now;
        owner.server.requestAnswered();
        if (peerClosed) {
            close();
            return;
        }
        if (closeAfterAnswer) {
            closeGracefully();
            return;
        }
        if (dispatching) {
            return; // processInput's loop goes on with the next buffered request
        }
        if (in.position() > 0 || (tls != null && tls.hasBufferedInput())) {
            if (tls != null && in.position() == 0) {
                owner.loop.execute(this::resumeTls);
            } else if (CorCo.current() != null) {
                owner.loop.execute(this::resumeInput); // pipelined: out of the finishing coroutine first
            } else {
                processInput();
            }
        } else {
            interest(SelectionKey.OP_READ);
        }
    }

    /** The request being dispatched began when its first byte was read, or now when it was read with the one before. */
    private void accessStarted() {
        accessStartNanos = requestStartNanos != 0 ? requestStartNanos : System.nanoTime();
    }

    private void writeSmall(byte[] bytes) {
        try {
            writeSome(new ByteBuffer[] {ByteBuffer.wrap(bytes)}); // a few bytes into an empty send buffer: all or a dead peer
        } catch (IOException e) {
            close();
        }
    }

    /** The status line, fields and blank line, written into the connection's reusable head buffer. */
    private ByteBuffer head(CorRest req) {
        int status = req.status();
        if (status < 200) {
            throw new IllegalStateException("status " + status + " is informational, not a final answer");
        }
        HeadWriter w = headWriter;
        w.reset();
        w.bytes(HttpStatusLines.of(status));
        CorRestHeaders h = req.responseHeaders();
        for (int i = 0; i < h.size(); i++) {
            String name = h.name(i);
            if (name.equalsIgnoreCase("Content-Length") || name.equalsIgnoreCase("Connection")
                    || name.equalsIgnoreCase("Transfer-Encoding") || name.equalsIgnoreCase("Date")) {
                continue; // the server owns the framing
            }
            w.latin1(name).bytes(COLON_SP).latin1(h.value(i)).bytes(CRLF);
        }
        if (bodyAllowed(status)) {
            w.bytes(CONTENT_LENGTH).number(req.responseBody().length).bytes(CRLF);
        }
        if (closeAfterAnswer || peerClosed) {
            w.bytes(CONNECTION_CLOSE);
        } else if (keepAlive10) {
            w.bytes(CONNECTION_KEEP_ALIVE);
        }
        w.bytes(owner.dateLine()).bytes(CRLF);
        return w.buffer();
    }

    private final HeadWriter headWriter = new HeadWriter();
    private static final byte[] CRLF = {'\r', '\n'};
    private static final byte[] COLON_SP = {':', ' '};
    private static final byte[] CONTENT_LENGTH = "Content-Length: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONNECTION_CLOSE = "Connection: close\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONNECTION_KEEP_ALIVE = "Connection: keep-alive\r\n".getBytes(StandardCharsets.US_ASCII);

    private static boolean bodyAllowed(int status) {
        return status >= 200 && status != 204 && status != 304;
    }

    private static boolean remaining(ByteBuffer[] bufs) {
        return bufs[bufs.length - 1].hasRemaining();
    }

    // ---------------------------------------------------------------- life

    /**
     * Closes in stages (RFC 9112 § 9.6): the answer is out, so shut the output, then read and drop
     * what the client still sends - a body we refused, a pipelined request - until it closes too,
     * for at most two seconds and 4 MiB. Closing at once with unread input would send a reset that can
     * destroy the answer (a 413) before the client has read it.
     */
    private void closeGracefully() {
        try {
            if (tls != null) {
                tls.closeOutbound();
            }
            ch.shutdownOutput();
        } catch (IOException e) {
            close();
            return;
        }
        lingering = true;
        lingerStartNanos = System.nanoTime();
        in.clear();
        interest(SelectionKey.OP_READ);
    }

    private void discard() {
        try {
            int n;
            do {
                in.clear();
                n = ch.read(in);
                discarded += Math.max(n, 0);
            } while (n > 0 && discarded < LINGER_MAX_BYTES);
            if (n < 0 || discarded >= LINGER_MAX_BYTES) {
                close();
            }
        } catch (IOException e) {
            close();
        }
    }

    private static final long LINGER_MAX_BYTES = 4 * 1024 * 1024;
    private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(2);
    private boolean lingering;
    private long lingerStartNanos;
    private long discarded;

    /** The capacity of the body buffer of the request being read, or -1 when none is being read. */
    int bodyCapacity() {
        return parser.bodyCapacity();
    }

    void checkTimeouts(long now) {
        if (closed) {
            return;
        }
        if (lingering) {
            if (now - lingerStartNanos > LINGER_NANOS) {
                close();
            }
            return;
        }
        if (tls != null && !tls.handshakeDone()) {
            if (now - openedNanos > TimeUnit.MILLISECONDS.toNanos(limits.headerTimeoutMs())) {
                close(); // a TLS handshake that does not finish: nobody to answer in HTTP
            }
            return;
        }
        if (pending != null) {
            if (now - writeStartNanos > TimeUnit.MILLISECONDS.toNanos(limits.writeTimeoutMs())) {
                close();
            }
            return;
        }
        if (busy) {
            return;
        }
        if (requestStartNanos != 0 && now - requestStartNanos > TimeUnit.MILLISECONDS.toNanos(limits.headerTimeoutMs())) {
            rejectRequest(408, "the request was not read within " + limits.headerTimeoutMs() + " ms");
        } else if (requestStartNanos == 0 && now - idleSinceNanos > TimeUnit.MILLISECONDS.toNanos(limits.idleTimeoutMs())) {
            close();
        }
    }

    void drain() {
        draining = true;
        if (lingering || (!busy && !parser.inRequest() && in.position() == 0)) {
            close();
        } else {
            closeAfterAnswer = true;
        }
    }

    /**
     * Past the grace period: a request without an answer yet gets 503; then the connection closes.
     * The 503 is a fresh request's answer: the one in flight may still be written by its worker
     * or coroutine, and nothing of it is touched here (its late answer finds the connection closed).
     */
    void abort() {
        if (busy && !answerStarted && inFlight != null) {
            CorRest req = CorRest.builder(inFlight.method(), inFlight.path()).build();
            req.fail(new CorRestException(503, "Service Unavailable", "the server stopped before the answer was ready"));
            closeAfterAnswer = true;
            inFlight = req;
            respond(req);
        }
        close();
    }

    private void interest(int ops) {
        if (!closed) {
            SelectionKey k = key();
            if (k != null) {
                k.interestOps(ops);
            }
        }
    }

    /**
     * The channel's current key, or null once it is gone. Not only {@link #onReady} calls for it:
     * an answer from the hop or from a coroutine arrives after a selector rebuild may have
     * cancelled the key seen last, and an interest set on that one would be lost.
     */
    private SelectionKey key() {
        SelectionKey k = key;
        if (k == null || !k.isValid()) {
            k = owner.loop.keyFor(ch);
            key = k;
            if (k != null && !k.isValid()) {
                return null; // cancelled by close, not moved
            }
        }
        return k;
    }

    void close() {
        if (closed) {
            return;
        }
        closed = true;
        pending = null;
        if (tls != null && !lingering) {
            tls.closeOutbound();
        }
        SelectionKey k = key();
        if (k != null) {
            k.cancel();
        }
        closeQuietly(ch);
        owner.removed(this);
    }

    static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing more to do
        }
    }

    static String reasonPhrase(int status) {
        return switch (status) {
            case 100 -> "Continue";
            case 200 -> "OK";
            case 201 -> "Created";
            case 202 -> "Accepted";
            case 204 -> "No Content";
            case 207 -> "Multi-Status";
            case 301 -> "Moved Permanently";
            case 304 -> "Not Modified";
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 406 -> "Not Acceptable";
            case 408 -> "Request Timeout";
            case 409 -> "Conflict";
            case 411 -> "Length Required";
            case 412 -> "Precondition Failed";
            case 413 -> "Content Too Large";
            case 414 -> "URI Too Long";
            case 415 -> "Unsupported Media Type";
            case 422 -> "Unprocessable Content";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 501 -> "Not Implemented";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            case 505 -> "HTTP Version Not Supported";
            case 508 -> "Loop Detected"; // RFC 5842 § 7.2: the broker's LoopDetected (NGSI-LD § 6.3.17)
            default -> "Status " + status;
        };
    }
}
