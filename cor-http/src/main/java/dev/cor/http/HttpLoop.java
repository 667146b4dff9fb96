package dev.cor.http;

import java.nio.channels.SocketChannel;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Locale;

import dev.cor.base.CorCoLoop;

/**
 * What the server keeps per loop: the loop, its connections, the Date header of this second and
 * the sweep that enforces the timeouts. Its loop's thread only.
 */
final class HttpLoop {
    private static final DateTimeFormatter IMF_FIXDATE =
            DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US);
    private static final long SWEEP_MS = 250;

    final CorHttpServer server;
    final CorCoLoop loop;
    /** Its place in the server's loops: what the access log is told. */
    final int index;
    private final ArrayList<HttpConnection> connections = new ArrayList<>();
    private long dateSecond = -1;
    private byte[] dateLine;
    private boolean draining;

    HttpLoop(CorHttpServer server, CorCoLoop loop, int index) {
        this.server = server;
        this.loop = loop;
        this.index = index;
    }

    /** Starts the timeout sweep; on the loop. */
    void start() {
        loop.execute(() -> loop.schedule(SWEEP_MS, this::sweep));
    }

    /** Takes a connection the acceptor dealt (and counted) to this loop; on the loop. */
    void adopt(SocketChannel ch) {
        if (draining) {
            HttpConnection.closeQuietly(ch);
            server.connectionClosed();
            return;
        }
        HttpConnection c;
        try {
            c = new HttpConnection(this, ch);
            c.open();
        } catch (java.io.IOException | RuntimeException e) {
            HttpConnection.closeQuietly(ch);
            server.connectionClosed();
            return;
        }
        c.index = connections.size();
        connections.add(c);
    }

    void removed(HttpConnection c) {
        int i = c.index;
        if (i < 0 || i >= connections.size() || connections.get(i) != c) {
            return;
        }
        HttpConnection last = connections.remove(connections.size() - 1);
        if (last != c) {
            connections.set(i, last);
            last.index = i;
        }
        c.index = -1;
        server.connectionClosed();
    }

    boolean draining() {
        return draining;
    }

    /** Stop, first step: no new connections; idle ones close now, busy ones after their answer. */
    void drain() {
        draining = true;
        for (HttpConnection c : connections.toArray(new HttpConnection[0])) {
            c.drain();
        }
    }

    /** Stop, past the grace period: every connection left gets a 503 if it has no answer yet, and closes. */
    void forceClose() {
        for (HttpConnection c : connections.toArray(new HttpConnection[0])) {
            c.abort();
        }
    }

    /** Connections reading a request body now, and the bytes their body buffers take; on the loop. */
    long[] bodyBuffers() {
        long[] n = new long[2];
        for (HttpConnection c : connections) {
            int capacity = c.bodyCapacity();
            if (capacity >= 0) {
                n[0]++;
                n[1] += capacity;
            }
        }
        return n;
    }

    int connectionCount() {
        return connections.size();
    }

    /** The Date field line of the current second (RFC 9110 § 6.6.1), cached. */
    byte[] dateLine() {
        long now = System.currentTimeMillis() / 1000;
        if (now != dateSecond) {
            dateSecond = now;
            String d = "Date: " + IMF_FIXDATE.format(ZonedDateTime.now(ZoneOffset.UTC)) + "\r\n";
            dateLine = d.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        }
        return dateLine;
    }

    private void sweep() {
        long now = System.nanoTime();
        for (HttpConnection c : connections.toArray(new HttpConnection[0])) {
            c.checkTimeouts(now);
        }
        if (!loop.isStopping()) {
            loop.schedule(SWEEP_MS, this::sweep);
        }
    }
}
