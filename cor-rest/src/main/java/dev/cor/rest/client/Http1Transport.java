package dev.cor.rest.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;

import dev.cor.rest.OutboundPolicy;
import dev.cor.rest.client.CorRestClientException.Kind;
import dev.cor.rest.tls.LoopTls;

/**
 * HTTP/1.1 over a pooled connection, plain or TLS: take a connection (busy before its connect),
 * connect it if new, send, read the whole response, give the connection back or close it. Once,
 * and only for an idempotent method, a request that failed on a reused connection before a single
 * response byte is sent again on a new one: the peer had closed the idle connection meanwhile.
 */
final class Http1Transport implements Transport {
    static final Http1Transport PLAIN = new Http1Transport(false);
    static final Http1Transport TLS = new Http1Transport(true);

    private static final System.Logger LOG = System.getLogger(CorRestClient.class.getName());
    // The body goes out with the head in one write below this size, after it in a second one above.
    private static final int COALESCE_BODY = 16 * 1024;

    private final boolean tls;

    private Http1Transport(boolean tls) {
        this.tls = tls;
    }

    @Override
    public CorRestClientResponse exchange(CorRestClient client, CorRestClientRequest req) throws CorRestClientException {
        Origin origin = new Origin(req.scheme, req.host, req.port > 0 ? req.port : (tls ? 443 : 80));
        ConnectionPool pool = client.pool();
        boolean fresh = false;
        while (true) {
            Connection c = pool.acquire(origin, fresh, !req.idempotent());
            CorRestClientException failure;
            try {
                if (!c.opened()) {
                    open(client, c, req);
                }
                Http1.Result r = send(client, c, req);
                pool.release(c, r.keepAlive() && !req.headers().hasToken("Connection", "close"));
                return r.response();
            } catch (IOException e) {
                failure = failure(e, Kind.RESET, origin);
            } catch (RuntimeException | Error e) {
                // not ours to type (the loop stopping, a wait refused): the connection goes, the error passes
                pool.discard(c);
                throw e;
            }
            pool.discard(c);
            Kind k = failure.kind();
            if (!fresh && c.reused && c.received == 0 && req.idempotent() && (k == Kind.CLOSED || k == Kind.RESET)) {
                LOG.log(System.Logger.Level.DEBUG, () -> "cor: " + req + ": the reused connection failed before any "
                        + "response byte (" + failure.getMessage() + "); once more on a new connection");
                fresh = true;
                continue;
            }
            throw failure;
        }
    }

    /** Resolves, connects and (https) handshakes a new connection; every wait has its deadline. */
    private void open(CorRestClient client, Connection c, CorRestClientRequest req) throws IOException {
        Origin origin = c.origin;
        long connectMs = req.connectTimeoutMs(client.connectTimeoutMs);
        // the connect timeout covers the name lookup too: a slow resolver cannot stretch it
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(connectMs);
        InetAddress address = client.resolver.resolve(req.host, connectMs);
        // the address connected to, after the lookup: a name cannot point the client past the policy
        if (!client.outboundPolicy.permits(address)) {
            throw new CorRestClientException(Kind.DENIED, "cannot connect to " + req.scheme + "://" + req.host + ": "
                    + OutboundPolicy.REFUSAL);
        }
        SocketChannel ch = SocketChannel.open();
        c.channel = ch;
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        client.channelOpened(ch);
        Waits.Phase connecting = () -> "connect to " + origin + " timed out after " + connectMs + " ms";
        try {
            // from the address, never the name: an unresolved InetSocketAddress would look the name up right here
            if (!ch.connect(new InetSocketAddress(address, origin.port()))) {
                do {
                    Waits.await(ch, SelectionKey.OP_CONNECT, deadline, connecting);
                } while (!ch.finishConnect());
            }
        } catch (CorRestClientException e) {
            throw e;
        } catch (IOException e) {
            throw failure(e, Kind.REFUSED, origin);
        }
        if (!tls) {
            c.conduit = new PlainConduit(ch);
            return;
        }
        SSLEngine engine = LoopTls.clientEngine(client.sslContext, req.host, origin.port());
        TlsConduit conduit = new TlsConduit(ch, engine);
        long handshakeMs = req.connectTimeoutMs(client.handshakeTimeoutMs);
        long hsDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(handshakeMs);
        try {
            conduit.handshake(hsDeadline, () -> "TLS handshake with " + origin + " did not finish within " + handshakeMs + " ms");
        } catch (CorRestClientException e) {
            if (e.kind() == Kind.TIMEOUT) {
                throw new CorRestClientException(Kind.TIMEOUT, TlsFailure.HANDSHAKE_TIMEOUT, e.getMessage(), e);
            }
            throw e.tlsFailure() != null || e.kind() != Kind.TLS ? e : tls(e, origin);
        } catch (IOException e) {
            throw tls(e, origin);
        }
        c.conduit = conduit;
    }

    private Http1.Result send(CorRestClient client, Connection c, CorRestClientRequest req) throws IOException {
        c.received = 0;
        long responseMs = req.responseTimeoutMs(client.responseTimeoutMs);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(responseMs);
        Waits.Phase phase = () -> "no complete response from " + c.origin + " to " + req.method() + " " + req.target
                + " within " + responseMs + " ms";
        byte[] head = Http1.encodeHead(req, hostHeader(c.origin, req));
        byte[] body = req.body();
        if (body.length > 0 && body.length <= COALESCE_BODY) {
            ByteBuffer both = ByteBuffer.allocate(head.length + body.length).put(head).put(body).flip();
            c.conduit.write(both, deadline, phase);
        } else {
            c.conduit.write(ByteBuffer.wrap(head), deadline, phase);
            if (body.length > 0) {
                c.conduit.write(ByteBuffer.wrap(body), deadline, phase);
            }
        }
        return new Http1(c, deadline, phase, client.maxHeaderBytes, client.maxResponseBytes)
                .read(req.method().equals("HEAD"));
    }

    private String hostHeader(Origin origin, CorRestClientRequest req) {
        String host = req.ipv6Literal ? "[" + origin.host() + "]" : origin.host();
        int defaultPort = tls ? 443 : 80;
        return origin.port() == defaultPort ? host : host + ":" + origin.port();
    }

    /**
     * A TLS failure, classified once ({@link TlsFailure#of}); its message is the client's words
     * alone (the JDK's text may quote the peer's certificate), the JDK's exception its cause.
     */
    private static CorRestClientException tls(IOException e, Origin origin) {
        TlsFailure f = e instanceof CorRestClientException c && c.tlsFailure() != null ? c.tlsFailure() : TlsFailure.of(e);
        return new CorRestClientException(Kind.TLS, f, "TLS with " + origin + " failed: " + f.words(), e);
    }

    /** An I/O failure as the kind a caller can act on; {@code otherwise} where nothing more precise fits. */
    static CorRestClientException failure(IOException e, Kind otherwise, Origin origin) {
        if (e instanceof CorRestClientException c) {
            return c;
        }
        if (e instanceof SSLException) {
            return tls(e, origin);
        }
        String m = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        if (e instanceof ConnectException || e instanceof NoRouteToHostException) {
            return new CorRestClientException(Kind.REFUSED, "cannot connect to " + origin + ": " + m, e);
        }
        if (e instanceof UnknownHostException) {
            return new CorRestClientException(Kind.RESOLVE, "cannot resolve " + origin.host() + ": " + m, e);
        }
        if (e instanceof ClosedChannelException) {
            return new CorRestClientException(Kind.CLOSED, "the connection to " + origin + " was closed", e);
        }
        if (e instanceof InterruptedIOException) {
            return new CorRestClientException(Kind.CLOSED, "interrupted waiting for " + origin, e);
        }
        if (otherwise == Kind.REFUSED) {
            return new CorRestClientException(Kind.REFUSED, "cannot connect to " + origin + ": " + m, e);
        }
        return new CorRestClientException(otherwise, "the connection to " + origin + " failed: " + m, e);
    }
}
