package dev.cor.http;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoLoopHandler;
import dev.cor.base.CorCoTimer;

/**
 * A connection accepted past the server's cap: it gets a 503 with {@code Connection: close}, its
 * output is shut, and what it still sends (its request) is read and dropped until it closes or a
 * second has passed - closing with unread input would reset the connection and could destroy the
 * 503 before the client read it. No parser, no buffer of its own: the acceptor loop's scratch
 * buffer. At most {@link #MAX_LINGERING} linger at once; past that a refused connection is closed
 * at once. The acceptor loop's thread only.
 */
final class HttpRefusal implements CorCoLoopHandler {
    static final int MAX_LINGERING = 64;
    private static final long LINGER_MS = 1000;
    private static final byte[] BODY = "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,\"detail\":\"too many connections\"}"
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ANSWER = ("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\n"
            + "Content-Length: " + BODY.length + "\r\nConnection: close\r\nRetry-After: 1\r\n\r\n"
            + new String(BODY, StandardCharsets.US_ASCII)).getBytes(StandardCharsets.US_ASCII);

    /** The refusals lingering now, and the scratch buffer they read into; the acceptor loop's. */
    static final class Acceptor {
        final CorCoLoop loop;
        final ByteBuffer scratch = ByteBuffer.allocate(4096);
        final java.util.ArrayList<HttpRefusal> lingering = new java.util.ArrayList<>();

        Acceptor(CorCoLoop loop) {
            this.loop = loop;
        }

        /** At stop: the loop leaves registered channels to their owners. */
        void closeAll() {
            for (HttpRefusal r : lingering.toArray(new HttpRefusal[0])) {
                r.close();
            }
        }
    }

    private final Acceptor acceptor;
    private final SocketChannel ch;
    private CorCoTimer timer;
    private boolean closed;

    private HttpRefusal(Acceptor acceptor, SocketChannel ch) {
        this.acceptor = acceptor;
        this.ch = ch;
    }

    /**
     * Refuses {@code ch} (non-blocking): the 503 unless the server speaks TLS (nothing can be said
     * before a handshake), then the lingering close.
     */
    static void refuse(Acceptor acceptor, SocketChannel ch, boolean tls) {
        if (tls || acceptor.lingering.size() >= MAX_LINGERING) {
            HttpConnection.closeQuietly(ch);
            return;
        }
        try {
            ch.write(ByteBuffer.wrap(ANSWER)); // a few bytes into a new connection's empty send buffer
            ch.shutdownOutput();
            HttpRefusal r = new HttpRefusal(acceptor, ch);
            acceptor.loop.register(ch, SelectionKey.OP_READ, r);
            acceptor.lingering.add(r);
            r.timer = acceptor.loop.schedule(LINGER_MS, r::close);
        } catch (IOException e) {
            HttpConnection.closeQuietly(ch);
        }
    }

    @Override
    public void onReady(SelectionKey key) {
        ByteBuffer b = acceptor.scratch;
        try {
            int n;
            do {
                b.clear();
                n = ch.read(b);
            } while (n > 0);
            if (n < 0) {
                close();
            }
        } catch (IOException e) {
            close();
        }
    }

    @Override
    public void failed(SelectionKey key, Throwable failure) {
        close();
    }

    private void close() {
        if (closed) {
            return;
        }
        closed = true;
        acceptor.lingering.remove(this);
        if (timer != null && timer.pending()) {
            timer.cancel();
        }
        HttpConnection.closeQuietly(ch);
    }
}
